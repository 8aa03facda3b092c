"""Search answers kept while nothing they depend on has changed.

A search's answer depends on the query, ``top_k``, the scope it searched and what that scope
holds. The store counts every committed write in its *generation*; this cache remembers, per
answer, the generation read before the search ran, and drops the answer once a write that may
have changed it is known:

- a write made through this server is attributed to its scope: it drops that scope's answers
  and no other (a team's users commit to their own scopes all day);
- a write the server cannot attribute (another process, another replica, or two of its own
  commits landing so close that their generations cannot be told apart) drops every answer.

Writes made elsewhere are noticed by a poller that reads the generation every
:data:`POLL_SECONDS`; a write made through this server is accounted for before its answer is
sent, so a client that commits and then searches finds what it committed.
The answers are the exact bytes sent before, so a hit costs no store call and no JSON work.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

POLL_SECONDS = 0.1
"""How often the generation is read to notice writes made by other processes or replicas."""
MAX_BACKOFF = 5.0
"""Longest pause between polls while the store keeps failing."""
MAX_ANSWERS = 4096
"""Answers kept (least recently used dropped first); a few KB each."""

ScopeT = tuple[str, str]
Key = tuple[str, str, str, int | None]
"""``(user_id, agent_id, query, top_k)``: the scope is the one the request acted in."""


@dataclass
class _Ledger:
    """Which generations were this server's own writes, and to which scope."""

    seen: int = -1
    foreign_floor: int = 0
    scope_floor: dict[ScopeT, int] = field(default_factory=dict)
    own: dict[int, ScopeT] = field(default_factory=dict)


class AnswerCache:
    """Thread-safe LRU of search answers, each valid until a write may have changed it."""

    def __init__(self, size: int = MAX_ANSWERS) -> None:
        self.size = size
        self._answers: OrderedDict[Key, tuple[int, bytes]] = OrderedDict()
        self._ledger = _Ledger()
        self._lock = threading.Lock()
        self._writing = 0
        self.hits = 0
        self.misses = 0

    def get(self, key: Key) -> bytes | None:
        """The stored answer for ``key`` if no write since may have changed it."""
        with self._lock:
            entry = self._answers.get(key)
            if entry is not None and self._valid(key, entry[0]):
                self._answers.move_to_end(key)
                self.hits += 1
                return entry[1]
            if entry is not None:
                del self._answers[key]
            self.misses += 1
            return None

    def put(self, key: Key, generation: int, answer: bytes) -> None:
        """Keep ``answer``, computed from a search that began at ``generation``."""
        if self.size <= 0:
            return
        with self._lock:
            self._observe(generation)
            if not self._valid(key, generation):
                return  # a write landed while it was computed
            self._answers[key] = (generation, answer)
            self._answers.move_to_end(key)
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)

    def observe(self, generation: int) -> None:
        """The store's generation is ``generation`` now; writes not known as ours drop everything."""
        with self._lock:
            self._observe(generation)

    def begin_write(self) -> None:
        """A write through this server starts: until it ends, a generation move seen elsewhere
        (the poller, a search) may be that write, so it is left for :meth:`own_write` to place."""
        with self._lock:
            self._writing += 1

    def own_write(self, scope: ScopeT, before: int, after: int, *, wrote: bool) -> None:
        """This server committed to ``scope`` (``wrote``: it changed something); the generation
        read before was ``before`` and after is ``after``. One step is ours; more cannot be told
        apart from someone else's write."""
        with self._lock:
            if wrote and after == before + 1:
                self._ledger.own[after] = scope
            ledger = self._ledger
            ledger.scope_floor[scope] = max(ledger.scope_floor.get(scope, 0), after)
            self._writing -= 1
            self._observe(after, placing=True)

    @property
    def generation(self) -> int | None:
        """The newest store generation seen (``None`` before the first)."""
        seen = self._ledger.seen
        return seen if seen >= 0 else None

    def clear(self, *, ending_write: bool = False) -> None:
        """Forget every answer (``ending_write``: the write begun with :meth:`begin_write` ended
        without knowing where the store stands)."""
        with self._lock:
            self._answers.clear()
            if ending_write:
                self._writing -= 1

    def __len__(self) -> int:
        return len(self._answers)

    # -- under the lock ----------------------------------------------------------------------
    def _valid(self, key: Key, generation: int) -> bool:
        ledger = self._ledger
        return generation >= ledger.foreign_floor and generation >= ledger.scope_floor.get((key[0], key[1]), 0)

    def _observe(self, generation: int, *, placing: bool = False) -> None:
        ledger = self._ledger
        if self._writing and not placing:
            return  # a write of ours is landing: its own_write places the move
        if ledger.seen < 0:
            ledger.seen = generation
            ledger.foreign_floor = generation  # nothing before the server started is known
            return
        if generation <= ledger.seen:
            return
        if generation - ledger.seen > len(ledger.own) + 1:
            ledger.foreign_floor = generation  # more writes than ours: someone else wrote
        else:
            for g in range(ledger.seen + 1, generation + 1):
                if g not in ledger.own:
                    ledger.foreign_floor = max(ledger.foreign_floor, g)
        ledger.seen = generation
        for g in [g for g in ledger.own if g <= generation]:
            del ledger.own[g]  # accounted for


class Poller:
    """A daemon thread reading the store's generation so writes by others drop stale answers."""

    def __init__(self, cache: AnswerCache, read: object, interval: float = POLL_SECONDS) -> None:
        self._cache = cache
        self._read = read
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memu-server-generation", daemon=True)
        self.errors = 0

    def start(self) -> None:
        """Start polling."""
        self._thread.start()

    def stop(self) -> None:
        """Stop polling (returns when the thread has ended)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def _run(self) -> None:
        wait = self._interval
        while not self._stop.wait(wait):
            try:
                generation = self._read()  # type: ignore[operator]
            except Exception:
                # The store is unreachable (a database restart) or closed: what was cached may
                # be stale by the time it is back, so drop it, and poll less often meanwhile.
                self.errors += 1
                self._cache.clear()
                wait = min(MAX_BACKOFF, wait * 2)
                continue
            wait = self._interval
            self._cache.observe(int(generation))
