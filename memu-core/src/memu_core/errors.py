"""The one handled-error family of memu.

Every error a user can cause or fix is a :class:`MemuError`: the CLI prints its message as one
line on stderr (``-v`` adds the traceback) and exits with :attr:`MemuError.exit_code`. Anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations

from pathlib import Path


class MemuError(Exception):
    """A failure the user can act on. The message names the input, what was wrong and the fix."""

    exit_code: int = 1


class UsageError(MemuError):
    """Bad input or configuration: a flag, a payload, a ``MEMU_*`` value. Exit code 2."""

    exit_code = 2


class ConfigError(UsageError):
    """A ``MEMU_*`` setting is missing or invalid."""


class PluginError(MemuError):
    """A plugin failed to load or registered something invalid."""


class StoreError(MemuError):
    """The store could not be opened, migrated, read or written."""


class WriteConflict(StoreError):
    """A file changed between the engine's plan and its write; the engine re-plans and retries."""


class StoreBusy(StoreError):
    """The store cannot take this request now: every pooled connection stayed busy for the pool's
    timeout, or the database server is unreachable (restarting). Nothing was written; the same
    request may succeed after :attr:`retry_after` seconds (a server answers 503 with it)."""

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ConflictError(MemuError):
    """A file was changed by someone else since the editor read it (detected by content hash).

    Nothing was written. Exit code 4, so a script can tell it from other failures.
    """

    exit_code = 4


class FingerprintMismatch(StoreError):
    """The store's vectors come from another embedding model than the configured one."""


class EmbeddingError(MemuError):
    """The embedder failed: network, authentication, or a malformed answer."""


class Unsupported(MemuError):
    """The backend cannot do this at all (a server without the route): no retry will help, and a
    batch that can do without it (``commit`` forgetting deleted files) carries on with a warning."""


class LockBusy(MemuError):
    """Another memu run holds the lock this command needs. Exit code 3."""

    exit_code = 3


class TranscriptReadError(RuntimeError):
    """A recoverable failure to read one session: the scan skips it and carries on."""

    def __init__(self, path: Path | str, cause: object) -> None:
        super().__init__(f"could not read transcript data from {path}: {cause}")
        self.path = Path(path)
        self.cause = cause
