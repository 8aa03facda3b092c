"""``MEMU_DB`` URL handling: scheme normalisation and password redaction.

Stdlib only: this runs before any driver is imported, and its redaction is applied to every
message the store raises, so a password can never reach a log line or a terminal.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from memu_core.errors import ConfigError

DRIVER_SCHEME = "postgresql+psycopg://"
"""The one form SQLAlchemy 2 accepts for psycopg 3; every accepted scheme is rewritten to it."""

ACCEPTED_SCHEMES: tuple[str, ...] = ("postgresql://", "postgresql+psycopg://", "postgres://")

_MASK = "***"


def normalise_url(url: str) -> str:
    """Rewrite ``postgres://`` and ``postgresql://`` to ``postgresql+psycopg://``.

    memU handed ``postgres://`` to SQLAlchemy (which rejects it) and read ``postgresql://`` as
    psycopg2 (not installed); both are the same server, so both are accepted here.
    """
    raw = url.strip()
    lowered = raw.lower()
    for scheme in ACCEPTED_SCHEMES:
        if lowered.startswith(scheme) and raw[len(scheme) :]:
            return DRIVER_SCHEME + raw[len(scheme) :]
    raise ConfigError(
        f"MEMU_DB={redact(raw, raw)!r} is not a Postgres URL; use postgresql://user:password@host:5432/dbname"
    )


def _passwords(url: str) -> list[str]:
    """Every spelling of the password ``url`` carries (userinfo and ``?password=``)."""
    found: list[str] = []
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is not None:
        netloc = parts.netloc
        if "@" in netloc:
            userinfo = netloc.rsplit("@", 1)[0]
            if ":" in userinfo:
                found.append(userinfo.split(":", 1)[1])
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if key.lower() == "password":
                found.append(value)
    # A URL too broken for urlsplit may still hold ``user:secret@``; catch that shape too.
    match = re.search(r"://[^/:@?]*:([^@/?]*)@", url)
    if match:
        found.append(match.group(1))
    spellings: set[str] = set()
    for secret in found:
        if secret:
            spellings.update({secret, unquote(secret), quote(unquote(secret), safe="")})
    # Longest first, so a short spelling never leaves part of a longer one behind.
    return sorted((s for s in spellings if s), key=len, reverse=True)


def display_url(url: str) -> str:
    """The URL as shown to users: the password masked where it sits, nothing else changed."""
    masked = re.sub(r"(://[^/:@?]*:)([^@/?]*)(@)", lambda m: m.group(1) + _MASK + m.group(3), url, count=1)
    return re.sub(r"([?&]password=)([^&]*)", lambda m: m.group(1) + _MASK, masked, flags=re.IGNORECASE)


def redact(text: str, url: str) -> str:
    """``text`` with every spelling of ``url``'s password replaced by ``***``.

    The URL itself is swapped for :func:`display_url` first, so the usual case reads well; any
    other occurrence of the secret (a driver quoting it back) is masked bluntly.
    """
    for form in {url, normalise_scheme_only(url)}:
        if form:
            text = text.replace(form, display_url(form))
    for secret in _passwords(url):
        text = text.replace(secret, _MASK)
    return text


def normalise_scheme_only(url: str) -> str:
    """``url`` with its scheme rewritten to the driver form, or unchanged when not Postgres."""
    lowered = url.lower()
    for scheme in ACCEPTED_SCHEMES:
        if lowered.startswith(scheme):
            return DRIVER_SCHEME + url[len(scheme) :]
    return url
