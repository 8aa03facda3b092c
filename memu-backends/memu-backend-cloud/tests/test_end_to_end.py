"""Cloud mode end to end: two memu installs (two HOMEs) share memory through one memu-server,
and a server killed mid-commit loses nothing and applies nothing twice."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from memu_backend_cloud.backend import CloudBackend
from memu_server.keys import KeyStore
from memu_server.testing import child_env, free_port, start_process

from memu_core._stores.sqlite import SqliteStore
from memu_core.types import Scope

TEA = {
    "name": "profile",
    "track": "memory",
    "description": "who",
    "content": "- drinks green tea\n- lives in Berlin",
}


def _as_install(monkeypatch: pytest.MonkeyPatch, home: Path, base: str, key: str) -> None:
    """Point this process at one memu install in cloud mode (as `config --cloud` would)."""
    from memu_core._config import resolve
    from memu_core._plugins.manager import Plugins, set_plugins

    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMU_MEMORY_MODE", "cloud")
    monkeypatch.setenv("MEMU_CLOUD_API_KEY", key)
    monkeypatch.setenv("MEMU_CLOUD_BASE_URL", base)
    monkeypatch.setenv("MEMU_SERVE_AUTOSTART", "0")
    resolve.reload()
    set_plugins(Plugins())


def test_two_installs_share_memory_through_one_server(
    server: dict[str, Any],
    memu_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from memu_host_claude_code.spec import SPEC

    from memu_core._cli.app import build_app
    from memu_core._cli.main import run_app
    from memu_core.host import run_host

    key, _ = server["keys"].create("default")
    payload = memu_home / "payload.json"
    payload.write_text(json.dumps({"recall_files": [TEA]}), encoding="utf-8")

    _as_install(monkeypatch, memu_home / "laptop", server["base"], key)
    assert run_app(build_app, ["commit", str(payload)]) == 0
    assert "memory/profile" in capsys.readouterr().out

    _as_install(monkeypatch, memu_home / "desktop", server["base"], key)
    assert run_host(SPEC, ["retrieve", "green tea"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["segments"][0]["text"] == "- drinks green tea"
    assert answer["segments"][0]["source_file"] == "memory/profile"
    assert run_app(build_app, ["list-files", "--json"]) == 0
    assert [f["name"] for f in json.loads(capsys.readouterr().out)["recall_files"]] == ["profile"]
    assert run_app(build_app, ["forget", "profile"]) == 0
    capsys.readouterr()

    _as_install(monkeypatch, memu_home / "laptop", server["base"], key)
    assert run_app(build_app, ["retrieve", "green tea"]) == 0
    assert json.loads(capsys.readouterr().out)["segments"] == []


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["sleep-before", "sleep-after"])
def test_server_killed_mid_commit_applies_it_exactly_once(tmp_path: Path, moment: str) -> None:
    """Kill -9 while a commit is in flight (before or after it was applied), restart, let the
    client's retry land: the file exists once, at revision 1. Safe because commits are
    idempotent by content."""
    db = tmp_path / "server.sqlite3"
    keys_db = tmp_path / "keys.sqlite3"
    ks = KeyStore(keys_db)
    key, _ = ks.create("alice")
    ks.close()
    port = free_port()
    base_env = child_env(str(tmp_path), MEMU_DB=str(db), MEMU_SERVER_KEYS=str(keys_db))
    faults = json.dumps({"POST /api/v4/memory": [f"{moment}:60"]})
    first = start_process(port, {**base_env, "MEMU_SERVER_TEST_FAULTS": faults})
    cloud = CloudBackend(
        api_key=key, base_url=f"http://127.0.0.1:{port}/api/v4/memory/", user_id="alice", max_attempts=12
    )
    outcome: dict[str, Any] = {}

    def commit() -> None:
        try:
            outcome["result"] = cloud.commit_results(recall_files=[TEA])
        except Exception as exc:  # reported below
            outcome["error"] = exc

    worker = threading.Thread(target=commit)
    worker.start()
    marker = "applied, holding" if moment == "sleep-after" else "injected"
    _wait_for_line(first, marker)
    assert _revision(db) == (1 if moment == "sleep-after" else None)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(30)
    second = start_process(port, base_env)
    try:
        worker.join(120)
        assert "error" not in outcome, outcome.get("error")
        assert [f["name"] for f in outcome["result"]["recall_files"]] == ["profile"]
        assert _revision(db) == 1
    finally:
        cloud.close()
        second.send_signal(signal.SIGTERM)
        second.wait(30)


def _revision(db: Path) -> int | None:
    if not db.exists():
        return None
    store = SqliteStore.open(str(db))
    try:
        found = store.get_files(Scope("alice", "default"), [("memory", "profile")])
    finally:
        store.close()
    stored = found.get(("memory", "profile"))
    return stored.file.revision if stored else None


def _wait_for_line(proc: Any, marker: str) -> None:
    """Block until the server's stderr shows ``marker`` (its fault injection reports itself)."""
    assert proc.stderr is not None
    for raw in proc.stderr:
        if marker in raw.decode(errors="replace"):
            return
    raise AssertionError(f"server exited before printing {marker!r}")
