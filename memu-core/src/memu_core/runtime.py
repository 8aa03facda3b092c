"""Building the configured store, embedder and backend from settings.

This is where ``MEMU_DB``, ``MEMU_EMBED_PROVIDER`` and ``MEMU_MEMORY_MODE`` turn into objects.
Hosts, the CLI and the server all go through it, so they always agree on one store and one
embedding space. Every lookup asks memu-core's built-ins first: the per-turn ``retrieve`` on the
default SQLite store, lexical or with a configured built-in, imports no plugin module.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memu_core._log import get_logger
from memu_core._plugins.manager import get_plugins
from memu_core._plugins.registry import BACKENDS, EMBEDDERS, STORES
from memu_core.errors import ConfigError

if TYPE_CHECKING:
    from memu_core.interfaces import AgenticMemoryBackend, Embedder, MemoryStore
    from memu_core.settings import Settings

_BACKEND_HINTS = {"cloud": "pip install memu-backend-cloud"}
log = get_logger("memu.runtime")
_MEMORY_URLS = (":memory:", "inmemory", "memory://")


def _settings(settings: Settings | None) -> Settings:
    if settings is not None:
        return settings
    from memu_core.settings import load_settings

    return load_settings()


def _claims(url: str) -> Callable[[type[MemoryStore]], bool]:
    def claims(cls: type[MemoryStore]) -> bool:
        return any(url.startswith(scheme) for scheme in getattr(cls, "url_schemes", ()))

    return claims


def store_class_for(url: str) -> type[MemoryStore]:
    """The registered store class that claims ``url`` (a bare path means ``sqlite``)."""
    plugins = get_plugins()
    lowered = url.strip().lower()
    if lowered in _MEMORY_URLS:
        return plugins.get(STORES, "memory")
    if "://" not in lowered:
        return plugins.get(STORES, "sqlite")
    found = plugins.find(STORES, _claims(lowered))
    if found is not None:
        return found
    if lowered.startswith(("postgres://", "postgresql://", "postgresql+")):
        raise ConfigError(
            "MEMU_DB is a Postgres DSN but no Postgres store is installed; run `pip install memu-backend-postgres`"
        )
    if not lowered.startswith("sqlite://"):
        scheme = lowered.split("://", 1)[0]
        raise ConfigError(
            f"MEMU_DB uses the unknown scheme {scheme!r}; use a file path, sqlite:///path, or postgresql://…"
        )
    return plugins.get(STORES, "sqlite")


def open_store(settings: Any = None) -> MemoryStore:
    """Open the store ``MEMU_DB`` names (default ``~/.memu/memu.sqlite3``)."""
    s = _settings(settings)
    url = str(s.db)
    cls = store_class_for(url)
    if "://" not in url and url.strip().lower() not in (":memory:", "inmemory"):
        url = str(Path(url).expanduser())
    store = cls.open(url)
    if log.enabled():
        from memu_core._config.dsn import redact_dsn

        log.debug("store opened", store=cls.name, db=redact_dsn(url))
    return store


def embedder_factory(settings: Any = None) -> Callable[[], Embedder | None]:
    """A zero-argument callable building the configured embedder (or ``None``) on first need.

    ``settings`` may be the light read-path settings: the full model (API keys…) is loaded only
    when an embedder is actually built. Choosing looks the embedder up by name, so a lexical-only
    configuration consults no plugin at all.
    """

    def build() -> Embedder | None:
        from memu_core._engine.embedders import choose, select_embedder

        embedders = get_plugins().lookup(EMBEDDERS)
        s = settings if settings is not None else _settings(None)
        choice = choose(s, embedders)
        log.debug("embedder chosen", embedder=choice.embedder or "none", reason=choice.reason)
        if choice.embedder is None:
            return None
        from memu_core.settings import Settings as FullSettings

        return select_embedder(s if isinstance(s, FullSettings) else _settings(None), embedders)

    return build


def open_backend(settings: Settings | None = None) -> AgenticMemoryBackend:
    """The backend ``MEMU_MEMORY_MODE`` selects: ``local`` (the engine) or ``cloud`` (a v4 API).

    With no ``settings`` given, local mode is configured from the light stdlib reading, so a
    lexical per-turn retrieve never imports pydantic.
    """
    plugins = get_plugins()
    if settings is None:
        from memu_core._config.light import light_settings

        light = light_settings()
        if light is not None:
            return plugins.get(BACKENDS, "local").from_settings(light)
    s = _settings(settings)
    mode = str(s.memory_mode)
    return plugins.get(BACKENDS, mode, hint=_BACKEND_HINTS.get(mode, "")).from_settings(s)
