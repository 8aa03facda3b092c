"""cron: one tagged line per host in the user's crontab, every other line kept byte for byte."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from memu_core._hostkit.spec import HostSpec
from memu_core._schedule.plan import Plan
from memu_core._schedule.system import Result, Runner, ScheduleError, run_tool

NAME = "cron"


def tag(task_name: str) -> str:
    """The comment that marks memu's entry for one host (install and uninstall find it by it)."""
    return f"# memu:{task_name}"


def expression(minutes: int) -> str:
    """The cron schedule for every ``minutes`` minutes, or a :class:`ScheduleError` naming the fix."""
    if minutes < 60 and 60 % minutes == 0:
        return "* * * * *" if minutes == 1 else f"*/{minutes} * * * *"
    if minutes % 60 == 0 and 24 % (minutes // 60) == 0:
        hours = minutes // 60
        return "0 * * * *" if hours == 1 else f"0 */{hours} * * *"
    raise ScheduleError(
        f"cron cannot start a job every {minutes} minutes; choose a divisor of 60 (5, 10, 15, 30) "
        "or whole hours dividing 24 (60, 120, 180, ...), or use --backend systemd"
    )


def next_run(minutes: int, after: datetime) -> datetime:
    """When cron next starts an entry of :func:`expression` ``(minutes)`` after ``after``."""
    start = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    step = minutes if minutes < 60 else 60
    while True:
        if minutes < 60 and start.minute % step == 0:
            return start
        if minutes >= 60 and start.minute == 0 and start.hour % (minutes // 60) == 0:
            return start
        start += timedelta(minutes=1)


def entry(plan: Plan) -> str:
    """memu's crontab line for ``plan``: schedule, wrapper, tag; no ``PATH=`` line, ever."""
    if "%" in plan.wrapper:
        raise ScheduleError(f"the wrapper path {plan.wrapper!r} holds '%', which cron treats as a newline")
    quoted = "'" + plan.wrapper.replace("'", "'\"'\"'") + "'"
    return f"{expression(plan.interval)} {quoted} {tag(plan.task_name)}"


@dataclass(frozen=True)
class Crontab:
    """The user's crontab as read: its text, and whether there was one at all."""

    text: str
    exists: bool

    def lines(self) -> list[str]:
        return self.text.splitlines(keepends=True)


def foreign_entries(text: str, spec: HostSpec) -> list[str]:
    """Lines of memU's own scheduling for this host (its ``bridge.sh`` or a task name comment
    without memu's tag): ``install --replace`` removes them, plain install refuses to double up."""
    names = "|".join(re.escape(n) for n in spec.all_task_names)
    pattern = re.compile(rf"hosts/{re.escape(spec.id)}/bridge\.sh|#\s*({names})\s*$")
    return [
        line
        for line in text.splitlines()
        if pattern.search(line) and tag(spec.task_name) not in line and not line.lstrip().startswith("#")
    ]


class Cron:
    """The cron backend; ``runner`` is :func:`run_tool` except in tests of other platforms."""

    name = NAME

    def __init__(self, runner: Runner = run_tool) -> None:
        self._run = runner

    def read(self) -> Crontab:
        """``crontab -l``; no crontab yet is an empty one that does not exist."""
        done = self._run(["crontab", "-l"], None)
        if done.code == 0:
            return Crontab(done.out, True)
        if "no crontab" in done.err.lower():
            return Crontab("", False)
        raise ScheduleError(f"crontab -l failed: {_first_line(done)}; check that cron is installed and usable")

    def write(self, text: str) -> None:
        """Replace the crontab with ``text``; ``crontab -`` swaps it whole or not at all."""
        done = self._run(["crontab", "-"], text)
        if done.code != 0:
            raise ScheduleError(f"crontab refused the new table: {_first_line(done)}; nothing was changed")

    def remove(self) -> None:
        """Remove the crontab (uninstall of the entry that created it: no empty one is left)."""
        done = self._run(["crontab", "-r"], None)
        if done.code != 0 and "no crontab" not in done.err.lower():
            raise ScheduleError(f"crontab -r failed: {_first_line(done)}")

    def install(self, plan: Plan, spec: HostSpec, *, replace: bool) -> tuple[Plan, list[str]]:
        """Add (or update) memu's line; returns the plan with what uninstall must know, and notes."""
        table = self.read()
        theirs = foreign_entries(table.text, spec)
        if theirs and not replace:
            raise ScheduleError(
                f"the crontab already schedules {spec.display} another way ({theirs[0].strip()!r}); "
                "run again with --replace to swap it for memu's entry"
            )
        kept = [
            line
            for line in table.lines()
            if tag(plan.task_name) not in line and line.rstrip("\n") not in {t for t in theirs}
        ]
        if kept and not kept[-1].endswith("\n"):
            kept[-1] += "\n"
        ours = entry(plan)
        self.write("".join(kept) + ours + "\n")
        had_table = plan.crontab_existed if _has_tag(table.text, plan.task_name) else table.exists
        notes = [f"replaced {len(theirs)} earlier entr{'y' if len(theirs) == 1 else 'ies'}"] if theirs else []
        return _with(plan, crontab_existed=had_table), notes

    def uninstall(self, plan: Plan) -> bool:
        """Remove memu's line; other lines stay byte for byte. ``True`` when a line was removed."""
        table = self.read()
        if not _has_tag(table.text, plan.task_name):
            return False
        kept = "".join(line for line in table.lines() if tag(plan.task_name) not in line)
        if not kept and not plan.crontab_existed:
            self.remove()
        else:
            self.write(kept)
        return True

    def installed(self, plan: Plan) -> bool:
        return _has_tag(self.read().text, plan.task_name)

    def next_run(self, plan: Plan, after: datetime) -> datetime | None:
        return next_run(plan.interval, after)


def _has_tag(text: str, task_name: str) -> bool:
    return any(tag(task_name) in line for line in text.splitlines())


def _with(plan: Plan, **changes: object) -> Plan:
    data = plan.as_json()
    data.update(changes)
    return Plan.from_json(data)


def _first_line(done: Result) -> str:
    text = (done.err or done.out).strip()
    return text.splitlines()[0] if text else f"exit code {done.code}"
