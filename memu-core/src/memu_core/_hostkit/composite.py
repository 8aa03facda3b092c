"""A source made of several sources, each with its own scan region (Claude Code + Cowork).

The composite lists every part's sessions newest first and sends each path back to the part
that found it, so keys, session ids and record normalisation stay the part's own.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memu_core._transcript_types import KeptRead, RecordKind, SelfSessions, SessionFile, TranscriptRead
from memu_core.interfaces import TranscriptSource


class CompositeSource(TranscriptSource):
    """Sessions of a primary source and of any number of secondary sources, merged.

    ``root()`` is the primary's root; ``classify_record`` is the primary's rules (the parts of a
    composite share one record dialect after normalisation).
    """

    def __init__(self, primary: TranscriptSource, *others: TranscriptSource) -> None:
        super().__init__(None)
        self.primary = primary
        self.parts: tuple[TranscriptSource, ...] = (primary, *others)
        self._owner: dict[str, TranscriptSource] = {}
        """The part that found each session, by the session's path string (``Path`` hashing
        costs a scan over thousands of sessions a few ms)."""

    def default_root(self) -> Path:
        """The primary source's root."""
        return self.primary.root()

    def root(self) -> Path:
        """The primary source's root."""
        return self.primary.root()

    def exists(self) -> bool:
        """True when any part has something to mine."""
        return any(part.exists() for part in self.parts)

    def discover(self) -> list[SessionFile]:
        """Every part's sessions, merged newest first."""
        merged: list[SessionFile] = []
        for part in self.parts:
            if not part.exists():
                continue
            for session in part.discover():
                self._owner[session.__fspath__()] = part
                merged.append(session)
        merged.sort(key=lambda s: s.mtime_ns, reverse=True)
        return merged

    def self_sessions(self, worktree: Path) -> SelfSessions:
        """Every part's own runs and warnings (a part with nothing to mine is not asked)."""
        answers = [part.self_sessions(worktree) for part in self.parts if part.exists()]
        return SelfSessions(frozenset().union(*(a.ids for a in answers)), tuple(w for a in answers for w in a.warnings))

    def owner(self, path: Path) -> TranscriptSource:
        """The part a path belongs to (the primary when the path was never discovered)."""
        found = self._owner.get(os.fspath(path))
        if found is not None:
            return found
        for part in self.parts[1:]:
            if part.owns(path):
                return part
        return self.primary

    def key(self, path: Path) -> str:
        """The owning part's key."""
        return self.owner(path).key(path)

    def _cursor_keys(self) -> Callable[[SessionFile], str]:
        """The owning part's cursor key of a discovered session, as each part gives it."""
        keys = {id(part): part._cursor_keys() for part in self.parts}

        def cursor_key(session: SessionFile) -> str:
            return keys[id(self._owner_of(session))](session)

        return cursor_key

    def session_id(self, path: Path) -> str:
        """The owning part's session id."""
        return self.owner(path).session_id(path)

    def scan_region(self, path: Path) -> str:
        """The owning part's region."""
        return self.owner(path).scan_region(path)

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """The primary's classification rules."""
        return self.primary.classify_record(obj)

    def read_incremental(self, session: SessionFile, previous: dict[str, Any] | None) -> TranscriptRead:
        """Read through the owning part (it knows how its lines normalise)."""
        return self._owner_of(session).read_incremental(session, previous)

    def read_kept(self, session: SessionFile, previous: dict[str, Any] | None) -> KeptRead:
        """Read through the owning part, as :meth:`read_incremental`."""
        return self._owner_of(session).read_kept(session, previous)

    def _owner_of(self, session: SessionFile) -> TranscriptSource:
        # By the string the part listed it under (for a relative root, ``./x`` where its Path says ``x``).
        found = self._owner.get(session.__fspath__())
        return found if found is not None else self.owner(session.path)
