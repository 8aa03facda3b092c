"""Workspace resources: the touched-file log the skill jobs append to, its verified form
``resources.md`` that the resource job describes, and reading that back at commit."""

from __future__ import annotations

import os
from pathlib import Path

from memu_core._atomic import write_text

MAX_RESOURCES = 50
"""At most this many files per run: the resource job reads each one."""


def verify_log(log: Path, out: Path, limit: int = MAX_RESOURCES) -> int:
    """Keep the logged paths that are absolute (``~`` allowed) and name existing files.

    Writes ``out`` as ``---``-separated records with an empty ``description:`` for the agent to
    fill, and returns how many were kept. Paths are written as logged (``~`` stays).
    """
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    seen: set[str] = set()
    kept: list[str] = []
    for raw in lines:
        entry = raw.strip()
        if not entry or entry in seen:
            continue
        seen.add(entry)
        full = os.path.expanduser(entry)
        if not os.path.isabs(full) or not os.path.isfile(full):
            continue
        kept.append(entry)
        if len(kept) >= limit:
            break
    body = "---\n" + "".join(f"path: {p}\ndescription: \n---\n" for p in kept)
    write_text(out, body)
    return len(kept)


def read_described(path: Path) -> list[dict[str, str]]:
    """The ``{"path", "description"}`` records of ``resources.md`` the agent described.

    A record whose description is empty or ``null`` is left out (the agent could not read it).
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found: list[dict[str, str]] = []
    current: str | None = None
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "path":
            current = value
        elif key == "description" and current:
            if value and value.lower() != "null":
                found.append({"path": current, "description": value})
            current = None
    return found
