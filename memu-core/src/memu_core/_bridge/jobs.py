"""The job files a bridging run's agent works through, in order: memory jobs ``1..N``, skill
jobs ``N+1..2N``, then one resource job ``2N+1`` (skill jobs fill the log it consumes)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from memu_core._bridge import templates
from memu_core._bridge.mine import write_private
from memu_core._layout import Layout, ensure_private_dir, remove_tree


def clear(folder: Path, pattern: str) -> None:
    """Delete the files matching ``pattern`` in ``folder`` (a missing folder is fine)."""
    if not folder.is_dir():
        return
    for path in folder.glob(pattern):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def write_jobs(layout: Layout, count: int, verify_command: str) -> int:
    """Replace ``jobs/`` with the jobs for ``count`` sessions; return how many were written.

    The files are written into a staging folder that then takes the place of ``jobs/``, so an
    interrupted prepare never leaves a half-written job for the next run to work.
    """
    stage = layout.base / ".jobs.staging"
    remove_tree(stage)
    ensure_private_dir(stage)
    if count:
        memory_t = templates.resolve("memory-job")
        skill_t = templates.resolve("skill-job")
        resource_t = templates.resolve("resource-job")
        # Paths as text once: a first run writes two jobs per session, thousands of them.
        sessions, memory, skill = str(layout.sessions), str(layout.track_dir("memory")), str(layout.track_dir("skill"))
        resource_log, folder, sep = str(layout.resource_log), str(stage), os.sep
        for i in range(1, count + 1):
            text = memory_t.format(input_path=f"{sessions}{sep}{i}.jsonl", track_dir=memory)
            write_private(f"{folder}{sep}{i}.txt", text.encode("utf-8"))
            text = skill_t.format(
                input_path=f"{sessions}{sep}{i}_full.jsonl", track_dir=skill, resource_log=resource_log
            )
            write_private(f"{folder}{sep}{count + i}.txt", text.encode("utf-8"))
        text = resource_t.format(verify_command=verify_command, resource_file=layout.resources)
        write_private(stage / f"{2 * count + 1}.txt", text.encode("utf-8"))
    remove_tree(layout.jobs)
    os.replace(stage, layout.jobs)
    return 2 * count + 1 if count else 0
