"""A 1,000-session backlog drains in a handful of scheduled runs, not a hundred.

The sessions come from the generator the prepare benchmark uses (Claude Code sessions of 100
records each, half the benchmark's length to keep the suite quick; at 200 the same default
budget drains the backlog in five runs). Each "run" is what a scheduled run does with no
memory worth writing: ``prepare`` with its defaults, then ``commit``. Every session must be
mined exactly once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "bench"))
from bench_prepare import generate

SESSIONS = 1000
MAX_RUNS = 5


def test_a_thousand_session_backlog_drains_in_five_runs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    generate(home / ".claude" / "projects", SESSIONS, 100)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMU_", "CLAUDE_CODE_"))}
    env.update(HOME=str(home), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0")
    binary = str(Path(sys.executable).parent / "memu-claude-code")
    base = home / ".memu" / "hosts" / "claude-code"
    mined: list[int] = []
    for _ in range(MAX_RUNS):
        done = subprocess.run([binary, "prepare", "--json"], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        mined.append(report["sessions"])
        backlog = json.loads((base / ".backlog.json").read_text(encoding="utf-8"))
        assert backlog["remaining"] == report["remaining"]
        committed = subprocess.run([binary, "commit"], env=env, capture_output=True, text=True, timeout=300)
        assert committed.returncode == 0, committed.stderr
        if report["remaining"] == 0:
            break
    assert sum(mined) == SESSIONS, f"sessions mined per run: {mined}"
    assert len(mined) <= MAX_RUNS
    cursor = json.loads((base / ".session_manifest.claude-code.json").read_text(encoding="utf-8"))
    assert len(cursor) == SESSIONS
