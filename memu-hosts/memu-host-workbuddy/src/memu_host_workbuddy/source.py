"""Where WorkBuddy keeps its sessions and how to read them.

``~/.workbuddy/projects/<escaped-cwd>/<sessionUUID>.jsonl``, the cwd escaped with ``/`` and
``\\`` flattened to ``-`` (``d-Users-proj``). Conversation turns are ``type: message`` records
with ``input_text``/``output_text`` blocks; tool calls and results are records of their own.
WorkBuddy exports no session id, so a bridging run is recognised by where it ran: its project
folder is the escaped path of memu's working tree (see :mod:`memu_core.host`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from memu_core.host import (
    EpochTimestamps,
    RecordKind,
    SessionFile,
    escaped_in_tree,
    jsonl_files,
    newest_first,
    top_level_value,
)

_PROSE_BLOCKS = frozenset({"input_text", "output_text"})


def classify_workbuddy_record(obj: dict[str, Any]) -> RecordKind:
    """Messages with prose blocks (or a plain string) are conversation; function calls are tools."""
    rtype = obj.get("type")
    if rtype in ("function_call", "function_call_result"):
        return RecordKind.TOOL
    if rtype != "message" or obj.get("role") not in ("user", "assistant"):
        return RecordKind.OTHER
    content = obj.get("content")
    if isinstance(content, str):
        return RecordKind.MESSAGE if content.strip() else RecordKind.OTHER
    if isinstance(content, list):
        types = {block.get("type") for block in content if isinstance(block, dict)}
        if types & _PROSE_BLOCKS:
            return RecordKind.MESSAGE
    return RecordKind.OTHER


def quick_workbuddy_kind(line: str) -> RecordKind | None:
    """Tool records and non-message records decided from the compact line; messages are parsed."""
    rtype = top_level_value(line, "type")
    if rtype is None or rtype == "message":
        return None
    return RecordKind.TOOL if rtype in ("function_call", "function_call_result") else RecordKind.OTHER


class WorkBuddySource(EpochTimestamps):
    """WorkBuddy sessions under ``~/.workbuddy/projects`` (epoch-ms timestamps)."""

    name: ClassVar[str] = "workbuddy"

    def quick_kind(self, line: str) -> RecordKind | None:
        """See :func:`quick_workbuddy_kind`."""
        return quick_workbuddy_kind(line)

    def default_root(self) -> Path:
        """``~/.workbuddy/projects``."""
        return Path.home() / ".workbuddy" / "projects"

    def discover(self) -> list[SessionFile]:
        """Every session, newest first, except the project folder of memu's own tree."""
        return newest_first(jsonl_files(self.root(), keep_dir=lambda name: not escaped_in_tree(name)))

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """See :func:`classify_workbuddy_record`."""
        return classify_workbuddy_record(obj)
