"""memu's OpenClaw host: mines ``~/.openclaw/agents`` (per-agent SQLite stores and legacy JSONL)."""
