"""The job files a bridging run's agent works through, in order: memory jobs ``1..N``, skill
jobs ``N+1..2N``, then one resource job ``2N+1`` (skill jobs fill the log it consumes)."""

from __future__ import annotations

from pathlib import Path

from memu_core.hosting import templates
from memu_core.hosting.atomic import write_text
from memu_core.hosting.layout import Layout


def clear(folder: Path, pattern: str) -> None:
    """Delete the files matching ``pattern`` in ``folder`` (a missing folder is fine)."""
    if not folder.is_dir():
        return
    for path in folder.glob(pattern):
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def write_jobs(layout: Layout, count: int, verify_command: str) -> int:
    """Replace ``jobs/*.txt`` with the jobs for ``count`` sessions; return how many were written."""
    clear(layout.jobs, "*.txt")
    if count == 0:
        return 0
    memory_t = templates.resolve("memory-job")
    skill_t = templates.resolve("skill-job")
    resource_t = templates.resolve("resource-job")
    layout.jobs.mkdir(parents=True, exist_ok=True)
    for i in range(1, count + 1):
        write_text(
            layout.jobs / f"{i}.txt",
            memory_t.format(input_path=layout.sessions / f"{i}.jsonl", track_dir=layout.track_dir("memory")),
            fsync=False,
        )
        write_text(
            layout.jobs / f"{count + i}.txt",
            skill_t.format(
                input_path=layout.sessions / f"{i}_full.jsonl",
                track_dir=layout.track_dir("skill"),
                resource_log=layout.resource_log,
            ),
            fsync=False,
        )
    write_text(
        layout.jobs / f"{2 * count + 1}.txt",
        resource_t.format(verify_command=verify_command, resource_file=layout.resources),
        fsync=False,
    )
    return 2 * count + 1
