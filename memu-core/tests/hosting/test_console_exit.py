"""A host binary run as its console script starts up without the cycle collector, runs its command
with it, and freezes what it made before the interpreter exits (the exit's collections then skip
it); a program calling ``run_host`` in-process keeps its collector as it was (ADR 0026's fourth
amendment)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memu_core.host import run_host

PROBE = """
import gc, sys
from memu_core._cli import shell

def dispatch(*args, **kwargs):  # the command sees the collector on, start-up objects frozen
    print("DURING", gc.isenabled(), gc.get_freeze_count(), file=sys.stderr)
    return real_dispatch(*args, **kwargs)

real_dispatch, shell._dispatch = shell._dispatch, dispatch
sys.argv = ["memu-codex", "docs", "install"]
from memu_host_codex.cli import main
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print("FROZEN", gc.get_freeze_count(), file=sys.stderr)
"""


def test_the_console_script_form_freezes_before_exit(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env["HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip()  # the guide was printed before the freeze
    during = next(line for line in out.stderr.splitlines() if line.startswith("DURING")).split()
    assert during[1] == "True" and int(during[2]) > 1000, during
    frozen = next(line for line in out.stderr.splitlines() if line.startswith("FROZEN"))
    assert int(frozen.split()[1]) > int(during[2]), frozen


def test_an_in_process_call_leaves_the_collector_alone(memu_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = gc.get_freeze_count()
    assert run_host("codex", ["docs", "install"]) == 0
    assert capsys.readouterr().out.strip()
    assert gc.get_freeze_count() == before and gc.isenabled()
