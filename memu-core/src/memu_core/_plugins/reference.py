"""Render the hook reference (``docs/hooks.md``) from the hookspecs and their event table.

A test compares the rendered text with the checked-in file, so the reference cannot drift from
the code. Regenerate with ``python -m memu_core._plugins.reference > docs/hooks.md``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from memu_core import hookspecs


def hook_names() -> list[str]:
    """Every ``memu_*`` hook specification, in source order."""
    return [
        name
        for name, fn in vars(hookspecs).items()
        if name.startswith("memu_") and inspect.isfunction(fn) and fn.__module__ == hookspecs.__name__
    ]


def signature(fn: Callable[..., Any]) -> str:
    """``name(arg: Type, ...) -> Return`` as written in the source (annotations unquoted)."""

    def shown(annotation: object) -> str:
        return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)

    sig = inspect.signature(fn)
    params = ", ".join(f"{p.name}: {shown(p.annotation)}" for p in sig.parameters.values())
    return f"{fn.__name__}({params}) -> {shown(sig.return_annotation)}"


def render() -> str:
    """The Markdown reference of every hook (signature and documentation) and every event."""
    out = [
        "# Hook reference",
        "",
        "Generated from `memu_core/hookspecs.py` by `python -m memu_core._plugins.reference`;",
        "a test keeps it in step with the code, and `memu-core/tests/plugins/test_hooks_fire.py`",
        "shows each hook firing on a real command. Implement a hook with `@memu_core.hookimpl`.",
        "",
        inspect.getdoc(hookspecs) or "",
        "",
    ]
    for name in hook_names():
        fn = getattr(hookspecs, name)
        out += [f"## `{signature(fn)}`", "", inspect.getdoc(fn) or "", ""]
    out += [
        "## Events",
        "",
        "What a sink's `emit` receives: a `memu_core.types.Event` (`name`, `occurred_at`,",
        "`properties`, `host`, `event_id`, `client_instance_id`, `context`); `Event.envelope()` is",
        "the JSON object memU's ingest route takes. Only the properties `memu_core.events.CATALOGUE`",
        "allows for the name reach a sink: counts and durations, never a query, a path, a file name",
        "or content. A sink's `flush` is called at memU's flush points. `hookspecs.EVENTS` holds",
        "this table; [telemetry.md](telemetry.md) says what memu-telemetry does with them.",
        "",
        "| event | emitted when, with |",
        "|---|---|",
    ]
    out += [f"| `{name}` | {when} |" for name, when in hookspecs.EVENTS.items()]
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
