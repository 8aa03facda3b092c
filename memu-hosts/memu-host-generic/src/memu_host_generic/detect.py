"""``memu-agent detect``: which agents live in this home, and what memu can do with each.

Read-only. A survey looks at every hidden folder of the home (``~/.<agent>``), skipping tool
caches; a probe looks at one folder. Each probe walks a bounded number of files, samples the
newest session logs through the generic sniffer, and reports per agent whether memorization
(its sessions can be mined), retrieval (it has an instruction file to carry the retrieve
block), both or neither work, with the paths found and the exact next command. Agents with a
dedicated adapter are sent to it; SQLite logs are reported as unreadable by this adapter rather
than passed over in silence.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memu_core.host import hosts_root
from memu_host_generic.source import GenericSource

INSTRUCTION_NAMES = (
    "AGENTS.md",
    "agents.md",
    "AGENT.md",
    "CLAUDE.md",
    "SOUL.md",
    "GEMINI.md",
    "QWEN.md",
    ".cursorrules",
)
DEDICATED = {
    ".codex": "memu-codex",
    ".claude": "memu-claude-code",
    ".cursor": "memu-cursor",
    ".openclaw": "memu-openclaw",
    ".hermes": "memu-hermes",
    ".workbuddy": "memu-workbuddy",
    ".cola": "memu-cola",
}
SKIP_DIRS = frozenset(
    [
        ".Trash",
        ".cache",
        ".cargo",
        ".config",
        ".docker",
        ".git",
        ".gradle",
        ".local",
        ".m2",
        ".npm",
        ".nvm",
        ".ollama",
        ".pyenv",
        ".rustup",
        ".ssh",
        ".venv",
        ".vscode",
        "node_modules",
        "__pycache__",
        hosts_root().parent.name,  # memu's own folder: its transcript slices are JSONL too
    ]
)
"""Tool folders that hold no agent sessions."""
SQLITE_SUFFIXES = frozenset({".db", ".sqlite", ".sqlite3", ".vscdb"})
MAX_FILES = 2000
SAMPLE_FILES = 3
SAMPLE_LINES = 200


@dataclass
class Probe:
    """What one folder holds."""

    path: Path
    session_files: list[Path] = field(default_factory=list)
    sqlite_files: list[Path] = field(default_factory=list)
    instruction_files: list[Path] = field(default_factory=list)
    sampled: int = 0
    messages: int = 0
    tools: int = 0
    dedicated: str | None = None
    truncated: bool = False
    """The walk stopped at :data:`MAX_FILES`; more may lie beyond."""
    dialects: dict[str, int] = field(default_factory=dict)
    """Sampled records per recognised dialect (see :data:`memu_host_generic.source.DIALECTS`)."""

    @property
    def memorization(self) -> bool:
        """Sessions with conversation records were found (tool-only logs hold nothing to remember)."""
        return self.messages > 0

    @property
    def retrieval(self) -> bool:
        """An instruction file was found to carry the retrieve block."""
        return bool(self.instruction_files)

    @property
    def verdict(self) -> str:
        """``both``, ``memorization``, ``retrieval`` or ``neither``."""
        if self.memorization and self.retrieval:
            return "both"
        return "memorization" if self.memorization else "retrieval" if self.retrieval else "neither"

    @property
    def session_dir(self) -> Path | None:
        """The folder to pass as ``--session-dir``: the deepest one holding every session found."""
        if not self.session_files:
            return None
        return Path(os.path.commonpath([str(p.parent) for p in self.session_files]))

    @property
    def name(self) -> str:
        """The agent's short name (the folder name without its dot)."""
        return self.path.name.lstrip(".") or "agent"

    def next_commands(self) -> list[str]:
        """The exact commands that set up what works."""
        if self.dedicated:
            return [f"{self.dedicated} docs install"]
        cmds = []
        if self.memorization and self.session_dir is not None:
            base = _q(agent_base(self.name))
            cmds.append(f"memu-agent prepare --session-dir {_q(self.session_dir)} --base-dir {base}")
        if self.retrieval:
            cmds.append(f"memu-agent install-instruction --path {_q(self.instruction_files[0])}")
        return cmds

    def to_json(self) -> dict[str, Any]:
        """The probe for programs (``--json``)."""
        return {
            "path": str(self.path),
            "name": self.name,
            "dedicated": self.dedicated,
            "verdict": self.verdict,
            "memorization": self.memorization,
            "retrieval": self.retrieval,
            "session_dir": str(self.session_dir) if self.session_dir else None,
            "session_files": len(self.session_files),
            "sampled": self.sampled,
            "messages": self.messages,
            "tools": self.tools,
            "dialects": dict(self.dialects),
            "sqlite_files": [str(p) for p in self.sqlite_files],
            "instruction_files": [str(p) for p in self.instruction_files],
            "truncated": self.truncated,
            "next": self.next_commands(),
        }


def agent_base(name: str) -> Path:
    """A working tree of its own for each generic agent, so their cursors never mix."""
    return hosts_root() / f"agent-{name}"


def _q(path: Path) -> str:
    text = _short(path)
    return f"'{text}'" if any(c in text for c in " '\"$`\\") else text


