"""The file-history contract: what a store that keeps history does, seen through the engine.

Subclass :class:`HistoryContract` beside a store's :class:`~memu_core.testing.store_contract.StoreContract`
and define ``make_store``; the sqlite and postgres stores run exactly the same checks
(docs/adr/0023-file-history.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._engine.actor import acting_as
from memu_core._engine.engine import LocalEngine
from memu_core.errors import ConflictError, UsageError
from memu_core.interfaces import MemoryStore
from memu_core.testing.embedders import HashingEmbedder

__all__ = ["HistoryContract"]


def _commit(engine: LocalEngine, name: str, content: str, description: str = "", track: str = "memory") -> None:
    engine.commit_results(recall_files=[{"name": name, "track": track, "description": description, "content": content}])


class HistoryContract:
    """pytest base class: each test gets an engine (hashing embedder) over a fresh store."""

    keep = 20

    def make_store(self, tmp_path: Path) -> MemoryStore:
        """Return a new, empty store rooted under ``tmp_path``."""
        raise NotImplementedError

    @pytest.fixture
    def engine(self, tmp_path: Path) -> Iterator[LocalEngine]:
        """A local engine over a fresh store, closed after the test."""
        made = LocalEngine(self.make_store(tmp_path), embedder=HashingEmbedder(), history_keep=self.keep)
        try:
            yield made
        finally:
            made.close()

    def test_every_change_keeps_the_previous_version(self, engine: LocalEngine) -> None:
        with acting_as("codex run 20261203T2210Z-1"):
            _commit(engine, "deploy", "- run make deploy", "how we deploy")
        with acting_as("memu edit"):
            _commit(engine, "deploy", "- run make deploy\n- then tag the release", "how we deploy")
        with acting_as("python"):
            _commit(engine, "deploy", "- run make ship", "how we ship")
        versions = engine.history("deploy")
        assert [v.version for v in versions] == [3, 2, 1]
        assert [v.current for v in versions] == [True, False, False]
        assert [v.actor for v in versions] == ["python", "memu edit", "codex run 20261203T2210Z-1"]
        assert {v.action for v in versions} == {"commit"}
        assert versions[2].content == "- run make deploy" and versions[2].description == "how we deploy"
        assert versions[0].description == "how we ship"
        assert versions[1].size == len(b"- run make deploy\n- then tag the release")
        assert len({v.hash for v in versions}) == 3
        assert versions[0].created_at >= versions[1].created_at >= versions[2].created_at
        assert engine.version("deploy", 2).content.endswith("tag the release")
        # An unchanged re-commit is no new version.
        _commit(engine, "deploy", "- run make ship", "how we ship")
        assert [v.version for v in engine.history("deploy")] == [3, 2, 1]

    def test_restore_writes_the_old_content_as_a_new_version(self, engine: LocalEngine) -> None:
        _commit(engine, "pets", "- the cat is called Tom")
        _commit(engine, "pets", "- the dog is called Rex")
        restored = engine.restore("pets", 1, actor="memu restore")
        assert (restored.version, restored.action, restored.actor) == (3, "restore", "memu restore")
        assert restored.content == "- the cat is called Tom" and restored.current
        found = engine.progressive_retrieve("what is the cat called")
        assert [s["text"] for s in found["segments"]][:1] == ["- the cat is called Tom"]
        assert engine.progressive_retrieve("Rex", mode="lexical")["segments"] == []
        # Restoring what is stored writes nothing.
        assert engine.restore("pets", 3).version == 3
        assert [v.version for v in engine.history("pets")] == [3, 2, 1]

    def test_forget_keeps_a_tombstone_and_can_be_undone(self, engine: LocalEngine) -> None:
        _commit(engine, "ssh", "- the jump host is bastion.internal", "ssh access", track="skill")
        _commit(engine, "ssh", "- the jump host is bastion2.internal", "ssh access", track="skill")
        engine.forget("ssh", track="skill", actor="memu forget")
        versions = engine.history("ssh")
        assert [(v.version, v.action, v.current) for v in versions] == [
            (3, "forget", False),
            (2, "commit", False),
            (1, "commit", False),
        ]
        assert versions[0].deleted and versions[0].content.endswith("bastion2.internal")
        assert versions[0].actor == "memu forget"
        assert engine.progressive_retrieve("jump host", mode="lexical")["segments"] == []
        back = engine.undo_forget("ssh")
        assert (back.version, back.action, back.track, back.current) == (4, "restore", "skill", True)
        found = engine.progressive_retrieve("jump host", mode="lexical")["segments"]
        assert found[0]["text"].endswith("bastion2.internal")
        with pytest.raises(UsageError, match="no forget to undo"):
            engine.undo_forget("ssh")

    def test_a_forgotten_name_created_again_keeps_counting(self, engine: LocalEngine) -> None:
        _commit(engine, "notes", "- one")
        engine.forget("notes")
        _commit(engine, "notes", "- two")
        assert [(v.version, v.action) for v in engine.history("notes")] == [(3, "commit"), (2, "forget"), (1, "commit")]
        assert engine.restore("notes", 1).content == "- one"

    def test_history_is_bounded_per_file(self, engine: LocalEngine) -> None:
        engine.history_keep = 3
        for i in range(1, 8):
            _commit(engine, "counter", f"- value {i}")
        _commit(engine, "other", "- untouched")
        versions = engine.history("counter")
        assert [v.version for v in versions] == [7, 6, 5, 4]  # the stored one and the last 3 past
        with pytest.raises(UsageError, match="no version 2; kept are 4, 5, 6, 7"):
            engine.version("counter", 2)
        assert [v.version for v in engine.history("other")] == [1]

    def test_keep_zero_records_no_history(self, engine: LocalEngine) -> None:
        engine.history_keep = 0
        _commit(engine, "quiet", "- one")
        _commit(engine, "quiet", "- two")
        engine.forget("quiet")
        assert engine.history("quiet") == []
        with pytest.raises(UsageError, match="has no history"):
            engine.undo_forget("quiet")

    def test_an_edit_from_a_stale_hash_is_a_conflict(self, engine: LocalEngine) -> None:
        _commit(engine, "todo", "- buy milk")
        start = engine.history("todo")[0]
        _commit(engine, "todo", "- buy milk\n- buy eggs")  # a bridging run writes meanwhile
        with pytest.raises(ConflictError, match="memory/todo: it changed meanwhile"):
            engine.edit("todo", "- buy bread", base_hash=start.hash)
        assert engine.history("todo")[0].content == "- buy milk\n- buy eggs"
        now = engine.history("todo")[0]
        edited = engine.edit("todo", "- buy bread", description="shopping", base_hash=now.hash, actor="memu edit")
        assert (edited.version, edited.action, edited.actor, edited.description) == (3, "edit", "memu edit", "shopping")
        with pytest.raises(ConflictError, match="created meanwhile"):
            engine.edit("todo", "- a new file", base_hash=None)
        engine.forget("todo")
        with pytest.raises(ConflictError, match="forgotten since"):
            engine.edit("todo", "- again", base_hash=edited.hash)
        assert engine.edit("fresh", "- new", base_hash=None).version == 1

    def test_recent_versions_and_stats(self, engine: LocalEngine) -> None:
        with acting_as("claude-code run r1"):
            _commit(engine, "a", "- alpha")
            _commit(engine, "s", "- skill body", "a skill", track="skill")
        with acting_as("memu edit"):
            _commit(engine, "a", "- alpha two")
        recent = engine.store.recent_versions({}, 10)
        assert [(v.name, v.version, v.current) for v in recent][:1] == [("a", 2, True)]
        assert {(v.name, v.version) for v in recent} == {("a", 2), ("s", 1), ("a", 1)}
        stats = engine.store.stats({})
        assert sorted(stats.files) == [("memory", "memu edit", 1), ("skill", "claude-code run r1", 1)]
        assert stats.versions == 1 and stats.segments >= 3 and stats.vectors == stats.segments
        assert stats.fingerprint is not None and stats.fingerprint.provider == "hashing"

    def test_a_name_in_both_tracks_needs_the_track(self, engine: LocalEngine) -> None:
        _commit(engine, "dup", "- memory side")
        _commit(engine, "dup", "- skill side", "a skill", track="skill")
        with pytest.raises(UsageError, match="both a memory and a skill file; pass --track"):
            engine.history("dup")
        assert engine.history("dup", "skill")[0].content == "- skill side"
        assert engine.history("absent") == []
        with pytest.raises(UsageError, match="has no version 1"):
            engine.version("absent", 1)
