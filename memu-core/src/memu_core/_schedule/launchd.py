"""launchd (macOS): a LaunchAgent plist loaded with ``launchctl bootstrap``."""

from __future__ import annotations

import os
import plistlib
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memu_core import _atomic
from memu_core._hostkit.spec import HostSpec
from memu_core._schedule.plan import Plan
from memu_core._schedule.system import Runner, ScheduleError, run_tool

NAME = "launchd"


def agents_dir() -> Path:
    """``~/Library/LaunchAgents``."""
    return Path(os.path.expanduser("~/Library/LaunchAgents"))


def plist_data(plan: Plan) -> dict[str, Any]:
    """The LaunchAgent: the wrapper every ``interval`` minutes, in the background, its own
    output beside the run log (the runner writes the log proper)."""
    return {
        "Label": plan.task_name,
        "ProgramArguments": ["/bin/sh", plan.wrapper],
        "StartInterval": plan.interval * 60,
        "RunAtLoad": False,
        "ProcessType": "Background",
        "WorkingDirectory": plan.base,
        "StandardOutPath": str(Path(plan.base) / "launchd.log"),
        "StandardErrorPath": str(Path(plan.base) / "launchd.log"),
    }


def domain() -> str:
    """``gui/<uid>``: the logged-in user's launchd domain."""
    getuid = getattr(os, "getuid", None)
    return f"gui/{getuid() if getuid else 0}"


class Launchd:
    """The launchd backend."""

    name = NAME

    def __init__(self, runner: Runner = run_tool, agents: Path | None = None) -> None:
        self._run = runner
        self._agents = agents

    def plist_path(self, plan: Plan) -> Path:
        return (self._agents or agents_dir()) / f"{plan.task_name}.plist"

    def commands(self, plan: Plan) -> dict[str, list[list[str]]]:
        """The exact ``launchctl`` calls of each action."""
        target = f"{domain()}/{plan.task_name}"
        path = str(self.plist_path(plan))
        return {
            "install": [["launchctl", "bootout", target], ["launchctl", "bootstrap", domain(), path]],
            "uninstall": [["launchctl", "bootout", target]],
            "status": [["launchctl", "print", target]],
        }

    def install(self, plan: Plan, spec: HostSpec, *, replace: bool) -> tuple[Plan, list[str]]:
        _atomic.write_bytes(self.plist_path(plan), plistlib.dumps(plist_data(plan)), mode=0o644)
        unload, load = self.commands(plan)["install"]
        self._run(unload, None)  # not loaded yet is fine
        done = self._run(load, None)
        if done.code != 0:
            raise ScheduleError(f"launchctl bootstrap refused {plan.task_name}: {(done.err or done.out).strip()}")
        return plan, []

    def uninstall(self, plan: Plan) -> bool:
        path = self.plist_path(plan)
        if not path.exists():
            return False
        for argv in self.commands(plan)["uninstall"]:
            self._run(argv, None)
        path.unlink(missing_ok=True)
        return True

    def installed(self, plan: Plan) -> bool:
        return self.plist_path(plan).exists()

    def next_run(self, plan: Plan, after: datetime) -> datetime | None:
        return after + timedelta(minutes=plan.interval)
