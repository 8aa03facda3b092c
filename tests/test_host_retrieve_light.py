"""A host binary's per-turn `retrieve` with no warm server: answered in process, no framework."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_host_retrieve_cold_is_light_and_answers(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update(HOME=str(tmp_path), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0")
    done = subprocess.run(
        [sys.executable, "-m", "memu_core._cli.main", "commit", "--from-dir", str(REPO / "examples")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    code = (
        "import sys\nfrom memu_core.host import run_host\nfrom memu_host_claude_code.spec import SPEC\n"
        "assert run_host(SPEC, ['retrieve', 'how do we cut a release']) == 0\n"
        "print('LOADED', sorted({m.split('.')[0] for m in sys.modules} & "
        "{'typer', 'pydantic', 'pydantic_settings', 'sqlalchemy', 'alembic', 'torch', 'litellm'}), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert "LOADED []" in out.stderr, out.stderr[-500:]
    answer = json.loads(out.stdout)
    assert answer["files"][0]["name"] == "release-checklist"
