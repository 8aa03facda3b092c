"""The bridging run log: one line per finished ``commit``, for people (``memu ui``'s runs page).

File history (docs/adr/0023-file-history.md) says which files each run wrote, but not how many
sessions it mined, and a run that changed no file leaves no version at all. So each host's
``commit`` appends one JSON line to ``.runs.<host>.jsonl`` in its working tree: the run id (the
run marker's, ADR 0014), when, the sessions it mined and the files it stored and forgot. The log
keeps the newest :data:`KEEP` lines. Losing it loses nothing memu needs: it is never read back
by the pipeline, and a failure to write it never fails the commit.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memu_core._atomic import write_text
from memu_core._layout import Layout

KEEP = 200
"""Lines kept per host (a run a day is more than half a year)."""


def path(layout: Layout) -> Path:
    """The log of one host's working tree."""
    return layout.base / f".runs.{layout.host}.jsonl"


def record(layout: Layout, *, run: str, sessions: int, stored: int, forgotten: int) -> None:
    """Append one finished commit; trims the log to :data:`KEEP` lines. Never raises."""
    line = json.dumps(
        {
            "run": run,
            "host": layout.host,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "sessions": sessions,
            "stored": stored,
            "forgotten": forgotten,
        },
        ensure_ascii=False,
    )
    target = path(layout)
    with contextlib.suppress(OSError):
        kept = target.read_text(encoding="utf-8").splitlines()[-(KEEP - 1) :] if target.exists() else []
        write_text(target, "\n".join([*kept, line]) + "\n")


def read(logs: Iterable[Path]) -> list[dict[str, Any]]:
    """Every readable line of ``logs``, newest first (a damaged line is skipped)."""
    out: list[dict[str, Any]] = []
    for log in logs:
        try:
            lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            with contextlib.suppress(ValueError):
                item = json.loads(line)
                if isinstance(item, dict) and isinstance(item.get("run"), str):
                    out.append(item)
    return sorted(out, key=lambda item: str(item.get("at", "")), reverse=True)


def all_logs(hosts_root: Path) -> list[Path]:
    """The run logs of every host tree under ``hosts_root`` (``~/.memu/hosts``)."""
    return sorted(hosts_root.glob("*/.runs.*.jsonl")) if hosts_root.is_dir() else []
