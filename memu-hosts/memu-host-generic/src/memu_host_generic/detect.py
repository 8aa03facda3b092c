"""``memu-agent detect``: which agents live in this home, and what memu can do with each.

Read-only. The hosts memu knows come from the registry, not from a table here: every installed
host's spec (built-in or third-party, through ``memu_register_hosts``) and the catalogue's
hosts not installed (:func:`memu_core.host.known_hosts`). An agent whose session folder (or
whose folder under the home) exists is reported with the distribution that serves it, whether
it is installed, the install line when it is not, its instruction file and its session root.

Every other hidden folder of the home (``~/.<agent>``, tool caches skipped) falls back to the
generic adapter: a bounded walk samples the newest session logs through the sniffer and says
whether memorization (its sessions can be mined), retrieval (it has an instruction file to
carry the retrieve block), both or neither work, with the exact next command. SQLite logs are
reported as unreadable by this adapter rather than passed over in silence.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memu_core.host import KnownHost, hosts_root, known_hosts
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
    """What one folder holds, for the generic adapter (no distribution matched it)."""

    path: Path
    session_files: list[Path] = field(default_factory=list)
    sqlite_files: list[Path] = field(default_factory=list)
    instruction_files: list[Path] = field(default_factory=list)
    sampled: int = 0
    messages: int = 0
    tools: int = 0
    truncated: bool = False
    """The walk stopped at :data:`MAX_FILES`; more may lie beyond."""
    dialects: dict[str, int] = field(default_factory=dict)
    """Sampled records per recognised dialect (see :data:`memu_host_generic.source.DIALECTS`)."""
    distribution: str = "memu-host-generic"

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
        """The folder to pass as ``--session-dir``: the session root, not a leaf.

        The sessions' common folder, cut back to one level under the agent's folder
        (``~/.myagent/logs`` for ``~/.myagent/logs/proj/s1.jsonl``), so sessions of projects
        the agent starts later are mined too (the source walks the root recursively).
        """
        if not self.session_files:
            return None
        common = Path(os.path.commonpath([str(p.parent) for p in self.session_files]))
        try:
            parts = common.relative_to(self.path).parts
        except ValueError:
            return common
        return self.path / parts[0] if parts else self.path

    @property
    def name(self) -> str:
        """The agent's short name (the folder name without its dot)."""
        return self.path.name.lstrip(".") or "agent"

    def next_commands(self) -> list[str]:
        """The exact commands that set up what works."""
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
            "adapter": "generic",
            "host": "agent",
            "display": self.name,
            "distribution": self.distribution,
            "installed": True,
            "install": None,
            "binary": "memu-agent",
            "dedicated": None,
            "verdict": self.verdict,
            "memorization": self.memorization,
            "retrieval": self.retrieval,
            "session_dir": str(self.session_dir) if self.session_dir else None,
            "session_files": len(self.session_files),
            "instruction_file": str(self.instruction_files[0]) if self.instruction_files else None,
            "sampled": self.sampled,
            "messages": self.messages,
            "tools": self.tools,
            "dialects": dict(self.dialects),
            "sqlite_files": [str(p) for p in self.sqlite_files],
            "instruction_files": [str(p) for p in self.instruction_files],
            "truncated": self.truncated,
            "next": self.next_commands(),
        }


@dataclass
class Match:
    """An agent a known host serves: found by its session folder, or its folder in the home."""

    host: KnownHost
    path: Path
    """The agent's folder (``~/.claude``), or the session root when that lies outside the home."""
    root: Path
    """The host's session root (its spec's ``session_dir``, expanded), never a leaf inside it."""
    session_files: int = 0
    truncated: bool = False

    @property
    def sessions_found(self) -> bool:
        """Whether the session root exists (a folder, or a file such as Hermes' ``state.db``)."""
        return self.root.exists()

    @property
    def instruction(self) -> str:
        """The host's instruction file: a path, or ``AGENTS.md in each project`` for ``./`` ones."""
        text = self.host.instruction_path
        if not text:
            return ""
        if text.startswith("./"):
            return f"{text[2:]} in each project"
        return str(Path(text).expanduser())

    def next_commands(self) -> list[str]:
        """Install the distribution when it is missing, then follow the host's own guide."""
        cmds = [] if self.host.installed else [self.host.install_line]
        return [*cmds, f"{self.host.binary} docs install"]

    def to_json(self) -> dict[str, Any]:
        """The match for programs (``--json``)."""
        return {
            "path": str(self.path),
            "name": self.host.id,
            "adapter": "dedicated",
            "host": self.host.id,
            "display": self.host.display,
            "distribution": self.host.distribution,
            "installed": self.host.installed,
            "install": None if self.host.installed else self.host.install_line,
            "plugins_install": None if self.host.installed else self.host.plugins_install,
            "binary": self.host.binary,
            "dedicated": self.host.binary,
            "session_dir": str(self.root),
            "sessions_found": self.sessions_found,
            "session_files": self.session_files,
            "instruction_file": self.instruction or None,
            "truncated": self.truncated,
            "next": self.next_commands(),
        }


def agent_base(name: str) -> Path:
    """A working tree of its own for each generic agent, so their cursors never mix."""
    return hosts_root() / f"agent-{name}"


def _q(path: Path) -> str:
    text = _short(path)
    return f"'{text}'" if any(c in text for c in " '\"$`\\") else text


