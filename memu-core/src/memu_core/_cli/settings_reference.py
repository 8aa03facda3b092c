"""Render the settings reference (``docs/reference/settings.md``) from :class:`memu_core.settings.Settings`.

A test compares it with the checked-in file. Regenerate with
``python -m memu_core._cli.settings_reference > docs/reference/settings.md``.
"""

from __future__ import annotations

from typing import Any


def _type(annotation: Any) -> str:
    text = str(annotation).replace("typing.", "").replace("pydantic.types.", "")
    for prefix in ("<class '",):
        text = text.replace(prefix, "")
    return text.replace("'>", "").replace("NoneType", "None").replace(" | ", " or ")


def render() -> str:
    """Markdown: one row per ``MEMU_*`` variable the settings model reads."""
    from memu_core.settings import ENV_PREFIX, Settings

    out = [
        "# Settings reference",
        "",
        "Generated from `memu_core.settings.Settings` by `python -m memu_core._cli.settings_reference`;",
        "a test keeps it in step with the code. Each variable is read from the process environment,",
        "then `~/.memu/config.env`, then the default ([configuration.md](../configuration.md) explains",
        "the order, the file and the variables read by single components). The Python API takes the",
        "same names in lower case without the prefix ([python-api.md](../python-api.md)).",
        "",
        "| variable | type | default | meaning |",
        "|---|---|---|---|",
    ]
    for name, field in Settings.model_fields.items():
        default = field.default
        shown = "—" if default is None else f"`{default}`"
        if name == "db":
            shown = "`~/.memu/memu.sqlite3`"  # the default spelled for every user, not this machine's path
        meaning = (field.description or "").replace("|", "\\|")
        out.append(f"| `{ENV_PREFIX}{name.upper()}` | `{_type(field.annotation)}` | {shown} | {meaning} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(render(), end="")
