"""Who may use the page: a token in the first URL, then a session cookie; writes also need CSRF proof.

The page acts on memory with the user's full rights, and any web page the user visits can make
the browser send requests to ``127.0.0.1``. So every request must prove it comes from someone
who was given the link ``memu ui`` printed (or, behind memu-server, who holds an API key):

* the first request carries ``?token=...``; the gate answers with a session cookie (HttpOnly,
  ``SameSite=Strict``, scoped to the page's path) and a redirect to the same page without the
  token, so the token leaves the address bar and the history;
* every later request carries the cookie;
* a write (any POST) must also carry the session's CSRF token as a form field (a page on
  another site cannot read it) and an ``Origin`` (or, failing that, ``Referer``) naming this
  page's own origin. ``SameSite=Strict`` alone would do in current browsers; the two checks keep
  older ones and odd clients safe too.

A refusal is a 403 whose one line says what was missing and what to do.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

COOKIE = "memu_ui"
"""Name of the session cookie."""
CSRF_FIELD = "csrf"
"""Form field that carries the session's CSRF token on every write."""
TOKEN_PARAM = "token"
"""Query parameter of the first URL."""
MAX_SESSIONS = 256
"""Sessions kept per process; the oldest goes first (a local page has one or two)."""


@dataclass(frozen=True, slots=True)
class Grant:
    """What an accepted token allows: the scope the page may read and write."""

    user_id: str | None = None
    """``None``: every scope of the store (the local page); else only this user's files."""
    agent_id: str | None = None
    """With ``user_id``: only this agent's files (``None``: every agent of the user)."""
    label: str = "local"
    """Who the session belongs to, shown in the page header."""

    def where(self) -> dict[str, str | list[str]]:
        """The ``where`` filter for the backend (empty for the whole store)."""
        return {k: v for k, v in (("user_id", self.user_id), ("agent_id", self.agent_id)) if v}


@dataclass(slots=True)
class Session:
    """One browser's session: its grant and the CSRF token its forms carry."""

    grant: Grant
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))


class Refused(Exception):
    """A request the gate turns away (always answered with 403 and this message)."""


Authenticate = Callable[[str], Grant | None]
"""Turns the token of a first URL into a :class:`Grant`, or ``None`` when it is not valid."""


def token_checker(token: str) -> Authenticate:
    """The local page's check: only the per-run ``token`` is valid, and it grants the whole store."""

    def check(offered: str) -> Grant | None:
        return Grant() if hmac.compare_digest(offered.encode(), token.encode()) else None

    return check


class Gate:
    """Sessions of one running page, and the rules that let a request in."""

    def __init__(self, authenticate: Authenticate) -> None:
        self._authenticate = authenticate
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def open(self, token: str) -> tuple[str, Session] | None:
        """A new session for a valid first-URL ``token``: its cookie value and the session."""
        grant = self._authenticate(token) if token else None
        if grant is None:
            return None
        key = secrets.token_urlsafe(32)
        with self._lock:
            while len(self._sessions) >= MAX_SESSIONS:
                self._sessions.pop(next(iter(self._sessions)))
            self._sessions[key] = session = Session(grant)
        return key, session

    def session(self, cookies: Mapping[str, str]) -> Session:
        """The session the request's cookie names, or :class:`Refused`."""
        key = cookies.get(COOKIE, "")
        with self._lock:
            found = self._sessions.get(key) if key else None
        if found is None:
            raise Refused(
                "this memu ui page needs the link with its token: open the address `memu ui` printed "
                "(or run `memu ui` again)"
            )
        return found

    @staticmethod
    def cookie_header(key: str, path: str, *, secure: bool) -> str:
        """The ``Set-Cookie`` value for a new session (``secure``: the page is served over HTTPS)."""
        flags = f"; Path={path}; HttpOnly; SameSite=Strict"
        return f"{COOKIE}={key}{flags}{'; Secure' if secure else ''}"

    @staticmethod
    def check_write(session: Session, form: Mapping[str, str], headers: Mapping[str, str], origin: str) -> None:
        """Refuse a write without the session's CSRF token or from another origin.

        ``headers`` are the request's (lower-case names); ``origin`` is this page's own
        ``scheme://host[:port]``.
        """
        sent = form.get(CSRF_FIELD, "")
        if not sent or not hmac.compare_digest(sent.encode(), session.csrf.encode()):
            raise Refused(
                "this change was not sent by a memu ui form (its CSRF token is missing or stale): "
                "reload the page and try again"
            )
        claimed = headers.get("origin") or _origin_of(headers.get("referer", ""))
        if not claimed or claimed == "null":
            raise Refused(
                "this change carries no Origin or Referer header, so memu ui cannot tell where it came from: "
                "send it from the memu ui page"
            )
        if claimed.lower() != origin.lower():
            raise Refused(
                f"this change came from another site ({claimed}); "
                f"memu ui accepts changes only from its own page ({origin})"
            )


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
