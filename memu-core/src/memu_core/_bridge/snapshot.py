"""The baseline of the mirror: what each recall file held as of the last mirror or commit.

``commit`` submits exactly the files whose parsed content differs from the baseline, and turns
files that disappeared from the mirror into ``forget`` calls.
"""

from __future__ import annotations

from pathlib import Path

from memu_core._atomic import read_json, write_json
from memu_core._layout import TRACKS
from memu_core._mirror import RecallDoc, local_docs, read_doc
from memu_core._value import Value
from memu_core.names import check_name


class Entry(Value):
    """One baseline row: the file's digest and the identity it was stored under."""

    __slots__ = ("digest", "name", "track")
    _fields = ("digest", "track", "name")

    def __init__(self, digest: str, track: str, name: str) -> None:
        self.digest = digest
        self.track = track
        self.name = name

    def to_json(self) -> dict[str, str]:
        """JSON form."""
        return {"digest": self.digest, "track": self.track, "name": self.name}


def load(path: Path) -> dict[str, Entry] | None:
    """The baseline, or ``None`` when there is none yet (or it is unreadable)."""
    raw = read_json(path, None)
    if not isinstance(raw, dict):
        return None
    out: dict[str, Entry] = {}
    for rel, row in raw.items():
        if isinstance(row, dict) and all(isinstance(row.get(k), str) for k in ("digest", "track", "name")):
            out[rel] = Entry(row["digest"], row["track"], row["name"])
    return out


def save(path: Path, baseline: dict[str, Entry]) -> None:
    """Write the baseline atomically."""
    write_json(path, {rel: e.to_json() for rel, e in sorted(baseline.items())}, compact=True)


class Diff(Value):
    """What the agent changed since the baseline."""

    __slots__ = ("changed", "current", "forgotten")
    _fields = ("changed", "forgotten", "current")

    def __init__(
        self,
        changed: dict[str, RecallDoc] | None = None,
        forgotten: list[tuple[str, str]] | None = None,
        current: dict[str, RecallDoc] | None = None,
    ) -> None:
        self.changed: dict[str, RecallDoc] = {} if changed is None else changed
        """New or edited files, by relative path."""
        self.forgotten: list[tuple[str, str]] = [] if forgotten is None else forgotten
        """``(track, name)`` of files deleted or renamed away in the mirror."""
        self.current: dict[str, RecallDoc] = {} if current is None else current
        """Every file now in the mirror (the next baseline once the commit lands)."""


def diff(base: Path, baseline: dict[str, Entry]) -> Diff:
    """Compare the mirror under ``base`` with ``baseline``; an unreadable file, or a changed one
    whose name breaks the naming rules (:mod:`memu_core.names`), raises ``UsageError``."""
    result = Diff()
    names_now: set[tuple[str, str]] = set()
    for rel, path in local_docs(base, TRACKS).items():
        doc = read_doc(path, rel.split("/", 1)[0])
        result.current[rel] = doc
        names_now.add((doc.track, doc.name))
        before = baseline.get(rel)
        if before is None or before.digest != doc.digest():
            # The door every other commit path has: refused before anything is written.
            check_name(doc.name, str(path))
            result.changed[rel] = doc
    for rel, entry in sorted(baseline.items()):
        gone = rel not in result.current
        renamed = not gone and result.current[rel].name != entry.name
        if (gone or renamed) and (entry.track, entry.name) not in names_now:
            result.forgotten.append((entry.track, entry.name))
    return result


def of(docs: dict[str, RecallDoc]) -> dict[str, Entry]:
    """A baseline describing ``docs``."""
    return {rel: Entry(doc.digest(), doc.track, doc.name) for rel, doc in docs.items()}
