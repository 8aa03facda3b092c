"""A search answered before the framework: the same bytes, from the same key, still valid.

A repeated search costs FastAPI's whole path (dependencies, body validation, routing: most of
a millisecond of CPU) only to find its answer in :class:`~memu_server.answers.AnswerCache`.
This pure ASGI middleware remembers which exact request body, sent with which key, led to which
cached answer; when the same bytes come again with the same key, the key is still fresh in the
:class:`~memu_server.keys.KeyCache` and the answer is still valid, it sends the answer itself.
Anything else (another body, a key not checked within the last second, no valid answer) goes
down the full path unchanged, which validates it and records the pair for next time.
"""

from __future__ import annotations

import hashlib
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memu_server.answers import AnswerCache, Key
    from memu_server.keys import KeyCache

PATH = "/api/v4/memory/search"
RAW_KEY = "memu.search_raw"
"""Where the middleware leaves ``(key digest, body)`` in the ASGI scope for the route to record."""
MAX_BODY = 16_384
"""Larger search bodies always take the full path."""

Raw = tuple[str, bytes]


class Requests:
    """``(key digest, body bytes)`` → the cache key the full path resolved them to (bounded)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._seen: dict[Raw, Key] = {}
        self._lock = threading.Lock()

    def get(self, raw: Raw) -> Key | None:
        """The cache key these exact bytes led to, if recorded."""
        return self._seen.get(raw)

    def put(self, raw: Raw, key: Key) -> None:
        """Record that ``raw`` resolved to ``key``."""
        with self._lock:
            if len(self._seen) >= self.size:
                self._seen.clear()  # cheaper than LRU order on every hit, and rare
            self._seen[raw] = key


class SearchShortcut:
    """Pure ASGI middleware answering repeated searches from the answer cache."""

    def __init__(self, app: Any, answers: AnswerCache, requests: Requests, keys: KeyCache | None) -> None:
        self.app = app
        self.answers = answers
        self.requests = requests
        self.keys = keys

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != PATH or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client left
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = bool(message.get("more_body"))
            if size > MAX_BODY:
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": more}
            return await receive()

        if size <= MAX_BODY:
            token = _token(scope)
            raw = (hashlib.sha256(token.encode()).hexdigest(), body)
            answer = self._answer(token, raw)
            if answer is not None:
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(answer)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": answer})
                return
            scope[RAW_KEY] = raw
        await self.app(scope, replay, send)

    def _answer(self, token: str, raw: Raw) -> bytes | None:
        key = self.requests.get(raw)
        if key is None:
            return None
        if self.keys is not None:
            known, info = self.keys.cached(token)
            if not known or info is None:
                return None  # not checked within the last second, or refused: the full path answers
        return self.answers.get(key)


def _token(scope: Any) -> str:
    """The bearer token of the request ('' without one)."""
    for name, value in scope.get("headers") or ():
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""
