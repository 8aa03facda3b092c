"""``MEMU_DB=postgres…`` through the real ``memu`` command: db verbs, commit, retrieve, forget."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from memu_backend_postgres.migrate import HEAD_REVISION


def _memu(args: list[str], env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("memu") or str(Path(sys.executable).with_name("memu"))
    return subprocess.run([exe, *args], env=env, input=stdin, capture_output=True, text=True, timeout=300)


def _env(tmp_path: Path, url: str, provider: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_") or k == "MEMU_TEST_POSTGRES_DSN"}
    # Autostart stays off: a retrieve here would otherwise leave a warm server running for 30 min.
    env.update(
        HOME=str(tmp_path / "home"),
        MEMU_DB=url,
        MEMU_EMBED_PROVIDER=provider,
        MEMU_SERVE_AUTOSTART="0",
        HF_HUB_OFFLINE="1",
    )
    return env


def _with_password(url: str, secret: str) -> str:
    from sqlalchemy.engine import make_url

    return (
        make_url(url)
        .set(password=secret)
        .render_as_string(hide_password=False)
        .replace("postgresql://", "postgres://", 1)
    )


PAYLOAD = {
    "recall_files": [
        {
            "name": "prefs",
            "description": "coding style",
            "content": "uses tabs for indentation\nprefers pytest fixtures",
        },
        {"name": "deploy", "description": "how we ship", "content": "deploy with docker compose on friday"},
    ],
    "resource": [{"path": "ops/deploy.sh", "description": "the deploy script"}],
}


def test_cli_end_to_end_lexical(tmp_path: Path, new_database: Callable[[], str]) -> None:
    # A trust-auth test server ignores the password, which lets the test prove it never leaks.
    env = _env(tmp_path, _with_password(new_database(), "pw-Never-Shown"), "none")
    steps = [
        (["db", "current"], None),
        (["db", "upgrade"], None),
        (["db", "current"], None),
        (["commit", "-"], json.dumps(PAYLOAD)),
        (["retrieve", "docker deploy"], None),
        (["forget", "deploy"], None),
        (["retrieve", "docker deploy"], None),
    ]
    outs = []
    for args, stdin in steps:
        done = _memu(args, env, stdin)
        assert done.returncode == 0, (args, done.stderr)
        assert "pw-Never-Shown" not in done.stdout + done.stderr
        outs.append(done.stdout)
    assert outs[0].startswith("none") and outs[2].strip() == HEAD_REVISION
    found = json.loads(outs[4])
    assert found["files"][0]["name"] == "deploy"
    assert found["resources"][0]["url"] == "ops/deploy.sh"
    assert all(f["name"] != "deploy" for f in json.loads(outs[6])["files"])


@pytest.mark.slow
def test_cli_with_the_local_model_goes_hybrid(tmp_path: Path, new_store_url: Callable[[], str]) -> None:
    pytest.importorskip("memu_embed_local")
    env = _env(tmp_path, new_store_url(), "local")
    done = _memu(["commit", "-"], env, json.dumps(PAYLOAD))
    if done.returncode != 0 and "model" in done.stderr.lower():
        pytest.skip(f"local model not available offline: {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr
    result = _memu(["retrieve", "how do we ship containers"], env)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["mode"] == "hybrid"
    assert answer["files"][0]["name"] == "deploy"
