"""``memu-agent detect`` on a synthetic home with several agents."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from memu_host_generic import detect
from memu_host_generic.spec import SPEC

from memu_core.testing.rehearse import call


def _jsonl(path: Path, *records: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture
def synthetic_home(home: Path) -> Path:
    # A dedicated host.
    _jsonl(
        home / ".codex" / "sessions" / "2026" / "r.jsonl", {"payload": {"type": "message", "role": "user"}}
    )
    # A Claude-lineage agent with its own instruction file: both seams work.
    _jsonl(
        home / ".myagent" / "logs" / "proj" / "s1.jsonl",
        {"type": "user", "message": {"content": "remember I prefer tabs"}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Edit"}]}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "Noted."}]}},
    )
    (home / ".myagent" / "AGENTS.md").write_text("# rules\n")
    # An unknown dialect.
    _jsonl(home / ".strange" / "events.jsonl", {"event": "keypress", "key": "a"}, {"event": "tick"})
    # A SQLite-only agent with a SOUL.md one level down.
    db = home / ".sqlagent" / "state.db"
    db.parent.mkdir()
    sqlite3.connect(db).execute(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, role TEXT, content TEXT)"
    ).connection.close()
    (home / ".sqlagent" / "persona").mkdir()
    (home / ".sqlagent" / "persona" / "SOUL.md").write_text("be kind\n")
    # Tool-only logs.
    _jsonl(home / ".toolbox" / "runs.jsonl", {"role": "tool", "content": "ok"})
    # Never surveyed: skip list, memu's own tree, non-hidden folders, an empty hidden folder.
    _jsonl(home / ".cache" / "x.jsonl", {"role": "user", "content": "cached"})
    _jsonl(home / ".memu" / "hosts" / "agent" / "sessions" / "1.jsonl", {"role": "user", "content": "slice"})
    _jsonl(home / "projects" / "a.jsonl", {"role": "user", "content": "not hidden"})
    (home / ".empty").mkdir()
    return home


def test_survey(synthetic_home: Path) -> None:
    code, out, _ = call(SPEC, "detect")
    assert code == 0
    blocks = {b.splitlines()[0]: b for b in out.strip().split("\n\n")}
    assert [k for k in blocks if k.startswith("~")] == [
        "~/.codex",
        "~/.myagent",
        "~/.sqlagent",
        "~/.strange",
        "~/.toolbox",
    ]
    assert "use `memu-codex`" in blocks["~/.codex"] and "next: memu-codex docs install" in blocks["~/.codex"]
    mine = blocks["~/.myagent"]
    assert (
        "memorization: works — 1 session file(s) in ~/.myagent/logs/proj, "
        "3/3 sampled record(s) recognized (2 conversation, 1 tool; dialect claude)" in mine
    )
    assert "retrieval: works — instruction file ~/.myagent/AGENTS.md" in mine and "verdict: both" in mine
    assert (
        "next: memu-agent prepare --session-dir ~/.myagent/logs/proj --base-dir ~/.memu/hosts/agent-myagent"
        in mine
    )
    assert "next: memu-agent install-instruction --path ~/.myagent/AGENTS.md" in mine
    sql = blocks["~/.sqlagent"]
    assert "sessions likely live in ~/.sqlagent/state.db (SQLite" in sql
    assert (
        "retrieval: works — instruction file ~/.sqlagent/persona/SOUL.md" in sql
        and "verdict: retrieval" in sql
    )
    assert (
        "no record matched a known dialect" in blocks["~/.strange"]
        and "verdict: neither" in blocks["~/.strange"]
    )
    assert "hold only tool records" in blocks["~/.toolbox"]
    assert out.rstrip().splitlines()[-1].startswith("  retrieval    → memu-agent install-instruction")


def test_survey_json(synthetic_home: Path) -> None:
    code, out, _ = call(SPEC, "detect", "--json")
    assert code == 0
    agents = {Path(a["path"]).name: a for a in json.loads(out)["agents"]}
    assert agents[".myagent"]["verdict"] == "both" and agents[".myagent"]["messages"] == 2
    assert agents[".myagent"]["dialects"] == {"claude": 3}
    assert agents[".sqlagent"]["memorization"] is False and agents[".sqlagent"]["sqlite_files"][0].endswith(
        "state.db"
    )
    assert agents[".codex"]["dedicated"] == "memu-codex"
    assert agents[".strange"]["verdict"] == "neither"


def test_probe_one_folder_and_bad_input(synthetic_home: Path) -> None:
    code, out, _ = call(SPEC, "detect", str(synthetic_home / ".myagent"), "--json")
    assert code == 0 and json.loads(out)["session_dir"] == str(synthetic_home / ".myagent" / "logs" / "proj")
    code, out, _ = call(SPEC, "detect", "~/.strange")
    assert code == 0 and out.startswith("~/.strange\n")
    code, _, err = call(SPEC, "detect", str(synthetic_home / "nope"))
    assert code == 2 and "is not a folder" in err and err.count("\n") == 1


def test_an_empty_home(home: Path) -> None:
    assert call(SPEC, "detect")[1].strip() == "no agent installations found under ~"


def test_the_walk_is_bounded(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(12):
        _jsonl(home / ".big" / f"{i:02}.jsonl", {"role": "user", "content": "x"})
    monkeypatch.setattr(detect, "MAX_FILES", 5)
    p = detect.probe(home / ".big")
    assert p.truncated and len(p.session_files) == 5 and p.sampled == 3
