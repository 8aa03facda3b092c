"""The Windows Task Scheduler: a task in the ``\\memu\\`` folder that runs the PowerShell wrapper.

Registered through PowerShell's ScheduledTasks module, as memU registers its task: a hidden
``powershell.exe -File <wrapper>`` action with the working tree as its working directory, a
repeating trigger with an explicit ten-year duration (without one the repetition stops after a
day), an S4U principal (runs while logged out, stores no password) and settings that start a
missed run when the machine wakes and never start a second copy.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from memu_core._hostkit.spec import HostSpec
from memu_core._schedule.plan import Plan
from memu_core._schedule.system import Runner, ScheduleError, run_tool

NAME = "taskscheduler"
TASK_PATH = "\\memu\\"
FORMER_PATHS = ("\\memU\\",)
"""Folders of earlier registrations (memU's own) that install replaces."""


def _q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def register_script(plan: Plan) -> str:
    """The PowerShell that registers (or re-registers) the task."""
    argument = f'-NoProfile -ExecutionPolicy Bypass -WindowStyle Hidden -File "{plan.wrapper}"'
    return "; ".join(
        [
            f"$action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument {_q(argument)} "
            f"-WorkingDirectory {_q(plan.base)}",
            "$trigger = New-ScheduledTaskTrigger -Once -At (Get-Date).Date "
            f"-RepetitionInterval (New-TimeSpan -Minutes {plan.interval}) "
            "-RepetitionDuration (New-TimeSpan -Days 3650)",
            "$principal = New-ScheduledTaskPrincipal -UserId $env:USERNAME -LogonType S4U -RunLevel Limited",
            "$settings = New-ScheduledTaskSettingsSet -StartWhenAvailable -MultipleInstances IgnoreNew "
            f"-AllowStartIfOnBatteries -DontStopIfGoingOnBatteries -ExecutionTimeLimit (New-TimeSpan -Seconds "
            f"{plan.timeout + 120})",
            f"Register-ScheduledTask -TaskName {_q(plan.task_name)} -TaskPath {_q(TASK_PATH)} -Action $action "
            "-Trigger $trigger -Principal $principal -Settings $settings -Force | Out-Null",
        ]
    )


def unregister_script(name: str, path: str = TASK_PATH) -> str:
    """Remove a task if it is there (no error when it is not)."""
    return (
        f"$t = Get-ScheduledTask -TaskName {_q(name)} -TaskPath {_q(path)} -ErrorAction SilentlyContinue; "
        "if ($t) { Unregister-ScheduledTask -InputObject $t -Confirm:$false }"
    )


def query_script(name: str, path: str = TASK_PATH) -> str:
    """Print whether the task exists (``present``/``absent``)."""
    return (
        f"if (Get-ScheduledTask -TaskName {_q(name)} -TaskPath {_q(path)} -ErrorAction SilentlyContinue) "
        "{ 'present' } else { 'absent' }"
    )


def powershell(script: str) -> list[str]:
    """The argv that runs ``script``."""
    return ["powershell.exe", "-NoProfile", "-NonInteractive", "-Command", script]


class TaskScheduler:
    """The Windows Task Scheduler backend."""

    name = NAME

    def __init__(self, runner: Runner = run_tool) -> None:
        self._run = runner

    def _ps(self, script: str) -> str:
        done = self._run(powershell(script), None)
        if done.code != 0:
            raise ScheduleError(f"PowerShell refused the task: {(done.err or done.out).strip()[:300]}")
        return done.out

    def install(self, plan: Plan, spec: HostSpec, *, replace: bool) -> tuple[Plan, list[str]]:
        # memU's own registrations of this host live in another folder under its names; a second
        # task would run the pipeline twice, so they go (memU's installer does the same).
        for name in spec.all_task_names:
            for folder in FORMER_PATHS:
                self._ps(unregister_script(name, folder))
        self._ps(register_script(plan))
        return plan, []

    def uninstall(self, plan: Plan) -> bool:
        present = self.installed(plan)
        self._ps(unregister_script(plan.task_name))
        return present

    def installed(self, plan: Plan) -> bool:
        return self._ps(query_script(plan.task_name)).strip() == "present"

    def next_run(self, plan: Plan, after: datetime) -> datetime | None:
        return after + timedelta(minutes=plan.interval)
