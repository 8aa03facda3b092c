"""API keys for memu-server's TCP listener: stored hashed, each bound to one scope.

A key is ``msk_<id>_<secret>``: ``id`` (8 hex) names it in ``keys list`` and ``keys revoke``,
``secret`` is 32 random bytes. Only the SHA-256 of the whole key is stored. A plain fast hash is
the right tool here (unlike for passwords): the secret has 256 bits of entropy, so there is
nothing to brute-force, and a slow KDF would add its cost to every request.

:meth:`KeyStore.authenticate` reads the database; the server asks it through :class:`KeyCache`,
which keeps each answer for at most :data:`MAX_AGE` seconds, so a request costs no database
read and a revocation (``keys revoke`` in another process) is refused within a second.
Stdlib ``sqlite3``; one file, mode 0600.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import hmac
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memu_core.errors import UsageError
from memu_core.v4 import MAX_SCOPE_CHARS, ScopeKey

KEYS_ENV = "MEMU_SERVER_KEYS"
MAX_AGE = 1.0
"""Seconds a cached key check is trusted; a revoked key is refused at most this long after."""
MAX_CACHED = 10_000
"""Cached key checks (answers for unknown keys included); the cache starts over past this."""
PREFIX = "msk_"

_COLUMNS = "id, user_id, agent_id, label, created_at, revoked_at"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    agent_id TEXT,
    label TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    revoked_at TEXT
)
"""


def default_keys_path() -> Path:
    """``$MEMU_SERVER_KEYS`` or ``~/.memu/server/keys.sqlite3`` (memu's folder for this plugin)."""
    raw = os.environ.get(KEYS_ENV)
    if raw:
        return Path(os.path.expanduser(raw))
    from memu_core.settings import plugin_dir

    return plugin_dir("server") / "keys.sqlite3"


def hash_key(key: str) -> str:
    """The stored form of a key."""
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class KeyInfo:
    """One row of ``keys list`` (never the key itself)."""

    id: str
    user_id: str
    agent_id: str | None
    label: str
    created_at: str
    revoked_at: str | None

    @property
    def scope(self) -> ScopeKey:
        """What the key may touch."""
        return ScopeKey(self.user_id, self.agent_id)


class KeyStore:
    """The key database. Thread-safe; safe to share between the server and the CLI."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fresh = not path.exists()
        self._conn = sqlite3.connect(str(path), timeout=5.0, isolation_level=None, check_same_thread=False)
        if fresh and os.name == "posix":
            os.chmod(path, 0o600)
        self._lock = threading.Lock()
        self.revocations = 0
        """Revocations made through this object: a :class:`KeyCache` over it then starts over."""
        with self._locked() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._conn

    def close(self) -> None:
        """Close the database."""
        with self._locked() as conn:
            conn.close()

    def create(self, user_id: str, agent_id: str | None = None, label: str = "") -> tuple[str, KeyInfo]:
        """Mint a key for ``user_id`` (and ``agent_id``, else all of the user's agents).

        Returns the key (shown once, never stored) and its info.
        """
        user = (user_id or "").strip()
        agent = (agent_id or "").strip() or None
        if not user:
            raise UsageError("--user-id must not be empty: a key is always bound to one user")
        if len(user) > MAX_SCOPE_CHARS or (agent and len(agent) > MAX_SCOPE_CHARS):
            raise UsageError(f"--user-id and --agent-id are at most {MAX_SCOPE_CHARS} characters")
        key_id = secrets.token_hex(4)
        key = f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        with self._locked() as conn:
            conn.execute(
                "INSERT INTO api_keys (id, key_hash, user_id, agent_id, label, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (key_id, hash_key(key), user, agent, label, now),
            )
        return key, KeyInfo(key_id, user, agent, label, now, None)

    def list(self) -> list[KeyInfo]:
        """Every key, oldest first, revoked ones included."""
        with self._locked() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM api_keys ORDER BY created_at, id").fetchall()
        return [KeyInfo(*row) for row in rows]

    def revoke(self, key_id: str) -> KeyInfo:
        """Revoke a key by its id (or the whole key); raise ``UsageError`` when unknown."""
        ident = key_id.strip()
        if ident.startswith(PREFIX) and ident.count("_") >= 2:
            ident = ident[len(PREFIX) :].split("_", 1)[0]
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        with self._locked() as conn:
            conn.execute("UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", (now, ident))
            row = conn.execute(
                "SELECT id, user_id, agent_id, label, created_at, revoked_at FROM api_keys WHERE id = ?",
                (ident,),
            ).fetchone()
            self.revocations += 1
        if row is None:
            raise UsageError(f"no API key with id {ident!r}; `memu-server keys list` shows the ids")
        return KeyInfo(*row)

    def authenticate(self, key: str) -> KeyInfo | None:
        """The live (not revoked) key matching ``key``, or ``None``."""
        if not key.startswith(PREFIX):
            return None
        digest = hash_key(key)
        with self._locked() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS}, key_hash FROM api_keys WHERE key_hash = ?",
                (digest,),
            ).fetchone()
        if row is None or not hmac.compare_digest(row[6], digest) or row[5] is not None:
            return None
        return KeyInfo(*row[:6])


class KeyCache:
    """:meth:`KeyStore.authenticate` answers, each reused for at most ``max_age`` seconds.

    Keyed by the key's SHA-256 (the key itself is not kept). A revocation through the same
    :class:`KeyStore` object empties the cache at once; one made by another process (``keys
    revoke``) is seen when the cached answer expires. Unknown keys are cached too, so a
    client hammering with a wrong key costs one database read per second, and the cache starts
    over when it holds :data:`MAX_CACHED` answers, so random keys cannot grow it without bound.
    """

    def __init__(self, store: KeyStore, max_age: float = MAX_AGE) -> None:
        self.store = store
        self.max_age = max_age
        self._answers: dict[str, tuple[KeyInfo | None, float]] = {}
        self._lock = threading.Lock()
        self._revocations = getattr(store, "revocations", 0)
        self.reads = 0

    def cached(self, key: str) -> tuple[bool, KeyInfo | None]:
        """``(True, answer)`` when a fresh answer is cached, else ``(False, None)`` (no I/O)."""
        if not key.startswith(PREFIX):
            return True, None
        with self._lock:
            if self.store.revocations != self._revocations:
                self._revocations = self.store.revocations
                self._answers.clear()
            hit = self._answers.get(hash_key(key))
        if hit is not None and time.monotonic() - hit[1] < self.max_age:
            return True, hit[0]
        return False, None

    def authenticate(self, key: str) -> KeyInfo | None:
        """Like :meth:`KeyStore.authenticate`, from the cache when the answer is fresh."""
        known, info = self.cached(key)
        if known:
            return info
        started = time.monotonic()  # the answer is as old as the read's start
        info = self.store.authenticate(key)
        with self._lock:
            self.reads += 1
            if len(self._answers) >= MAX_CACHED:
                self._answers.clear()
            self._answers[hash_key(key)] = (info, started)
        return info
