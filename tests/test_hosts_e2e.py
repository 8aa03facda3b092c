"""All eight host binaries, installed, each through the whole loop on logs in its host's shape.

Each case builds a home holding one session in the host's real format (files, or a SQLite
database in WAL mode with the host's schema), then runs the installed console script as a
subprocess: ``install-instruction`` → ``prepare`` → the agent's part (a memory file written
where the job says) → ``commit`` → ``retrieve``. One shared store is configured per home, so
the last test also checks that what one host learned, another retrieves.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from memu_host_hermes.testing import create_state_db
from memu_host_openclaw.testing import create_agent_db

FACT = "The release train leaves every Tuesday at 09:30 from the main branch."
QUERY = "when does the release train leave"


def _jsonl(path: Path, *records: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _claude(home: Path) -> list[str]:
    _jsonl(
        home / ".claude" / "projects" / "-home-u-app" / "0b5e2c9a-1111-4222-8333-444455556666.jsonl",
        {
            "type": "user",
            "sessionId": "0b5e2c9a",
            "timestamp": "2026-08-20T10:00:00Z",
            "message": {"role": "user", "content": FACT},
        },
        {
            "type": "assistant",
            "timestamp": "2026-08-20T10:00:05Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]},
        },
    )
    return []


def _codex(home: Path) -> list[str]:
    _jsonl(
        home / ".codex" / "sessions" / "2026" / "08" / "20" / "rollout-2026-08-20T10-00-00-0198aaaa.jsonl",
        {"type": "session_meta", "payload": {"id": "0198aaaa", "cwd": "/w"}},
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": FACT}]},
        },
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Noted."}],
            },
        },
    )
    return []


def _cursor(home: Path) -> list[str]:
    sid = "c0ffee01-2222-4333-8444-555566667777"
    _jsonl(
        home / ".cursor" / "projects" / "-home-u-app" / "agent-transcripts" / sid / f"{sid}.jsonl",
        {"role": "user", "message": {"content": [{"type": "text", "text": FACT}]}},
        {
            "role": "assistant",
            "message": {
                "content": [{"type": "text", "text": "Noted."}, {"type": "tool_use", "name": "Shell"}]
            },
        },
    )
    return []


def _openclaw(home: Path) -> list[str]:
    conn = create_agent_db(home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite")
    conn.execute("INSERT INTO session_windows VALUES ('s1', 'agent:main:main', 'new', NULL)")
    conn.execute("INSERT INTO transcript_rewrite_watermarks VALUES ('s1', 'g1', 0)")
    for seq, entry in enumerate(
        [
            {"type": "session", "id": "s1", "cwd": "/w"},
            {"type": "message", "timestamp": 1752537600000, "message": {"role": "user", "content": FACT}},
            {
                "type": "message",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]},
            },
        ]
    ):
        conn.execute(
            "INSERT INTO transcript_events VALUES ('s1', ?, ?, ?)",
            (seq, json.dumps(entry), 1752537600000 + seq),
        )
    conn.close()
    return []


def _hermes(home: Path) -> list[str]:
    conn = create_state_db(home / ".hermes" / "state.db")
    sid = "20260820_100000_a1.b2"
    conn.execute("INSERT INTO sessions(id, source, started_at) VALUES (?, 'cli', 100.0)", (sid,))
    insert = "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, ?, ?, ?)"
    conn.execute(insert, (sid, "user", FACT, 101.0))
    conn.execute(insert, (sid, "assistant", "Noted.", 102.0))
    conn.close()
    return []


def _workbuddy(home: Path) -> list[str]:
    _jsonl(
        home / ".workbuddy" / "projects" / "d-Users-app" / "7c9e6679-7425-40de-944b-e07fc1f90ae7.jsonl",
        {
            "type": "message",
            "role": "user",
            "timestamp": 1784435392565,
            "content": [{"type": "input_text", "text": FACT}],
        },
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Noted."}]},
    )
    return []


def _cola(home: Path) -> list[str]:
    _jsonl(
        home / ".cola" / "sessions" / "desktop-local" / "s1.jsonl",
        {"type": "session", "id": "s1", "cwd": str(home)},
        {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": FACT}]}},
        {
            "type": "message",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]},
        },
    )
    return []


def _agent(home: Path) -> list[str]:
    _jsonl(
        home / ".myagent" / "logs" / "s1.jsonl",
        {"role": "user", "content": FACT},
        {"role": "assistant", "content": "Noted."},
    )
    return ["--session-dir", str(home / ".myagent" / "logs")]


HOSTS: dict[str, tuple[str, Callable[[Path], list[str]]]] = {
    "claude-code": ("memu-claude-code", _claude),
    "codex": ("memu-codex", _codex),
    "cursor": ("memu-cursor", _cursor),
    "openclaw": ("memu-openclaw", _openclaw),
    "hermes": ("memu-hermes", _hermes),
    "workbuddy": ("memu-workbuddy", _workbuddy),
    "cola": ("memu-cola", _cola),
    "agent": ("memu-agent", _agent),
}


def _runner(home: Path, binary: str, cwd: Path) -> Callable[..., str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMU_", "HERMES_", "CURSOR_", "CLAUDE_CODE_"))
    }
    env.update(HOME=str(home), USERPROFILE=str(home), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0")
    exe = shutil.which(binary) or str(Path(sys.executable).with_name(binary))

    def run(*args: str) -> str:
        proc = subprocess.run([exe, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"{binary} {' '.join(args)}: {proc.stdout}\n{proc.stderr}"
        return proc.stdout

    return run


def _loop(home: Path, host: str) -> dict[str, object]:
    binary, build = HOSTS[host]
    project = home / "app"
    project.mkdir(exist_ok=True)
    run = _runner(home, binary, project)
    prepare_args = build(home)
    run("install-instruction")
    out = run("prepare", *prepare_args)
    assert "prepared 1 session(s) -> 3 job(s)" in out, out
    base = home / ".memu" / "hosts" / host
    conversation = (base / "sessions" / "1.jsonl").read_text(encoding="utf-8")
    assert "release train" in conversation
    memory_job = (base / "jobs" / "1.txt").read_text(encoding="utf-8")
    memory_dir = Path(re.search(r"^\s+(/\S*memory)\s*$", memory_job, re.M).group(1))  # type: ignore[union-attr]
    memory_dir.mkdir(parents=True, exist_ok=True)
    (memory_dir / f"release-train-{host}.md").write_text(
        f"---\nname: release-train-{host}\ndescription: When releases ship\n---\n{FACT}\n", encoding="utf-8"
    )
    assert f"memory/release-train-{host}" in run("commit")
    return json.loads(run("retrieve", QUERY))


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_each_binary_runs_the_whole_loop(tmp_path: Path, host: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    result = _loop(home, host)
    assert f"release-train-{host}" in {f["name"] for f in result["files"]}  # type: ignore[index]


def test_what_one_host_learned_another_retrieves(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _loop(home, "hermes")
    result = json.loads(_runner(home, "memu-cursor", home)("retrieve", QUERY))
    assert "release-train-hermes" in {f["name"] for f in result["files"]}


def test_every_host_is_registered() -> None:
    from memu_core._plugins.manager import Plugins

    hosts = Plugins(environ={}).load().hosts()
    assert set(HOSTS) <= set(hosts)


def test_skill_md_routes_to_every_binary() -> None:
    text = (Path(__file__).parents[1] / "SKILL.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (.+?) \| `(memu-[a-z-]+)` \|$", text, re.M))
    assert sorted(rows.values()) == sorted(binary for binary, _ in HOSTS.values())
    for binary in rows.values():
        assert shutil.which(binary) or Path(sys.executable).with_name(binary).exists(), binary
