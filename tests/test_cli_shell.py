"""Every memu binary runs in one CLI shell: `memu`, a host binary and `memu-server` behave alike.

Real processes in a temp home: UTF-8 output whatever the console's encoding, `--version`, `-v`
and `MEMU_DEBUG=1`, one stderr line per handled error with the error's exit code, plain help
with shell completion, and a per-turn `retrieve` that imports no framework.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BINARIES = {
    "memu": [sys.executable, "-m", "memu_core._cli.main"],
    "memu-codex": [sys.executable, "-c", "from memu_host_codex.cli import main; main()"],
    "memu-server": [sys.executable, "-m", "memu_server"],
}
HANDLED = {  # one error each binary's user can cause: arguments, exit code, what the line says
    "memu": (["retrieve", "  "], 2, "empty query"),
    "memu-codex": (["retrieve", "  "], 2, "the query is empty"),
    "memu-server": (["serve", "--no-tcp"], 2, "--no-tcp needs --socket"),
}
NOTE = """---
name: deploy-notes
description: How we deploy — the café release
---
- deploy with `make ship` → production ✓
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_") and k != "PYTHONIOENCODING"}
    clean.update(HOME=str(home), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0", HF_HUB_OFFLINE="1")
    return clean


def run(name: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*BINARIES[name], *args], env=env, capture_output=True, timeout=120)


@pytest.fixture
def stored(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text(NOTE, encoding="utf-8")
    done = run("memu", env, "commit", "--from-dir", str(notes))
    assert done.returncode == 0, done.stderr
    return env


@pytest.mark.parametrize("name", ["memu", "memu-codex"])
def test_an_ascii_console_still_gets_utf8_json(stored: dict[str, str], name: str) -> None:
    out = run(name, {**stored, "PYTHONIOENCODING": "ascii"}, "retrieve", "deploy")
    assert out.returncode == 0, out.stderr.decode("utf-8", "replace")
    answer = json.loads(out.stdout.decode("utf-8"))
    assert "café" in json.dumps(answer, ensure_ascii=False)


@pytest.mark.parametrize("name", list(BINARIES))
def test_version(env: dict[str, str], name: str) -> None:
    out = run(name, env, "--version")
    assert out.returncode == 0, out.stderr
    assert re.fullmatch(rf"{name} \S+( \(memu-core \S+\))?\n", out.stdout.decode()), out.stdout


@pytest.mark.parametrize("name", list(BINARIES))
def test_a_handled_error_is_one_line_and_its_exit_code(env: dict[str, str], name: str) -> None:
    args, code, needle = HANDLED[name]
    out = run(name, env, *args)
    err = out.stderr.decode()
    assert out.returncode == code, err
    assert err.count("\n") == 1 and err.startswith("error: ") and needle in err, err
    assert out.stdout == b""


@pytest.mark.parametrize("name", list(BINARIES))
@pytest.mark.parametrize("how", ["-v", "--verbose", "MEMU_DEBUG=1"])
def test_verbose_and_memu_debug_add_the_traceback(env: dict[str, str], name: str, how: str) -> None:
    args, code, needle = HANDLED[name]
    out = run(name, {**env, "MEMU_DEBUG": "1"}, *args) if how == "MEMU_DEBUG=1" else run(name, env, how, *args)
    err = out.stderr.decode()
    assert out.returncode == code, err
    assert "Traceback (most recent call last)" in err
    assert err.rstrip().splitlines()[-1].startswith("error: ") and needle in err


@pytest.mark.parametrize("name", list(BINARIES))
def test_a_usage_mistake_is_one_line_naming_the_help(env: dict[str, str], name: str) -> None:
    out = run(name, env, "no-such-command")
    err = out.stderr.decode()
    assert out.returncode == 2
    assert err == f"error: No such command 'no-such-command'. (see `{name} --help`)\n"


@pytest.mark.parametrize("name", list(BINARIES))
def test_plain_help_with_completion(env: dict[str, str], name: str) -> None:
    out = run(name, env, "--help")
    text = out.stdout.decode()
    assert out.returncode == 0
    assert text.startswith(f"Usage: {name} [OPTIONS] COMMAND [ARGS]...")
    for option in ("--version", "-v, --verbose", "--install-completion", "--show-completion"):
        assert option in text
    assert not set(text) & set("╭╮╰╯│─"), "help must not draw rich boxes"
    script = run(name, env, "--show-completion", "bash")
    assert script.returncode == 0 and f"_{name.upper().replace('-', '_')}_COMPLETE" in script.stdout.decode()


@pytest.mark.parametrize("name", ["memu", "memu-codex"])
def test_debug_logs_go_to_stderr_and_stdout_keeps_the_result(stored: dict[str, str], name: str) -> None:
    quiet = run(name, stored, "retrieve", "deploy")
    assert quiet.stderr == b""
    loud = run(name, stored, "-v", "retrieve", "deploy")
    assert loud.returncode == 0
    assert json.loads(loud.stdout) == json.loads(quiet.stdout)
    assert "level=debug" in loud.stderr.decode() and "event=" in loud.stderr.decode()


PROBE = """
import sys
from memu_core._cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    assert exc.code == 0, exc.code
watched = {"typer", "click", "pydantic", "pydantic_settings", "structlog"}
print("LOADED", sorted({m.split(".")[0] for m in sys.modules} & watched), file=sys.stderr)
"""


def probe(env: dict[str, str], *args: str) -> str:
    out = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, timeout=60)
    return out.stderr.strip().splitlines()[-1]


def test_a_lexical_retrieve_loads_no_framework_and_structlog_only_when_verbose(stored: dict[str, str]) -> None:
    assert probe(stored, "retrieve", "deploy") == "LOADED []"
    assert probe(stored, "-v", "retrieve", "deploy") == "LOADED ['structlog']"


HOST_PROBE = """
import sys
from memu_host_codex.cli import main
try:
    main()
except SystemExit as exc:
    assert exc.code == 0, exc.code
watched = {"typer", "click", "pydantic", "pydantic_settings", "structlog"}
print("LOADED", sorted({m.split(".")[0] for m in sys.modules} & watched), file=sys.stderr)
"""


def test_a_host_bridging_run_loads_no_framework(stored: dict[str, str], tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for args in (["prepare", "--session-dir", str(sessions)], ["commit"], ["retrieve", "deploy"]):
        out = subprocess.run(
            [sys.executable, "-c", HOST_PROBE, *args], env=stored, capture_output=True, text=True, timeout=120
        )
        assert out.stderr.strip().splitlines()[-1] == "LOADED []", (args, out.stderr[-500:])
