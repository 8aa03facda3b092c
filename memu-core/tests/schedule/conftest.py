"""Fixtures of the scheduling tests: a plan to install, and the user's real crontab kept safe."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._hostkit.spec import HostSpec
from memu_core._schedule.plan import Plan

SPEC = HostSpec(
    id="sched-test",
    display="Scheduling Test",
    source="memu_core.testing:none",
    package="memu_core",
    schedule_command="fake-agent -p {prompt}",
    former_task_names=("memu-remember-sched-test",),
)


def make_plan(tmp_path: Path, **changes: object) -> Plan:
    """A plan as install would resolve it, rooted in ``tmp_path``."""
    base = tmp_path / "tree"
    base.mkdir(parents=True, exist_ok=True)
    values: dict[str, object] = dict(
        host=SPEC.id,
        task_name=SPEC.task_name,
        backend="cron",
        interval=60,
        timeout=600,
        base=str(base),
        binary=str(tmp_path / "bin" / SPEC.binary),
        agent=[str(tmp_path / "bin" / "fake-agent"), "-p", "{prompt}"],
        prompt=str(base / "bridge-prompt.txt"),
        wrapper=str(base / "bridge.sh"),
        log=str(base / "bridge.log"),
        path=[str(tmp_path / "bin"), "/usr/bin", "/bin"],
    )
    values.update(changes)
    return Plan(**values)  # type: ignore[arg-type]


def _crontab(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["crontab", *args], input=stdin, capture_output=True, text=True, timeout=30)


@pytest.fixture
def user_crontab() -> Iterator[None]:
    """The test may edit this user's real crontab; whatever was there is put back afterwards."""
    if shutil.which("crontab") is None:
        pytest.skip("cron is not installed (.ci/run installs it)")
    before = _crontab("-l")
    try:
        yield
    finally:
        if before.returncode == 0:
            _crontab("-", stdin=before.stdout)
        else:
            _crontab("-r")


def crontab_text() -> str | None:
    """``crontab -l``, or ``None`` when the user has no crontab."""
    done = _crontab("-l")
    return done.stdout if done.returncode == 0 else None


def set_crontab(text: str | None) -> None:
    """Give the user exactly ``text`` as crontab (``None``: no crontab)."""
    if text is None:
        _crontab("-r")
    else:
        assert _crontab("-", stdin=text).returncode == 0
