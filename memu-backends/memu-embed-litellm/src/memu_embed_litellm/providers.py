"""Which remote providers memu knows, and what each needs.

Data only: the litellm route prefix, a sensible default model, the provider's own API-key
variable (read for its *value* when ``MEMU_API_KEY`` is unset) and how its HTTP traffic can be
steered through memu's own client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Transport = Literal["openai", "http", "own"]
"""``openai``: litellm calls the OpenAI SDK, memu hands it a client; ``http``: litellm's own HTTP
handler, memu hands it an httpx client; ``own``: the provider's SDK (proxies from the ambient
environment only)."""


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """What memu needs to know to embed through one provider."""

    name: str
    """Canonical ``MEMU_EMBED_PROVIDER`` value, and the fingerprint's provider."""
    route: str
    """litellm's provider prefix (``openai`` in ``openai/text-embedding-3-small``)."""
    default_model: str
    key_env: str | None
    """The provider's own API-key variable; ``None`` when no key is used (ollama, bedrock)."""
    key_required: bool = True
    transport: Transport = "http"
    needs_package: tuple[str, str] | None = None
    """``(import name, pip requirement)`` of an extra SDK the provider needs."""
    default_base_url: str | None = None


PROVIDERS: dict[str, ProviderSpec] = {
    spec.name: spec
    for spec in (
        ProviderSpec("openai", "openai", "text-embedding-3-small", "OPENAI_API_KEY", transport="openai"),
        # Any server speaking OpenAI's /embeddings (vLLM, LM Studio, llama.cpp, TEI…): MEMU_BASE_URL.
        ProviderSpec(
            "openai-compatible",
            "openai",
            "text-embedding-3-small",
            "OPENAI_API_KEY",
            key_required=False,
            transport="openai",
        ),
        ProviderSpec("jina", "jina_ai", "jina-embeddings-v3", "JINA_API_KEY"),
        ProviderSpec("voyage", "voyage", "voyage-3.5", "VOYAGE_API_KEY"),
        ProviderSpec("openrouter", "openrouter", "openai/text-embedding-3-small", "OPENROUTER_API_KEY"),
        ProviderSpec("volcengine", "volcengine", "doubao-embedding-large-text-250515", "ARK_API_KEY"),
        ProviderSpec(
            "ollama",
            "ollama",
            "nomic-embed-text",
            None,
            key_required=False,
            transport="own",
            default_base_url="http://localhost:11434",
        ),
        ProviderSpec("azure", "azure", "text-embedding-3-small", "AZURE_API_KEY", transport="own"),
        ProviderSpec("gemini", "gemini", "gemini-embedding-001", "GEMINI_API_KEY"),
        ProviderSpec("cohere", "cohere", "embed-english-v3.0", "COHERE_API_KEY"),
        ProviderSpec("mistral", "mistral", "mistral-embed", "MISTRAL_API_KEY", transport="openai"),
        ProviderSpec(
            "bedrock",
            "bedrock",
            "amazon.titan-embed-text-v2:0",
            None,
            key_required=False,
            transport="own",
            needs_package=("boto3", "memu-embed-litellm[bedrock]"),
        ),
    )
}

ALIASES: dict[str, str] = {
    "doubao": "volcengine",
    "ark": "volcengine",
    "jina_ai": "jina",  # litellm's spelling
    "google": "gemini",
    "azure_openai": "azure",
    "openai_compatible": "openai-compatible",
    "custom": "openai-compatible",
}


def canonical(provider: str) -> str:
    """The canonical name of ``provider`` (case-insensitive, aliases folded)."""
    key = provider.strip().lower()
    return ALIASES.get(key, key)


def spec_for(provider: str) -> ProviderSpec:
    """The spec of ``provider``; an unknown name becomes a litellm route of the same name that
    needs ``MEMU_EMBED_MODEL`` and takes its key from ``MEMU_API_KEY``."""
    name = canonical(provider)
    known = PROVIDERS.get(name)
    if known is not None:
        return known
    return ProviderSpec(name, name, "", None, key_required=False, transport="own")
