"""``apply`` and ``delete_file``: one transaction each, beside other writers (ADR 0028).

A commit of many files costs a few statements, not a few per file: the file rows of the whole
change set are locked, checked and written in bulk, the new segments arrive through one ``COPY``,
and the BM25 statistics move in one statement at the end. Everything happens in the caller's one
transaction, so a commit that fails or is killed half-way leaves nothing behind.

Segment vectors are written *pending* (ADR 0029): into ``memu_pending_vectors``, outside the HNSW
graph, which a fold links them into after the commit (:mod:`memu_backend_postgres._fold`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from memu_backend_postgres import _meta
from memu_backend_postgres._lexical import index_text
from memu_backend_postgres._rows import FILE_COLUMNS, to_file
from memu_backend_postgres._stats import Delta
from memu_core.errors import FingerprintMismatch, UsageError, WriteConflict
from memu_core.types import ChangeSet, FileWrite, Fingerprint, RecallFile, ResourceWrite, Scope, utcnow


def mismatch(stored: Fingerprint, offered: Fingerprint) -> FingerprintMismatch:
    """The error for vectors from another embedding space than the store's."""
    return FingerprintMismatch(
        f"the store's vectors come from {stored.describe()} but this commit's come from "
        f"{offered.describe()}; run `memu reindex` to re-embed the store with the new model, "
        "or configure the old one again"
    )


def _vector(values: Sequence[float], dimension: int, what: str) -> Any:
    import numpy as np

    array = np.asarray(values, dtype=np.float32)
    if array.ndim != 1 or array.shape[0] != dimension:
        raise UsageError(
            f"{what}: vector has {array.shape[0] if array.ndim == 1 else array.shape} values, "
            f"the fingerprint says {dimension}; embed it with the configured model"
        )
    return array


_SEGMENT_COLUMNS = (
    "id, file_id, user_id, agent_id, track, kind, ordinal, text, context, tsv, ntokens, tf, fp_id, embedding"
)
# The COPY target: the segment columns as plain types (psycopg has no binary tsvector), moved into
# memu_segments by one INSERT … SELECT. Kept per connection, emptied by every commit.
_STAGE = "memu_new_segments"
_STAGE_TYPES = ["text"] * 6 + ["int4", "text", "text", "text", "int4", "text", "int4", "vector"]


@dataclass
class _SegmentPlan:
    """Segment row changes of one round of a commit, applied in a few statements."""

    removed: list[str] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)
    vectors: list[dict[str, Any]] = field(default_factory=list)
    inserts: list[tuple[Any, ...]] = field(default_factory=list)
    defer: bool = True
    """Write vectors pending (outside the graph) rather than linking each into it now."""

    @property
    def pending(self) -> int:
        """Vectors this plan leaves pending."""
        if not self.defer:
            return 0
        return len(self.vectors) + sum(1 for row in self.inserts if row[-1] is not None)


def _conflict(write: FileWrite, found: int | None) -> WriteConflict:
    where = f"{write.track}/{write.name} (user_id={write.scope.user_id}, agent_id={write.scope.agent_id})"
    expected = "a new file" if write.expected_revision is None else f"revision {write.expected_revision}"
    now = {None: "no such file", -1: "a copy created concurrently"}.get(found, f"revision {found}")
    return WriteConflict(
        f"recall file {where} changed since it was read: expected {expected}, found {now}; "
        "nothing was written, retry the commit"
    )


def _key(write: FileWrite) -> tuple[str, str, str, str]:
    return (write.scope.user_id, write.scope.agent_id, write.track, write.name)


def _rounds(files: Sequence[FileWrite]) -> Iterator[list[FileWrite]]:
    """The writes in rounds where each file appears once: round k holds each file's k-th write.

    Each round is sorted by key, so every writer locks file rows in one order (no deadlock).
    """
    seen: dict[tuple[str, str, str, str], int] = {}
    rounds: list[list[FileWrite]] = []
    for write in files:
        k = seen.get(_key(write), 0)
        seen[_key(write)] = k + 1
        if k == len(rounds):
            rounds.append([])
        rounds[k].append(write)
    for writes in rounds:
        yield sorted(writes, key=_key)


def _arrays(writes: Sequence[FileWrite]) -> dict[str, list[str]]:
    return {
        "u": [w.scope.user_id for w in writes],
        "a": [w.scope.agent_id for w in writes],
        "t": [w.track for w in writes],
        "n": [w.name for w in writes],
    }


