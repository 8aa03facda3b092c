"""The bridging run never mines itself.

A scheduled run is a host session too, logged where discovery looks. Two facts identify it: the
*launch* says this is a scheduled bridging run (``MEMU_BRIDGING_RUN`` set, or the working
directory is the host's tree), and the *host* names the session (e.g. ``CLAUDE_CODE_SESSION_ID``).
Only with both is the session claimed; a person running ``prepare`` by hand is never excluded.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from memu_core._atomic import read_json, write_json

BRIDGING_RUN_ENV = "MEMU_BRIDGING_RUN"
MAX_REMEMBERED = 1000


def is_bridging_run(cwd: Path, base: Path, environ: Mapping[str, str]) -> bool:
    """True when this process was launched as the scheduled bridging run."""
    if environ.get(BRIDGING_RUN_ENV, "").strip():
        return True
    try:
        return cwd.resolve() == base.resolve()
    except OSError:
        return False


def load(path: Path) -> list[str]:
    """The claimed session ids, oldest first (a missing or corrupt file is an empty list)."""
    raw = read_json(path, [])
    return [x for x in raw if isinstance(x, str)] if isinstance(raw, list) else []


def remember(path: Path, session_id: str) -> list[str]:
    """Add ``session_id`` to the claimed list (bounded) and return the list."""
    ids = load(path)
    if session_id not in ids:
        ids.append(session_id)
        ids = ids[-MAX_REMEMBERED:]
        write_json(path, ids)
    return ids


def own_session(env_var: str, environ: Mapping[str, str] = os.environ) -> str:
    """The current session id the host exported, or ``""``."""
    return environ.get(env_var, "").strip() if env_var else ""
