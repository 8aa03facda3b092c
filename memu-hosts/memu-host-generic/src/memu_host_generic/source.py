"""Any agent's JSONL sessions, read by sniffing each record's dialect.

Five record shapes cover the agents seen so far; each record is tried against them in a fixed
order and the first that fits decides. A record that fits none is dropped (fail closed: an
unknown shape is never mined as conversation).

1. payload-wrapped (Codex lineage): ``{"payload": {"type": "message", "role": …}}``
2. typed message tree (OpenClaw / pi lineage): ``{"type": "message", "message": {"role": …}}``
3. typed block records (Claude lineage): ``{"type": "user", "message": {"content": …}}``
4. role + message (Cursor lineage): ``{"role": "user", "message": {"content": …}}``
5. flat chat rows (OpenAI lineage): ``{"role": "user", "content": …}``, ``{"role": "tool", …}``
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from memu_core.errors import UsageError
from memu_core.host import EpochTimestamps, RecordKind, SkipRunsInTree, iso_utc

_SPEAKERS = ("user", "assistant")
_TOOL_BLOCKS = frozenset({"tool_use", "tool_result", "toolCall", "tool_call"})


def block_verdict(content: Any, *, meta: bool = False) -> RecordKind | None:
    """The kind a message's ``content`` implies (``None``: content of no known form)."""
    if isinstance(content, str):
        return RecordKind.OTHER if meta else RecordKind.MESSAGE
    if not isinstance(content, list):
        return None
    types = {block.get("type") for block in content if isinstance(block, dict)}
    if "text" in types:
        return RecordKind.OTHER if meta else RecordKind.MESSAGE
    if types & _TOOL_BLOCKS:
        return RecordKind.TOOL
    return RecordKind.OTHER


DIALECTS = ("codex", "pi", "claude", "cursor", "chat")
"""The dialect names, in sniffing order (payload-wrapped, typed tree, typed blocks, role +
message, flat chat rows)."""


def dialect_of(obj: dict[str, Any]) -> str | None:
    """The first dialect whose shape ``obj`` has (``None``: none; the record is dropped)."""
    message = obj.get("message")
    if isinstance(obj.get("payload"), dict):
        return "codex"
    if obj.get("type") == "message" and isinstance(message, dict):
        return "pi"
    if obj.get("type") in _SPEAKERS and isinstance(message, dict):
        return "claude"
    if obj.get("role") in _SPEAKERS and isinstance(message, dict):
        return "cursor"
    if obj.get("role") in (*_SPEAKERS, "tool") or obj.get("tool_call_id") or obj.get("tool_calls"):
        return "chat"
    return None


def sniff(obj: dict[str, Any]) -> RecordKind:
    """Classify one record of an unknown agent by the first dialect it fits."""
    payload = obj.get("payload")
    if isinstance(payload, dict):
        ptype = payload.get("type")
        if ptype == "message" and payload.get("role") in _SPEAKERS:
            return RecordKind.MESSAGE
        if isinstance(ptype, str) and ("function_call" in ptype or "tool" in ptype):
            return RecordKind.TOOL
        return RecordKind.OTHER
    message = obj.get("message")
    rtype = obj.get("type")
    if rtype == "message" and isinstance(message, dict):
        role = message.get("role")
        if role in _SPEAKERS:
            return RecordKind.MESSAGE
        return RecordKind.TOOL if role in ("toolResult", "tool") else RecordKind.OTHER
    if rtype in _SPEAKERS and isinstance(message, dict):
        return block_verdict(message.get("content"), meta=bool(obj.get("isMeta"))) or RecordKind.OTHER
    role = obj.get("role")
    if role in _SPEAKERS and isinstance(message, dict):
        return block_verdict(message.get("content")) or RecordKind.OTHER
    if role == "tool" or obj.get("tool_call_id"):
        return RecordKind.TOOL
    if role in _SPEAKERS and obj.get("content"):
        return block_verdict(obj["content"]) or RecordKind.MESSAGE
    if obj.get("tool_calls"):
        return RecordKind.TOOL
    return RecordKind.OTHER


class GenericSource(SkipRunsInTree, EpochTimestamps):
    """JSONL sessions under the folder given with ``--session-dir`` (no default)."""

    name: ClassVar[str] = "agent"

    def default_root(self) -> Path:
        """There is none: the generic adapter is always told where the sessions are."""
        raise UsageError(
            "memu-agent has no default session folder; pass --session-dir <folder> (see `memu-agent detect`)"
        )

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """See :func:`sniff`."""
        return sniff(obj)

    def record_timestamp(self, obj: dict[str, Any]) -> str | None:
        """``timestamp``, else ``payload.timestamp``; epoch numbers by the ms heuristic."""
        ts = obj.get("timestamp")
        if ts is None and isinstance(obj.get("payload"), dict):
            ts = obj["payload"].get("timestamp")
        return iso_utc(ts)