def _lock_files(conn: Any, writes: Sequence[FileWrite]) -> dict[tuple[str, str, str, str], tuple[str, int]]:
    """Lock the stored rows among ``writes`` in key order; return key → (id, revision)."""
    import sqlalchemy as sa

    rows = conn.execute(
        sa.text(
            "SELECT id, user_id, agent_id, track, name, revision FROM memu_files "
            "WHERE (user_id, agent_id, track, name) IN (SELECT * FROM unnest(CAST(:u AS text[]), "
            "CAST(:a AS text[]), CAST(:t AS text[]), CAST(:n AS text[]))) "
            "ORDER BY user_id, agent_id, track, name FOR UPDATE"
        ),
        _arrays(writes),
    )
    return {(r.user_id, r.agent_id, r.track, r.name): (r.id, int(r.revision)) for r in rows}


def _insert_files(conn: Any, writes: Sequence[FileWrite], now: Any) -> dict[tuple[str, str, str, str], str]:
    """Insert new files (revision 1); a key another writer created meanwhile is a conflict."""
    import sqlalchemy as sa

    ids = [str(uuid.uuid4()) for _ in writes]
    # ON CONFLICT covers a writer that inserted the same key after our lock query: the unique
    # constraint is the truth, and a key that came back missing is that writer's.
    inserted = conn.execute(
        sa.text(
            "INSERT INTO memu_files (id, user_id, agent_id, track, name, description, content, "
            "content_hash, revision, created_at, updated_at) "
            "SELECT i, u, a, t, n, d, c, h, 1, CAST(:now AS timestamptz), CAST(:now AS timestamptz) "
            "FROM unnest(CAST(:i AS text[]), CAST(:u AS text[]), CAST(:a AS text[]), CAST(:t AS text[]), "
            "CAST(:n AS text[]), CAST(:d AS text[]), CAST(:c AS text[]), CAST(:h AS text[])) "
            "AS v(i, u, a, t, n, d, c, h) ORDER BY u, a, t, n "
            "ON CONFLICT ON CONSTRAINT memu_files_scope_track_name DO NOTHING RETURNING id"
        ),
        {
            **_arrays(writes),
            "i": ids,
            "d": [w.description for w in writes],
            "c": [w.content for w in writes],
            "h": [w.content_hash for w in writes],
            "now": now,
        },
    )
    made = set(inserted.scalars())
    for write, fid in zip(writes, ids, strict=True):
        if fid not in made:
            raise _conflict(write, -1)
    return {_key(w): fid for w, fid in zip(writes, ids, strict=True)}


def _update_files(conn: Any, writes: Sequence[tuple[str, FileWrite]], now: Any) -> None:
    import sqlalchemy as sa

    conn.execute(
        sa.text(
            # The revision always moves (the engine planned against it); updated_at only when
            # the file really changed, so an idempotent re-commit leaves it alone.
            "UPDATE memu_files f SET revision = f.revision + 1, updated_at = CASE WHEN "
            "f.description IS DISTINCT FROM v.d OR f.content IS DISTINCT FROM v.c "
            "OR f.content_hash IS DISTINCT FROM v.h THEN CAST(:now AS timestamptz) ELSE f.updated_at END, "
            "description = v.d, content = v.c, content_hash = v.h "
            "FROM unnest(CAST(:i AS text[]), CAST(:d AS text[]), CAST(:c AS text[]), CAST(:h AS text[])) "
            "AS v(i, d, c, h) WHERE f.id = v.i"
        ),
        {
            "i": [fid for fid, _ in writes],
            "d": [w.description for _, w in writes],
            "c": [w.content for _, w in writes],
            "h": [w.content_hash for _, w in writes],
            "now": now,
        },
    )


