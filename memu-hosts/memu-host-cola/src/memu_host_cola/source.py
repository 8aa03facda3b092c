"""Where Cola keeps its sessions and how to read them.

``~/.cola/sessions/<scope>/*.jsonl`` (one folder per session scope, e.g. ``desktop-local``), in
the pi lineage: a ``session`` header, then ``message`` records whose ``content`` is a list of
blocks. Cola exports no session id; a bridging run is recognised by the working directory its
session header names (memu's working tree, see :mod:`memu_core.host`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from memu_core.host import EpochTimestamps, RecordKind, SkipRunsInTree, top_level_value


def classify_cola_record(obj: dict[str, Any]) -> RecordKind:
    """Text blocks are conversation; tool calls and tool results are tools; the rest is dropped."""
    if obj.get("type") != "message":
        return RecordKind.OTHER
    message = obj.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return RecordKind.OTHER
    role = message.get("role")
    if role == "toolResult":
        return RecordKind.TOOL
    if role not in ("user", "assistant"):
        return RecordKind.OTHER
    types = {block.get("type") for block in message["content"] if isinstance(block, dict)}
    if "text" in types:
        return RecordKind.MESSAGE
    if "toolCall" in types:
        return RecordKind.TOOL
    return RecordKind.OTHER


def quick_cola_kind(line: str) -> RecordKind | None:
    """Records that are not messages are dropped without a parse; messages are parsed."""
    rtype = top_level_value(line, "type")
    return None if rtype is None or rtype == "message" else RecordKind.OTHER


class ColaSource(SkipRunsInTree, EpochTimestamps):
    """Cola sessions under ``~/.cola/sessions``."""

    name: ClassVar[str] = "cola"

    def quick_kind(self, line: str) -> RecordKind | None:
        """See :func:`quick_cola_kind`."""
        return quick_cola_kind(line)

    def default_root(self) -> Path:
        """``~/.cola/sessions``."""
        return Path.home() / ".cola" / "sessions"

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """See :func:`classify_cola_record`."""
        return classify_cola_record(obj)

    def record_timestamp(self, obj: dict[str, Any]) -> str | None:
        """The record's ISO string, else its message's (Cola writes no epoch numbers)."""
        for holder in (obj, obj.get("message")):
            if isinstance(holder, dict) and isinstance(holder.get("timestamp"), str):
                return str(holder["timestamp"])
        return None
