"""memU's per-call flags on ``memu retrieve`` (``--db``, ``--provider``, ``--embed-model``,
``--base-url``, ``--api-key``, ``--json``), and the warm server: an override naming another store
or embedder is never answered by a server holding the configured one, and never starts one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memu_core._serve import client

from .conftest import start_server

OOLONG = {"name": "kyoto", "track": "memory", "description": "tea", "content": "- drinks oolong in Kyoto"}


def _other_store(root: Path) -> Path:
    from memu_core._engine.engine import LocalEngine
    from memu_core._stores.sqlite import SqliteStore

    path = root / "other.sqlite3"
    engine = LocalEngine(SqliteStore.open(str(path)))
    engine.commit_results(recall_files=[OOLONG])
    engine.close()
    return path


def _memu(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from memu_core._cli.main import main; sys.argv[0] = 'memu'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


def _names(out: str) -> set[str]:
    return {f["name"] for f in json.loads(out)["files"]}


def test_db_override_is_answered_from_that_store_not_by_the_warm_server(home: Path) -> None:
    other = _other_store(home)
    proc = start_server()
    warm = _memu("retrieve", "tea", "--json")
    assert warm.returncode == 0, warm.stderr
    assert _names(warm.stdout) == {"profile"}  # the configured store, warm
    overridden = _memu("retrieve", "tea", "--db", str(other), "--json")
    assert overridden.returncode == 0, overridden.stderr
    assert _names(overridden.stdout) == {"kyoto"}
    typer_path = _memu("search", "tea", "--db", str(other), "--top-k", "2", "--json", "-v")  # -v: not the fast path
    assert typer_path.returncode == 0, typer_path.stderr
    assert _names(typer_path.stdout) == {"kyoto"}
    assert client.status() is not None  # the warm server only refused; it keeps serving its store
    client.stop()
    proc.wait(30)


def test_an_override_never_starts_a_server_for_itself(home: Path) -> None:
    other = _other_store(home)
    out = _memu("retrieve", "tea", "--db", str(other), MEMU_SERVE_AUTOSTART="1")
    assert out.returncode == 0, out.stderr
    assert _names(out.stdout) == {"kyoto"}
    assert not client.server_starting_or_running()


def test_an_embedder_override_is_refused_by_a_server_holding_another_embedder(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memu_core._cli import overrides

    for name in ("MEMU_EMBED_MODEL", "MEMU_BASE_URL", "MEMU_API_KEY"):
        monkeypatch.setenv(name, "")  # restored (unset) after the test
    proc = start_server()
    assert client.warm_retrieve("tea", autostart=False) is not None  # same configuration: warm
    assert overrides.apply(provider="none")  # the server's own embedder: still warm
    assert client.warm_retrieve("tea", autostart=False) is not None
    assert overrides.apply(provider="openai", embed_model="text-embedding-3-small", base_url="http://127.0.0.1:9")
    assert client.warm_retrieve("tea", autostart=False) is None  # another embedder: in process instead
    assert client.status() is not None  # refused, not stopped: it still serves its own configuration
    client.stop()
    proc.wait(30)


def test_overrides_are_ignored_with_a_note_in_cloud_mode(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memu_core._cli import overrides

    monkeypatch.setenv("MEMU_MEMORY_MODE", "cloud")
    monkeypatch.setenv("MEMU_DB", "")
    assert overrides.apply(db="/elsewhere.sqlite3", provider="", api_key=None)
    assert os.environ["MEMU_DB"] == "/elsewhere.sqlite3"  # harmless: cloud mode reads no store
    assert capsys.readouterr().err == "note: MEMU_MEMORY_MODE=cloud ignores the local-memory flag(s) --db\n"


def test_fast_path_parses_the_memu_flags() -> None:
    from memu_core._cli import flags

    values = flags.RETRIEVE.parse(["q", "--db", "x.sqlite3", "--provider", "openai", "--api-key", "k", "--json"])
    assert values is not None
    assert (values["db"], values["provider"], values["api_key"], values["as_json"]) == (
        "x.sqlite3",
        "openai",
        "k",
        True,
    )
