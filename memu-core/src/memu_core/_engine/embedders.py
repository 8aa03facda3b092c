"""Choosing the embedder from ``MEMU_EMBED_PROVIDER``.

| ``MEMU_EMBED_PROVIDER``           | embedder                                              |
|-----------------------------------|-------------------------------------------------------|
| ``none`` / ``off``                | none: lexical retrieval only                          |
| ``local``                         | ``local`` (memu-embed-local)                          |
| a registered embedder's name      | that embedder (third-party plugins)                   |
| any other name (``openai``…)      | ``litellm`` (memu-embed-litellm) for that provider    |
| unset                             | ``local`` when it and its model are installed, else none |

Choosing is cheap (no SDK import, no model load); building happens in :func:`select_embedder`,
which the engine calls on first need. An embedder whose package is missing is a
``ConfigError`` naming the exact ``pip install``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memu_core.errors import ConfigError
from memu_core.interfaces import Embedder

__all__ = ["EmbedderChoice", "choose", "select_embedder"]

LEXICAL_ONLY = frozenset({"none", "off", "lexical", "false", "0"})
LOCAL = "local"
LITELLM = "litellm"
INSTALL_HINTS = {
    LOCAL: "pip install 'memu-embed-local[minilm]'",
    LITELLM: "pip install memu-embed-litellm",
}


@dataclass(frozen=True, slots=True)
class EmbedderChoice:
    """The outcome of reading the configuration, before anything is built."""

    embedder: str | None
    """Registry key of the embedder to build, or ``None`` for lexical-only."""
    provider: str | None
    """The configured provider (``openai``…), ``None`` when unset."""
    reason: str
    """Why, in words doctor can print."""


def configured_provider(settings: Any) -> str | None:
    """``MEMU_EMBED_PROVIDER`` (or the legacy ``MEMU_LLM_PROVIDER``), stripped; ``None`` when unset."""
    for attr, env in (("embed_provider", "MEMU_EMBED_PROVIDER"), ("llm_provider", "MEMU_LLM_PROVIDER")):
        value = getattr(settings, attr, None) if settings is not None else os.environ.get(env)
        if value is not None and str(value).strip():
            return str(value).strip()
    return None


def _local_available(cls: Any, settings: Any) -> bool:
    check = getattr(cls, "available", None)
    if check is None:
        return True
    try:
        return bool(check(settings))
    except Exception:
        return False


def choose(settings: Any, registry: Mapping[str, type[Embedder]]) -> EmbedderChoice:
    """Decide which embedder the configuration asks for, without building it."""
    provider = configured_provider(settings)
    if provider is None:
        if LOCAL in registry and _local_available(registry[LOCAL], settings):
            return EmbedderChoice(LOCAL, None, "MEMU_EMBED_PROVIDER is unset and a local model is installed")
        why = "no local model is installed" if LOCAL in registry else "memu-embed-local is not installed"
        return EmbedderChoice(None, None, f"MEMU_EMBED_PROVIDER is unset and {why}: lexical retrieval only")
    key = provider.lower()
    if key in LEXICAL_ONLY:
        return EmbedderChoice(None, key, f"MEMU_EMBED_PROVIDER={provider}: lexical retrieval only")
    if key in registry:
        return EmbedderChoice(key, key, f"MEMU_EMBED_PROVIDER={provider}")
    if key == LOCAL:
        raise ConfigError(f"MEMU_EMBED_PROVIDER=local needs memu-embed-local: {INSTALL_HINTS[LOCAL]}")
    if LITELLM not in registry:
        raise ConfigError(f"MEMU_EMBED_PROVIDER={provider} needs memu-embed-litellm: {INSTALL_HINTS[LITELLM]}")
    return EmbedderChoice(LITELLM, key, f"MEMU_EMBED_PROVIDER={provider} (through litellm)")


def select_embedder(settings: Any, registry: Mapping[str, type[Embedder]]) -> Embedder | None:
    """Build the configured embedder, or return ``None`` for lexical-only retrieval.

    Raises ``ConfigError`` when the configuration asks for something not installed or a
    required setting (an API key…) is missing.
    """
    choice = choose(settings, registry)
    if choice.embedder is None:
        return None
    return registry[choice.embedder].from_settings(settings)
