"""Shared fixtures for the OpenClaw host tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from memu_host_openclaw.testing import create_agent_db


@pytest.fixture
def home(memu_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated home with the warm server's autostart off (no daemons left behind)."""
    monkeypatch.setenv("MEMU_SERVE_AUTOSTART", "0")
    return memu_home

class AgentStore:
    """One agent's ``openclaw-agent.sqlite`` (real schema, STRICT, WAL), written like OpenClaw does."""

    def __init__(self, agents: Path, agent_id: str) -> None:
        self.path = agents / agent_id / "agent" / "openclaw-agent.sqlite"
        self.conn = create_agent_db(self.path)

    def window(
        self, sid: str, key: str | None = None, generation: str = "g1", updated: int | None = None
    ) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO session_windows VALUES (?, ?, 'new', ?)",
            (sid, key or f"agent:main:main:{sid}", updated),
        )
        self.conn.execute(
            "INSERT OR REPLACE INTO transcript_rewrite_watermarks VALUES (?, ?, 0)", (sid, generation)
        )

    def events(self, sid: str, *entries: dict[str, Any], at_ms: int = 1_752_537_600_000) -> None:
        (start,) = self.conn.execute(
            "SELECT COALESCE(MAX(seq) + 1, 0) FROM transcript_events WHERE session_id = ?", (sid,)
        ).fetchone()
        for n, entry in enumerate(entries):
            self.conn.execute(
                "INSERT INTO transcript_events VALUES (?, ?, ?, ?)",
                (sid, start + n, json.dumps(entry), at_ms + n),
            )

    def rewrite(self, sid: str, generation: str, *entries: dict[str, Any], at_ms: int) -> None:
        """A compaction rewrite: the session's events replaced, ``seq`` restarting at 0."""
        self.conn.execute("DELETE FROM transcript_events WHERE session_id = ?", (sid,))
        self.conn.execute(
            "UPDATE transcript_rewrite_watermarks SET generation = ? WHERE session_id = ?", (generation, sid)
        )
        self.conn.execute(
            "UPDATE session_windows SET transcript_updated_at = ? WHERE session_id = ?", (at_ms, sid)
        )
        self.events(sid, *entries, at_ms=at_ms)

    def close(self) -> None:
        self.conn.close()


def _msg(role: str, text: str, **extra: Any) -> dict[str, Any]:
    """A ``message`` entry with one text block."""
    return {
        "type": "message",
        **extra,
        "message": {"role": role, "content": [{"type": "text", "text": text}]},
    }


@pytest.fixture
def msg() -> Callable[..., dict[str, Any]]:
    """Builds a ``message`` entry with one text block: ``msg(role, text, **extra)``."""
    return _msg


@pytest.fixture
def make_store() -> Iterator[Callable[[Path, str], AgentStore]]:
    """Builds agent stores (closed at teardown): ``make_store(agents_root, agent_id)``."""
    made: list[AgentStore] = []

    def make(agents: Path, agent_id: str) -> AgentStore:
        made.append(AgentStore(agents, agent_id))
        return made[-1]

    yield make
    for s in made:
        s.close()


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    root = tmp_path / "agents"
    root.mkdir()
    return root


@pytest.fixture
def store(agents: Path) -> Iterator[AgentStore]:
    s = AgentStore(agents, "main")
    yield s
    s.close()
