"""Which records of a session could hold a secret: one multi-literal pass instead of every rule.

Each redaction rule (:mod:`._rules`) needs a literal somewhere in what it matches: a token's
prefix (``ghp_``, ``AKIA``, ``eyJ``), a keyword (``token``, ``bearer``) or ``://``. A record
holding none of :data:`._rules.TRIGGERS` cannot match any rule, so it is left as it is; the rules
run only on the records that hold one. The output is the same, byte for byte: no rule reaches
across the NUL that joins records (:meth:`.redact.Redactor.lines`), so redacting a subset of the
records gives each of them what redacting them all gives it.

The literals are found by Hyperscan (one pass over a session at memory speed, every literal at
once), loaded only for a big batch (its import costs tens of milliseconds, more than the rules
cost on a few records). Where it is not installed (it has no wheel for Linux on ARM) or fails to
load, every record goes through the rules, as before.
"""

from __future__ import annotations

import _thread
import re
from typing import Any

from memu_core._bridge import _rules
from memu_core._log import get_logger

log = get_logger("memu.bridge")

_ENGINE: Any = None
"""The compiled Hyperscan database, once :func:`load` succeeded."""
_TRIED = False
_LOCK = _thread.allocate_lock()
"""A Hyperscan database scans with one scratch space: one scan at a time per process. (The lock
``threading.Lock`` is, without importing :mod:`threading`: a steady ``prepare`` never scans.)"""


def _expression(literal: bytes) -> bytes:
    # Every character but a letter or digit escaped: the literal means itself.
    return re.sub(rb"([^A-Za-z0-9])", rb"\\\1", literal)


def load() -> bool:
    """Load and compile the literal matcher once; ``False`` when it cannot be had here."""
    global _ENGINE, _TRIED
    with _LOCK:
        if _TRIED:
            return _ENGINE is not None
        _TRIED = True
        try:
            import hyperscan

            literals = [(lit, 0) for lit in _rules.TRIGGERS] + [
                (lit, hyperscan.HS_FLAG_CASELESS) for lit in _rules.TRIGGERS_ANY_CASE
            ]
            db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            db.compile(
                expressions=[_expression(lit) for lit, _ in literals],
                ids=list(range(len(literals))),
                elements=len(literals),
                flags=[flag for _, flag in literals],
            )
        except Exception as exc:  # not installed, or no build for this CPU: the rules run on all
            log.debug("redaction prefilter unavailable", error=f"{type(exc).__name__}: {exc}")
            return False
        _ENGINE = db
        return True


def loaded() -> bool:
    """Whether :func:`load` has succeeded in this process."""
    return _ENGINE is not None


def candidates(joined: bytes, count: int, sep: bytes = b"\x00") -> list[int] | None:
    """The indices of the records in ``joined`` (``count`` records joined by single ``sep``
    bytes, none holding one of its own) that hold a trigger literal, ascending; ``None`` when
    the matcher is not loaded (then every record is a candidate)."""
    engine = _ENGINE
    if engine is None:
        return None
    ends: list[int] = []

    def hit(_id: int, _start: int, end: int, _flags: int, _context: object) -> None:
        ends.append(end)

    with _LOCK:
        engine.scan(joined, match_event_handler=hit)
    if not ends:
        return []
    nuls: list[int] = []
    at = joined.find(sep)
    while at >= 0:
        nuls.append(at)
        at = joined.find(sep, at + 1)
    if len(nuls) != count - 1:
        return list(range(count))  # not the promised shape: let the rules see everything
    # A match ending at ``end`` lies in the record that holds byte ``end - 1``.
    from bisect import bisect_right  # only a batch with a match needs it

    return sorted({bisect_right(nuls, end - 1) for end in ends})


def reset_for_tests(engine: Any = None, tried: bool = False) -> tuple[Any, bool]:
    """Swap the loaded matcher (tests compare the output with and without it); returns the old state."""
    global _ENGINE, _TRIED
    old = (_ENGINE, _TRIED)
    _ENGINE, _TRIED = engine, tried
    return old
