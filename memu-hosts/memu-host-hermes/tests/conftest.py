"""Shared fixtures for the Hermes host tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from memu_host_hermes.testing import create_state_db


@pytest.fixture
def home(memu_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated home with the warm server's autostart off (no daemons left behind)."""
    monkeypatch.setenv("MEMU_SERVE_AUTOSTART", "0")
    return memu_home

class HermesDB:
    """A Hermes ``state.db`` with the real schema in WAL mode, written like the gateway does."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = create_state_db(path)

    def session(self, sid: str, started: float) -> None:
        self.conn.execute("INSERT INTO sessions(id, source, started_at) VALUES (?, 'cli', ?)", (sid, started))

    def message(self, sid: str, role: str, ts: float, content: str | None = None, **cols: str) -> None:
        names = ["session_id", "role", "timestamp", "content", *cols]
        values = [sid, role, ts, content, *cols.values()]
        self.conn.execute(
            f"INSERT INTO messages({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", values
        )

    def close(self) -> None:
        self.conn.close()


def fill_example(db: HermesDB) -> None:
    """The five row types of one session plus an older second session."""
    db.session("20260801_090000_ab12.cd", 100.0)
    db.message("20260801_090000_ab12.cd", "user", 110.0, "what port does the wiki run on?")
    db.message("20260801_090000_ab12.cd", "assistant", 111.0, "Port 8088.")
    db.session("20260802_100000_ef34.gh", 200.0)
    sid = "20260802_100000_ef34.gh"
    db.message(sid, "system", 200.0, "you are hermes")
    db.message(sid, "user", 201.0, "Clean the build cache with make clean-cache, never rm -rf build/")
    db.message(sid, "assistant", 202.0, None, tool_calls='[{"name":"shell","arguments":"make clean-cache"}]')
    db.message(sid, "tool", 203.0, "removed 3 files", tool_call_id="call_1", tool_name="shell")
    db.message(sid, "assistant", 204.0, "Done — cleaned the cache with make clean-cache.")


@pytest.fixture
def hermes_db(tmp_path: Path) -> Iterator[HermesDB]:
    """A filled database under a folder whose name holds ``%`` and ``#``."""
    db = HermesDB(tmp_path / "odd 100%#1" / "state.db")
    fill_example(db)
    yield db
    db.close()


@pytest.fixture
def hermes_db_class() -> type[HermesDB]:
    """The database builder class (tests cannot import conftest by name)."""
    return HermesDB
