"""memu cloud backend: an AgenticMemoryBackend that talks to a v4 memory API (memU's hosted one or memu-server)."""
