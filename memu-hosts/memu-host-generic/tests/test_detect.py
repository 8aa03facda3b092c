"""``memu-agent detect`` on a synthetic home with several agents."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from memu_host_generic import detect
from memu_host_generic.spec import SPEC

import memu_core
from memu_core._plugins.catalogue import for_host
from memu_core._plugins.entries import installed_entry_points
from memu_core.host import HostSpec
from memu_core.testing import fake_entry_point, registered
from memu_core.testing.rehearse import call


def _jsonl(path: Path, *records: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture
def synthetic_home(home: Path) -> Path:
    # A dedicated host.
    _jsonl(home / ".codex" / "sessions" / "2026" / "r.jsonl", {"payload": {"type": "message", "role": "user"}})
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
    codex = blocks["~/.codex"]
    assert "agent: Codex → memu-host-codex (installed; binary memu-codex)" in codex
    assert "sessions: ~/.codex/sessions (1 session file(s))" in codex and "next: memu-codex docs install" in codex
    mine = blocks["~/.myagent"]
    assert (
        "memorization: works — 1 session file(s) in ~/.myagent/logs, "
        "3/3 sampled record(s) recognized (2 conversation, 1 tool; dialect claude)" in mine
    )
    assert "retrieval: works — instruction file ~/.myagent/AGENTS.md" in mine and "verdict: both" in mine
    assert "next: memu-agent prepare --session-dir ~/.myagent/logs --base-dir ~/.memu/hosts/agent-myagent" in mine
    assert "next: memu-agent install-instruction --path ~/.myagent/AGENTS.md" in mine
    sql = blocks["~/.sqlagent"]
    assert "sessions likely live in ~/.sqlagent/state.db (SQLite" in sql
    assert "retrieval: works — instruction file ~/.sqlagent/persona/SOUL.md" in sql and "verdict: retrieval" in sql
    assert "no record matched a known dialect" in blocks["~/.strange"] and "verdict: neither" in blocks["~/.strange"]
    assert "hold only tool records" in blocks["~/.toolbox"]
    assert out.rstrip().splitlines()[-1].startswith("  retrieval    → memu-agent install-instruction")


def test_survey_json(synthetic_home: Path) -> None:
    code, out, _ = call(SPEC, "detect", "--json")
    assert code == 0
    agents = {Path(a["path"]).name: a for a in json.loads(out)["agents"]}
    assert agents[".myagent"]["verdict"] == "both" and agents[".myagent"]["messages"] == 2
    assert agents[".myagent"]["dialects"] == {"claude": 3}
    assert agents[".sqlagent"]["memorization"] is False and agents[".sqlagent"]["sqlite_files"][0].endswith("state.db")
    assert agents[".codex"]["dedicated"] == "memu-codex" and agents[".codex"]["installed"] is True
    assert agents[".myagent"]["adapter"] == "generic" and agents[".myagent"]["distribution"] == "memu-host-generic"
    assert agents[".strange"]["verdict"] == "neither"


def test_probe_one_folder_and_bad_input(synthetic_home: Path) -> None:
    code, out, _ = call(SPEC, "detect", str(synthetic_home / ".myagent"), "--json")
    assert code == 0 and json.loads(out)["session_dir"] == str(synthetic_home / ".myagent" / "logs")
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


# -- the registry: which distribution serves each agent, installed or not ------------------


@memu_core.hookimpl
def memu_register_hosts() -> list[HostSpec]:
    """A third-party host plugin (not in memu's catalogue), for the registry tests."""
    return [
        HostSpec(
            id="acme",
            display="Acme Agent",
            source="memu_host_generic.source:GenericSource",
            package="memu_host_generic",
            session_dir="~/.acme/sessions",
            instruction_path="~/.acme/ACME.md",
        )
    ]


@pytest.fixture
def agents_home(home: Path) -> Path:
    _jsonl(
        home / ".claude" / "projects" / "-home-u-shop" / "5e55.jsonl",
        {"type": "user", "message": {"content": "ship it"}},
    )
    (home / ".claude" / "AGENTS.md").write_text("# a stray AGENTS.md Claude Code never reads\n")
    _jsonl(
        home / ".codex" / "sessions" / "2026" / "05" / "01" / "rollout-1.jsonl",
        {"payload": {"type": "message", "role": "user"}},
    )
    _jsonl(home / ".acme" / "sessions" / "deep" / "leaf" / "a1.jsonl", {"role": "user", "content": "hi"})
    _jsonl(home / ".zeta" / "log" / "z.jsonl", {"role": "user", "content": "hello"})
    return home


def _installed_except(*excluded: str) -> dict[str, str]:
    """The plugin switches of an environment where ``excluded`` distributions are not installed."""
    return {"MEMU_DISABLE_PLUGINS": ",".join(excluded)}


def test_detect_names_the_distribution_serving_each_agent(agents_home: Path) -> None:
    acme = fake_entry_point("memu-host-acme", sys.modules[__name__], dist="memu-host-acme", version="1.0")
    with registered(entry_points=[*installed_entry_points(), acme], environ=_installed_except("memu-host-codex")):
        code, out, _ = call(SPEC, "detect", "--json")
        assert code == 0
        agents = {a["path"]: a for a in json.loads(out)["agents"]}
        code, text, _ = call(SPEC, "detect")
    home = str(agents_home)
    claude = agents[f"{home}/.claude"]
    assert (claude["distribution"], claude["installed"], claude["install"]) == ("memu-host-claude-code", True, None)
    assert claude["instruction_file"] == f"{home}/.claude/CLAUDE.md"
    assert claude["session_dir"] == f"{home}/.claude/projects" and claude["session_files"] == 1
    assert claude["next"] == ["memu-claude-code docs install"]
    codex = agents[f"{home}/.codex"]
    assert (codex["distribution"], codex["installed"]) == ("memu-host-codex", False)
    assert codex["install"] == "pip install memu-host-codex"
    assert codex["plugins_install"] == "memu plugins install memu-host-codex"
    assert codex["next"] == ["pip install memu-host-codex", "memu-codex docs install"]
    assert codex["session_dir"] == f"{home}/.codex/sessions"
    assert codex["instruction_file"] == f"{home}/.codex/AGENTS.md"
    third = agents[f"{home}/.acme"]
    assert (third["distribution"], third["installed"], third["binary"]) == ("memu-host-acme", True, "memu-acme")
    assert third["session_dir"] == f"{home}/.acme/sessions" and third["instruction_file"] == f"{home}/.acme/ACME.md"
    zeta = agents[f"{home}/.zeta"]
    assert (zeta["adapter"], zeta["distribution"], zeta["session_dir"]) == (
        "generic",
        "memu-host-generic",
        f"{home}/.zeta/log",
    )
    assert sorted(agents) == [f"{home}/{n}" for n in (".acme", ".claude", ".codex", ".zeta")]
    assert code == 0
    blocks = {b.splitlines()[0]: b for b in text.strip().split("\n\n")}
    assert "agent: Codex" not in blocks["~/.codex"]  # not installed: the catalogue names it
    assert "→ memu-host-codex (not installed; binary memu-codex)" in blocks["~/.codex"]
    assert "  install: pip install memu-host-codex" in blocks["~/.codex"]
    assert "  or: memu plugins install memu-host-codex" in blocks["~/.codex"]
    assert "  instruction: ~/.claude/CLAUDE.md" in blocks["~/.claude"]
    assert "agent: Acme Agent → memu-host-acme (installed; binary memu-acme)" in blocks["~/.acme"]
    assert "agent: unknown → memu-host-generic" in blocks["~/.zeta"]


def test_without_the_third_party_plugin_its_agent_falls_back_to_the_generic_adapter(agents_home: Path) -> None:
    with registered(entry_points=list(installed_entry_points())):
        code, out, _ = call(SPEC, "detect", str(agents_home / ".acme"), "--json")
    found = json.loads(out)
    assert code == 0 and found["adapter"] == "generic" and found["binary"] == "memu-agent"
    assert found["session_dir"] == str(agents_home / ".acme" / "sessions")
    with registered(entry_points=list(installed_entry_points())):
        code, out, _ = call(SPEC, "detect", str(agents_home / ".claude" / "projects" / "-home-u-shop"), "--json")
    found = json.loads(out)
    assert found["distribution"] == "memu-host-claude-code" and found["session_dir"] == str(
        agents_home / ".claude" / "projects"
    )


def test_the_catalogue_agrees_with_every_installed_host() -> None:
    with registered(entry_points=list(installed_entry_points())) as plugins:
        hosts = plugins.hosts()
    for host_id in hosts:
        entry = for_host(host_id)
        assert entry is not None, host_id
        spec = hosts[host_id]
        assert (entry.session_dir, entry.instruction_path) == (spec.session_dir, spec.instruction_path), host_id
        assert entry.distribution == hosts.distribution(host_id)
