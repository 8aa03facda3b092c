"""Timestamps written as epoch numbers, turned into ISO 8601 UTC strings.

Some hosts stamp records with epoch milliseconds, some with seconds, some with ISO strings. The
value is informational (the cursor's ``last_timestamp``); ordering never depends on it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from memu_core._jsonl import load_line
from memu_core._transcript_types import Record
from memu_core.interfaces import TranscriptSource

MS_THRESHOLD = 1e11
"""Above this an epoch number is milliseconds: 1e11 s is the year 5138, 1e11 ms is 1973."""


def iso_utc(value: Any, *, ms_heuristic: bool = True) -> str | None:
    """``value`` as an ISO UTC string: strings pass through, numbers are epoch (ms or s)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    seconds = value / 1000 if ms_heuristic and value > MS_THRESHOLD else value
    try:
        return datetime.fromtimestamp(seconds, UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


class EpochTimestamps(TranscriptSource):
    """A source mixin: records stamped with epoch numbers still report a ``last_timestamp``.

    The base reader keeps only string timestamps. Only the last stamped record of a read
    matters, so records are re-examined from the end until one yields a timestamp.
    """

    def record_timestamp(self, obj: dict[str, Any]) -> str | None:
        """The timestamp of one parsed record (default: top-level, ms heuristic)."""
        return iso_utc(obj.get("timestamp"))

    def parse_lines(self, text: str) -> tuple[list[Record], int]:
        """The base parse, then the last record's timestamp filled from its number."""
        records, corrupt = super().parse_lines(text)
        for i in range(len(records) - 1, -1, -1):
            rec = records[i]
            if rec.timestamp:
                break
            try:
                obj = load_line(rec.text)  # a quick-classified line was never parsed: bounded
            except ValueError:
                continue
            ts = self.record_timestamp(obj) if isinstance(obj, dict) else None
            if ts:
                records[i] = rec._replace(timestamp=ts)
                break
        return records, corrupt
