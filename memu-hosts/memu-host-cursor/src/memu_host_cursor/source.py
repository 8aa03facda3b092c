"""Where the Cursor Agent keeps its transcripts and how to read them.

``~/.cursor/projects/<escaped-cwd>/agent-transcripts/<id>/<id>.jsonl``: one file per
conversation, one ``{"role": …, "message": {"content": …}}`` record per line, no timestamps.
Project folders also hold canvases and terminal logs, so only ``agent-transcripts`` is walked.
IDE Composer chats live in ``state.vscdb`` and are not read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from memu_core.host import RecordKind, SessionFile, TranscriptSource, jsonl_files, newest_first

TRANSCRIPTS = "agent-transcripts"
_TOOL_BLOCKS = frozenset({"tool_use", "tool_result"})


def classify_cursor_record(obj: dict[str, Any]) -> RecordKind:
    """Prose is conversation even when the turn also narrates tool calls; bare tool blocks are tools."""
    if obj.get("role") not in ("user", "assistant"):
        return RecordKind.OTHER
    message = obj.get("message")
    if not isinstance(message, dict):
        return RecordKind.OTHER
    content = message.get("content")
    if isinstance(content, str):
        return RecordKind.MESSAGE if content.strip() else RecordKind.OTHER
    if not isinstance(content, list):
        return RecordKind.OTHER
    types = {block.get("type") for block in content if isinstance(block, dict)}
    if "text" in types:
        return RecordKind.MESSAGE
    if types and types <= _TOOL_BLOCKS:
        return RecordKind.TOOL
    return RecordKind.OTHER


class CursorSource(TranscriptSource):
    """Cursor Agent transcripts under ``~/.cursor/projects``."""

    name: ClassVar[str] = "cursor"

    def default_root(self) -> Path:
        """``~/.cursor/projects``."""
        return Path.home() / ".cursor" / "projects"

    def discover(self) -> list[SessionFile]:
        """Every ``<project>/agent-transcripts/**/*.jsonl``, newest first."""
        found: list[SessionFile] = []
        try:
            projects = list(os.scandir(self.root()))
        except OSError:
            return []
        for project in projects:
            transcripts = Path(project.path) / TRANSCRIPTS
            if transcripts.is_dir():
                found.extend(jsonl_files(transcripts))
        return newest_first(found)

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """See :func:`classify_cursor_record`."""
        return classify_cursor_record(obj)

    def timestamp(self, record: str) -> str | None:
        """Cursor records carry no time: the line count alone drives the cursor."""
        return None
