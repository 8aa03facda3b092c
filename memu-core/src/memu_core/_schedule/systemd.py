"""systemd user timers: a ``.service`` running the wrapper and a ``.timer`` starting it."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from memu_core import _atomic
from memu_core._hostkit.spec import HostSpec
from memu_core._schedule.plan import Plan
from memu_core._schedule.system import Runner, ScheduleError, run_tool

NAME = "systemd"


def unit_dir() -> Path:
    """``$XDG_CONFIG_HOME/systemd/user`` (``~/.config/systemd/user``)."""
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return Path(config) / "systemd" / "user"


def service_text(plan: Plan) -> str:
    """The oneshot service: the wrapper, with the runner's own timeout plus a margin."""
    return (
        "[Unit]\n"
        f"Description=memu bridging run for memu-{plan.host} ({plan.task_name})\n"
        "\n[Service]\n"
        "Type=oneshot\n"
        f"ExecStart={_escape(plan.wrapper)}\n"
        f"WorkingDirectory={_escape(plan.base)}\n"
        f"TimeoutStartSec={plan.timeout + 120}\n"
    )


def timer_text(plan: Plan) -> str:
    """The timer: every ``interval`` minutes after the last start, catching up after a sleep."""
    return (
        "[Unit]\n"
        f"Description=Start {plan.task_name} every {plan.interval} minutes\n"
        "\n[Timer]\n"
        "OnActiveSec=2min\n"
        f"OnUnitActiveSec={plan.interval}min\n"
        "Persistent=true\n"
        f"Unit={plan.task_name}.service\n"
        "\n[Install]\n"
        "WantedBy=timers.target\n"
    )


def _escape(value: str) -> str:
    # systemd splits ExecStart on spaces and expands % specifiers; quote and double the %.
    escaped = value.replace("%", "%%")
    return f'"{escaped}"' if " " in escaped else escaped


class Systemd:
    """The systemd user-timer backend."""

    name = NAME

    def __init__(self, runner: Runner = run_tool, units: Path | None = None) -> None:
        self._run = runner
        self._units = units

    def paths(self, plan: Plan) -> tuple[Path, Path]:
        """The service and timer unit files."""
        folder = self._units or unit_dir()
        return folder / f"{plan.task_name}.service", folder / f"{plan.task_name}.timer"

    def write_units(self, plan: Plan) -> tuple[Path, Path]:
        """Write both unit files (atomically), without telling systemd."""
        service, timer = self.paths(plan)
        _atomic.write_text(service, service_text(plan), mode=0o644)
        _atomic.write_text(timer, timer_text(plan), mode=0o644)
        return service, timer

    def _systemctl(self, *args: str) -> None:
        done = self._run(["systemctl", "--user", *args], None)
        if done.code != 0:
            line = (done.err or done.out).strip().splitlines()
            raise ScheduleError(
                f"systemctl --user {' '.join(args)} failed: {line[0] if line else done.code}; "
                "a user session bus is needed (loginctl enable-linger $USER), or use --backend cron"
            )

    def install(self, plan: Plan, spec: HostSpec, *, replace: bool) -> tuple[Plan, list[str]]:
        self.write_units(plan)
        self._systemctl("daemon-reload")
        self._systemctl("enable", "--now", f"{plan.task_name}.timer")
        return plan, []

    def uninstall(self, plan: Plan) -> bool:
        service, timer = self.paths(plan)
        if not timer.exists() and not service.exists():
            return False
        self._run(["systemctl", "--user", "disable", "--now", f"{plan.task_name}.timer"], None)
        for unit in (timer, service):
            unit.unlink(missing_ok=True)
        self._run(["systemctl", "--user", "daemon-reload"], None)
        return True

    def installed(self, plan: Plan) -> bool:
        return self.paths(plan)[1].exists()

    def next_run(self, plan: Plan, after: datetime) -> datetime | None:
        return None  # systemd knows (`systemctl --user list-timers`); status points there
