"""``MEMU_DB`` values: which store they name, how to show them without leaking a password.

Stdlib only, so ``config show`` and the identity guard can use it without importing pydantic.
"""

from __future__ import annotations

import functools
import os
import re

from memu_core._layout import default_db

MEMORY_DBS = (":memory:", "inmemory")
SQLITE_PREFIXES = ("sqlite:",)
POSTGRES_PREFIXES = ("postgres://", "postgresql://", "postgresql+psycopg://")


@functools.cache
def _scheme_re() -> re.Pattern[str]:
    """A URL's scheme and ``://`` at the start (compiled on first use: a path needs none)."""
    return re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def _has_scheme(text: str) -> bool:
    return "://" in text and _scheme_re().match(text) is not None


def normalise_db(value: str) -> str:
    """Return the canonical form of a ``MEMU_DB`` value: the one every memu process agrees on.

    A filesystem path gets ``~`` expanded and is made absolute against the current directory, so
    a relative ``MEMU_DB`` names the same file for ``memu``, a host binary, the warm server and
    its handshake; a relative ``sqlite:///path`` likewise becomes ``sqlite:////abs/path``.
    ``:memory:``/``inmemory`` and other URLs (``postgresql://``, or any scheme a store plugin
    claims) are kept as written. An empty value means the default store. Which store serves a
    URL is decided when the store is opened, so an unknown scheme is reported there, with the
    plugin to install.
    """
    text = value.strip()
    if not text:
        return str(default_db())
    lowered = text.lower()
    if lowered in MEMORY_DBS:
        return text
    if lowered.startswith("sqlite:///") and len(text) > len("sqlite:///"):
        rest = text[len("sqlite:///") :]
        return text if rest.startswith("/") else "sqlite:///" + _absolute(rest)
    if lowered.startswith(SQLITE_PREFIXES) or _has_scheme(text):
        return text
    return _absolute(text)


def _absolute(path: str) -> str:
    # abspath, not resolve(): a symlinked folder keeps the name the user gave it.
    return os.path.abspath(os.path.expanduser(path))


@functools.cache
def _secret_param() -> re.Pattern[str]:
    """Query parameters that carry a credential in libpq-style DSNs (compiled on first use: only
    showing a DSN needs it)."""
    return re.compile(r"([?&](?:ssl)?password=)[^&#]*", re.IGNORECASE)


def redact_dsn(url: str) -> str:
    """Hide the password of a DSN: ``postgresql://u:pw@h/db`` becomes ``postgresql://u:***@h/db``.

    A ``password=`` query parameter is masked too. Values that are not URLs (paths,
    ``:memory:``) come back unchanged. String surgery rather than urllib round trips, so the rest
    of the URL is shown exactly as written (``sqlite:///x`` stays ``sqlite:///x``).
    """
    if not _has_scheme(url):
        return url
    scheme, rest = url.split("://", 1)
    head_end = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    at = rest.rfind("@", 0, head_end)
    if at > 0:
        userinfo = rest[:at]
        user, sep, _ = userinfo.partition(":")
        # A "/" before the colon means the "@" sits in the path, not after a password.
        if sep and "/" not in user:
            rest = f"{user}:***{rest[at:]}"
    rest = _secret_param().sub(r"\1***", rest)
    return f"{scheme}://{rest}"
