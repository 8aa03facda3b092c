"""Run workspaces: allocated with ``mkdtemp`` under ``~/.memu/developer/runs``, addressed only by
their id, removed only when a command says so (never by age)."""

from __future__ import annotations

import re
import shutil
import stat
import tempfile
from pathlib import Path

from memu_core._layout import ensure_private_dir, home
from memu_core.errors import UsageError

PREFIX = "run-"
_ID = re.compile(r"run-[A-Za-z0-9_]{4,64}")


def runs_root() -> Path:
    """``~/.memu/developer/runs`` (created private to the user when first needed)."""
    return home() / "developer" / "runs"


def allocate() -> tuple[str, Path]:
    """A new private run directory: ``(run id, path)``. Concurrent calls get distinct ones."""
    root = runs_root()
    ensure_private_dir(root)
    path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=root))  # mkdtemp: mode 0700, atomic, unique
    return path.name, path


def resolve(run_id: str) -> Path:
    """The directory of ``run_id``, refusing anything that is not a plain id of a run that lives
    under the runs root (path syntax, ``..``, a symlink leading out)."""
    if not _ID.fullmatch(run_id):
        raise UsageError(f"{run_id!r} is not a run id; pass the id `memu memorize prepare` printed (run-…), not a path")
    root = runs_root()
    path = root / run_id
    try:
        info = path.lstat()
    except FileNotFoundError:
        raise UsageError(f"no run {run_id} under {root}; it was committed or discarded, or never prepared") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise UsageError(f"{path} is not a run directory (a link or a file); remove it by hand")
    if path.resolve().parent != root.resolve():
        raise UsageError(f"{path} leads outside {root}; remove it by hand")
    return path


def remove(path: Path) -> None:
    """Delete a run directory whole; raises ``OSError`` when it cannot."""
    shutil.rmtree(path)
