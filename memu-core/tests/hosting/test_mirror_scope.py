"""The mirror shows only the configured scope, and its folders exist even when the store is empty
(real SQLite store, the CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memu_core._compose import local_engine
from memu_core.host import run_host

from .conftest import TOY, toy_line, write_session


def _store(user: str, name: str, content: str) -> None:
    engine = local_engine()
    try:
        engine.commit_results(
            recall_files=[{"name": name, "track": "memory", "description": "d", "content": content}],
            user={"user_id": user},
        )
    finally:
        engine.close()


def test_mirror_holds_only_this_users_files(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _store("bob", "bob-private", "bob's bank pin hint")
    _store("default", "deploys", "make ship")
    write_session(sessions_root, "s1", toy_line("user", "hi"))
    assert run_host(TOY, ["prepare"]) == 0
    memory = home / ".memu" / "hosts" / "toy" / "memory"
    assert sorted(p.name for p in memory.glob("*.md")) == ["deploys.md"]
    assert run_host(TOY, ["commit"]) == 0
    monkeypatch.setenv("MEMU_USER_ID", "bob")  # bob's own machine mirrors bob's files only
    assert run_host(TOY, ["prepare"]) == 0
    assert sorted(p.name for p in memory.glob("*.md")) == ["bob-private.md"]


def test_prepare_creates_the_mirror_folders_the_jobs_name(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_session(sessions_root, "s1", toy_line("user", "I always deploy with make ship"))
    assert run_host(TOY, ["prepare"]) == 0
    tree = home / ".memu" / "hosts" / "toy"
    assert (tree / "memory").is_dir() and (tree / "skill").is_dir()
    assert str(tree / "memory") in (tree / "jobs" / "1.txt").read_text()
