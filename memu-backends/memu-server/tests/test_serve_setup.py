"""What ``memu-server serve`` takes from memu-core: the warm backend, the socket binder, its folder."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "99999"], "error: --port 99999 is not a TCP port: use 1-65535, or 0 for a free one"),
        (["--port", "-1"], "error: --port -1 is not a TCP port: use 1-65535, or 0 for a free one"),
        (
            ["--host", "no-such-host.invalid"],
            "error: --host 'no-such-host.invalid' is not an address here",
        ),
        (["--host", "192.0.2.1", "--port", "0"], "error: cannot listen on 192.0.2.1:0"),
    ],
)
def test_a_bad_port_or_host_is_one_line_and_opens_no_store(
    memu_home: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    from memu_server.cli import run_cli

    store = memu_home / "store.sqlite3"
    os.environ["MEMU_DB"] = str(store)  # memu_home's monkeypatch restores the environment
    assert run_cli(["serve", *args]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), lines
    assert not store.exists()


def test_serve_removes_only_the_socket_it_bound(memu_home: Path, short_dir: Path) -> None:
    path = short_dir / "s.sock"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MEMU_DB": str(short_dir / "m.sqlite3")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memu_server", "serve", "--no-tcp", "--socket", str(path)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert "unix socket" in proc.stderr.readline()  # bound
        _wait_until_answering(path)  # serving, so its signal handlers are in place
        # While it runs, someone moves the socket away and puts their own file at the path.
        replacement = short_dir / "notes.txt"
        replacement.write_text("keep me\n", encoding="utf-8")
        os.replace(replacement, path)
        proc.terminate()
        assert proc.wait(timeout=60) == 0
        assert path.read_text(encoding="utf-8") == "keep me\n"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _wait_until_answering(path: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
                peer.settimeout(5)
                peer.connect(str(path))
                peer.sendall(b"GET / HTTP/1.0\r\n\r\n")
                if peer.recv(16).startswith(b"HTTP/"):
                    return
        except OSError:
            pass
        assert time.monotonic() < deadline, "the server never answered"
        time.sleep(0.1)
