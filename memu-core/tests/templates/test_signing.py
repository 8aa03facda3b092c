"""ed25519 signatures: with MEMU_TEMPLATE_KEYS set, only texts signed by a listed key are used."""

from __future__ import annotations

from pathlib import Path

import pytest

from memu_core._bridge import templates
from memu_core._bridge.template_sources import cache_path

from .conftest import Publisher, job, keypair


@pytest.fixture
def signer(memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch) -> str:
    """A publisher key whose public half is trusted; returns the private half."""
    private, public = keypair()
    _, other_public = keypair()
    monkeypatch.setenv("MEMU_TEMPLATE_KEYS", f"{other_public}, {public}")
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    return private


def test_a_template_signed_by_a_listed_key_is_used_and_cached_with_its_signature(
    signer: str, publisher: Publisher
) -> None:
    publisher.put("memory-job.txt", job("memory-job", "2"), private_key=signer)
    assert templates.choose("memory-job").source == "server"
    assert cache_path("memory-job").with_name("memory-job.txt.sig").is_file()
    publisher.stop()
    assert templates.choose("memory-job").source == "cache"  # re-verified on read


def test_an_unsigned_template_is_refused(signer: str, publisher: Publisher, capsys: pytest.CaptureFixture[str]) -> None:
    publisher.put("memory-job.txt", job("memory-job", "2"))
    assert templates.choose("memory-job").source == "embedded"
    assert "it is unsigned and MEMU_TEMPLATE_KEYS is set" in capsys.readouterr().err
    assert not cache_path("memory-job").exists()


def test_a_template_signed_by_another_key_is_refused(
    signer: str, publisher: Publisher, capsys: pytest.CaptureFixture[str]
) -> None:
    stranger, _ = keypair()
    publisher.put("memory-job.txt", job("memory-job", "2"), private_key=stranger)
    assert templates.choose("memory-job").source == "embedded"
    assert "its signature is not by any key in MEMU_TEMPLATE_KEYS" in capsys.readouterr().err


def test_a_text_changed_after_signing_is_refused(signer: str, publisher: Publisher) -> None:
    path = publisher.put("memory-job.txt", job("memory-job", "2"), private_key=signer)
    path.write_text(job("memory-job", "7"))  # someone raised the version without the key
    assert templates.choose("memory-job").source == "embedded"


def test_a_tampered_cache_is_refused(signer: str, publisher: Publisher) -> None:
    publisher.put("memory-job.txt", job("memory-job", "2"), private_key=signer)
    templates.choose("memory-job")
    publisher.stop()
    cache_path("memory-job").write_text(job("memory-job", "2", marker="TAMPERED"))
    assert templates.choose("memory-job").source == "embedded"


def test_a_bad_key_refuses_served_texts(
    memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMU_TEMPLATE_KEYS", "not-a-key")
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    publisher.put("memory-job.txt", job("memory-job", "2"))
    assert templates.choose("memory-job").source == "embedded"
    assert "MEMU_TEMPLATE_KEYS entry 'not-a-key'… is not 32 bytes in base64" in capsys.readouterr().err


def test_without_keys_signatures_are_not_needed(
    memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    publisher.put("memory-job.txt", job("memory-job", "2"))
    assert templates.choose("memory-job").source == "server"