def _short(path: Path | str) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text == home or text.startswith(home + os.sep) else text


def _agent_folder(root: Path, home: Path) -> Path:
    """``~/.x`` for a session root under ``~/.x``; the root itself outside the home."""
    try:
        parts = root.relative_to(home).parts
    except ValueError:
        return root
    return home / parts[0] if parts else root


def _hosts() -> list[KnownHost]:
    """The known hosts that have a session folder to look for (not this adapter itself)."""
    return [h for h in known_hosts() if h.session_dir]


def _match(host: KnownHost, home: Path) -> Match | None:
    root = Path(host.session_dir).expanduser()
    folder = _agent_folder(root, home)
    if not (root.exists() or folder.is_dir()):
        return None
    found = Match(host, folder, root)
    if root.is_dir():
        for _top, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
            found.session_files += sum(name.endswith(".jsonl") for name in files)
            if found.session_files >= MAX_FILES:
                found.truncated = True
                break
    return found


def _within(a: Path, b: Path) -> bool:
    """``a`` is ``b`` or lies under it."""
    try:
        a.relative_to(b)
    except ValueError:
        return False
    return True


def probe(path: str | Path) -> Probe:
    """Walk ``path`` (bounded), classify what it holds, and sample its newest session logs."""
    root = Path(path).expanduser()
    found = Probe(root)
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


Found = Match | Probe


def look(path: str | Path) -> Found:
    """One folder: the known host whose agent folder or session root it is (or holds, or lies
    in); otherwise the generic probe."""
    target = Path(path).expanduser().resolve()
    home = Path.home()
    for host in _hosts():
        root = Path(host.session_dir).expanduser()
        folder = _agent_folder(root, home)
        inside = _within(target, folder.resolve())
        holds = _within(root.resolve(), target) and not _within(home.resolve(), target)
        if inside or holds:
            found = _match(host, home)
            if found is not None:
                return found
    return probe(target)


def scan_home(home: str | Path = "~") -> list[Found]:
    """Every known host found in ``home``, then every other hidden folder of it that holds
    sessions, databases or instructions (the generic adapter's)."""
    base = Path(home).expanduser()
    found: list[Found] = []
    for host in _hosts():
        match = _match(host, base)
        if match is not None:
            found.append(match)
    claimed = {m.path for m in found}
    generic = next((h.distribution for h in known_hosts() if h.id == "agent"), "memu-host-generic")
    for entry in sorted(base.glob(".*")):
        if entry.name in SKIP_DIRS or entry in claimed or not entry.is_dir():
            continue
        p = probe(entry)
        p.distribution = generic
        if p.session_files or p.sqlite_files or p.instruction_files:
            found.append(p)
    found.sort(key=lambda f: str(f.path))
    return found


def _dialects(p: Probe) -> str:
    names = sorted(p.dialects, key=lambda n: -p.dialects[n])
    return ("dialect " if len(names) == 1 else "dialects ") + ", ".join(names) if names else "no dialect"


def render_match(m: Match) -> str:
    """A known host's agent for people: the distribution, the session root, the instruction."""
    h = m.host
    state = "installed" if h.installed else "not installed"
    lines = [_short(m.path), f"  agent: {h.display} → {h.distribution} ({state}; binary {h.binary})"]
    if m.sessions_found:
        count = f" ({m.session_files}{'+' if m.truncated else ''} session file(s))" if m.root.is_dir() else ""
        lines.append(f"  sessions: {_short(m.root)}{count}")
    else:
        lines.append(f"  sessions: none yet (expected in {_short(m.root)})")
    if m.instruction:
        lines.append(f"  instruction: {_short(m.instruction)}")
    if not h.installed:
        lines.append(f"  install: {h.install_line}")
        lines.append(f"  or: {h.plugins_install}")
    for cmd in m.next_commands():
        lines.append(f"  next: {cmd}")
    return "\n".join(lines)


def render(p: Found) -> str:
    """One agent for people: a known host's block, or the generic probe's."""
    if isinstance(p, Match):
        return render_match(p)
    lines = [_short(p.path), f"  agent: unknown → {p.distribution} (the generic adapter, memu-agent)"]
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
        lines.append(f"  (stopped after {MAX_FILES} files; pass a deeper folder to `memu-agent detect <path>`)")
    for cmd in p.next_commands():
        lines.append(f"  next: {cmd}")
    return "\n".join(lines)


def report(path: str | None, *, as_json: bool) -> str:
    """The whole ``detect`` output for a look at ``path``, or a survey of the home."""
    if path is not None:
        p = look(path)
        return json.dumps(p.to_json(), indent=2, ensure_ascii=False) if as_json else render(p)
    found = scan_home()
    if as_json:
        return json.dumps(
            {"home": str(Path.home()), "agents": [p.to_json() for p in found]}, indent=2, ensure_ascii=False
        )
    if not found:
        return "no agent installations found under ~"
    footer = (
        "next steps: an agent a memu distribution serves follows its binary's guide (install the\n"
        "distribution first where it says `install:`); any other agent uses the generic adapter:\n"
        "  memorization → memu-agent prepare --session-dir <dir> --base-dir ~/.memu/hosts/agent-<name>\n"
        "                 (schedule it: `memu-agent docs task`; commit with the same --base-dir)\n"
        "  retrieval    → memu-agent install-instruction --path <file>"
    )
    return "\n\n".join([*(render(p) for p in found), footer])
