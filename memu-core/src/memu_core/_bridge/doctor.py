"""``doctor``: prove the configuration resolves and the backend answers the hook's own call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from memu_core.errors import ConfigError, MemuError
from memu_core.interfaces import AgenticMemoryBackend

SMOKE_QUERY = "smoke test"


def _row(label: str, value: str) -> str:
    return f"{label:<10}{value}"


def run(binary: str, open_backend: Callable[[], AgenticMemoryBackend], out: TextIO, err: TextIO) -> int:
    """Print one row per check; on the first failure print its cause and fix and return 1."""
    try:
        from memu_core._config.resolve import config_path

        out.write(_row("config", str(config_path())) + "\n")
    except ImportError:
        pass
    try:
        from memu_core.settings import load_settings

        settings: Any = load_settings()
    except MemuError as exc:
        err.write(f"error: configuration: {exc}\n")
        return 1
    except ImportError as exc:
        err.write(f"error: the settings module is missing ({exc}); reinstall memu-core\n")
        return 1
    mode = str(getattr(settings, "memory_mode", "local") or "local")
    out.write(_row("mode", mode) + "\n")
    if mode == "local":
        store = str(getattr(settings, "db", "") or "")
        try:
            from memu_core.settings import redact_dsn

            store = redact_dsn(store)
        except ImportError:
            pass
        out.write(_row("store", store or "unset") + "\n")
    else:
        out.write(_row("endpoint", str(getattr(settings, "cloud_base_url", ""))) + "\n")
    try:
        backend = open_backend()
        result = backend.progressive_retrieve(SMOKE_QUERY)
    except ConfigError as exc:
        err.write(f"error: {exc}\n")
        err.write(
            f"fix: run `{binary} config show`, then `{binary} config --local --db <path>` or `--cloud`\n"
        )
        return 1
    except MemuError as exc:
        err.write(f"error: the backend failed the smoke-test retrieval: {exc}\n")
        return 1
    except Exception as exc:
        err.write(f"error: the backend failed the smoke-test retrieval: {type(exc).__name__}: {exc}\n")
        err.write(_transport_hint(exc))
        return 1
    embedder = result.get("embedder")
    described = _describe_embedder(embedder)
    configured = str(getattr(settings, "embed_provider", "") or "")
    if not embedder and configured and configured != "none":
        model = str(getattr(settings, "embed_model", "") or "")
        described = (
            f"{configured}{'/' + model if model else ''} configured, unused by this search (no vectors yet)"
        )
    out.write(_row("embedder", described) + "\n")
    if mode == "local":
        out.write(_row("vectors", _store_fingerprint(settings)) + "\n")
    out.write(_row("search", str(result.get("mode") or "unknown")) + "\n")
    hits = sum(len(result.get(k) or []) for k in ("segments", "files", "resources"))
    out.write(
        _row("retrieval", f"ok ({hits} hit(s) for a smoke-test query; 0 is fine on a new store)") + "\n"
    )
    return 0


def _store_fingerprint(settings: Any) -> str:
    """The embedding space the local store's vectors were made in (they never mix)."""
    try:
        from memu_core.runtime import open_store

        store = open_store(settings)
        try:
            fp = store.fingerprint()
        finally:
            store.close()
    except Exception as exc:  # the retrieval above already proved the store; this is a detail
        return f"unknown ({type(exc).__name__})"
    return fp.describe() if fp is not None else "none stored yet"


def _describe_embedder(embedder: Any) -> str:
    if not embedder:
        return "none (lexical search only)"
    if isinstance(embedder, dict):
        parts = [str(embedder.get(k)) for k in ("provider", "model") if embedder.get(k)]
        dims = embedder.get("dimension") or embedder.get("dims")
        return "/".join(parts) + (f" ({dims} dims)" if dims else "")
    return str(embedder)


_TRANSPORT = ("502", "503", "504", "timeout", "timed out", "connect", "unreachable", "proxy")


def _transport_hint(exc: BaseException) -> str:
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        text = f"{type(link).__name__} {link}".lower()
        if any(word in text for word in _TRANSPORT):
            return (
                "hint: this looks like a network problem; check that the server answers, and if a proxy "
                "is configured for a non-loopback address of this machine, add it to NO_PROXY\n"
            )
        link = link.__cause__ or link.__context__
    return ""