def _plan_file(
    write: FileWrite, file_id: str, existing: list[Any], fp_id: int | None, dim: int, plan: _SegmentPlan, delta: Delta
) -> None:
    """Reconcile one file's drafts against its stored segments (an unchanged text keeps its row)."""
    by_text: dict[str, list[Any]] = {}
    for old in existing:
        by_text.setdefault(old.text, []).append(old)
    label = f"{write.track}/{write.name}"
    for draft in write.segments:
        vector = None if draft.vector is None else _vector(draft.vector, dim, f"segment of {label}")
        same = by_text.get(draft.text)
        if same:
            old = same.pop(0)
            if (old.context, old.kind, old.ordinal) != (draft.context, draft.kind, draft.ordinal):
                ix = index_text("s", draft.text, draft.context)
                if old.context != draft.context:
                    delta.add("s", old.tf, old.ntokens, -1)
                    delta.add("s", ix.counts, ix.ntokens, 1)
                plan.updates.append(
                    {"id": old.id, "kind": draft.kind, "ord": draft.ordinal, "ctx": draft.context}
                    | {"tsv": ix.tsv, "nt": ix.ntokens, "tf": ix.tf}
                )
            if vector is not None:
                plan.vectors.append({"id": old.id, "v": vector, "fp": fp_id})
            continue
        ix = index_text("s", draft.text, draft.context)
        delta.add("s", ix.counts, ix.ntokens, 1)
        scope = write.scope
        row_fp = fp_id if vector is not None else None
        head = (str(uuid.uuid4()), file_id, scope.user_id, scope.agent_id, write.track, draft.kind, draft.ordinal)
        plan.inserts.append((*head, draft.text, draft.context, ix.tsv, ix.ntokens, ix.tf, row_fp, vector))
    for rows in by_text.values():
        for old in rows:
            plan.removed.append(old.id)
            delta.add("s", old.tf, old.ntokens, -1)


def _write_round(
    conn: Any, writes: list[FileWrite], now: Any, fp_id: int | None, dim: int, delta: Delta, defer: bool
) -> int:
    """Lock, check and write one round of file writes (each file at most once); return the
    number of vectors left pending."""
    import sqlalchemy as sa

    for write in writes:
        if fp_id is None and any(d.vector is not None for d in write.segments):
            raise UsageError(
                f"{write.track}/{write.name}: the commit carries vectors but no fingerprint; set ChangeSet.fingerprint"
            )
    stored = _lock_files(conn, writes)
    for write in writes:
        found = stored.get(_key(write))
        if write.expected_revision != (None if found is None else found[1]):
            raise _conflict(write, None if found is None else found[1])
    fresh = [w for w in writes if _key(w) not in stored]
    ids = {key: fid for key, (fid, _) in stored.items()}
    if fresh:
        ids.update(_insert_files(conn, fresh, now))
    changed = [(ids[_key(w)], w) for w in writes if _key(w) in stored]
    existing: dict[str, list[Any]] = {}
    if changed:
        _update_files(conn, changed, now)
        for row in conn.execute(
            sa.text(
                "SELECT id, file_id, text, context, kind, ordinal, ntokens, tf FROM memu_segments "
                "WHERE file_id = ANY(CAST(:ids AS text[])) ORDER BY file_id, ordinal, id"
            ),
            {"ids": [fid for fid, _ in changed]},
        ):
            existing.setdefault(row.file_id, []).append(row)
    plan = _SegmentPlan(defer=defer)
    for write in writes:
        fid = ids[_key(write)]
        _plan_file(write, fid, existing.get(fid, []), fp_id, dim, plan, delta)
    _write_segments(conn, plan)
    return plan.pending


def _write_segments(conn: Any, plan: _SegmentPlan) -> None:
    import sqlalchemy as sa

    if plan.removed:
        conn.execute(sa.text("DELETE FROM memu_segments WHERE id = ANY(CAST(:ids AS text[]))"), {"ids": plan.removed})
    if plan.updates:
        conn.execute(
            sa.text(
                "UPDATE memu_segments SET kind = :kind, ordinal = :ord, context = :ctx, "
                "tsv = CAST(:tsv AS tsvector), ntokens = :nt, tf = CAST(:tf AS jsonb) WHERE id = :id"
            ),
            plan.updates,
        )
    if plan.vectors:
        # A stored text that gets its first vector: pending (and out of the graph, should it
        # ever have been in), or linked at once when not deferring. One vector per row.
        if plan.defer:
            conn.execute(
                sa.text("UPDATE memu_segments SET fp_id = NULL, embedding = NULL WHERE id = :id AND fp_id IS NOT NULL"),
                plan.vectors,
            )
            conn.execute(
                sa.text(
                    "INSERT INTO memu_pending_vectors (id, fp_id, user_id, agent_id, track, embedding) "
                    "SELECT s.id, :fp, s.user_id, s.agent_id, s.track, :v FROM memu_segments s WHERE s.id = :id "
                    "ON CONFLICT (id) DO UPDATE SET fp_id = excluded.fp_id, embedding = excluded.embedding"
                ),
                plan.vectors,
            )
        else:
            conn.execute(sa.text("UPDATE memu_segments SET embedding = :v, fp_id = :fp WHERE id = :id"), plan.vectors)
            conn.execute(sa.text("DELETE FROM memu_pending_vectors WHERE id = :id"), plan.vectors)
    if plan.inserts:
        _copy_segments(conn, plan.inserts, plan.defer)


