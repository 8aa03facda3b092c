"""The first retrieve that starts the warm server says so on stderr, once, with how to stop it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memu_core._serve import client

from .conftest import wait_until


def _retrieve(query: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from memu_core._cli.main import main; sys.argv[0] = 'memu'; main()"
    env = {**os.environ, "MEMU_SERVE_AUTOSTART": "1"}
    return subprocess.run(
        [sys.executable, "-c", code, "retrieve", query], capture_output=True, text=True, timeout=120, env=env
    )


def test_the_first_autostart_prints_one_line_naming_how_to_stop_it(home: Path) -> None:
    first = _retrieve("tea")
    assert first.returncode == 0, first.stderr
    assert first.stderr.strip().splitlines() == [client.AUTOSTART_NOTE]
    assert "memu serve --stop" in client.AUTOSTART_NOTE and "MEMU_SERVE_AUTOSTART=0" in client.AUTOSTART_NOTE
    wait_until(lambda: client.status() is not None)
    assert client.stop(timeout=15) is not None
    again = _retrieve("tea")  # starts another server: the user has been told already
    assert again.returncode == 0 and again.stderr == "", again.stderr
    wait_until(lambda: client.status() is not None)
