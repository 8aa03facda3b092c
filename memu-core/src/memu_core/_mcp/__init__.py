"""``memu mcp``: memu's memory as MCP tools over stdio (the official ``mcp`` SDK), and
``memu mcp install`` to register it with Claude Code, Cursor or Codex."""
