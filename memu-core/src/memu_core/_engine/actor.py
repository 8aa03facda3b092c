"""Who is writing: the actor a recall file's new version is stamped with.

The shell sets it once per command (``memu edit``, ``memu-codex commit``); a bridging commit
narrows it to its run (``codex run 20261203T221000Z-…``). A library caller that sets nothing
writes as ``python``. A context variable, so a server thread's actor never leaks to another.
"""

from __future__ import annotations

import _thread
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextvars import ContextVar

DEFAULT_ACTOR = "python"
"""The actor of a write nobody named (memu used as a library)."""

_actor: ContextVar[str | None] | None = None
"""The block's actor (:func:`acting_as`), made on first use: the shell names every command's
actor, and a command that never narrows it (a steady ``prepare``) needs no ``contextvars``
(ADR 0026's sixth pass). Until it exists, no context has narrowed the actor."""
_making = _thread.allocate_lock()
_process_actor = DEFAULT_ACTOR
"""The command's actor, for threads that never saw the shell's context (a server's workers)."""


def _block_actor() -> ContextVar[str | None]:
    global _actor
    with _making:  # two threads narrowing at once must share one variable
        if _actor is None:
            from contextvars import ContextVar

            _actor = ContextVar("memu_actor", default=None)
        return _actor


def current_actor() -> str:
    """The actor writes in this context are stamped with."""
    narrowed = _actor.get() if _actor is not None else None
    return narrowed or _process_actor


def set_actor(actor: str) -> None:
    """Make ``actor`` this process's actor from now on (the shell, once per command): its
    server threads, which start with a fresh context, stamp their writes with it too."""
    global _process_actor
    _process_actor = " ".join(actor.split()) or DEFAULT_ACTOR
    if _actor is not None:
        _actor.set(None)


@contextlib.contextmanager
def acting_as(actor: str) -> Iterator[None]:
    """Stamp the writes inside the block with ``actor``; the previous actor comes back after."""
    variable = _block_actor()
    token = variable.set(" ".join(actor.split()) or DEFAULT_ACTOR)
    try:
        yield
    finally:
        variable.reset(token)
