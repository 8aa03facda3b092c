"""The seam between a host's session logs and the bridging pipeline.

A host plugin subclasses :class:`TranscriptSource` to say where its sessions live and how one
record of its log is classified. Everything else (cursor, slicing, redaction, jobs) is shared.
The default methods fit the common case: one JSONL file per session, one record per line.
"""

from __future__ import annotations

import enum
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

__all__ = [
    "Record",
    "RecordKind",
    "SessionFile",
    "TranscriptRead",
    "TranscriptReadError",
    "TranscriptSource",
    "relative_key",
    "top_level_value",
]


class RecordKind(enum.Enum):
    """What a record is to the pipeline."""

    MESSAGE = "message"
    """A user or assistant turn: goes to the conversation and the full transcript."""
    TOOL = "tool"
    """A tool call or its output: goes to the full transcript only."""
    OTHER = "other"
    """Metadata, reasoning, injected context: dropped."""


class TranscriptReadError(RuntimeError):
    """A recoverable failure to read one session: the scan skips it and carries on."""

    def __init__(self, path: Path | str, cause: object) -> None:
        super().__init__(f"could not read transcript data from {path}: {cause}")
        self.path = Path(path)
        self.cause = cause


@dataclass(frozen=True, slots=True)
class SessionFile:
    """One discovered session file with the stat facts the scan needs (taken once)."""

    path: Path
    mtime_ns: int
    size: int


class Record(NamedTuple):
    """One record of a session: its text (one JSON line), kind and timestamp.

    A named tuple rather than a dataclass: a first run creates hundreds of thousands of them.
    """

    text: str
    kind: RecordKind
    timestamp: str | None = None


@dataclass(frozen=True, slots=True)
class TranscriptRead:
    """The records of a session that are new since the previous cursor.

    ``records`` holds only the new records; ``cursor`` is what to store once they are mined;
    ``corrupt`` counts lines that were not JSON objects and were skipped.
    """

    records: list[Record]
    cursor: dict[str, Any]
    corrupt: int = 0

    @property
    def changed(self) -> bool:
        """True when there is at least one new record."""
        return bool(self.records)

    @property
    def last_timestamp(self) -> str | None:
        """The last timestamp among the new records (``None`` when none carries one)."""
        for rec in reversed(self.records):
            if rec.timestamp:
                return rec.timestamp
        return None


