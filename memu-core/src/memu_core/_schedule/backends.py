"""The scheduler backends and the choice between them."""

from __future__ import annotations

import shutil
import sys
from datetime import datetime
from typing import Protocol

from memu_core._hostkit.spec import HostSpec
from memu_core._schedule.plan import Plan
from memu_core._schedule.system import Runner, ScheduleError, run_tool
from memu_core.errors import UsageError

NAMES = ("cron", "systemd", "launchd", "taskscheduler")


class Backend(Protocol):
    """One scheduler. ``install`` is idempotent (a second install updates memu's one entry)."""

    name: str

    def install(self, plan: Plan, spec: HostSpec, *, replace: bool) -> tuple[Plan, list[str]]:
        """Register ``plan``; returns the plan as recorded and notes for the user."""

    def uninstall(self, plan: Plan) -> bool:
        """Remove exactly memu's entry; ``True`` when there was one."""

    def installed(self, plan: Plan) -> bool:
        """Whether the scheduler holds memu's entry."""

    def next_run(self, plan: Plan, after: datetime) -> datetime | None:
        """When the next run starts, if this backend can tell."""


def default_name(platform: str | None = None) -> str:
    """The platform's scheduler: launchd on macOS, the Task Scheduler on Windows, else cron when
    ``crontab`` is installed and systemd user timers when only they are."""
    platform = platform or sys.platform
    if platform == "darwin":
        return "launchd"
    if platform.startswith("win"):
        return "taskscheduler"
    if shutil.which("crontab") is None and shutil.which("systemctl") is not None:
        return "systemd"
    return "cron"


def get(name: str | None, runner: Runner = run_tool) -> Backend:
    """The backend called ``name`` (the platform's when ``None``)."""
    chosen = name or default_name()
    if chosen == "cron":
        from memu_core._schedule.cron import Cron

        if runner is run_tool and shutil.which("crontab") is None:
            raise ScheduleError(
                "crontab is not installed; install cron (apt install cron, dnf install cronie) "
                "or pass --backend systemd"
            )
        return Cron(runner)
    if chosen == "systemd":
        from memu_core._schedule.systemd import Systemd

        return Systemd(runner)
    if chosen == "launchd":
        from memu_core._schedule.launchd import Launchd

        return Launchd(runner)
    if chosen == "taskscheduler":
        from memu_core._schedule.windows import TaskScheduler

        return TaskScheduler(runner)
    raise UsageError(f"--backend {chosen!r} is not a scheduler memu knows; choose one of {', '.join(NAMES)}")
