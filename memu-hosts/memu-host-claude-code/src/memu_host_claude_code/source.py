"""Where Claude Code (and Claude Desktop's Cowork mode) keep their sessions, and how to read them.

Claude Code writes ``~/.claude/projects/<escaped-cwd>/<session>.jsonl``; subagents write under
``<escaped-cwd>/<session>/subagents/…`` and are attributed to the parent session. Cowork writes
``<desktop data root>/local-agent-mode-sessions/<account>/<org>/local_<id>/audit.jsonl``, whose
lines are reshaped into Claude Code's record dialect before classification.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, ClassVar

from memu_core.errors import ConfigError
from memu_core.host import CompositeSource, RecordKind, SessionFile, TranscriptSource, relative_key

COWORK_ROOTS_ENV = "MEMU_COWORK_ROOTS"
"""Replaces the automatic Claude Desktop data-root discovery when present (even empty)."""

_CONVERSATION_TYPES = frozenset({"user", "assistant"})


def classify_claude_record(obj: dict[str, Any]) -> RecordKind:
    """Classify a Claude record by its content blocks, not its role.

    A ``tool_result`` arrives inside a *user* record, so the role cannot tell a person's words
    from a tool's output; a text block can. ``isMeta`` records are harness-injected, not said.
    """
    if obj.get("type") not in _CONVERSATION_TYPES:
        return RecordKind.OTHER
    message = obj.get("message")
    if not isinstance(message, dict):
        return RecordKind.OTHER
    content = message.get("content")
    if isinstance(content, str):
        return RecordKind.OTHER if obj.get("isMeta") else RecordKind.MESSAGE
    if not isinstance(content, list):
        return RecordKind.OTHER
    has_tool = False
    for block in content:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            return RecordKind.OTHER if obj.get("isMeta") else RecordKind.MESSAGE
        if btype in ("tool_use", "tool_result"):
            has_tool = True
    return RecordKind.TOOL if has_tool else RecordKind.OTHER


_THINKING_HEAD = '{"type":"thinking","thinking":"'
_HEAD = re.compile(r'"type":"(?:(?:user|assistant)"[^{\[]*?"message":\{[^{\[]*?"content":(.)|([^"]*)")', re.S)
"""From the record's ``"type":"``: for a user/assistant record whose ``message`` object and its
``content`` key follow with nothing nested in between, the character that opens the content
(group 1); otherwise the type's value (group 2). One match in C instead of a dozen calls: the
gaps it scans are a few dozen characters."""
_TOOL_HEAD = re.compile(r'\{[^{\[}]*?"type":"tool_(?:result|use)"')
"""A block whose own keys (before its first nested value or its end) name a tool type."""


def _string_end(line: str, pos: int) -> int:
    """The index just past the closing quote of the JSON string whose text starts at ``pos``
    (its opening quote is at ``pos - 1``), else -1. A quote is closing when an even number of
    backslashes precede it; each step is a ``find`` in C over text that is mostly unescaped."""
    while True:
        quote = line.find('"', pos)
        if quote < 0:
            return -1
        back = quote - 1
        while line[back] == "\\":  # stops at the opening quote at the latest
            back -= 1
        if (quote - back) % 2:
            return quote + 1
        pos = quote + 1


def _after_thinking(line: str, pos: int) -> int:
    """The index just past a ``{"type":"thinking","thinking":"…"}`` block (an optional
    ``signature`` after the text) starting at ``pos``, else -1."""
    end = _string_end(line, pos + len(_THINKING_HEAD))
    if end < 0:
        return -1
    if line.startswith(',"signature":"', end):
        end = _string_end(line, end + 14)
        if end < 0:
            return -1
    return end + 1 if line.startswith("}", end) else -1


def quick_claude_kind(line: str) -> RecordKind | None:
    """The kind of a compact Claude Code line when its text alone decides it, else ``None``.

    Certain cases: a top-level ``type`` other than user/assistant is ``OTHER``; a user/assistant
    record whose message content is a string, or a list whose first block after any thinking
    blocks is a text block, is ``MESSAGE`` when the line has no ``isMeta`` key; one whose content
    list starts with a tool block, with no text block anywhere in the line, is ``TOOL`` (the bulk
    of a log by size: tool results). Everything else is parsed. Only the head of the line is read
    (a few finds and matches in C), never its long tool output but for one search for a text
    block: a first run classifies every line of months of sessions.
    """
    at = line.find('"type":"')
    # Top-level only when nothing nested comes before it but the record's own brace; a quoted
    # ``"type":"`` cannot occur inside a JSON string (its quotes would be escaped).
    if at < 0 or not line.startswith("{") or line.find("{", 1, at) >= 0 or line.find("[", 0, at) >= 0:
        return None
    head = _HEAD.match(line, at)
    if head is None:
        return None
    opener = head.group(1)
    if opener is None:  # not a user/assistant record, or not certainly its top-level message
        rtype = head.group(2)
        return None if rtype == "user" or rtype == "assistant" else RecordKind.OTHER
    if opener == '"':
        return None if '"isMeta":' in line else RecordKind.MESSAGE
    if opener != "[":
        return None
    # Skip leading thinking blocks (assistant turns often open with one), then look at the next
    # block: its own keys are short, so its type shows within the first few dozen characters.
    pos = head.end()
    while line.startswith(_THINKING_HEAD, pos) and (after := _after_thinking(line, pos)) > 0:
        if not line.startswith(",", after):
            break
        pos = after + 1
    if line.startswith('{"type":"text"', pos):
        return None if '"isMeta":' in line else RecordKind.MESSAGE
    # The block's own keys only, within 96 characters of its brace; a text block may sit beside
    # the tool block anywhere in the line: then parse to be sure.
    tool = _TOOL_HEAD.match(line, pos)
    if tool is None or tool.end() - pos > 96 or '"type":"text"' in line:
        return None
    return RecordKind.TOOL


class ClaudeCodeSource(TranscriptSource):
    """Claude Code's own transcripts under ``~/.claude/projects``."""

    name: ClassVar[str] = "claude-code"

    quick_kind = staticmethod(quick_claude_kind)
    """See :func:`quick_claude_kind` (no bound-method hop: it runs once per line)."""

    def default_root(self) -> Path:
        """``~/.claude/projects``."""
        return Path.home() / ".claude" / "projects"

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """Claude's content-block rules (:func:`classify_claude_record`)."""
        return classify_claude_record(obj)

    def session_id(self, path: Path) -> str:
        """The owning session: a subagent file nests under ``<slug>/<session>/…``."""
        try:
            parts = relative_key(path, self.root()).split("/")
        except ValueError:
            return path.stem
        return parts[1] if len(parts) > 2 else path.stem

    def scan_region(self, path: Path) -> str:
        """One region for all of Claude Code."""
        return "claude-code"