class TranscriptSource(ABC):
    """Where a host keeps its sessions and how to read them.

    Subclasses set ``name`` and implement :meth:`default_root` and :meth:`classify_record`; the
    defaults read
    ``<root>/**/*.jsonl`` incrementally by byte offset.
    """

    name: ClassVar[str]
    """The host id this source belongs to (scopes cursors and working trees)."""

    def __init__(self, session_dir: str | Path | None = None) -> None:
        self._session_dir = Path(session_dir).expanduser() if session_dir else None

    # -- where ------------------------------------------------------------------------------
    @abstractmethod
    def default_root(self) -> Path:
        """The host's conventional session directory (used when no ``--session-dir`` is given)."""

    def root(self) -> Path:
        """The directory holding the raw logs."""
        return self._session_dir if self._session_dir is not None else self.default_root()

    def exists(self) -> bool:
        """Whether there is anything to mine at all (the ``prepare`` gate)."""
        return self.root().is_dir()

    def discover(self) -> list[SessionFile]:
        """Every session file, newest first by modification time.

        A file that vanishes between listing and ``stat`` is left out, never an error.
        """
        found = list(_walk_jsonl(self.root()))
        found.sort(key=lambda s: s.mtime_ns, reverse=True)
        return found

    # -- identity ---------------------------------------------------------------------------
    def key(self, path: Path) -> str:
        """The cursor key of a session file: its path relative to the root, POSIX style."""
        return relative_key(path, self.root())

    def session_id(self, path: Path) -> str:
        """The host's id for the session in ``path`` (must match the host's session env var)."""
        return path.stem

    def scan_region(self, path: Path) -> str:
        """A label grouping sessions that share one root (composite sources have several)."""
        return "default"

    def owns(self, path: Path) -> bool:
        """Whether ``path`` lies under this source's root (composites route paths by it)."""
        try:
            path.relative_to(self.root())
        except ValueError:
            return False
        return True

    # -- records ----------------------------------------------------------------------------
    @abstractmethod
    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """Classify one parsed record (a JSON object). Must never raise: unknown shapes are ``OTHER``."""

    def classify(self, record: str) -> RecordKind:
        """Classify one raw line. Never raises: a line that is not a JSON object is ``OTHER``."""
        obj = _parse(record)
        if obj is None:
            return RecordKind.OTHER
        try:
            return self.classify_record(obj)
        except Exception:  # the contract says never raise; a buggy adapter must not stop a scan
            return RecordKind.OTHER

    def timestamp(self, record: str) -> str | None:
        """The record's top-level ``timestamp`` string, if it carries one (informational only)."""
        obj = _parse(record)
        ts = obj.get("timestamp") if obj is not None else None
        return ts if isinstance(ts, str) else None

    def quick_kind(self, line: str) -> RecordKind | None:
        """Classify a raw line without parsing it, when its text makes the answer certain.

        ``None`` (the default) means "parse it". Sources whose logs carry large tool outputs
        override this so a first run over months of sessions does not decode every byte.
        Only consulted when :meth:`normalise` is the default (the line is kept as written).
        """
        return None

    def normalise(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Rewrite one parsed record, or return ``None`` to drop it as not part of the session.

        The default keeps the record as written. Sources whose raw lines need reshaping
        (Cowork's audit log) override this; a record returned as a new object is re-serialised.
        """
        return obj

    def read_incremental(self, session: SessionFile, previous: dict[str, Any] | None) -> TranscriptRead:
        """Read the complete lines added since ``previous`` (a cursor from an earlier read).

        The cursor keeps the byte offset just past the last complete line, so a line still being
        written (no newline yet) is read whole on a later run instead of being lost. A file that
        became shorter than the cursor was rewritten, and is read again from the start. A line
        that is not a JSON object is skipped and counted in ``corrupt``.
        """
        prev_offset = 0
        prev_lines = 0
        if previous:
            off = previous.get("offset")
            lines = previous.get("lines")
            if isinstance(off, int) and off >= 0:
                prev_offset = off
            if isinstance(lines, int) and lines >= 0:
                prev_lines = lines
        if prev_offset > session.size:
            prev_offset, prev_lines = 0, 0
        try:
            with open(session.path, "rb") as fh:
                fh.seek(prev_offset)
                data = fh.read()
        except OSError as exc:
            raise TranscriptReadError(session.path, exc) from exc
        end = data.rfind(b"\n")
        if end < 0:
            return TranscriptRead([], _cursor(prev_offset, prev_lines, session))
        records, corrupt = self.parse_lines(data[: end + 1].decode("utf-8", errors="replace"))
        cursor = _cursor(prev_offset + end + 1, prev_lines + len(records), session)
        return TranscriptRead(records, cursor, corrupt)

    def parse_lines(self, text: str) -> tuple[list[Record], int]:
        """Parse, normalise and classify every non-blank line of ``text``; count the corrupt ones."""
        loads = json.loads
        classify = self.classify_record
        normalise = self.normalise
        quick = self.quick_kind if type(self).normalise is TranscriptSource.normalise else None
        records: list[Record] = []
        corrupt = 0
        for raw in text.split("\n"):
            line = raw.strip()
            if not line:
                continue
            if quick is not None and line[0] == "{" and line[-1] == "}":
                kind = quick(line)
                if kind is not None:
                    records.append(Record(line, kind, _cheap_timestamp(line)))
                    continue
            try:
                obj = loads(line)
            except ValueError:
                corrupt += 1
                continue
            if not isinstance(obj, dict):
                corrupt += 1
                continue
            try:
                norm = normalise(obj)
                if norm is None:
                    continue
                kind = classify(norm)
            except Exception:  # never let one odd record stop the scan
                corrupt += 1
                continue
            if norm is not obj:
                line = json.dumps(norm, ensure_ascii=False)
            ts = norm.get("timestamp")
            records.append(Record(line, kind, ts if isinstance(ts, str) else None))
        return records, corrupt


def _cursor(offset: int, lines: int, session: SessionFile) -> dict[str, Any]:
    """The cursor after a read: where to resume, how many records so far, the stat seen."""
    return {"offset": offset, "lines": lines, "size": session.size, "mtime_ns": session.mtime_ns}


def relative_key(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in POSIX form (string slicing first: it runs per session)."""
    text, base = str(path), str(root)
    if text.startswith(base) and text[len(base) : len(base) + 1] == os.sep:
        rel = text[len(base) + 1 :]
        return rel.replace(os.sep, "/") if os.sep != "/" else rel
    return path.relative_to(root).as_posix()


def _cheap_timestamp(line: str) -> str | None:
    """The last ``"timestamp":"…"`` value in a line, found without parsing (informational)."""
    at = line.rfind('"timestamp":"')
    if at < 0:
        return None
    start = at + 13
    end = line.find('"', start)
    return line[start:end] if 0 < end - start < 64 else None


def top_level_value(line: str, key: str) -> str | None:
    """The string value of a top-level ``key`` in a compact JSON object line, or ``None``.

    Certain only when nothing nested precedes the key (no ``{`` or ``[`` before it but the
    opening brace); otherwise ``None`` and the caller parses. A quoted ``"key":"`` cannot occur
    inside a JSON string (its quotes would be escaped), so a match is a real key.
    """
    needle = f'"{key}":"'
    at = line.find(needle)
    if at < 0 or line.count("{", 0, at) != 1 or line.count("[", 0, at):
        return None
    start = at + len(needle)
    end = line.find('"', start)
    return line[start:end] if end > 0 else None


def _parse(record: str) -> dict[str, Any] | None:
    """The JSON object on one line, or ``None`` when it is not one."""
    try:
        obj = json.loads(record)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _walk_jsonl(root: Path) -> Iterator[SessionFile]:
    """``*.jsonl`` files under ``root`` (recursively), each with one ``stat``; races are skipped."""
    from memu_core.hosting.walk import jsonl_files  # walk imports SessionFile from here

    return jsonl_files(root)
