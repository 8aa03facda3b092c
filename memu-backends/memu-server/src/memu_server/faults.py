"""Test-only fault injection: make chosen requests fail or stall, to test clients against a real
server. Enabled only by ``create_app(faults=...)`` or ``MEMU_SERVER_TEST_FAULTS`` (JSON); never
on by default, and documented as a testing aid, not a feature.

The plan maps ``"<METHOD> <path>"`` to a list of actions consumed one per matching request:

- ``429`` / ``500`` / any status: answer it (``429:2`` adds ``Retry-After: 2``) without running the route;
- ``"sleep-before:S"``: wait S seconds, then run the route (a kill now loses the request);
- ``"sleep-after:S"``: run the route, then wait S seconds before answering (a kill now loses the answer).
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Any

FAULTS_ENV = "MEMU_SERVER_TEST_FAULTS"


class FaultPlan:
    """Per-route queues of actions; thread-safe."""

    def __init__(self, plan: Mapping[str, Sequence[str | int]]) -> None:
        self._queues = {key: [str(a) for a in actions] for key, actions in plan.items()}
        self._lock = threading.Lock()

    @classmethod
    def from_json(cls, text: str) -> FaultPlan:
        """Parse ``MEMU_SERVER_TEST_FAULTS``."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"{FAULTS_ENV} must be a JSON object")
        return cls(data)

    def next(self, method: str, path: str) -> str | None:
        """The next action for this request, or ``None``."""
        with self._lock:
            queue = self._queues.get(f"{method} {path}")
            return queue.pop(0) if queue else None


class FaultMiddleware:
    """Pure ASGI middleware applying a :class:`FaultPlan`."""

    def __init__(self, app: Any, plan: FaultPlan) -> None:
        self.app = app
        self.plan = plan

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        action = self.plan.next(scope["method"], scope["path"])
        if action is None:
            await self.app(scope, receive, send)
            return
        kind, _, arg = action.partition(":")
        # Tests that kill the server mid-request wait for this line to know the moment came.
        print(
            f"memu-server: injected {action} on {scope['method']} {scope['path']}",
            file=sys.stderr,
            flush=True,
        )
        if kind == "sleep-before":
            await asyncio.sleep(float(arg))
            await self.app(scope, receive, send)
            return
        if kind == "sleep-after":
            buffered: list[Any] = []

            async def hold(message: Any) -> None:
                buffered.append(message)

            await self.app(scope, receive, hold)
            print("memu-server: applied, holding the answer", file=sys.stderr, flush=True)
            await asyncio.sleep(float(arg))
            for message in buffered:
                await send(message)
            return
        status = int(kind)
        body = json.dumps({"message": f"injected fault {status}", "details": [{"code": "INJECTED"}]}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        if arg:
            headers.append((b"retry-after", arg.encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
