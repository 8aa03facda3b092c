"""The per-host working tree ``~/.memu/hosts/<id>/`` and the names of everything in it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TRACKS: tuple[str, ...] = ("memory", "skill")
"""The recall-file tracks the bridging run mirrors and the agent edits, one folder each."""


@dataclass(frozen=True)
class Layout:
    """Paths of one host's working tree. Nothing is created until a command writes."""

    base: Path
    host: str

    @classmethod
    def at(cls, base: str | Path, host: str) -> Layout:
        """A layout rooted at ``base`` (``~`` expanded, made absolute: job files quote it)."""
        return cls(Path(base).expanduser().absolute(), host)

    @property
    def sessions(self) -> Path:
        """This run's transcript slices: ``<i>.jsonl`` and ``<i>_full.jsonl``."""
        return self.base / "sessions"

    @property
    def jobs(self) -> Path:
        """This run's job files ``1.txt … (2N+1).txt``."""
        return self.base / "jobs"

    def track_dir(self, track: str) -> Path:
        """The mirror folder of one track."""
        return self.base / track

    @property
    def cursor(self) -> Path:
        """The promoted cursor (advanced only by a successful ``commit``)."""
        return self.base / f".session_manifest.{self.host}.json"

    @property
    def cursor_pending(self) -> Path:
        """The cursor ``prepare`` staged for this run's sessions."""
        return self.base / f".session_manifest.{self.host}.json.pending"

    @property
    def run_marker(self) -> Path:
        """Written by ``prepare``, removed by a successful ``commit``."""
        return self.base / f".bridging_run.{self.host}.json"

    @property
    def self_sessions(self) -> Path:
        """Ids of sessions that were bridging runs themselves (never mined)."""
        return self.base / f".self_sessions.{self.host}.json"

    @property
    def snapshot(self) -> Path:
        """What the mirror held as of the last mirror or commit (the baseline of the diff)."""
        return self.base / ".memory_manifest.json"

    @property
    def resource_log(self) -> Path:
        """Append-only list of files the sessions touched (written by the skill jobs)."""
        return self.base / ".resource.tmp"

    @property
    def resources(self) -> Path:
        """The verified resources the resource job describes."""
        return self.base / "resources.md"

    @property
    def lock(self) -> Path:
        """Held while a ``prepare``/``commit`` works in the tree."""
        return self.base / ".lock"
