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


def test_warm_turn_with_telemetry_on_spools_one_event_without_the_full_command(home: Path) -> None:
    from memu_core import _eventline

    spool = home / "ev" / "turns.jsonl"
    # The server's environment has telemetry off: the decision, id, spool and session are the client's.
    proc = start_server()
    env = {
        **os.environ,
        "MEMU_TELEMETRY": "1",
        "MEMU_CLIENT_ID": "c0ffee00-0000-4000-8000-000000000001",
        "MEMU_EVENTS_BASE_URL": "http://127.0.0.1:9/api/memu/analytics/events",
        "MEMU_EVENTS_SPOOL": str(spool),
        "CLAUDE_CODE_SESSION_ID": "sess-42",
    }
    off, _, _ = run(HOST, "memu-claude-code", "retrieve", "green tea deploy")
    assert not spool.exists()
    warm, loaded, code = run(HOST, "memu-claude-code", "retrieve", "green tea deploy", env=env)
    assert code == 0 and loaded == [] and warm == off  # neither the CLI, the settings nor the sink loaded
    lines = spool.read_bytes().splitlines()
    assert len(lines) == 1
    event = json.loads(lines[0])
    assert event["event_name"] == "memory_search_succeeded" and event["client_type"] == "memu_cli"
    assert set(event) == {
        "event_id",
        "event_name",
        "client_type",
        "client_instance_id",
        "occurred_at",
        "context",
        "properties",
    }
    assert set(event["properties"]) == set(_eventline.CATALOGUE["memory_search_succeeded"][1])
    assert event["properties"]["result_count"] > 0 and "green" not in lines[0].decode()  # counts, never the query
    assert event["client_instance_id"] == env["MEMU_CLIENT_ID"]
    assert event["context"]["agent_platform"] == "claude_code" and event["context"]["session_id"] == "sess-42"
    assert event["context"]["reported_by"] == "code" and event["context"]["deployment_mode"] == "local"

    # The full command's event for the same turn has the same envelope (only ids, times and latency differ).
    from memu_core.events import client_version

    assert event["context"]["client_version"] == client_version()
    env_full = {**env, "MEMU_DEBUG": "1"}  # -> the full command
    run(HOST, "memu-claude-code", "retrieve", "green tea deploy", env=env_full)
    full = json.loads(spool.read_bytes().splitlines()[1])
    assert {k: v for k, v in full["context"].items()} == event["context"]
    assert full["properties"]["result_count"] == event["properties"]["result_count"]
    assert (
        list(full) == list(event)
        and full["occurred_at"][-5] == "."
        and len(full["occurred_at"]) == len(event["occurred_at"])
    )

    # Opted out in this shell: nothing more, still light.
    _, loaded, code = run(HOST, "memu-claude-code", "retrieve", "tea", env={**env, "DO_NOT_TRACK": "1"})
    assert code == 0 and loaded == [] and len(spool.read_bytes().splitlines()) == 2
    # At the cap: the line is dropped and counted, as the sink does.
    with spool.open("ab") as f:
        f.write(b"\n" * (_eventline.MAX_SPOOL_BYTES - spool.stat().st_size))
    _, loaded, code = run(HOST, "memu-claude-code", "retrieve", "tea", env=env)
    assert code == 0 and loaded == [] and spool.stat().st_size == _eventline.MAX_SPOOL_BYTES
    assert (spool.parent / "turns.dropped").read_text() == "1"
    # No client id yet: the full command runs, as it mints one into config.env.
    _, loaded, code = run(HOST, "memu-claude-code", "retrieve", "tea", env={**env, "MEMU_CLIENT_ID": ""})
    assert code == 0 and "memu_core._events" in loaded
    client.stop()
    proc.wait(30)


def test_light_client_reads_plain_config_values_and_names_the_spool_as_the_layout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert turn.plain_value(b"MEMU_TELEMETRY=1\nMEMU_CLIENT_ID=ab-12\n", b"MEMU_CLIENT_ID") == "ab-12"
    assert turn.plain_value(b"MEMU_DB=x\n", b"MEMU_CLIENT_ID") == ""
    assert turn.plain_value(b"MEMU_CLIENT_ID='ab'\n", b"MEMU_CLIENT_ID") is None
    assert turn.plain_value(b"export MEMU_CLIENT_ID=ab\n", b"MEMU_CLIENT_ID") is None
    on = {"MEMU_TELEMETRY": "1", "MEMU_CLIENT_ID": "id"}
    assert turn._recording({**on, "DO_NOT_TRACK": "yes"}, b"") is False
    assert turn._recording({"MEMU_TELEMETRY": "0"}, b"MEMU_TELEMETRY=1\n") is False
    assert turn._recording({}, b"MEMU_TELEMETRY=1\nMEMU_CLIENT_ID=id\nMEMU_MEMORY_MODE=cloud\n") == {
        "client_id": "id", "mode": "cloud", "version": turn.client_version(),
    }  # fmt: skip
    assert turn._recording({}, b'MEMU_TELEMETRY="1"\n') is None
    assert turn._recording({"MEMU_TELEMETRY": "1"}, b"") is None  # no id yet: the full command mints it
    monkeypatch.setenv("HOME", str(tmp_path))
    for raw in ("", "~/s/events.jsonl", str(tmp_path / "a.b.jsonl"), str(tmp_path / "plain")):
        monkeypatch.setenv("MEMU_EVENTS_SPOOL", raw)
        assert turn.spool_files() == (str(_layout.events_spool()), str(_layout.events_companion("dropped")))
