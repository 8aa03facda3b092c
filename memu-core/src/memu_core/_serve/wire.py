"""A tiny HTTP/1.0 layer shared by the socket server and its client: just enough to move JSON.

The client does not use ``http.client`` on purpose: it drags in ``ssl`` and ``email`` (tens of
milliseconds per turn) to speak to a server we wrote, over a socket only we can open.
"""

from __future__ import annotations

import json
import socket
from typing import Any

MAX_RESPONSE_BYTES = 64 * 1024 * 1024


class WireError(OSError):
    """The peer answered something that is not an HTTP response."""


def build_request(method: str, target: str, body: Any | None, headers: dict[str, str]) -> bytes:
    """A complete HTTP/1.0 request with a JSON body (``None`` = no body)."""
    payload = b"" if body is None else json.dumps(body, ensure_ascii=False).encode()
    lines = [f"{method} {target} HTTP/1.0", "Host: memu", "Accept: application/json"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read until the server closes: ``(status, lower-cased headers, body)``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise WireError("response too large")
    raw = b"".join(chunks)
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        raise WireError("truncated response")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise WireError(f"not an HTTP response: {lines[0][:60]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers, body
