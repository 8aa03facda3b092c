"""What the plugin manager costs the per-turn commands, and pluggy's trace, in fresh processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
THIRD_PARTY = ("memu_host_", "memu_backend_", "memu_embed_", "memu_telemetry", "memu_server")
FRAMEWORKS = ("typer", "pydantic", "pydantic_settings")

PROBE = """
import sys
{run}
loaded = sorted({{m for m in sys.modules if m.startswith({third_party!r}) or m.split(".")[0] in {frameworks!r}}})
print("LOADED", loaded, file=sys.stderr)
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A fresh home holding a lexical-only store, no warm server, the default configuration.

    The store is committed without an embedder; the retrieves then run with nothing configured,
    as a new user has it (the default provider is the local model, which a store without
    vectors must not make anyone load).
    """
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    environ.update(HOME=str(tmp_path), MEMU_SERVE_AUTOSTART="0")
    commit = [sys.executable, "-m", "memu_core._cli.main", "commit", "--from-dir", str(REPO / "examples")]
    done = subprocess.run(
        commit, env={**environ, "MEMU_EMBED_PROVIDER": "none"}, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return environ


def probe(env: dict[str, str], run: str) -> tuple[str, str]:
    code = PROBE.format(run=run, third_party=THIRD_PARTY, frameworks=FRAMEWORKS)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    loaded = next(line for line in out.stderr.splitlines() if line.startswith("LOADED"))
    return out.stdout, loaded


def test_a_cold_lexical_memu_retrieve_imports_no_plugin_and_no_framework(env: dict[str, str]) -> None:
    run = (
        "from memu_core._cli.main import main\n"
        "try:\n    main(['retrieve', 'how do we cut a release'])\nexcept SystemExit as exc:\n    assert not exc.code"
    )
    stdout, loaded = probe(env, run)
    assert '"release-checklist"' in stdout
    assert loaded == "LOADED []"


def test_a_cold_host_retrieve_loads_only_its_own_plugin(env: dict[str, str]) -> None:
    run = "from memu_host_codex.cli import main\ntry:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code"
    code = PROBE.format(run=run, third_party=THIRD_PARTY, frameworks=FRAMEWORKS)
    argv = [sys.executable, "-c", f"import sys; sys.argv = ['memu-codex', 'retrieve', 'cut a release']\n{code}"]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert '"release-checklist"' in out.stdout, out.stderr
    assert "LOADED ['memu_host_codex', 'memu_host_codex.cli', 'memu_host_codex.plugin', 'memu_host_codex.spec']" in (
        out.stderr
    )


def test_trace_plugins_prints_pluggys_hook_trace(env: dict[str, str]) -> None:
    traced = {**env, "MEMU_TRACE_PLUGINS": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "memu_core._cli.main", "plugins"], env=traced, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "memu_register_stores [hook]" in out.stderr
    assert "finish memu_register_stores -->" in out.stderr
    assert "memu_register_hosts [hook]" in out.stderr
    quiet = subprocess.run(
        [sys.executable, "-m", "memu_core._cli.main", "plugins"], env=env, capture_output=True, text=True, timeout=60
    )
    assert "[hook]" not in quiet.stderr
