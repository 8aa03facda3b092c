"""Recognising a bridging run by where it ran, for hosts that export no session id.

A scheduled bridging run works inside memu's tree (``~/.memu/hosts/<host>``: the scheduler's
working folder, or ``cd`` in the launcher). Some hosts write that working folder into the
session: as a project folder named after the escaped path (WorkBuddy, Claude Code) or as a
``cwd`` field in the session's records (Cola, Codex, the pi lineage). No person does their
own work inside memu's tree, so a session that ran there is a bridging run, exactly.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from memu_core._jsonl import load_line
from memu_core._layout import hosts_root
from memu_core._transcript_types import SessionFile, TranscriptRead
from memu_core.interfaces import TranscriptSource

_NON_WORD = re.compile(r"[^0-9A-Za-z]+")


def flatten(path: str) -> str:
    """A path reduced to lower-case words joined by ``-`` (how hosts escape a cwd, and more)."""
    return _NON_WORD.sub("-", path).strip("-").lower()


def escaped_in_tree(folder_name: str, roots: list[Path] | None = None) -> bool:
    """True when ``folder_name`` is an escaped cwd inside memu's tree (or one of ``roots``)."""
    name = flatten(folder_name)
    for root in roots or [hosts_root()]:
        prefix = flatten(str(root))
        if name == prefix or name.startswith(prefix + "-"):
            return True
    return False


def cwd_in_tree(cwd: Any, roots: list[Path] | None = None) -> bool:
    """True when ``cwd`` (a path string from a record) lies inside memu's tree (or ``roots``)."""
    if not isinstance(cwd, str) or not cwd.strip():
        return False
    where = Path(cwd.strip()).expanduser()
    for root in roots or [hosts_root()]:
        # Both spellings: the record may name the tree through a symlink, or not.
        for base in {root, root.resolve()}:
            if where == base or base in where.parents:
                return True
    return False


def record_cwd(obj: dict[str, Any]) -> str | None:
    """The working directory a record names, in the shapes hosts use (top-level or payload)."""
    cwd = obj.get("cwd")
    if isinstance(cwd, str):
        return cwd
    payload = obj.get("payload")
    if isinstance(payload, dict) and isinstance(payload.get("cwd"), str):
        return str(payload["cwd"])
    return None


HEADER_BYTES = 65536
HEADER_RECORDS = 5


def header_cwd(path: Path) -> str | None:
    """The first working directory named in the first few records of a session file."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEADER_BYTES)
    except OSError:
        return None
    for raw in head.split(b"\n")[:HEADER_RECORDS]:
        try:
            obj = load_line(raw.decode("utf-8", errors="replace"))
        except ValueError:
            continue
        if isinstance(obj, dict) and (cwd := record_cwd(obj)):
            return cwd
    return None


class SkipRunsInTree(TranscriptSource):
    """A source mixin: a session whose records say it ran inside memu's tree is never mined.

    Checked once, when a session is first read; the verdict rides in the cursor (``bridging_run``)
    so later growth of the same session is passed over without reading it.
    """

    def read_incremental(self, session: SessionFile, previous: dict[str, Any] | None) -> TranscriptRead:
        """Pass over bridging runs (cursor moved to the end); read other sessions as usual."""
        fresh = not previous or not previous.get("offset")
        if (previous and previous.get("bridging_run")) or (fresh and cwd_in_tree(header_cwd(session.path))):
            cursor = {"offset": session.size, "lines": 0, "size": session.size, "mtime_ns": session.mtime_ns}
            return TranscriptRead([], {**cursor, "bridging_run": True})
        return super().read_incremental(session, previous)
