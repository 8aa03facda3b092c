"""The whole loop from the installed ``memu-codex`` binary on Codex-shaped logs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def test_loop_from_the_binary(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "sessions", home / ".codex" / "sessions")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update(HOME=str(home), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0")
    binary = shutil.which("memu-codex") or str(Path(sys.executable).with_name("memu-codex"))

    def run(*args: str) -> str:
        proc = subprocess.run([binary, *args], env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    run("install-instruction")
    assert "prepared 1 session(s) -> 3 job(s)" in run("prepare")
    base = home / ".memu" / "hosts" / "codex"
    conv = (base / "sessions" / "1.jsonl").read_text()
    full = (base / "sessions" / "1_full.jsonl").read_text()
    assert "fix the bug in the parser" in conv and "environment_context>\\n" not in conv
    assert "function_call_output" in full and "function_call" not in conv
    (base / "skill").mkdir(exist_ok=True)
    (base / "skill" / "parser-fixes.md").write_text(
        "---\nname: parser-fixes\ndescription: Fixing off-by-one bugs in the parser\n---\n"
        "1. rg parse to find the call site.\n2. Add a test for the boundary.\n"
    )
    assert "committed 1 recall file(s)" in run("commit")
    result = json.loads(run("retrieve", "parser off-by-one"))
    assert [f["name"] for f in result["files"]] == ["parser-fixes"]
    assert re.search(r"^retrieval +ok \(", run("doctor"), re.M)
