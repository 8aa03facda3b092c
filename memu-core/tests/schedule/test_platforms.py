"""The schedulers this machine is not: systemd units checked by ``systemd-analyze verify``, the
launchd plist parsed by ``plistlib``, the Task Scheduler's PowerShell checked against the
structure memU registers, and the exact commands each runs (recorded: launchctl and PowerShell
cannot run here, and systemd needs a user bus this machine lacks)."""

from __future__ import annotations

import plistlib
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from memu_core._schedule import launchd, systemd, windows, wrapper
from memu_core._schedule.system import Result

from .conftest import SPEC, make_plan


class Recorder:
    """Stands in for the platform's tools: records each argv and answers success."""

    def __init__(self, answers: dict[str, str] | None = None) -> None:
        self.calls: list[list[str]] = []
        self.answers = answers or {}

    def __call__(self, argv: Sequence[str], stdin: str | None = None) -> Result:
        self.calls.append(list(argv))
        out = next((text for key, text in self.answers.items() if key in " ".join(argv)), "")
        return Result(0, out, "")


def _executable(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    path.chmod(0o700)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, backend="systemd", interval=30)
    _executable(Path(plan.wrapper))
    units = tmp_path / "units"
    service, timer = systemd.Systemd(Recorder(), units).write_units(plan)
    done = subprocess.run(
        ["systemd-analyze", "verify", str(service), str(timer)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "Unknown" not in done.stderr, done.stderr
    assert "OnUnitActiveSec=30min" in timer.read_text(encoding="utf-8")
    assert f"ExecStart={plan.wrapper}" in service.read_text(encoding="utf-8")


def test_systemd_install_and_uninstall_run_these_systemctl_commands(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, backend="systemd")
    recorder = Recorder()
    backend = systemd.Systemd(recorder, tmp_path / "units")
    backend.install(plan, SPEC, replace=False)
    assert recorder.calls == [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "--now", f"{SPEC.task_name}.timer"],
    ]
    recorder.calls.clear()
    assert backend.uninstall(plan)
    assert recorder.calls[0] == ["systemctl", "--user", "disable", "--now", f"{SPEC.task_name}.timer"]
    assert not any((tmp_path / "units").iterdir())


def test_launchd_plist_has_what_launchd_needs(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, backend="launchd", interval=20)
    recorder = Recorder()
    backend = launchd.Launchd(recorder, tmp_path / "LaunchAgents")
    backend.install(plan, SPEC, replace=False)
    path = tmp_path / "LaunchAgents" / f"{SPEC.task_name}.plist"
    data = plistlib.loads(path.read_bytes())
    assert data["Label"] == SPEC.task_name
    assert data["ProgramArguments"] == ["/bin/sh", plan.wrapper]
    assert data["StartInterval"] == 20 * 60
    assert data["RunAtLoad"] is False
    assert data["WorkingDirectory"] == plan.base
    domain = launchd.domain()
    assert recorder.calls == [
        ["launchctl", "bootout", f"{domain}/{SPEC.task_name}"],
        ["launchctl", "bootstrap", domain, str(path)],
    ]
    recorder.calls.clear()
    assert backend.uninstall(plan)
    assert recorder.calls == [["launchctl", "bootout", f"{domain}/{SPEC.task_name}"]]
    assert not path.exists()


def test_task_scheduler_registration_has_memus_structure(tmp_path: Path) -> None:
    plan = make_plan(
        tmp_path, backend="taskscheduler", interval=60, wrapper=r"C:\Users\u\.memu\hosts\x\memu-bridge.ps1"
    )
    script = windows.register_script(plan)
    assert "New-ScheduledTaskAction -Execute 'powershell.exe'" in script
    assert f'-File "{plan.wrapper}"' in script and "-WindowStyle Hidden" in script
    assert f"-WorkingDirectory '{plan.base}'" in script
    assert "-RepetitionInterval (New-TimeSpan -Minutes 60)" in script
    assert "-RepetitionDuration (New-TimeSpan -Days 3650)" in script, "without a duration it stops after a day"
    assert "-LogonType S4U" in script and "-MultipleInstances IgnoreNew" in script and "-StartWhenAvailable" in script
    assert f"-TaskName '{SPEC.task_name}' -TaskPath '\\memu\\'" in script


def test_task_scheduler_install_removes_memus_own_tasks_then_registers(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, backend="taskscheduler")
    recorder = Recorder(answers={"'present'": "present\n"})
    windows.TaskScheduler(recorder).install(plan, SPEC, replace=False)
    scripts = [argv[-1] for argv in recorder.calls]
    assert all(argv[:4] == ["powershell.exe", "-NoProfile", "-NonInteractive", "-Command"] for argv in recorder.calls)
    removed = [s for s in scripts if "Unregister-ScheduledTask" in s]
    assert len(removed) == len(SPEC.all_task_names), "each current and former name in memU's folder"
    assert all("-TaskPath '\\memU\\'" in s for s in removed)
    assert "Register-ScheduledTask" in scripts[-1]


def test_the_windows_wrapper_sets_everything_and_hands_over(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, env={"MEMU_DB": "C:\\it's\\memu.sqlite3"})
    text = wrapper.windows_text(plan, "C:\\Users\\u")
    assert "$env:MEMU_BRIDGING_RUN = '1'" in text
    assert "$env:MEMU_DB = 'C:\\it''s\\memu.sqlite3'" in text, "single quotes doubled"
    assert f"& '{plan.binary}' schedule run --scheduled --base-dir '{plan.base}' @args" in text
    assert text.endswith("exit $LASTEXITCODE\r\n")
