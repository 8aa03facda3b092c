"""Installing memu-core changes no other project's test run: its pytest plugin loads only when a
project asks for it with ``pytest_plugins = ["memu_core.testing.plugin"]``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import os

from hypothesis import settings


def test_probe():
    deadline = settings.default.deadline
    print("DEADLINE", "off" if deadline is None else f"{deadline.total_seconds() * 1000:.0f}ms")
    print("AUTOSTART", os.environ.get("MEMU_SERVE_AUTOSTART", "<unset>"))
"""


# The project's own hypothesis profile, loaded from its conftest.py before any plugin configures.
THEIR_PROFILE = """
from datetime import timedelta

from hypothesis import settings

settings.register_profile("theirs", deadline=timedelta(milliseconds=1234))
settings.load_profile("theirs")
"""

# Variables that would change the probe's answer for reasons of the machine, not of memu:
# PYTHONPATH, and those by which hypothesis recognises a CI service.
_NOT_PASSED = frozenset(
    {"PYTHONPATH", "CI", "__TOX_ENVIRONMENT_VARIABLE_ORIGINAL_CI", "TF_BUILD", "BUILDKITE", "CIRCLECI", "CIRRUS_CI"}
    | {"CODEBUILD_BUILD_ID", "GITHUB_ACTIONS", "GITLAB_CI", "HEROKU_TEST_RUN_ID", "TEAMCITY_VERSION", "bamboo.buildKey"}
)


def _run_project(root: Path, *, opt_in: bool) -> str:
    """A throwaway project in ``root``: one probe test, run by this interpreter's pytest."""
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    (root / "test_probe.py").write_text(PROBE, encoding="utf-8")
    (root / "conftest.py").write_text(
        ('pytest_plugins = ["memu_core.testing.plugin"]\n' if opt_in else "") + THEIR_PROFILE, encoding="utf-8"
    )
    # Hypothesis picks a deadline-free profile of its own on CI machines; the probe must see
    # only what the project itself and memu's plugin set.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMU_", "PYTEST_", "HYPOTHESIS_")) and k not in _NOT_PASSED
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
    assert "DEADLINE 1234ms" in out, out
    assert "AUTOSTART <unset>" in out, out


def test_a_project_that_opts_in_gets_memus_test_settings(outside: Path) -> None:
    out = _run_project(outside / "opted", opt_in=True)
    assert "DEADLINE off" in out, out
    assert "AUTOSTART 0" in out, out
