"""``MEMU_DB`` values: which store they name, how to show them without leaking a password.

Stdlib only, so ``config show`` and the identity guard can use it without importing pydantic.
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

DEFAULT_DB = "~/.memu/memu.sqlite3"
"""The embedded store every host shares when ``MEMU_DB`` is not set."""

MEMORY_DBS = (":memory:", "inmemory")
SQLITE_PREFIXES = ("sqlite:",)
POSTGRES_PREFIXES = ("postgres://", "postgresql://", "postgresql+psycopg://")

_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# Query parameters that carry a credential in libpq-style DSNs.
_SECRET_PARAMS = {"password", "sslpassword"}


def normalise_db(value: str) -> str:
    """Return the canonical form of a ``MEMU_DB`` value, or raise ValueError naming the problem.

    ``:memory:``/``inmemory`` and sqlite/postgres URLs are kept as written; anything else is a
    filesystem path and gets ``~`` expanded. An empty value means the default store.
    """
    text = value.strip()
    if not text:
        return os.path.expanduser(DEFAULT_DB)
    if text.lower() in MEMORY_DBS:
        return text
    lowered = text.lower()
    if lowered.startswith(SQLITE_PREFIXES + POSTGRES_PREFIXES):
        return text
    if _SCHEME_RE.match(text):
        scheme = text.split("://", 1)[0]
        raise ValueError(
            f"unsupported scheme {scheme!r}; use a file path, sqlite:///path, :memory: or a postgresql:// DSN"
        )
    return os.path.normpath(os.path.expanduser(text))


def redact_dsn(url: str) -> str:
    """Hide the password of a DSN: ``postgresql://u:pw@h/db`` becomes ``postgresql://u:***@h/db``.

    Values that are not URLs (paths, ``:memory:``) come back unchanged.
    """
    if not _SCHEME_RE.match(url):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        # Unparseable URL: show only the scheme rather than risk printing a secret.
        return url.split("://", 1)[0] + "://***"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:***@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(name.lower() in _SECRET_PARAMS for name, _ in pairs):
            query = urlencode(
                [(name, "***" if name.lower() in _SECRET_PARAMS else val) for name, val in pairs],
                safe="*",
            )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
