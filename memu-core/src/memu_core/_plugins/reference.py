"""Render the hook reference (``docs/hooks.md``) from the hookspecs themselves.

A test compares the rendered text with the checked-in file, so the reference cannot drift from
the code. Regenerate with ``python -m memu_core._plugins.reference > docs/hooks.md``.
"""

from __future__ import annotations

import inspect

from memu_core import hookspecs


def hook_names() -> list[str]:
    """Every ``memu_*`` hook specification, in source order."""
    return [
        name
        for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
        if name.startswith("memu_") and fn.__module__ == hookspecs.__name__
    ]


def render() -> str:
    """The Markdown reference of every hook: signature and documentation."""
    out = [
        "# Hook reference",
        "",
        "Generated from `memu_core/hookspecs.py` by `python -m memu_core._plugins.reference`;",
        "a test keeps it in step with the code. Implement a hook with `@memu_core.hookimpl`.",
        "",
    ]
    module_doc = inspect.getdoc(hookspecs) or ""
    out += [module_doc, ""]
    for name in hook_names():
        fn = getattr(hookspecs, name)
        out += [f"## `{name}{inspect.signature(fn)}`", "", inspect.getdoc(fn) or "", ""]
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
