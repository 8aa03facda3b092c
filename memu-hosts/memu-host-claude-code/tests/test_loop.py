"""The whole loop from the installed ``memu-claude-code`` binary, on Claude Code- and
Cowork-shaped logs: install the instruction, prepare, the agent's edits, commit, retrieve, doctor."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def _binary() -> str:
    return shutil.which("memu-claude-code") or str(Path(sys.executable).with_name("memu-claude-code"))


def test_loop_from_the_binary(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "projects", home / ".claude" / "projects")
    shutil.copytree(FIXTURES / "cowork", tmp_path / "Claude")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMU_", "CLAUDE_CODE"))}
    env.update(
        HOME=str(home),
        MEMU_EMBED_PROVIDER="none",
        MEMU_SERVE_AUTOSTART="0",
        MEMU_COWORK_ROOTS=str(tmp_path / "Claude"),
    )

    def run(*args: str) -> str:
        proc = subprocess.run([_binary(), *args], env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    run("init")
    run("install-instruction")
    assert "memu-retrieve" in (home / ".claude" / "CLAUDE.md").read_text()
    out = run("prepare")
    # One slice per transcript file: the session, its two subagent files, the Cowork session.
    assert "prepared 4 session(s) -> 9 job(s)" in out
    base = home / ".memu" / "hosts" / "claude-code"
    conv = "".join(p.read_text() for p in (base / "sessions").glob("[0-9].jsonl"))
    assert "fix the flaky login test" in conv and "plan the project" in conv
    assert "<system-reminder>" not in conv and "tool_result" not in conv
    (base / "memory").mkdir(exist_ok=True)
    (base / "memory" / "testing-habits.md").write_text(
        "---\nname: testing-habits\ndescription: How the user treats flaky tests\n---\n"
        "Flaky tests get a polling wait instead of a fixed sleep.\n"
    )
    assert "committed 1 recall file(s)" in run("commit")
    result = json.loads(run("retrieve", "flaky tests sleep"))
    assert result["files"][0]["name"] == "testing-habits"
    assert result["segments"][0]["source_file"] == "memory/testing-habits"
    assert re.search(r"^retrieval +ok \(", run("doctor"), re.M)
    assert "nothing to mine" in run("prepare")
