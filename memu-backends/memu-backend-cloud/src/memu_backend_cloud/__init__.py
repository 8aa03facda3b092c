"""memu cloud backend: an AgenticMemoryBackend that talks to a v4 memory API (memU's hosted one
or a self-hosted ``memu-server``). Select it with ``MEMU_MEMORY_MODE=cloud``."""

from memu_backend_cloud.backend import CloudBackend

__all__ = ["CloudBackend"]
