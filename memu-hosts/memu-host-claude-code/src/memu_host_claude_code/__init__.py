"""memu's Claude Code host: mines ``~/.claude/projects`` and Claude Desktop's Cowork sessions."""
