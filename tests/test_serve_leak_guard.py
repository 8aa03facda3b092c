"""memu's pytest plugin fails a test run that leaves a warm ``memu serve`` process running."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

LEAKY = """
import subprocess
import sys


def test_starts_a_server_and_forgets_it():
    # Stands in for an autostarted warm server: memu_core._serve on its command line, detached.
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", "memu_core._serve"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    print("PID", proc.pid)
"""


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="the guard reads other processes' environments in /proc")
def test_a_run_that_leaves_a_memu_serve_process_fails_and_the_process_is_stopped(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    (project / "conftest.py").write_text('pytest_plugins = ["memu_core.testing.plugin"]\n', encoding="utf-8")
    (project / "test_leaky.py").write_text(LEAKY, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "-s"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "left 1 memu serve process(es) running" in out, out
    pid = int(next(line.split()[-1] for line in out.splitlines() if "PID" in line))
    assert not _running(pid), "the guard stops the server it reports"


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False  # gone
    return state != "Z"  # a zombie has exited; only its parent has not collected it yet
