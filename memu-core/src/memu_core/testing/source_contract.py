"""The behaviour every :class:`TranscriptSource` owes the pipeline, as a reusable test class.

Subclass :class:`SourceContract` in a host's tests and implement :meth:`SourceContract.make`,
returning a :class:`SourceFixture` whose ``add`` writes user turns in the host's real shape (a
JSONL line, a database row). The inherited tests then check what the scan relies on: newest
first, stable keys and ids, incremental reads that return exactly the new records, cursors that
match the ``stat`` of an unchanged session, and classification that never raises::

    class TestMySource(SourceContract):
        def make(self, tmp_path):
            ...
            return SourceFixture(source, add)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memu_core.interfaces import TranscriptSource
from memu_core.types import RecordKind, SelfSessions, SessionFile

GARBAGE = ["", "{", "[]", "null", '"text"', "{}", '{"type": 3}', '{"message": []}', '{"role": {}}', "\ud800"]


@dataclass
class SourceFixture:
    """A source over an empty (or absent) log and a way to add turns to it."""

    source: TranscriptSource
    add: Callable[[str, list[str]], None]
    """``add(session, texts)``: append one user turn per text to ``session`` (created when new),
    each later than anything written before."""
    close: Callable[[], None] = field(default=lambda: None)


class SourceContract:
    """Inherit and implement :meth:`make`; pytest collects the tests below for the subclass."""

    def make(self, tmp_path: Path) -> SourceFixture:
        """Build the source and its writer (override)."""
        raise NotImplementedError

    @pytest.fixture
    def fx(self, tmp_path: Path) -> Iterator[SourceFixture]:
        """The subclass's fixture, closed afterwards."""
        made = self.make(tmp_path)
        try:
            yield made
        finally:
            made.close()

    def _one(self, fx: SourceFixture, session_id: str) -> SessionFile:
        [found] = [s for s in fx.source.discover() if fx.source.session_id(s.path) == session_id]
        return found

    def test_nothing_written_nothing_found(self, fx: SourceFixture) -> None:
        assert fx.source.discover() == []

    def test_newest_first_with_stable_keys(self, fx: SourceFixture) -> None:
        fx.add("older", ["alpha one"])
        fx.add("newer", ["beta two"])
        found = fx.source.discover()
        ids = [fx.source.session_id(s.path) for s in found]
        assert ids == ["newer", "older"]
        keys = [fx.source.key(s.path) for s in found]
        assert len(set(keys)) == 2 and all(not Path(k).is_absolute() for k in keys)
        assert keys == [fx.source.key(s.path) for s in fx.source.discover()]

    def test_incremental_reads_return_exactly_the_new_records(self, fx: SourceFixture) -> None:
        fx.add("s", ["first turn", "second turn"])
        first = fx.source.read_incremental(self._one(fx, "s"), None)
        assert [r.kind for r in first.records] == [RecordKind.MESSAGE] * 2
        assert "first turn" in first.records[0].text and "second turn" in first.records[1].text
        again = fx.source.read_incremental(self._one(fx, "s"), first.cursor)
        assert again.records == []
        fx.add("s", ["third turn"])
        later = fx.source.read_incremental(self._one(fx, "s"), again.cursor)
        assert "third turn" in later.records[0].text and len(later.records) == 1

    def test_cursor_matches_the_sessions_stat(self, fx: SourceFixture) -> None:
        fx.add("s", ["hello there"])
        session = self._one(fx, "s")
        cursor = fx.source.read_incremental(session, None).cursor
        # The scan passes a session over without reading it when these two match.
        assert (cursor.get("size"), cursor.get("mtime_ns")) == (session.size, session.mtime_ns)

    def test_classification_never_raises(self, fx: SourceFixture) -> None:
        for line in GARBAGE:
            assert fx.source.classify(line) in (RecordKind.MESSAGE, RecordKind.TOOL, RecordKind.OTHER)

    def test_discovery_and_self_sessions_only_read(
        self, fx: SourceFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        fx.add("s", ["a person's turn"])
        worktree = tmp_path / "worktree"
        worktree.mkdir()
        before = _tree(tmp_path)
        capsys.readouterr()
        fx.source.discover()
        own = fx.source.self_sessions(worktree)
        assert isinstance(own, SelfSessions) and "s" not in own.ids
        assert _tree(tmp_path) == before, "discover() and self_sessions() must not write"
        assert capsys.readouterr() == ("", ""), "warnings go in SelfSessions.warnings, not to the terminal"


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time."""
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}
