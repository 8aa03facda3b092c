"""WorkBuddy's instruction moved from ``MEMORY.md`` to ``SOUL.md``; installs clean up the old block."""

import functools
import sys
from pathlib import Path
from typing import Any

from memu_core.host import HostSpec

LEGACY_INSTRUCTION = "~/.workbuddy/MEMORY.md"
"""Where earlier releases put the block (WorkBuddy rewrites MEMORY.md, so it did not stay)."""


def migrate_legacy(spec: HostSpec, path: str, *, dry_run: bool) -> None:
    """Remove this binary's block from the legacy file, when the target is the default one.

    Runs after the new block is written, so a failed write never removes the only instruction.
    """
    from memu_core.host import remove_instruction

    if path != spec.instruction_path or dry_run:
        return
    legacy = Path(LEGACY_INSTRUCTION).expanduser()
    if legacy == Path(path).expanduser():
        return
    for change in remove_instruction(legacy, spec.binary, None):
        if change.diff:
            sys.stdout.write(f"{change.path}: moved the old block to {path}\n\n{change.diff}\n")


def add_workbuddy_commands(app: Any, spec: HostSpec) -> None:
    """Make ``install-instruction`` and ``remove-instruction`` also handle the legacy file."""
    for info in app.registered_commands:
        name = info.name or (info.callback.__name__ if info.callback else "")
        if name in ("install-instruction", "remove-instruction"):
            info.callback = _with_legacy(spec, info.callback)


def _with_legacy(spec: HostSpec, command: Any) -> Any:
    @functools.wraps(command)
    def wrapped(**kwargs: Any) -> Any:
        result = command(**kwargs)
        migrate_legacy(spec, kwargs.get("path", spec.instruction_path), dry_run=bool(kwargs.get("dry_run")))
        return result

    return wrapped