class CoworkSource(TranscriptSource):
    """Claude Desktop's Cowork sessions (read-only; never opens the sibling ``.audit-key``)."""

    name: ClassVar[str] = "cowork"

    def __init__(self, roots: list[Path] | None = None) -> None:
        super().__init__(None)
        self.roots: list[Path] = _dedupe(roots) if roots is not None else cowork_roots()

    def default_root(self) -> Path:
        """The first data root, or the platform's conventional one (diagnostics only)."""
        if self.roots:
            return self.roots[0]
        conventional = _platform_candidates()
        return conventional[0] if conventional else Path.home() / ".config" / "Claude"

    def exists(self) -> bool:
        """True when at least one data root is configured or found."""
        return bool(self.roots)

    def owns(self, path: Path) -> bool:
        """Whether ``path`` lies under one of the data roots."""
        return self._root_of(path) is not None

    def discover(self) -> list[SessionFile]:
        """``local-agent-mode-sessions/<account>/<org>/local_*/audit.jsonl`` under every root."""
        found: list[SessionFile] = []
        for root in self.roots:
            base = root / "local-agent-mode-sessions"
            for audit in base.glob("*/*/local_*/audit.jsonl"):
                try:
                    st = audit.stat()
                except OSError:
                    continue  # vanished between the glob and the stat
                if audit.parent.is_dir():
                    found.append(SessionFile(audit, st.st_mtime_ns, st.st_size))
        found.sort(key=lambda s: s.mtime_ns, reverse=True)
        return found

    def _root_of(self, path: Path) -> Path | None:
        for root in self.roots:
            try:
                path.relative_to(root)
            except ValueError:
                continue
            return root
        return None

    def key(self, path: Path) -> str:
        """``cowork/<12 hex of the root>/<path under the root>``: stable, unique across roots."""
        import hashlib  # OpenSSL's load (about 2.5 ms) only for Cowork sessions, not every prepare

        root = self._root_of(path) or self.default_root()
        digest = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:12]
        return f"cowork/{digest}/{path.relative_to(root).as_posix()}"

    def session_id(self, path: Path) -> str:
        """The outer Cowork id: the workspace directory name without ``local_``."""
        name = path.parent.name
        return name[len("local_") :] if name.startswith("local_") else name

    def scan_region(self, path: Path) -> str:
        """One region per data root."""
        return f"cowork:{self._root_of(path) or self.default_root()}"

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """Claude's rules, applied to the normalised record."""
        return classify_claude_record(obj)

    def normalise(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Keep user/assistant turns in Claude Code's shape; drop replays and bookkeeping.

        ``isMeta`` is carried over (memU drops it, which lets injected context pass as speech).
        """
        if obj.get("type") not in _CONVERSATION_TYPES or obj.get("isReplay"):
            return None
        message = obj.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), (str, list)):
            return None
        out: dict[str, Any] = {
            "type": obj["type"],
            "timestamp": obj.get("timestamp") or obj.get("_audit_timestamp"),
            "message": {"role": message.get("role"), "content": message["content"]},
            "source": {"surface": "cowork", "container": "cowork_audit_jsonl"},
        }
        if obj.get("isMeta"):
            out["isMeta"] = True
        return out


class ClaudeDesktopSource(CompositeSource):
    """What ``memu-claude-code`` mines: Claude Code sessions plus Cowork sessions.

    ``cowork_roots`` overrides discovery (tests and ``--session-dir`` users pin it).
    """

    name: ClassVar[str] = "claude-code"

    def __init__(self, session_dir: str | Path | None = None, cowork_roots: list[Path] | None = None) -> None:
        super().__init__(ClaudeCodeSource(session_dir), CoworkSource(cowork_roots))


def cowork_roots(environ: dict[str, str] | None = None, platform: str | None = None) -> list[Path]:
    """Claude Desktop data roots: ``MEMU_COWORK_ROOTS`` when present, else the platform's.

    The variable splits on ``os.pathsep``; every entry must be an existing directory (a typo
    would otherwise silently mine nothing), and an empty value turns Cowork off.
    """
    env = os.environ if environ is None else environ
    if COWORK_ROOTS_ENV in env:
        entries = [e.strip() for e in env[COWORK_ROOTS_ENV].split(os.pathsep) if e.strip()]
        bad = [e for e in entries if not Path(e).expanduser().is_dir()]
        if bad:
            raise ConfigError(
                f"{COWORK_ROOTS_ENV} entries are not directories: {', '.join(bad)}; "
                "fix the paths or unset the variable to use the default Claude Desktop data roots"
            )
        return _dedupe([Path(e).expanduser() for e in entries])
    return _dedupe([p for p in _platform_candidates(env, platform) if p.is_dir()])


def _platform_candidates(environ: Any = None, platform: str | None = None) -> list[Path]:
    env = os.environ if environ is None else environ
    plat = platform or sys.platform
    home = Path.home()
    if plat.startswith("win"):
        appdata = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
        local = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")
        found = [appdata / "Claude", local / "Claude-3p"]
        found += [p / "LocalCache" / "Roaming" / "Claude" for p in sorted((local / "Packages").glob("Claude_*"))]
        return found
    if plat == "darwin":
        support = home / "Library" / "Application Support"
        return [support / "Claude", support / "Claude-3p"]
    if plat.startswith("linux"):
        config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
        return [config / "Claude", config / "Claude-3p"]
    return []


def _dedupe(paths: list[Path]) -> list[Path]:
    unique = {p.resolve(): None for p in paths}
    return sorted(unique, key=lambda p: str(p).lower())
