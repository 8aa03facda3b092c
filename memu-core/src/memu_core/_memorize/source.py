"""The canonical session format a developer run reads.

One JSON object per line: ``{"role": "user" | "assistant" | "tool" | "system", "content":
<text or a list of content blocks>, "timestamp": <optional RFC 3339 string>}``. User and
assistant turns with text are the conversation; ``tool`` records (and turns holding only
``tool_use``/``tool_result`` blocks) are tool traffic; anything else is skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from memu_core._jsonl import jsonl_files, newest_first
from memu_core.interfaces import TranscriptSource
from memu_core.types import RecordKind, SessionFile

ROLES = ("user", "assistant")
_TOOL_BLOCKS = frozenset({"tool_use", "tool_result"})


def classify(obj: dict[str, Any]) -> RecordKind:
    """The kind of one canonical record; never raises."""
    role = obj.get("role")
    if role == "tool":
        return RecordKind.TOOL
    if role not in ROLES:
        return RecordKind.OTHER
    content = obj.get("content")
    if isinstance(content, str):
        return RecordKind.MESSAGE if content.strip() else RecordKind.OTHER
    if not isinstance(content, list):
        return RecordKind.OTHER
    types = {block.get("type") for block in content if isinstance(block, dict)}
    if "text" in types:
        return RecordKind.MESSAGE
    return RecordKind.TOOL if types and types <= _TOOL_BLOCKS else RecordKind.OTHER


class CanonicalSource(TranscriptSource):
    """The sessions copied into one run's ``transcripts/`` folder."""

    name: ClassVar[str] = "developer"

    def default_root(self) -> Path:
        """No default: a run always names its folder."""
        return Path.cwd() / "transcripts"

    def discover(self) -> list[SessionFile]:
        """The run's session files, newest first."""
        return newest_first(jsonl_files(self.root()))

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """See :func:`classify`."""
        return classify(obj)
