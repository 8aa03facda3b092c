"""Where Codex keeps its sessions (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) and how to
read them: every line wraps a ``payload`` whose ``type`` says what it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from memu_core.host import RecordKind, SkipRunsInTree

_INJECTED_PREFIXES = ("<environment_context>", "<turn_aborted>", "# AGENTS.md instructions for")
"""Texts Codex itself puts in a user turn; a turn made only of these is not the user speaking."""


def classify_codex_record(obj: dict[str, Any]) -> RecordKind:
    """``message`` payloads are conversation, ``function_call``/``function_call_output`` are tools."""
    payload = obj.get("payload")
    if not isinstance(payload, dict):
        return RecordKind.OTHER
    ptype = payload.get("type")
    if ptype == "message":
        role = payload.get("role")
        if role == "assistant":
            return RecordKind.MESSAGE
        if role == "user":
            return RecordKind.OTHER if _injected(payload.get("content")) else RecordKind.MESSAGE
        return RecordKind.OTHER
    if ptype in ("function_call", "function_call_output"):
        return RecordKind.TOOL
    return RecordKind.OTHER


def _injected(content: Any) -> bool:
    """True when every text item of a user turn is one of Codex's injected context blocks."""
    if not isinstance(content, list):
        return False
    texts = [item.get("text", "") for item in content if isinstance(item, dict)]
    if not texts:
        return False
    return all(isinstance(t, str) and t.lstrip().startswith(_INJECTED_PREFIXES) for t in texts)


def quick_codex_kind(line: str) -> RecordKind | None:
    """Tool calls and non-message payloads decided from the compact line; messages are parsed."""
    at = line.find('"payload":{"type":"')
    if at < 0 or line.count("{", 0, at) != 1 or line.count("[", 0, at):
        return None
    start = at + 19
    ptype = line[start : line.find('"', start)]
    if ptype in ("function_call", "function_call_output"):
        return RecordKind.TOOL
    return None if ptype == "message" else RecordKind.OTHER


class CodexSource(SkipRunsInTree):
    """Codex rollouts under ``~/.codex/sessions``.

    Codex exports no session id, so the scheduled bridging run is recognised by where it ran:
    its ``session_meta`` names a ``cwd`` inside memu's tree (the guide starts the run there).
    """

    name: ClassVar[str] = "codex"

    def quick_kind(self, line: str) -> RecordKind | None:
        """See :func:`quick_codex_kind`."""
        return quick_codex_kind(line)

    def default_root(self) -> Path:
        """``~/.codex/sessions``."""
        return Path.home() / ".codex" / "sessions"

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """Codex's payload rules (:func:`classify_codex_record`)."""
        return classify_codex_record(obj)
