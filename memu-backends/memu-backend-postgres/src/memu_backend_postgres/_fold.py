"""Folding pending segment vectors into the HNSW graph, in bounded batches (ADR 0029).

A commit writes its segment vectors as *pending*, into ``memu_pending_vectors``, which no HNSW
index covers, so the commit never pays for the graph insert. A fold moves a batch of them into
their segment rows' ``fp_id``/``embedding``, which links each into the graph. Each batch is one
short transaction of its own:

- it holds the writers' lock *shared*, like any write, so a fingerprint switch cannot run under
  it, and the fold lock *exclusively*, so two folds (two processes, a background folder and
  ``memu db upgrade``) take turns instead of fighting over the same rows;
- it locks its pending rows and their segment rows ``FOR UPDATE SKIP LOCKED``: a row a writer is
  rewriting or deleting is left for the next batch, so a fold never waits on a writer and the
  two cannot deadlock;
- the move is one statement (delete the pending rows, write their vectors into the segments),
  so a fold killed at any point rolls back to where it started, with nothing lost or doubled.

A fold changes no answer (dense search reads the pending rows exactly, beside the index), so it
does not bump the generation and never touches the statistics rows every writer shares.
"""

from __future__ import annotations

from typing import Any

from memu_backend_postgres import _meta
from memu_backend_postgres._schema import FOLD_LOCK_KEY

FOLD_BATCH = 500
"""Vectors linked per fold transaction: 1-3 s at 2-6 ms each, so a batch holds its rows (and a
fingerprint switch waits) for a bounded time."""

PENDING_LIMIT = 25_000
"""The most pending vectors a commit leaves behind: a writer whose commit pushed the backlog
past it folds the excess itself, after its ``COMMIT``, before returning. A 1,000-file commit of
20-line files (20,000 vectors) stays under it. A backlog that size slowed a dense search at
100,000 segments from 19 ms to 69 ms (the exact scan; measured, ADR 0029) until folded."""


def pending_count(conn: Any) -> int:
    """How many segment vectors wait outside the graph."""
    import sqlalchemy as sa

    return int(conn.execute(sa.text("SELECT count(*) FROM memu_pending_vectors")).scalar_one())


def fold_batch(conn: Any, limit: int) -> int:
    """Link up to ``limit`` pending vectors into the graph inside the caller's transaction;
    return how many moved. Waits for a fold running elsewhere; skips rows a writer holds."""
    import sqlalchemy as sa

    _meta.join_writers(conn, None)
    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k, hashtext(current_schema()))"), {"k": FOLD_LOCK_KEY})
    moved = conn.execute(
        sa.text(
            "WITH batch AS (SELECT p.id FROM memu_pending_vectors p JOIN memu_segments s ON s.id = p.id "
            "LIMIT :n FOR UPDATE OF p, s SKIP LOCKED), "
            "moved AS (DELETE FROM memu_pending_vectors p USING batch b WHERE p.id = b.id "
            "RETURNING p.id, p.fp_id, p.embedding) "
            "UPDATE memu_segments x SET fp_id = m.fp_id, embedding = m.embedding FROM moved m WHERE x.id = m.id"
        ),
        {"n": int(limit)},
    )
    return int(moved.rowcount)
