"""``memu config --cloud`` asks the server which scope its key has and records it; against a
server without the route (memU's hosted API) it keeps the scope and says so. Real memu-server
apps on 127.0.0.1."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memu_server.app import create_app
from memu_server.keys import KeyStore
from memu_server.testing import serve_in_thread

from memu_core._config import dotenv, resolve
from memu_core._config.commands import run_config
from memu_core._engine.engine import LocalEngine


@pytest.fixture
def config_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for key in list(os.environ):
        if key.startswith("MEMU_"):
            monkeypatch.delenv(key)
    path = tmp_path / "config.env"
    monkeypatch.setenv("MEMU_CONFIG_ENV", str(path))
    resolve.reload()
    yield path
    resolve.reload()


def _config_cloud(base: str, key: str) -> tuple[int, str, dict[str, str]]:
    out, err = io.StringIO(), io.StringIO()
    code = run_config("memu", "cloud", {"cloud_api_key": key, "cloud_base_url": base}, False, out, err)
    assert err.getvalue() == ""
    return code, out.getvalue(), dotenv.read_file(resolve.config_path())[0]


def test_config_cloud_records_the_keys_scope(served: dict[str, Any], config_env: Path) -> None:
    code, out, values = _config_cloud(served["url"] + "/api/v4/memory/", served["alice"])
    assert code == 0
    assert "scope     user alice (the key's, recorded)" in out.splitlines()
    assert values["MEMU_USER_ID"] == "alice" and "MEMU_AGENT_ID" not in values
    code, out, values = _config_cloud(served["url"] + "/api/v4/memory/", served["bob_cli"])
    assert "scope     user bob, agent cli (the key's, recorded)" in out.splitlines()
    assert (values["MEMU_USER_ID"], values["MEMU_AGENT_ID"]) == ("bob", "cli")


def test_config_cloud_falls_back_where_the_server_has_no_whoami(
    engine: LocalEngine, keys: KeyStore, config_env: Path
) -> None:
    app = create_app(engine, keys=keys)
    app.router.routes = [r for r in app.router.routes if getattr(r, "path", "") != "/api/v4/memory/whoami"]
    key, _ = keys.create("alice")
    with serve_in_thread(app) as url:
        code, out, values = _config_cloud(url + "/api/v4/memory/", key)
    assert code == 0 and values["MEMU_CLOUD_API_KEY"] == key
    line = next(x for x in out.splitlines() if x.startswith("scope"))
    assert line.startswith("scope     default (kept) — this server does not report a key's scope (404")
    assert "MEMU_USER_ID" not in values


def test_config_cloud_says_when_the_key_is_refused_and_still_writes(served: dict[str, Any], config_env: Path) -> None:
    code, out, values = _config_cloud(served["url"] + "/api/v4/memory/", "msk_00000000_unknown")
    assert code == 0 and "scope     default (kept) — the server refused the key (401)" in out
    assert values["MEMU_CLOUD_API_KEY"] == "msk_00000000_unknown" and "MEMU_USER_ID" not in values
