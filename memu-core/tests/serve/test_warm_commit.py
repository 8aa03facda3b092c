"""Commits through the warm server (issue 17): ``memu commit`` sends its texts to a running
``memu serve`` and loads no model itself; with no server it loads one here and says so."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._serve import client

from .conftest import start_server

MEMU = str(Path(sys.executable).with_name("memu"))


@pytest.fixture
def local_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    from memu_core._config import resolve

    root = Path(tempfile.mkdtemp(prefix="mw", dir="/tmp"))
    models = os.environ.get("MEMU_MODELS_DIR", "")
    for key in list(os.environ):
        if key.startswith("MEMU_"):
            monkeypatch.delenv(key)
    env = {
        "HOME": str(root),
        "MEMU_EMBED_PROVIDER": "local",
        "MEMU_SERVE_AUTOSTART": "0",
        "HF_HUB_OFFLINE": "1",
        **({"MEMU_MODELS_DIR": models} if models else {}),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    resolve.reload()
    notes = root / "notes"
    notes.mkdir()
    for i in range(20):
        (notes / f"note-{i}.md").write_text(f"# note {i}\n\nThe build step {i} needs the cache warmed.\n")
    (notes / "release.md").write_text("# release\n\nWe cut a release by tagging main and running the publish job.\n")
    yield {**os.environ}
    client.stop(timeout=15)
    resolve.reload()
    shutil.rmtree(root, ignore_errors=True)


def _commit(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    notes = Path(env["HOME"]) / "notes"
    return subprocess.run(
        [MEMU, "commit", "--from-dir", str(notes)], env=env, capture_output=True, text=True, timeout=600
    )


def _top(env: dict[str, str]) -> str:
    import json

    out = subprocess.run(
        [MEMU, "retrieve", "how do we ship a new version"],
        env={**env, "MEMU_SERVE_AUTOSTART": "0"},
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.dumps(json.loads(out.stdout), sort_keys=True)


def test_commit_borrows_the_warm_servers_model(local_home: dict[str, str]) -> None:
    proc = start_server()
    done = _commit(local_home)
    assert done.returncode == 0, done.stderr
    assert "loading" not in done.stderr  # nothing was loaded in the committing process
    status = client.status()
    assert status is not None and status["embedded_texts"] >= 21
    assert "release" in _top(local_home)
    assert client.stop() == proc.pid


def test_without_a_server_the_commit_loads_here_and_says_so(local_home: dict[str, str]) -> None:
    done = _commit(local_home)
    assert done.returncode == 0, done.stderr
    assert "no warm server answered; loading the local embedder" in done.stderr
    assert client.status() is None  # autostart is off: none was started
    assert "release" in _top(local_home)


def test_the_route_is_undone_when_the_command_ends(local_home: dict[str, str]) -> None:
    from memu_core import _compose
    from memu_core._serve.embedding import WarmEmbedder, route_through_warm_server

    with route_through_warm_server(autostart=False):
        inside = _compose.embedder_factory()()
    outside = _compose.embedder_factory()()
    assert isinstance(inside, WarmEmbedder)
    assert outside is not None and not isinstance(outside, WarmEmbedder)  # nothing leaks into later work