def _short(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text == home or text.startswith(home + os.sep) else text


def probe(path: str | Path) -> Probe:
    """Walk ``path`` (bounded), classify what it holds, and sample its newest session logs."""
    root = Path(path).expanduser()
    found = Probe(root, dedicated=DEDICATED.get(root.name))
    if not root.is_dir():
        return found
    sessions: list[tuple[float, Path]] = []
    count = 0
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        depth = len(Path(top).relative_to(root).parts)
        for name in files:
            count += 1
            if count > MAX_FILES:
                found.truncated = True
                break
            full = Path(top) / name
            if name.endswith(".jsonl"):
                try:
                    sessions.append((full.stat().st_mtime, full))
                except OSError:
                    continue
            elif full.suffix.lower() in SQLITE_SUFFIXES:
                found.sqlite_files.append(full)
            if name in INSTRUCTION_NAMES and depth <= 1:
                found.instruction_files.append(full)
        if found.truncated:
            break
    sessions.sort(key=lambda t: t[0], reverse=True)
    found.session_files = [p for _, p in sessions]
    found.instruction_files.sort(key=lambda p: (len(p.relative_to(root).parts), str(p)))
    _sample(found)
    return found


def _sample(found: Probe) -> None:
    from memu_core.host import RecordKind
    from memu_host_generic.source import dialect_of

    sniffer = GenericSource(found.path)
    for path in found.session_files[:SAMPLE_FILES]:
        try:
            with open(path, encoding="utf-8") as fh:
                lines = []
                for raw in fh:
                    if raw.strip():
                        lines.append(raw.strip())
                    if len(lines) >= SAMPLE_LINES:
                        break
        except (OSError, UnicodeDecodeError):
            continue
        for line in lines:
            kind = sniffer.classify(line)
            found.sampled += 1
            found.messages += kind is RecordKind.MESSAGE
            found.tools += kind is RecordKind.TOOL
            if kind is not RecordKind.OTHER:
                try:
                    name = dialect_of(json.loads(line))
                except (ValueError, AttributeError):
                    name = None
                if name:
                    found.dialects[name] = found.dialects.get(name, 0) + 1


def scan_home(home: str | Path = "~") -> list[Probe]:
    """Probe every hidden folder of ``home`` that holds sessions, databases or instructions."""
    base = Path(home).expanduser()
    probes = []
    for entry in sorted(base.glob(".*")):
        if entry.name in SKIP_DIRS or not entry.is_dir():
            continue
        p = probe(entry)
        if p.session_files or p.sqlite_files or p.instruction_files or p.dedicated:
            probes.append(p)
    return probes


def _dialects(p: Probe) -> str:
    names = sorted(p.dialects, key=lambda n: -p.dialects[n])
    return ("dialect " if len(names) == 1 else "dialects ") + ", ".join(names) if names else "no dialect"


def render(p: Probe) -> str:
    """The probe for people: one block per agent."""
    lines = [_short(p.path)]
    if p.dedicated:
        lines.append(f"  dedicated adapter: use `{p.dedicated}` (guide: `{p.dedicated} docs install`)")
    if p.memorization:
        lines.append(
            f"  memorization: works — {len(p.session_files)} session file(s) "
            f"in {_short(p.session_dir or p.path)}, "
            f"{p.messages + p.tools}/{p.sampled} sampled record(s) recognized "
            f"({p.messages} conversation, {p.tools} tool; {_dialects(p)})"
        )
    elif p.session_files and p.tools:
        lines.append(
            f"  memorization: no — {len(p.session_files)} .jsonl file(s) hold only tool records "
            f"({p.tools}/{p.sampled} sampled); nothing a person said to remember"
        )
    elif p.session_files:
        lines.append(
            f"  memorization: no — {len(p.session_files)} .jsonl file(s) found but no record matched a known "
            "dialect (not a conversation log, or a new shape)"
        )
    elif p.sqlite_files:
        lines.append(
            f"  memorization: no — sessions likely live in {_short(p.sqlite_files[0])} (SQLite; memu-agent "
            "reads JSONL only, this agent needs a dedicated adapter like memu-hermes)"
        )
    else:
        lines.append("  memorization: no — no session log found")
    if p.retrieval:
        lines.append(f"  retrieval: works — instruction file {_short(p.instruction_files[0])}")
    else:
        lines.append(
            "  retrieval: no instruction file found — if this agent reads AGENTS.md from the project root, "
            "run `memu-agent install-instruction` inside each project"
        )
    lines.append(f"  verdict: {p.verdict}")
    if p.truncated:
        lines.append(
            f"  (stopped after {MAX_FILES} files; pass a deeper folder to `memu-agent detect <path>`)"
        )
    for cmd in p.next_commands():
        lines.append(f"  next: {cmd}")
    return "\n".join(lines)


def report(path: str | None, *, as_json: bool) -> str:
    """The whole ``detect`` output for a probe of ``path``, or a survey of the home."""
    if path is not None:
        p = probe(path)
        return json.dumps(p.to_json(), indent=2, ensure_ascii=False) if as_json else render(p)
    probes = scan_home()
    if as_json:
        return json.dumps(
            {"home": str(Path.home()), "agents": [p.to_json() for p in probes]}, indent=2, ensure_ascii=False
        )
    if not probes:
        return "no agent installations found under ~"
    footer = (
        "next steps: an agent with a dedicated adapter follows its own guide; otherwise\n"
        "  memorization → memu-agent prepare --session-dir <dir> --base-dir ~/.memu/hosts/agent-<name>\n"
        "                 (schedule it: `memu-agent docs task`; commit with the same --base-dir)\n"
        "  retrieval    → memu-agent install-instruction --path <file>"
    )
    return "\n\n".join([*(render(p) for p in probes), footer])
