"""Ask a v4 memory server which scope an API key is bound to (``GET …/whoami``), for ``config --cloud``.

memu-server answers ``{"user_id", "agent_id"}`` for the calling key; memU's hosted API has no
such route (404), and ``config`` then keeps the default scope and says so. Stdlib only (``config``
must work before any plugin is installed, and runs no plugin code). Requests to a loopback
server bypass proxy variables, as the cloud client does; ``MEMU_HTTP_PROXY`` is honoured.
"""

from __future__ import annotations

import ipaddress
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

TIMEOUT = 5.0
NO_ROUTE = frozenset({404, 405, 501})


@dataclass(frozen=True, slots=True)
class KeyScope:
    """What the server said. ``user_id`` ``None`` with ``note`` empty: a key with no restriction."""

    user_id: str | None = None
    agent_id: str | None = None
    note: str = ""
    """Why no scope came back (no such route, the key refused, no answer); empty on success."""


def _loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _opener(url: str, proxy: str | None) -> urllib.request.OpenerDirector:
    host = urlsplit(url).hostname or ""
    if proxy:
        return urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy, "https": proxy}))
    if _loopback(host):
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def ask(base_url: str, api_key: str, *, proxy: str | None = None, timeout: float = TIMEOUT) -> KeyScope:
    """The key's scope according to the server at ``base_url`` (``…/api/v4/memory/``); never raises."""
    url = base_url.strip().rstrip("/") + "/whoami"
    if urlsplit(url).scheme not in ("http", "https"):
        return KeyScope(note=f"{base_url!r} is not an http(s) URL")
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {api_key}", "Accept": "application/json"})
    try:
        with _opener(url, proxy).open(request, timeout=timeout) as response:
            body = json.loads(response.read(64 * 1024) or b"null")
    except urllib.error.HTTPError as exc:
        if exc.code in NO_ROUTE:
            return KeyScope(
                note=f"this server does not report a key's scope ({exc.code}; memU's hosted API has no such route)"
            )
        if exc.code in (401, 403):
            return KeyScope(note=f"the server refused the key ({exc.code}); check it, or `doctor` will fail")
        return KeyScope(note=f"the server answered {exc.code}")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        return KeyScope(note=f"no answer from {url} ({reason})")
    if not isinstance(body, dict):
        return KeyScope(note="the server's answer was not a JSON object")
    user, agent = body.get("user_id"), body.get("agent_id")
    if not (user is None or isinstance(user, str)) or not (agent is None or isinstance(agent, str)):
        return KeyScope(note="the server's answer had no usable user_id/agent_id")
    return KeyScope(user_id=(user or "").strip() or None, agent_id=(agent or "").strip() or None)
