"""The host loop in cloud mode: ``memu-claude-code`` install-instruction → prepare → the agent's
memory file → commit → retrieve, every store operation going to a real memu-server over HTTP.
A second machine (another HOME, same key) then retrieves what the first one learned."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FACT = "Staging deploys are frozen on Fridays after 15:00 by team agreement."


def _claude_session(home: Path) -> None:
    path = home / ".claude" / "projects" / "-home-u-app" / "5f0c7a1e-aaaa-4bbb-8ccc-ddddeeeeffff.jsonl"
    path.parent.mkdir(parents=True)
    records = [
        {
            "type": "user",
            "sessionId": "5f0c7a1e",
            "timestamp": "2026-09-01T09:00:00Z",
            "message": {"role": "user", "content": FACT},
        },
        {
            "type": "assistant",
            "timestamp": "2026-09-01T09:00:03Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Understood."}]},
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _binary(home: Path, base: str, key: str) -> Callable[..., str]:
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

    def run(*args: str) -> str:
        proc = subprocess.run([exe, *args], env=env, cwd=home, capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, f"{' '.join(args)}: {proc.stdout}\n{proc.stderr}"
        return proc.stdout

    return run


@pytest.mark.slow
def test_claude_code_loop_in_cloud_mode(server: dict[str, Any], tmp_path: Path) -> None:
    if not (shutil.which("memu-claude-code") or Path(sys.executable).with_name("memu-claude-code").exists()):
        pytest.skip("memu-host-claude-code is not installed")
    key, _ = server["keys"].create("default")
    laptop = tmp_path / "laptop"
    laptop.mkdir()
    _claude_session(laptop)
    run = _binary(laptop, server["base"], key)
    run("install-instruction")
    assert "prepared 1 session(s)" in run("prepare")
    job = (laptop / ".memu" / "hosts" / "claude-code" / "jobs" / "1.txt").read_text(encoding="utf-8")
    memory_dir = Path(re.search(r"^\s+(/\S*memory)\s*$", job, re.M).group(1))  # type: ignore[union-attr]
    memory_dir.mkdir(parents=True, exist_ok=True)
    (memory_dir / "deploy-freeze.md").write_text(
        f"---\nname: deploy-freeze\ndescription: When staging deploys stop\n---\n{FACT}\n", encoding="utf-8"
    )
    assert "memory/deploy-freeze" in run("commit")
    # The commit reached the server's store, not a local file.
    stored = server["engine"].list_all_recall_files({"user_id": "default"})["recall_files"]
    assert [f["name"] for f in stored] == ["deploy-freeze"]
    assert not (laptop / ".memu" / "memu.sqlite3").exists()
    found = json.loads(run("retrieve", "when are staging deploys frozen"))
    assert found["files"][0]["name"] == "deploy-freeze"

    desktop = tmp_path / "desktop"
    desktop.mkdir()
    elsewhere = json.loads(_binary(desktop, server["base"], key)("retrieve", "staging deploys Friday"))
    assert FACT in {s["text"] for s in elsewhere["segments"]}
