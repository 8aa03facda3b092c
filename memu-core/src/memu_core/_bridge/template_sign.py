"""Optional ed25519 signatures on published templates.

A publisher signs the exact bytes of ``<name>.txt`` (header included, so the version is signed
too) and publishes the signature beside it as ``<name>.txt.sig``: one line, the 64-byte
signature in base64. ``MEMU_TEMPLATE_KEYS`` lists the publishers' public keys (raw 32 bytes,
base64, separated by commas or spaces). With keys configured, a served or cached text without a
signature by one of them is refused; without keys nothing is checked. Embedded texts come with
the installed package and are never checked.

``cryptography`` does the arithmetic; it is imported only when keys are configured or a key is
made, and it comes with ``pip install 'memu-core[signing]'``.
"""

from __future__ import annotations

import re
from typing import Any

from memu_core._config import resolve as config

KEYS_ENV = "MEMU_TEMPLATE_KEYS"
SIG_SUFFIX = ".sig"
INSTALL_HINT = "pip install 'memu-core[signing]'"


class SignatureProblem(Exception):
    """A signature check that did not pass; the message says why and what to do."""


def _ed25519() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise SignatureProblem(f"checking signatures needs the cryptography package: {INSTALL_HINT}") from None
    return ed25519


def _b64(text: str, size: int, what: str) -> bytes:
    # base64 (with struct and binascii) only when a key is read: a run without keys, the
    # scheduled prepare, never needs it.
    import base64
    import binascii

    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise SignatureProblem(f"{what} {text.strip()[:16]!r}… is not {size} bytes in base64")
    return raw


def _text(raw: bytes) -> str:
    import base64

    return base64.b64encode(raw).decode()


def configured_keys() -> list[bytes]:
    """The public keys in ``MEMU_TEMPLATE_KEYS`` (environment, then config.env); ``[]`` when none.

    Raises :class:`SignatureProblem` for an entry that is not a key, so a typo refuses every
    served text instead of silently accepting unsigned ones.
    """
    raw = config.lookup(KEYS_ENV) or ""
    return [_b64(item, 32, f"{KEYS_ENV} entry") for item in re.split(r"[,\s]+", raw) if item]


def verify(data: bytes, signature: str | None, keys: list[bytes]) -> None:
    """Accept ``data`` if ``signature`` is by one of ``keys``; raise :class:`SignatureProblem` if not."""
    if signature is None:
        raise SignatureProblem(f"it is unsigned and {KEYS_ENV} is set; publish <file>{SIG_SUFFIX} beside it")
    sig = _b64(signature, 64, "signature")
    ed25519 = _ed25519()
    from cryptography.exceptions import InvalidSignature

    for key in keys:
        try:
            ed25519.Ed25519PublicKey.from_public_bytes(key).verify(sig, data)
        except InvalidSignature:
            continue
        return
    raise SignatureProblem(f"its signature is not by any key in {KEYS_ENV}")


def keygen() -> tuple[str, str]:
    """A new key pair as ``(private, public)``, each base64 of the raw 32 bytes."""
    ed25519 = _ed25519()
    from cryptography.hazmat.primitives import serialization

    private = ed25519.Ed25519PrivateKey.generate()
    raw_private = private.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    raw_public = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return _text(raw_private), _text(raw_public)


def sign(data: bytes, private_key: str) -> str:
    """The base64 signature of ``data`` by ``private_key`` (base64 of the raw 32 bytes)."""
    ed25519 = _ed25519()
    key = ed25519.Ed25519PrivateKey.from_private_bytes(_b64(private_key, 32, "private key"))
    return _text(key.sign(data))


def public_of(private_key: str) -> str:
    """The public key (base64) that goes with ``private_key``."""
    ed25519 = _ed25519()
    from cryptography.hazmat.primitives import serialization

    key = ed25519.Ed25519PrivateKey.from_private_bytes(_b64(private_key, 32, "private key"))
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return _text(raw)


__all__ = ["KEYS_ENV", "SIG_SUFFIX", "SignatureProblem", "configured_keys", "keygen", "public_of", "sign", "verify"]
