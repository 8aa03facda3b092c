"""The one Unix-socket binder behind ``memu serve`` and memu-server: private, never displacing a
live server, replacing a dead one's leftover file."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._serve.unix import MAX_PATH_BYTES, bind_private
from memu_core.errors import UsageError
from memu_core.serving import bind_private_socket


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A folder under /tmp with a short name: socket paths are capped near 100 bytes."""
    root = Path(tempfile.mkdtemp(prefix="mus", dir="/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_the_socket_is_born_private_in_a_private_folder(short_dir: Path) -> None:
    path = short_dir / "new" / "s.sock"
    sock = bind_private(path)
    try:
        assert stat.S_ISSOCK(os.stat(path).st_mode)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
            peer.connect(str(path))  # listening already
    finally:
        sock.close()


def test_a_live_server_is_never_displaced(short_dir: Path) -> None:
    path = short_dir / "s.sock"
    live = bind_private(path)
    try:
        with pytest.raises(UsageError, match="another server already listens"):
            bind_private(path)
        with pytest.raises(UsageError, match="another server already listens"):
            bind_private_socket(path)
        assert path.exists()
    finally:
        live.close()


def test_a_dead_servers_leftover_is_replaced(short_dir: Path) -> None:
    path = short_dir / "s.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays behind, as after a crash
    assert path.exists()
    sock = bind_private(path)
    try:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    finally:
        sock.close()


def test_a_file_that_is_not_a_socket_is_left_alone(short_dir: Path) -> None:
    path = short_dir / "notes.txt"
    path.write_text("keep me", encoding="utf-8")
    with pytest.raises(UsageError, match="is not a socket"):
        bind_private(path)
    assert path.read_text(encoding="utf-8") == "keep me"


def test_a_path_too_long_for_a_socket_is_one_line_with_the_callers_hint(short_dir: Path) -> None:
    path = short_dir / ("x" * MAX_PATH_BYTES) / "s.sock"
    with pytest.raises(UsageError, match="too long for a Unix socket; set MEMU_RUN_DIR"):
        bind_private(path, too_long_hint="set MEMU_RUN_DIR to a shorter directory")
    with pytest.raises(UsageError, match="too long for a Unix socket; pass a shorter socket path"):
        bind_private_socket(path)
    assert not path.parent.exists()
