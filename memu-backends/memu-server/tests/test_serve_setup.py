"""What ``memu-server serve`` takes from memu-core: the warm backend, the socket binder, its folder."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from memu_server.keys import KEYS_ENV, default_keys_path

from memu_core.serving import bind_private_socket


@pytest.fixture
def short_dir() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="mus", dir="/tmp"))  # short: socket paths are capped
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_serve_refuses_a_socket_another_server_listens_on(memu_home: Path, short_dir: Path) -> None:
    path = short_dir / "s.sock"
    other = bind_private_socket(path)
    try:
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        done = subprocess.run(
            [sys.executable, "-m", "memu_server", "serve", "--no-tcp", "--socket", str(path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines() == [
            f"error: another server already listens on {path}; stop it first"
        ], done.stderr
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
            peer.connect(str(path))  # the other server's socket is untouched
    finally:
        other.close()


def test_the_key_database_lives_in_memus_folder_for_the_plugin(
    memu_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEYS_ENV, raising=False)
    assert default_keys_path() == memu_home / ".memu" / "server" / "keys.sqlite3"
    monkeypatch.setenv(KEYS_ENV, "~/k.sqlite3")
    assert default_keys_path() == memu_home / "k.sqlite3"
