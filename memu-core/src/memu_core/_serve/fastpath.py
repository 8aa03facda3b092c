"""``retrieve`` through the warm server, before any CLI framework is imported.

A host binary's ``run_host`` and ``memu``'s ``main`` call these first. They recognise only the
plain forms of the command; anything else (``--help``, a typo, an unknown flag) returns ``None``
and the normal typer CLI handles it, including its error messages. ``None`` also means "no warm
answer": the caller then retrieves in process, exactly as if the warm path did not exist.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from typing import Any


def host_retrieve(spec: Any, args: Sequence[str]) -> int | None:
    """``memu-<host> retrieve QUERY``: print the warm answer shaped for the agent, or ``None``."""
    if len(args) != 1 or args[0].startswith("-") or not args[0].strip():
        return None
    from memu_core._serve.client import warm_retrieve

    result = warm_retrieve(args[0])
    if result is None:
        return None
    from memu_core._retrieve_output import locate_in_mirror, render, shape_for_agent

    _utf8_stdout()
    sys.stdout.write(render(shape_for_agent(result, locate_in_mirror(spec.default_base()))) + "\n")
    return 0


def _utf8_stdout() -> None:
    # Same as the host CLI does: a non-UTF-8 console code page must not crash a piped answer.
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(OSError, ValueError):
            reconfigure(encoding="utf-8", errors="replace")


_VALUE_FLAGS = {"--top-k": "top_k", "--track": "track", "--user-id": "user_id", "--agent-id": "agent_id"}


def parse_memu_retrieve(args: Sequence[str]) -> dict[str, Any] | None:
    """Parse ``QUERY [--top-k N] [--track T]... [--user-id U] [--agent-id A]``; ``None`` if unsure."""
    query: str | None = None
    opts: dict[str, Any] = {"tracks": []}
    items = list(args)
    i = 0
    while i < len(items):
        arg = items[i]
        flag, eq, inline = arg.partition("=")
        if flag in _VALUE_FLAGS:
            if eq:
                value = inline
            elif i + 1 < len(items):
                i += 1
                value = items[i]
            else:
                return None
            key = _VALUE_FLAGS[flag]
            if key == "track":
                opts["tracks"].append(value)
            elif key == "top_k":
                if not value.strip().lstrip("-").isdigit():
                    return None
                opts["top_k"] = int(value)
            else:
                opts[key] = value
        elif arg.startswith("-") or query is not None:
            return None
        else:
            query = arg
        i += 1
    if query is None or not query.strip():
        return None
    where = {k: opts[k] for k in ("user_id", "agent_id") if opts.get(k)}
    return {
        "query": query,
        "where": where or None,
        "top_k": opts.get("top_k"),
        "tracks": opts["tracks"] or None,
    }


def memu_retrieve(args: Sequence[str]) -> int | None:
    """``memu retrieve|search ...``: print the warm answer as in-process retrieval would, or ``None``."""
    parsed = parse_memu_retrieve(args)
    if parsed is None:
        return None
    from memu_core._serve.client import warm_retrieve

    result = warm_retrieve(parsed["query"], parsed["where"], top_k=parsed["top_k"], tracks=parsed["tracks"])
    if result is None:
        return None
    import json

    sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False, default=str) + "\n")
    return 0
