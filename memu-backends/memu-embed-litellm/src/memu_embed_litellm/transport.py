"""The HTTP client memu hands to litellm: explicit timeouts and memu's proxy rules.

Proxy rules, in order:

1. ``MEMU_HTTP_PROXY`` wins for every target, loopback included (the user asked for it).
2. A loopback base URL (``localhost``, ``*.localhost``, ``127.0.0.0/8``, ``::1``) ignores the
   ambient ``HTTP(S)_PROXY``: a corporate proxy cannot reach the user's own machine.
3. Otherwise httpx reads ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY`` per scheme and honours
   ``NO_PROXY`` (memU passed one proxy explicitly and so lost ``NO_PROXY``; we do not).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import httpx


def is_loopback(url: str | None) -> bool:
    """Whether ``url``'s host is this machine. ``localhost.evil.com`` and LAN addresses are not."""
    if not url:
        return False
    host = (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def build_client(base_url: str | None, proxy: str | None, timeout: float) -> httpx.Client:
    """A keep-alive httpx client for ``base_url`` under the proxy rules above.

    ``timeout`` bounds every read and write; connecting gets at most 10 s so a dead host
    fails fast even when the read timeout is long.
    """
    import httpx

    limits = httpx.Limits(max_connections=32, max_keepalive_connections=16)
    bounds = httpx.Timeout(timeout, connect=min(10.0, timeout))
    if proxy:
        return httpx.Client(proxy=proxy, timeout=bounds, limits=limits, trust_env=False)
    return httpx.Client(timeout=bounds, limits=limits, trust_env=not is_loopback(base_url))
