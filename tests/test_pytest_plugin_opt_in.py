"""Installing memu-core changes no other project's test run: its pytest plugin loads only when a
project asks for it with ``pytest_plugins = ["memu_core.testing.plugin"]``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = '''
import os

from hypothesis import settings


def test_probe():
    print("DEADLINE", "off" if settings.default.deadline is None else "on")
    print("AUTOSTART", os.environ.get("MEMU_SERVE_AUTOSTART", "<unset>"))
'''


def _run_project(root: Path, *, opt_in: bool) -> str:
    """A throwaway project in ``root``: one probe test, run by this interpreter's pytest."""
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    (root / "test_probe.py").write_text(PROBE, encoding="utf-8")
    if opt_in:
        (root / "conftest.py").write_text('pytest_plugins = ["memu_core.testing.plugin"]\n', encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMU_", "PYTEST_", "HYPOTHESIS_")) and k != "PYTHONPATH"
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "-s"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    repo = Path(__file__).resolve().parents[1]
    assert repo not in tmp_path.resolve().parents
    return tmp_path


def test_another_project_keeps_its_pytest_and_hypothesis_settings(outside: Path) -> None:
    out = _run_project(outside / "plain", opt_in=False)
    assert "DEADLINE on" in out, out
    assert "AUTOSTART <unset>" in out, out


def test_a_project_that_opts_in_gets_memus_test_settings(outside: Path) -> None:
    out = _run_project(outside / "opted", opt_in=True)
    assert "DEADLINE off" in out, out
    assert "AUTOSTART 0" in out, out
