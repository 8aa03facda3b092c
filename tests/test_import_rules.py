"""The import rules of ADR 0008 hold: ``lint-imports`` keeps every contract in pyproject.toml.

Plugin distributions import only public memu_core modules; the engine and the stores never
import the application around them; the warm server never imports the bridging pipeline or the
CLI; memu_core's rooms are layered without cycles.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_are_kept() -> None:
    pytest.importorskip("importlinter", reason="pip install import-linter (requirements-dev.txt)")
    lint_imports = Path(sys.executable).with_name("lint-imports")
    # The console script of this interpreter's environment (Windows adds .exe; fall back to it).
    command = (
        [str(lint_imports)]
        if lint_imports.exists()
        else [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"]
    )
    done = subprocess.run(
        [*command, "--no-cache", "--no-logo"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
