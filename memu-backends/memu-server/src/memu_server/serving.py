"""What one memu-server process shares between its listeners: workers, answers, metrics.

:class:`Serving` runs the v4 rules (:mod:`memu_core.v4`) for the routes: searches are answered
from :class:`~memu_server.answers.AnswerCache` when nothing they depend on has changed (and
identical searches arriving together run once), everything else runs on the
:class:`~memu_server.gate.Gate`'s worker threads, and commits and forgets tell the cache which
scope they changed. The TCP and Unix-socket faces of one server share one :class:`Serving`.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from memu_core import v4
from memu_server.answers import MAX_ANSWERS, AnswerCache, Key, Poller
from memu_server.gate import MAX_QUEUE, MAX_WAIT, THREADS, Gate
from memu_server.keys import MAX_AGE
from memu_server.metrics import Metrics, Sample
from memu_server.shortcut import Raw, Requests


@dataclass(frozen=True, slots=True)
class ServingOptions:
    """How a server shares its store: ``memu-server serve`` sets these from its options."""

    threads: int = THREADS
    max_queue: int = MAX_QUEUE
    max_wait: float = MAX_WAIT
    answers: int = MAX_ANSWERS
    """Search answers kept; 0 turns the cache off."""
    key_max_age: float = MAX_AGE


def _dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


class Serving:
    """The backend behind a bounded gate, with a search-answer cache and metrics."""

    def __init__(self, backend: Any, options: ServingOptions) -> None:
        self.backend = backend
        self.options = options
        self.gate = Gate(options.threads, options.max_queue, options.max_wait)
        self.metrics = Metrics()
        self.draining = False
        store = getattr(backend, "store", None)
        self._generation: Callable[[], int] | None = getattr(store, "generation", None)
        self._store = store
        self.answers = AnswerCache(options.answers) if options.answers > 0 and self._generation else None
        self.requests = Requests(4 * options.answers)
        self._poller = Poller(self.answers, self._generation) if self.answers is not None else None
        self._pending: dict[Key, asyncio.Future[bytes]] = {}
        self.metrics.gauges.append(self._samples)
        if self._poller is not None:
            self._poller.start()

    # -- routes ------------------------------------------------------------------------------
    async def search(self, data: dict[str, Any], caller: v4.ScopeKey | None, raw: Raw | None = None) -> bytes:
        """``POST /api/v4/memory/search``: the answer's JSON bytes. ``raw`` (the request's key
        digest and body, from :class:`~memu_server.shortcut.SearchShortcut`) is remembered so
        the same request is answered before the framework next time."""
        if self.answers is None:
            return _dumps(await self.gate.run(v4.search, self.backend, data, caller))
        user_id, agent_id = v4.scope_for(
            caller, v4.scope_value(data.get("user_id"), "user_id"), v4.scope_value(data.get("agent_id"), "agent_id")
        )
        key: Key = (user_id, agent_id, str(data.get("query")), data.get("top_k"))
        if raw is not None:
            self.requests.put(raw, key)
        cached = self.answers.get(key)
        if cached is not None:
            return cached
        pending = self._pending.get(key)
        if pending is not None:  # the same search is running: share its answer
            return await asyncio.shield(pending)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            generation, payload = await self.gate.run(self._search, data, caller)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody shared it
            raise
        finally:
            del self._pending[key]
        if generation is not None:
            self.answers.put(key, generation, payload)
        future.set_result(payload)
        return payload

    def _search(self, data: dict[str, Any], caller: v4.ScopeKey | None) -> tuple[int | None, bytes]:
        # The generation is read before the search: a write landing meanwhile makes the answer
        # older than the store, and the cache then refuses to keep it.
        generation = self._read_generation()
        return generation, _dumps(v4.search(self.backend, data, caller))

    async def commit(self, data: dict[str, Any], caller: v4.ScopeKey | None) -> bytes:
        """``POST /api/v4/memory``: store, then count what was written."""
        result = await self.gate.run(self._write, v4.commit, data, caller)
        stats = result.get("stats") or {}
        self.metrics.commits += 1
        self.metrics.files_committed += int(stats.get("files_written", 0)) + int(stats.get("resources_written", 0))
        return _dumps(result)

    async def forget(self, data: dict[str, Any], caller: v4.ScopeKey | None) -> bytes:
        """``POST /api/v4/memory/forget``."""
        return _dumps(await self.gate.run(self._write, v4.forget, data, caller))

    def _write(self, rule: Callable[..., dict[str, Any]], data: dict[str, Any], caller: v4.ScopeKey | None) -> Any:
        """Run a writing rule and tell the answer cache which scope it changed."""
        if self.answers is None:
            return rule(self.backend, data, caller)
        raw = data.get("user")
        user: dict[str, Any] = raw if isinstance(raw, dict) else {}
        scope = v4.scope_for(
            caller, v4.scope_value(user.get("user_id"), "user_id"), v4.scope_value(user.get("agent_id"), "agent_id")
        )
        self.answers.begin_write()
        before = self._read_generation()
        try:
            result = rule(self.backend, data, caller)
        except BaseException:
            self._account(scope, before, wrote=False)  # a failed write may have moved the store
            raise
        stats = result.get("stats") or {}
        wrote = bool(result.get("forgotten")) or any(stats.get(k) for k in ("files_written", "resources_written"))
        self._account(scope, before, wrote=wrote)
        return result

    def _account(self, scope: tuple[str, str], before: int | None, *, wrote: bool) -> None:
        assert self.answers is not None
        after = self._read_generation()
        if before is None or after is None:
            self.answers.clear(ending_write=True)  # the store could not say where it stands
        else:
            self.answers.own_write(scope, before, after, wrote=wrote)

    def _read_generation(self) -> int | None:
        assert self._generation is not None
        try:
            return int(self._generation())
        except Exception:
            return None  # the store is unreachable: the caller answers from the store or fails

    # -- lifecycle and metrics ---------------------------------------------------------------
    def close(self) -> None:
        """Wait for started store calls (a commit in flight lands), then stop polling."""
        self.gate.shutdown()
        if self._poller is not None:
            self._poller.stop()

    def _samples(self) -> Iterable[Sample]:
        gate = self.gate
        yield "memu_server_store_waiting", {}, gate.waiting
        yield "memu_server_store_running", {}, gate.running
        yield "memu_server_refused_total", {}, gate.refused
        if self.answers is not None:
            yield "memu_server_answer_cache_hits_total", {}, self.answers.hits
            yield "memu_server_answer_cache_misses_total", {}, self.answers.misses
            yield "memu_server_answer_cache_entries", {}, len(self.answers)
            seen = self.answers.generation
            if seen is not None:
                yield "memu_server_store_generation", {}, seen
        path = getattr(self._store, "path", None)
        if isinstance(path, str) and os.path.exists(path):
            size = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
            yield "memu_server_store_bytes", {}, size
        pool = getattr(self._store, "pool_status", None)
        if callable(pool):
            for name, value in pool().items():
                yield "memu_server_store_pool_connections", {"state": str(name)}, float(value)
