"""The memu distributions that exist, shipped with core: what ``memu plugins available`` lists and
what ``memu-agent detect`` recommends. Data only; reading it imports no plugin."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """One distribution of the memu family."""

    distribution: str
    """The name on the package index (``pip install <distribution>``)."""
    summary: str
    registers: tuple[str, ...]
    """What it adds, as ``kind:name`` (``host:cursor``, ``store:postgres``, ``embedder:local``…)."""
    host: str = ""
    """The host id when it is a host adapter (``claude-code``); empty otherwise."""
    extras: str = ""
    """An extra most users want with it (``[minilm]``), as written after the name."""
    session_dir: str = ""
    """A host adapter's default session folder (its spec's ``session_dir``), so ``detect`` can
    find the agent before the adapter is installed; empty for the rest."""
    instruction_path: str = ""
    """A host adapter's instruction file (its spec's ``instruction_path``)."""

    @property
    def install_line(self) -> str:
        """``pip install <distribution><extras>``."""
        return f"pip install {self.distribution}{self.extras}"


CATALOGUE: tuple[Entry, ...] = (
    Entry("memu-core", "The engine, the SQLite store, the memu CLI and the host framework.", ("cli:memu",)),
    Entry(
        "memu-host-claude-code",
        "Claude Code and Claude Desktop's Cowork.",
        ("host:claude-code",),
        "claude-code",
        session_dir="~/.claude/projects",
        instruction_path="~/.claude/CLAUDE.md",
    ),
    Entry(
        "memu-host-codex",
        "OpenAI Codex.",
        ("host:codex",),
        "codex",
        session_dir="~/.codex/sessions",
        instruction_path="~/.codex/AGENTS.md",
    ),
    Entry(
        "memu-host-cursor",
        "Cursor's Agent CLI.",
        ("host:cursor",),
        "cursor",
        session_dir="~/.cursor/projects",
        instruction_path="./AGENTS.md",
    ),
    Entry(
        "memu-host-openclaw",
        "OpenClaw.",
        ("host:openclaw",),
        "openclaw",
        session_dir="~/.openclaw/agents",
        instruction_path="~/.openclaw/workspace/AGENTS.md",
    ),
    Entry(
        "memu-host-hermes",
        "Hermes Agent.",
        ("host:hermes",),
        "hermes",
        session_dir="~/.hermes/state.db",
        instruction_path="~/.hermes/SOUL.md",
    ),
    Entry(
        "memu-host-workbuddy",
        "WorkBuddy.",
        ("host:workbuddy",),
        "workbuddy",
        session_dir="~/.workbuddy/projects",
        instruction_path="~/.workbuddy/SOUL.md",
    ),
    Entry(
        "memu-host-cola",
        "Cola.",
        ("host:cola",),
        "cola",
        session_dir="~/.cola/sessions",
        instruction_path="~/.cola/memory-bank/MEMORY.md",
    ),
    Entry(
        "memu-host-generic",
        "Any agent that logs JSONL, with detect.",
        ("host:agent",),
        "agent",
        instruction_path="./AGENTS.md",
    ),
    Entry("memu-embed-local", "A local embedding model (all-MiniLM-L6-v2), offline.", ("embedder:local",)),
    Entry("memu-embed-litellm", "Remote embedding providers through litellm.", ("embedder:litellm",)),
    Entry("memu-backend-postgres", "PostgreSQL + pgvector store for many writers.", ("store:postgres",)),
    Entry("memu-backend-cloud", "A v4 memory API (memU's hosted one or memu-server).", ("backend:cloud",)),
    Entry("memu-server", "The v4 memory HTTP API over a local store, for a team.", ("cli:memu-server",)),
    Entry("memu-telemetry", "Opt-in event spool and sender.", ("event_sink:telemetry",)),
)


def for_host(host_id: str) -> Entry | None:
    """The distribution that serves ``host_id``, if memu ships one."""
    return next((entry for entry in CATALOGUE if entry.host == host_id), None)


def by_distribution(name: str) -> Entry | None:
    """The entry of distribution ``name`` (case and ``_``/``-`` insensitive)."""
    wanted = name.lower().replace("_", "-")
    return next((entry for entry in CATALOGUE if entry.distribution == wanted), None)