def _copy_segments(conn: Any, rows: list[tuple[Any, ...]], defer: bool) -> None:
    """Insert new segment rows through one binary ``COPY`` (vectors travel as raw floats);
    ``defer`` puts their vectors in ``memu_pending_vectors``, which no HNSW index covers."""
    import sqlalchemy as sa

    conn.execute(
        sa.text(
            f"CREATE TEMP TABLE IF NOT EXISTS {_STAGE} (id text, file_id text, user_id text, agent_id text, "
            "track text, kind text, ordinal int4, text text, context text, tsv text, ntokens int4, tf text, "
            "fp_id int4, embedding vector) ON COMMIT DELETE ROWS"
        )
    )
    raw = conn.connection.driver_connection
    with raw.cursor() as cursor:
        with cursor.copy(f"COPY {_STAGE} FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(_STAGE_TYPES)
            for row in rows:
                copy.write_row(row)
        vector = "NULL, NULL" if defer else "fp_id, embedding"
        cursor.execute(
            f"INSERT INTO memu_segments ({_SEGMENT_COLUMNS}) SELECT id, file_id, user_id, agent_id, track, kind, "
            f"ordinal, text, context, tsv::tsvector, ntokens, tf::jsonb, {vector} "
            f"FROM {_STAGE}"
        )
        if defer:
            cursor.execute(
                "INSERT INTO memu_pending_vectors (id, fp_id, user_id, agent_id, track, embedding) "
                f"SELECT id, fp_id, user_id, agent_id, track, embedding FROM {_STAGE} WHERE embedding IS NOT NULL"
            )
        cursor.execute(f"TRUNCATE {_STAGE}")


def _write_resource(conn: Any, write: ResourceWrite, now: Any, fp_id: int | None, dim: int, delta: Delta) -> None:
    import sqlalchemy as sa

    if write.vector is not None and fp_id is None:
        raise UsageError(
            f"resource {write.path}: the commit carries vectors but no fingerprint; set ChangeSet.fingerprint"
        )
    vector = None if write.vector is None else _vector(write.vector, dim, f"resource {write.path}")
    key = {"u": write.scope.user_id, "a": write.scope.agent_id, "p": write.path}
    row = conn.execute(
        sa.text(
            "SELECT id, description, fp_id, ntokens, tf FROM memu_resources "
            "WHERE user_id = :u AND agent_id = :a AND path = :p FOR UPDATE"
        ),
        key,
    ).one_or_none()
    ix = index_text("r", write.description or "", write.path)
    values = {**key, "d": write.description, "tsv": ix.tsv, "nt": ix.ntokens, "tf": ix.tf, "now": now}
    delta.add("r", ix.counts, ix.ntokens, 1)
    if row is None:
        conn.execute(
            sa.text(
                "INSERT INTO memu_resources (id, user_id, agent_id, path, description, tsv, ntokens, tf, "
                "fp_id, embedding, created_at, updated_at) VALUES (:id, :u, :a, :p, :d, "
                "CAST(:tsv AS tsvector), :nt, CAST(:tf AS jsonb), :fp, :v, :now, :now)"
            ),
            {**values, "id": str(uuid.uuid4()), "fp": fp_id if vector is not None else None, "v": vector},
        )
        return
    delta.add("r", row.tf, row.ntokens, -1)
    if vector is not None:
        vector_sql, extra = ", fp_id = :fp, embedding = :v", {"fp": fp_id, "v": vector}
    elif write.description == row.description:
        vector_sql, extra = "", {}
    else:
        # A new description with no vector: the old vector describes text that is gone.
        vector_sql, extra = ", fp_id = NULL, embedding = NULL", {}
    conn.execute(
        sa.text(
            "UPDATE memu_resources SET description = :d, tsv = CAST(:tsv AS tsvector), ntokens = :nt, "
            "tf = CAST(:tf AS jsonb), "
            f"updated_at = :now{vector_sql} WHERE id = :id"
        ),
        {**values, **extra, "id": row.id},
    )


def _check_text(changes: ChangeSet) -> None:
    """Postgres text cannot hold NUL; say so before anything is written."""
    for write in changes.files:
        fields = [
            write.scope.user_id,
            write.scope.agent_id,
            write.track,
            write.name,
            write.description,
            write.content,
        ]
        fields += [t for d in write.segments for t in (d.text, d.context)]
        if any("\x00" in f for f in fields):
            raise UsageError(f"file {write.track}/{write.name!r} contains a NUL character; remove it and commit again")
    for res in changes.resources:
        if any("\x00" in f for f in (res.scope.user_id, res.scope.agent_id, res.path, res.description or "")):
            raise UsageError(f"resource {res.path!r} contains a NUL character; remove it and commit again")


def _check_vectors(changes: ChangeSet) -> None:
    """Refuse vectors without a fingerprint or of the wrong length before taking any lock."""
    dim = changes.fingerprint.dimension if changes.fingerprint else 0
    drafts = [(f"segment of {w.track}/{w.name}", d.vector) for w in changes.files for d in w.segments]
    for what, vector in drafts + [(f"resource {r.path}", r.vector) for r in changes.resources]:
        if vector is None:
            continue
        if changes.fingerprint is None:
            raise UsageError(f"{what}: the change set carries vectors but no fingerprint; set ChangeSet.fingerprint")
        if len(vector) != dim:
            raise UsageError(
                f"{what}: a vector has {len(vector)} dimensions but the fingerprint "
                f"{changes.fingerprint.describe()} says {dim}; embed with the configured model"
            )


def apply(conn: Any, changes: ChangeSet, defer: bool = True) -> int:
    """Write ``changes`` inside the caller's transaction (see ``MemoryStore.apply``); return the
    number of segment vectors it left pending (``defer``; otherwise each is linked into the
    HNSW graph now, as before ADR 0029).

    Runs beside other writes: it holds the writers' lock shared, locks only the file and
    resource rows it writes (in key order), and the statistics rows at the very end.
    """
    _check_text(changes)
    _check_vectors(changes)
    offered = changes.fingerprint
    live = _meta.join_writers(conn, offered)
    fp_id, dim = live.fp_id, 0
    if offered is not None:
        if live.fingerprint is None:
            fp_id = _meta.fingerprint_id(conn, offered)
            _meta.make_live(conn, fp_id, offered.dimension)
        elif live.fingerprint != offered:
            raise mismatch(live.fingerprint, offered)
        dim = offered.dimension
    else:
        fp_id = None  # no vectors may arrive without their fingerprint
    now = utcnow()
    delta = Delta()
    pending = 0
    for writes in _rounds(changes.files):
        pending += _write_round(conn, writes, now, fp_id, dim, delta, defer)
    # Resources keep the incremental path: a commit writes a handful, not thousands.
    for resource in sorted(changes.resources, key=lambda r: (r.scope.user_id, r.scope.agent_id, r.path)):
        _write_resource(conn, resource, now, fp_id, dim, delta)
    delta.flush(conn)
    return pending


def delete_file(conn: Any, scope: Scope, track: str, name: str) -> RecallFile | None:
    """Delete one file and (by cascade) its segments inside the caller's transaction."""
    import sqlalchemy as sa

    _meta.join_writers(conn, None)
    row = conn.execute(
        sa.text(
            f"SELECT {FILE_COLUMNS} FROM memu_files "
            "WHERE user_id = :u AND agent_id = :a AND track = :t AND name = :n FOR UPDATE"
        ),
        {"u": scope.user_id, "a": scope.agent_id, "t": track, "n": name},
    ).one_or_none()
    if row is None:
        return None
    delta = Delta()
    for seg in conn.execute(sa.text("SELECT ntokens, tf FROM memu_segments WHERE file_id = :f"), {"f": row.id}):
        delta.add("s", seg.tf, seg.ntokens, -1)
    conn.execute(sa.text("DELETE FROM memu_files WHERE id = :f"), {"f": row.id})
    delta.flush(conn)
    return to_file(row)
