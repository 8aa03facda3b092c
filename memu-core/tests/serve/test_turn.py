"""The minimal warm client (``memu_core._serve.turn``) and the byte budget of the per-turn answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memu_core import _layout
from memu_core._retrieve_output import DEFAULT_MAX_BYTES, fit, render, trim_content
from memu_core._serve import client, turn

from .conftest import start_server

# Modules the warm per-turn path must not import: the framework, settings, plugins, the host
# package beyond its id, and the stdlib modules the interpreter has not loaded by itself.
FORBIDDEN = (
    "typer", "click", "rich", "pydantic", "pydantic_settings", "pluggy", "sqlalchemy", "numpy",
    "json", "re", "enum", "typing", "pathlib", "socket", "dataclasses", "inspect", "hashlib",
    "importlib.metadata", "memu_core._cli.shell", "memu_core._cli.flags", "memu_core._config", "memu_core._layout",
    "memu_core._plugins", "memu_core._hostkit", "memu_core._retrieve_output", "memu_core._events",
    "memu_core.settings", "memu_host_claude_code.spec", "memu_host_claude_code.plugin",
)  # fmt: skip

PROBE = (
    "import sys\n"
    "sys.argv = [{prog!r}, *{args!r}]\n"
    "{entry}\n"
    "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
    "sys.stderr.write('LOADED ' + ' '.join(m for m in {forbidden!r} if m in sys.modules) + ' CODE ' + str(code))\n"
)
HOST = "from memu_host_claude_code.cli import main"
MEMU = "from memu_core._cli.main import main"


def run(entry: str, prog: str, *args: str, env: dict[str, str] | None = None) -> tuple[str, list[str], int]:
    """stdout, the forbidden modules loaded, and the exit code of a fresh console-script process."""
    code = PROBE.format(prog=prog, args=list(args), entry=entry, forbidden=FORBIDDEN)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env or dict(os.environ)
    )
    tail = out.stderr.rsplit("LOADED ", 1)[-1]
    loaded, _, exit_code = tail.partition(" CODE ")
    return out.stdout, loaded.split(), int(exit_code or 1)


def requests() -> int:
    return int(client.status()["requests"])  # type: ignore[index]


def test_warm_host_retrieve_imports_only_what_it_must_and_prints_the_full_answer(home: Path) -> None:
    cold, loaded_cold, code = run(HOST, "memu-claude-code", "retrieve", "green tea deploy")
    assert code == 0 and "memu_core._cli.shell" in loaded_cold  # no server: the full command answered
    proc = start_server()
    before = requests()
    warm, loaded, code = run(HOST, "memu-claude-code", "retrieve", "green tea deploy")
    assert requests() == before + 2  # our retrieve (+ this status)
    assert code == 0 and loaded == []
    assert warm == cold and json.loads(warm)["segments"]
    client.stop()
    proc.wait(30)


def test_warm_memu_retrieve_imports_only_what_it_must(home: Path) -> None:
    cold, _, _ = run(MEMU, "memu", "retrieve", "tea")
    proc = start_server()
    warm, loaded, code = run(MEMU, "memu", "retrieve", "tea")
    assert code == 0 and loaded == []
    assert warm == cold and json.loads(warm)["files"][0]["name"] == "profile"
    # A flag the light client does not know goes to the full command, answered warm all the same.
    other, loaded, code = run(MEMU, "memu", "retrieve", "tea", "--top-k", "1")
    assert code == 0 and "memu_core._cli.shell" in loaded and len(json.loads(other)["segments"]) == 1
    client.stop()
    proc.wait(30)


def test_budget_flag_and_variable_reach_the_warm_answer(home: Path) -> None:
    proc = start_server()
    whole, _, _ = run(HOST, "memu-claude-code", "retrieve", "tea deploy Berlin", "--max-bytes", "0")
    small, loaded, code = run(HOST, "memu-claude-code", "retrieve", "tea deploy Berlin", "--max-bytes=900")
    assert code == 0 and loaded == []
    assert len(small.encode()) <= 901 < len(whole.encode())
    assert json.loads(small)["omitted"] and "omitted" not in json.loads(whole)
    env = {**os.environ, "MEMU_RETRIEVE_MAX_BYTES": "900"}
    assert run(HOST, "memu-claude-code", "retrieve", "tea deploy Berlin", env=env)[0] == small
    client.stop()
    proc.wait(30)


def test_light_client_declines_what_it_cannot_decide_cheaply(home: Path) -> None:
    proc = start_server()
    config = _layout.config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    for line in ("MEMU_TELEMETRY=1\n", 'MEMU_TELEMETRY="0"\n', f"MEMU_DB={_layout.default_db()}\n"):
        config.write_text(line)
        assert turn.host_answer("claude-code", ["retrieve", "tea"]) is None
    # What `config --telemetry off` writes is read here: the turn stays light (and silent).
    config.write_text("MEMU_MEMORY_MODE=local\nMEMU_TELEMETRY=0\n")
    assert turn._handshake() is not None
    config.write_text("MEMU_MEMORY_MODE=local\nMEMU_TELEMETRY=1\n")
    assert turn._handshake() is None
    assert not turn.declared_off(b"MEMU_TELEMETRY=0\n# MEMU_TELEMETRY=1\n") and not turn.declared_off(b"")
    assert turn.declared_off(b"MEMU_TELEMETRY = off\r\nMEMU_DB_X=1\n")
    config.unlink()
    for args in (["retrieve"], ["retrieve", "  "], ["retrieve", "tea", "-v"], ["retrieve", "a", "b"], ["doctor"]):
        assert turn.parse(args, ("retrieve",)) is None
    assert turn.parse(["retrieve", "tea", "--max-bytes", "10"], ("retrieve",)) == ("tea", 10)
    client.stop()
    proc.wait(30)


def test_handshake_values_match_the_layout_and_the_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from memu_core._config.dsn import normalise_db

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MEMU_RUN_DIR", raising=False)
    monkeypatch.delenv("MEMU_CONFIG_ENV", raising=False)
    assert turn.socket_path() == str(_layout.serve_socket())
    assert turn.config_path() == str(_layout.config_file())
    monkeypatch.setenv("MEMU_RUN_DIR", "~/r")
    assert turn.socket_path() == str(_layout.serve_socket())
    for value in ("", "  ", "~/x.db", "rel/store.sqlite3", "/abs/s.db"):
        assert turn.plain_store(value) == normalise_db(value)
    for value in ("postgresql://u@h/db", "sqlite:///x.db", ":memory:", "inmemory"):
        assert turn.plain_store(value) is None
    assert turn.DEFAULT_MAX_BYTES == DEFAULT_MAX_BYTES


def segment(n: int, parent: str, text: str, kind: str = "body") -> dict[str, object]:
    return {"id": f"s{n}", "kind": kind, "text": text, "score": 1.0 / n, "source_file": parent}


def test_fit_keeps_the_best_first_each_file_once_and_caps_header_files() -> None:
    body = "\n".join(f"line {i} of the runbook" for i in range(200))
    files = [
        {"name": f"f{i}", "track": "memory", "description": "d", "content": body, "score": 1.0 / (i + 1)}
        for i in range(30)
    ]
    segs = [segment(1, "memory/f0", "line 7 of the runbook"), segment(2, "memory/f0", "line 150 of the runbook")]
    segs += [segment(n, f"memory/f{n}", f"line {n} of the runbook") for n in range(3, 6)]
    doc = {"segments": segs, "files": files, "resources": [], "mode": "lexical"}
    out = fit(doc, 6000)
    assert len(render(out).encode()) <= 6000
    assert [s["id"] for s in out["segments"]] == ["s1", "s2", "s3", "s4", "s5"]
    names = [f["name"] for f in out["files"]]
    assert names[:4] == ["f0", "f3", "f4", "f5"] and len(names) == len(segs)  # one header file, up to top_k
    assert out["files"][0]["content"].splitlines() == [
        "…", "line 6 of the runbook", "line 7 of the runbook", "line 8 of the runbook", "…",
        "line 149 of the runbook", "line 150 of the runbook", "line 151 of the runbook", "…",
    ]  # fmt: skip
    assert out["omitted"] == {"files": 30 - len(names)} and out["mode"] == "lexical"
    tiny = fit(doc, 700)
    assert len(render(tiny).encode()) <= 700 and tiny["omitted"]["segments"] >= 2 and not tiny["files"]
    assert fit(doc, 0) == doc


def test_fit_keeps_the_files_of_an_answer_without_segments() -> None:
    # A v4 server may answer with files only; they are the answer, not header hits to cap.
    files = [{"name": f"f{i}", "track": "memory", "path": f"memory/f{i}.md"} for i in range(3)]
    out = fit({"segments": [], "files": files, "resources": []}, 6000)
    assert out["files"] == files and "omitted" not in out
    many = fit({"segments": [], "files": files * 200, "resources": []}, 700)
    assert len(many["files"]) < 600 and many["omitted"]["files"] >= 1  # the budget still cuts


def test_trim_content_without_a_match_keeps_the_first_line() -> None:
    assert trim_content("alpha\nbeta\ngamma", ["zeta"]) == "alpha\n…"
    assert trim_content("alpha", []) == "alpha"
