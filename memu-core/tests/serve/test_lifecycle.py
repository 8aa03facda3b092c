"""``memu serve`` lifecycle with real processes: start, permissions, stop, idle exit, kill -9 and
restart, two concurrent starts, configuration / version / schema changes, on-demand start."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memu_core import _layout
from memu_core._serve import client, stamp

from .conftest import socket_file, start_server, wait_until


def test_start_status_permissions_and_stop(home: Path) -> None:
    proc = start_server()
    info = client.status()
    assert info is not None and info["pid"] == proc.pid and info["backend"] == "local"
    assert stat.S_IMODE(os.stat(_layout.run_dir()).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(socket_file()).st_mode) == 0o600
    assert json.loads(_layout.serve_pidfile().read_text())["pid"] == proc.pid
    assert client.stop() == proc.pid
    assert proc.wait(30) == 0
    assert not socket_file().exists() and not _layout.serve_pidfile().exists()
    assert client.status() is None


def test_idle_server_exits_by_itself(home: Path) -> None:
    proc = start_server(env={**os.environ, "MEMU_SERVE_IDLE": "1"})
    assert proc.wait(60) == 0
    assert b"idle" in (proc.stderr.read() if proc.stderr else b"")
    assert not socket_file().exists()


def test_kill_9_leaves_nothing_that_blocks_the_next_start(home: Path) -> None:
    proc = start_server()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert socket_file().exists()  # the dead server's socket file is left behind...
    with pytest.raises(client.Unavailable):
        client.request("GET", "/_memu/status")
    assert client.warm_retrieve("tea", autostart=False) is None  # ...and costs the client nothing
    again = start_server()
    assert client.warm_retrieve("tea") is not None
    client.stop()
    again.wait(30)


def test_two_concurrent_starts_leave_exactly_one_server(home: Path) -> None:
    cmd = [sys.executable, "-m", "memu_core._serve", "--background"]
    procs = [subprocess.Popen(cmd, stderr=subprocess.PIPE) for _ in range(2)]
    wait_until(lambda: client.status() is not None)
    running = client.status()
    assert running is not None
    # The loser exits 0 quietly; the winner is the one the pidfile and socket name.
    losers = [p for p in procs if p.pid != running["pid"]]
    assert len(losers) == 1 and losers[0].wait(60) == 0
    # A deliberate foreground start is refused with the busy exit code and a fix.
    second = subprocess.run(
        [sys.executable, "-m", "memu_core._serve"], capture_output=True, text=True, timeout=120
    )
    assert second.returncode == 3 and "memu serve --stop" in second.stderr
    assert client.stop() == running["pid"]


def test_config_change_is_never_answered_with_stale_results(home: Path) -> None:
    proc = start_server()
    config = home / ".memu" / "config.env"
    config.write_text("MEMU_USER_ID=someone-else\n", encoding="utf-8")
    # The new fingerprint is refused (409) and the server exits to be restarted with the new config.
    assert client.warm_retrieve("tea", autostart=False) is None
    assert proc.wait(60) == 0
    assert b"configuration changed" in (proc.stderr.read() if proc.stderr else b"")


def test_a_client_of_another_version_is_refused_and_the_server_stays(home: Path) -> None:
    proc = start_server()
    sock_headers = {stamp.VERSION_HEADER: "999.0+0", stamp.CONFIG_HEADER: stamp.config_fingerprint()}
    import socket

    from memu_core._serve import wire

    conn = socket.socket(socket.AF_UNIX)
    conn.connect(str(socket_file()))
    conn.sendall(wire.build_request("POST", "/_memu/retrieve", {"query": "tea"}, sock_headers))
    status, _, body = wire.read_response(conn)
    conn.close()
    assert status == 409 and json.loads(body)["details"][0]["code"] == "STALE_SERVER"
    assert proc.poll() is None and client.warm_retrieve("tea") is not None


def test_schema_change_makes_the_server_exit(home: Path) -> None:
    proc = start_server()
    db = home / ".memu" / "memu.sqlite3"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'changed-by-test'")
    assert proc.wait(60) == 0
    assert b"schema changed" in (proc.stderr.read() if proc.stderr else b"")


def test_on_demand_start_answers_in_process_and_leaves_a_server(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert client.warm_retrieve("tea") is None  # autostart off: nothing was launched
    assert not client.server_starting_or_running()
    monkeypatch.setenv("MEMU_SERVE_AUTOSTART", "1")
    assert client.warm_retrieve("tea") is None  # this turn is answered in process...
    wait_until(lambda: client.status() is not None)  # ...and the next one finds a server
    assert client.warm_retrieve("tea") is not None
    assert client.stop() is not None
