"""The transcript types a :class:`~memu_core.interfaces.TranscriptSource` returns, apart from the
rest of :mod:`memu_core.types` and re-exported there (the same classes).

A steady ``prepare`` mines a few records and needs only these: importing the thirteen store and
engine dataclasses beside them (their methods are generated at import) cost it about 10 ms
(ADR 0026's third amendment). Import them from :mod:`memu_core.types`.

``SessionFile``, ``TranscriptRead``, ``KeptRead`` and ``SelfSessions`` were frozen dataclasses;
they are value classes now (:mod:`memu_core._value`), the same to their users, the
:mod:`dataclasses` functions included, without importing that module (ADR 0026's fifth
amendment).
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any, NamedTuple

from memu_core._value import DataclassAPI, Frozen

_set = object.__setattr__  # how a frozen value sets its fields in ``__init__``


class RecordKind(enum.Enum):
    """What a record is to the pipeline."""

    MESSAGE = "message"
    """A user or assistant turn: goes to the conversation and the full transcript."""
    TOOL = "tool"
    """A tool call or its output: goes to the full transcript only."""
    OTHER = "other"
    """Metadata, reasoning, injected context: dropped."""


class SessionFile(Frozen, DataclassAPI):
    """One discovered session file with the stat facts the scan needs (taken once).

    A session file is path-like: ``os.fspath(session)`` is its path as a string. Discovery
    (:func:`~memu_core.host.jsonl_files`) lists sessions by that string and builds
    :attr:`path` when it is first read: a steady scan compares thousands of sessions' stat facts
    with their cursors and reads the path of the few that changed, and a ``Path`` for each of the
    others cost it about 3 µs apiece (ADR 0026's seventh pass).
    """

    __slots__ = ("_path", "_text", "mtime_ns", "size")
    __match_args__ = _fields = ("path", "mtime_ns", "size")

    _path: Path | None
    _text: str | None
    mtime_ns: int
    size: int

    def __init__(self, path: Path, mtime_ns: int, size: int) -> None:
        _set(self, "path", path)
        _set(self, "mtime_ns", mtime_ns)
        _set(self, "size", size)

    @classmethod
    def listed(cls, path: str, mtime_ns: int, size: int) -> SessionFile:
        """A session found by listing a folder: ``path`` as the listing gave it, the ``Path``
        built only if :attr:`path` is read."""
        session = cls.__new__(cls)
        _set(session, "_path", None)
        _set(session, "_text", path)
        _set(session, "mtime_ns", mtime_ns)
        _set(session, "size", size)
        return session

    @property
    def path(self) -> Path:
        """The session file."""
        path = self._path
        if path is None:
            path = Path(self._text or "")  # ``listed`` set the text when it left the path unset
            _set(self, "_path", path)
        return path

    @path.setter
    def path(self, path: Path) -> None:
        # Reached only through ``object.__setattr__`` (the value is frozen): ``__init__``, a
        # pickle written while this was a dataclass, a ``@dataclass`` subclass's ``__init__``.
        _set(self, "_path", path)
        _set(self, "_text", None)

    def __fspath__(self) -> str:
        text = self._text
        return str(self._path) if text is None else text


class Record(NamedTuple):
    """One record of a session: its text (one JSON line), kind and timestamp.

    A named tuple rather than a dataclass: a first run creates hundreds of thousands of them.
    """

    text: str
    kind: RecordKind
    timestamp: str | None = None


class TranscriptRead(Frozen, DataclassAPI):
    """The records of a session that are new since the previous cursor.

    ``records`` holds only the new records; ``cursor`` is what to store once they are mined;
    ``corrupt`` counts lines that were not JSON objects and were skipped.
    """

    __slots__ = ("corrupt", "cursor", "records")
    __match_args__ = _fields = ("records", "cursor", "corrupt")

    records: list[Record]
    cursor: dict[str, Any]
    corrupt: int

    def __init__(self, records: list[Record], cursor: dict[str, Any], corrupt: int = 0) -> None:
        _set(self, "records", records)
        _set(self, "cursor", cursor)
        _set(self, "corrupt", corrupt)

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


class KeptRead(Frozen, DataclassAPI):
    """What mining keeps of a :class:`TranscriptRead`: the message and tool records' lines, in
    order, with where the messages are, and no object per record (a first run reads hundreds of
    thousands of lines and drops the rest)."""

    __slots__ = ("corrupt", "cursor", "last_timestamp", "lines", "messages", "records")
    __match_args__ = _fields = ("lines", "messages", "cursor", "last_timestamp", "records", "corrupt")

    lines: list[str]
    """The text of every ``MESSAGE`` and ``TOOL`` record."""
    messages: list[int]
    """Indices into ``lines`` of the ``MESSAGE`` records."""
    cursor: dict[str, Any]
    last_timestamp: str | None
    """As :attr:`TranscriptRead.last_timestamp`."""
    records: int
    """How many records were read, of every kind."""
    corrupt: int

    def __init__(
        self,
        lines: list[str],
        messages: list[int],
        cursor: dict[str, Any],
        last_timestamp: str | None,
        records: int,
        corrupt: int = 0,
    ) -> None:
        self._init(lines, messages, cursor, last_timestamp, records, corrupt)

    @classmethod
    def of(cls, read: TranscriptRead) -> KeptRead:
        """The kept part of a full read."""
        lines: list[str] = []
        messages: list[int] = []
        for rec in read.records:
            if rec.kind is RecordKind.MESSAGE:
                messages.append(len(lines))
                lines.append(rec.text)
            elif rec.kind is RecordKind.TOOL:
                lines.append(rec.text)
        return cls(lines, messages, read.cursor, read.last_timestamp, len(read.records), read.corrupt)


class SelfSessions(Frozen, DataclassAPI):
    """Which sessions are the bridging run's own, as a source tells from the working tree.

    A scheduled bridging run is a host session too; mined, it would feed memu's own job prompts
    back into memory. ``prepare`` never mines these and carries ``warnings`` in its report.
    """

    __slots__ = ("ids", "warnings")
    __match_args__ = _fields = ("ids", "warnings")

    ids: frozenset[str]
    """Session ids, as :meth:`~memu_core.interfaces.TranscriptSource.session_id` names them."""
    warnings: tuple[str, ...]
    """Why some runs could not be recognised: one sentence each, naming the fix."""

    def __init__(self, ids: frozenset[str] = frozenset(), warnings: tuple[str, ...] = ()) -> None:
        self._init(ids, warnings)


for _cls in (RecordKind, SessionFile, Record, TranscriptRead, KeptRead, SelfSessions):
    _cls.__module__ = "memu_core.types"  # where they are documented, pickled and shown
del _cls
