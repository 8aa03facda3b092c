"""A server without memu's ``forget`` route (memU's hosted API): a file deleted from the mirror
costs one warning, never a ``commit`` that fails on every run; real errors stay errors.

Every server here is the real memu-server app on 127.0.0.1: one with the forget route taken
out (404, as memU's hosted API answers), and injected 405/501/401/403/500 answers on that route.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memu_backend_cloud.backend import CloudBackend
from memu_backend_cloud.errors import (
    CloudAuthenticationError,
    CloudAuthorizationError,
    CloudServiceError,
    CloudUnsupportedError,
)
from memu_server.app import create_app
from memu_server.keys import KeyStore
from memu_server.testing import serve_in_thread

from memu_core._engine.engine import LocalEngine
from memu_core.errors import Unsupported

FORGET = "POST /api/v4/memory/forget"
TEA = {"name": "tea", "track": "memory", "description": "drinks", "content": "- drinks green tea"}


@pytest.fixture
def no_forget(engine: LocalEngine, keys: KeyStore) -> Iterator[dict[str, Any]]:
    """memu-server without its forget route, like memU's hosted API."""
    app = create_app(engine, keys=keys)
    app.router.routes = [r for r in app.router.routes if getattr(r, "path", "") != "/api/v4/memory/forget"]
    key, _ = keys.create("default")
    with serve_in_thread(app) as url:
        yield {"base": url + "/api/v4/memory/", "key": key, "engine": engine}


def test_a_server_without_the_route_is_unsupported_not_a_failure(no_forget: dict[str, Any]) -> None:
    cloud = CloudBackend(api_key=no_forget["key"], base_url=no_forget["base"])
    with pytest.raises(CloudUnsupportedError) as info:
        cloud.forget("tea")
    assert isinstance(info.value, Unsupported) and info.value.status_code == 404
    assert "no forget route" in str(info.value) and "\n" not in str(info.value)
    cloud.close()


@pytest.mark.parametrize("status", ["405", "501"])
def test_405_and_501_mean_the_same(server: dict[str, Any], status: str) -> None:
    key, _ = server["keys"].create("default")
    server["faults"]._queues[FORGET] = [status]
    cloud = CloudBackend(api_key=key, base_url=server["base"])
    with pytest.raises(CloudUnsupportedError):
        cloud.forget("tea")
    cloud.close()


@pytest.mark.parametrize(
    ("actions", "error"),
    [(["401"], CloudAuthenticationError), (["403"], CloudAuthorizationError), (["500"] * 3, CloudServiceError)],
)
def test_real_errors_on_the_route_stay_errors(
    server: dict[str, Any], actions: list[str], error: type[Exception]
) -> None:
    key, _ = server["keys"].create("default")
    server["faults"]._queues[FORGET] = list(actions)
    cloud = CloudBackend(api_key=key, base_url=server["base"])
    with pytest.raises(error) as info:
        cloud.forget("tea")
    assert not isinstance(info.value, Unsupported)
    cloud.close()


def _host_commit(home: Path, tree: Path, base: str, key: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMU_", "CLAUDE_CODE_"))}
    env.update(
        HOME=str(home),
        MEMU_MEMORY_MODE="cloud",
        MEMU_CLOUD_API_KEY=key,
        MEMU_CLOUD_BASE_URL=base,
        MEMU_EMBED_PROVIDER="none",
        MEMU_SERVE_AUTOSTART="0",
    )
    exe = shutil.which("memu-claude-code") or str(Path(sys.executable).with_name("memu-claude-code"))
    return subprocess.run(
        [exe, "commit", "--base-dir", str(tree)], env=env, cwd=home, capture_output=True, text=True, timeout=180
    )


def test_host_commit_survives_a_deleted_file_with_one_warning(no_forget: dict[str, Any], tmp_path: Path) -> None:
    if not (shutil.which("memu-claude-code") or Path(sys.executable).with_name("memu-claude-code").exists()):
        pytest.skip("memu-host-claude-code is not installed")
    home, tree = tmp_path / "home", tmp_path / "tree"
    (tree / "memory").mkdir(parents=True)
    home.mkdir()
    doc = tree / "memory" / "tea.md"
    doc.write_text("---\nname: tea\ndescription: drinks\n---\n- drinks green tea\n", encoding="utf-8")
    first = _host_commit(home, tree, no_forget["base"], no_forget["key"])
    assert first.returncode == 0, first.stderr
    doc.unlink()

    deleted = _host_commit(home, tree, no_forget["base"], no_forget["key"])
    assert deleted.returncode == 0, deleted.stderr
    warnings = [line for line in deleted.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "memory/tea" in warnings[0] and "no forget route" in warnings[0]
    assert "forgot memory/tea" not in deleted.stdout
    # The next run is not stuck on the same file: nothing left to do, no warning.
    again = _host_commit(home, tree, no_forget["base"], no_forget["key"])
    assert again.returncode == 0 and "warning" not in again.stderr, again.stderr
    assert "nothing to commit" in again.stdout
    # The server still holds the file (it could not forget it); the warning said so.
    stored = no_forget["engine"].list_all_recall_files({"user_id": "default"})["recall_files"]
    assert [f["name"] for f in stored] == ["tea"]
