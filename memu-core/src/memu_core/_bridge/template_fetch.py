"""Bounded HTTP reads of published templates, and the one-line notes about what went wrong.

Every fault (unreachable server, a 5xx, a TLS failure, a body too large or not UTF-8) becomes a
:class:`FetchError` whose message names the URL; the caller falls through to the next source.
A server that could not be reached is not asked again by the same process, so a ``prepare``
against a dead server waits one timeout, not one per template. Each note is printed once per
process on stderr (``note: …``) and kept for ``memu templates list``.
"""

from __future__ import annotations

import sys

FETCH_TIMEOUT = 4.0
"""Seconds per request: connect and each read (a scheduled run must not hang on a template)."""

MAX_BYTES = 64 * 1024
"""A larger answer is refused (templates are a few kilobytes)."""

_unreachable: dict[str, str] = {}
_said: list[str] = []


class FetchError(Exception):
    """A template could not be read from its server; the message says which URL and why."""


class Skipped(FetchError):
    """The server was found unreachable earlier in this process; it was not asked again (and
    the note about it was said then)."""


class NotPublished(FetchError):
    """The server answered 404: the file is not there (an unsigned template has no ``.sig``)."""


def note(message: str) -> None:
    """Say ``message`` once per process on stderr; later identical notes are dropped."""
    if message in _said:
        return
    _said.append(message)
    sys.stderr.write(f"note: {message}\n")


def notes() -> list[str]:
    """Every note said in this process, in order."""
    return list(_said)


def forget() -> None:
    """Drop what this process remembers (notes said, servers found unreachable); for tests."""
    _said.clear()
    _unreachable.clear()


def _origin(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def get(url: str) -> bytes:
    """The body of ``url`` (200 only, at most :data:`MAX_BYTES`); :class:`FetchError` otherwise."""
    import urllib.error
    import urllib.request

    origin = _origin(url)
    if origin in _unreachable:
        raise Skipped(f"{url}: skipped, {origin} was unreachable earlier ({_unreachable[origin]})")
    request = urllib.request.Request(url, headers={"User-Agent": "memu-templates"})
    try:
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT) as resp:
            status = resp.status
            data: bytes = resp.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise NotPublished(f"{url}: not published (404)") from None
        raise FetchError(f"{url}: the server answered {exc.code}") from None
    except ValueError as exc:  # a malformed URL: the variable is wrong, not the network
        raise FetchError(f"{url}: not a URL ({exc}); set an http(s) address") from None
    except Exception as exc:  # URLError, TLS, timeouts, a reset: the server is not usable now
        reason = getattr(exc, "reason", None) or exc
        _unreachable[origin] = str(reason)
        raise FetchError(f"{url}: unreachable ({reason})") from None
    if status != 200:
        raise FetchError(f"{url}: the server answered {status}")
    if len(data) > MAX_BYTES:
        raise FetchError(f"{url}: larger than {MAX_BYTES} bytes")
    return data


def text(data: bytes, url: str) -> str:
    """``data`` decoded as UTF-8; :class:`FetchError` naming ``url`` otherwise."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FetchError(f"{url}: not UTF-8 text") from None


__all__ = [
    "FETCH_TIMEOUT",
    "MAX_BYTES",
    "FetchError",
    "NotPublished",
    "Skipped",
    "forget",
    "get",
    "note",
    "notes",
    "text",
]
