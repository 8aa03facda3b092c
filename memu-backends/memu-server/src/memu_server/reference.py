"""Render the v4 API reference (``docs/reference/v4-api.md``) from the app's OpenAPI schema.

A test compares it with the checked-in file. Regenerate with
``python -m memu_server.reference > docs/reference/v4-api.md``.
"""

from __future__ import annotations

import json
from typing import Any

_METHODS = ("get", "post", "put", "patch", "delete")


def schema() -> dict[str, Any]:
    """The OpenAPI schema of the app ``memu-server serve`` runs (with keys and the event routes)."""
    from memu_server.app import create_app
    from memu_server.events import EventLog
    from memu_server.keys import KeyStore

    # The routes and models do not depend on the backend or on what the key store holds, so
    # the schema is built without opening either (no file is created).
    app = create_app(None, keys=object.__new__(KeyStore), events=object.__new__(EventLog))
    return app.openapi()


def _type(spec: dict[str, Any]) -> str:
    if "$ref" in spec:
        name = spec["$ref"].rsplit("/", 1)[-1]
        return f"[`{name}`](#{name.lower()})"
    if "anyOf" in spec:
        return " or ".join(_type(s) for s in spec["anyOf"])
    if spec.get("type") == "array":
        return f"list of {_type(spec.get('items', {}))}"
    if "enum" in spec:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in spec["enum"])
    return f"`{spec.get('type', 'any')}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("``", "`").replace("|", "\\|")


def render() -> str:
    """Markdown: every route (parameters, body, responses), then every schema's fields."""
    api = schema()
    out = [
        "# v4 memory API reference",
        "",
        "Generated from the OpenAPI schema of `memu-server` by `python -m memu_server.reference`;",
        "a test keeps it in step with the code. [server.md](../server.md) explains how to run the",
        f"server and create keys. {_cell(api['info'].get('description', ''))}",
        "",
        "Every route needs `Authorization: Bearer <key>` on TCP (a key from `memu-server keys",
        "create`); the Unix socket needs none. Errors are JSON with a message and a code.",
        "",
    ]
    for path, item in api["paths"].items():
        for method in _METHODS:
            op = item.get(method)
            if op is None:
                continue
            out += [f"## `{method.upper()} {path}`", ""]
            if op.get("summary") or op.get("description"):
                out += [_cell(op.get("description") or op["summary"]), ""]
            params = op.get("parameters", [])
            if params:
                out += ["| parameter | in | type | required |", "|---|---|---|---|"]
                for p in params:
                    required = "yes" if p.get("required") else "no"
                    out.append(f"| `{p['name']}` | {p['in']} | {_type(p.get('schema', {}))} | {required} |")
                out.append("")
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body:
                out += [f"Body: {_type(body)}", ""]
            responses = [
                f"`{code}` {_type(r.get('content', {}).get('application/json', {}).get('schema', {}))}"
                if r.get("content", {}).get("application/json", {}).get("schema")
                else f"`{code}` {_cell(r.get('description', ''))}"
                for code, r in op.get("responses", {}).items()
            ]
            out += [f"Responses: {'; '.join(responses)}", ""]
    out += ["## Schemas", ""]
    for name, spec in api.get("components", {}).get("schemas", {}).items():
        out += [f"### {name}", ""]
        if spec.get("description"):
            out += [_cell(spec["description"]), ""]
        props = spec.get("properties", {})
        if props:
            needed = set(spec.get("required", []))
            out += ["| field | type | required |", "|---|---|---|"]
            out += [f"| `{k}` | {_type(v)} | {'yes' if k in needed else 'no'} |" for k, v in props.items()]
            out.append("")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
