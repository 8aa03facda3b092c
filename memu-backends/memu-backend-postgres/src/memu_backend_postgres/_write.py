"""``apply`` and ``delete_file``: one transaction each, under the writer lock."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memu_backend_postgres import _meta, _stats
from memu_backend_postgres._lexical import index_text
from memu_backend_postgres._rows import FILE_COLUMNS, to_file
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


@dataclass
class _SegmentPlan:
    """Segment row changes collected over every file of a commit, applied in a few batches."""

    removed: list[str] = field(default_factory=list)
    retokenised: list[str] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)
    vectors: list[dict[str, Any]] = field(default_factory=list)
    inserts: list[dict[str, Any]] = field(default_factory=list)
    files: set[str] = field(default_factory=set)

    def reset(self) -> None:
        """Forget everything already written."""
        for pending in (self.removed, self.retokenised, self.updates, self.vectors, self.inserts):
            pending.clear()
        self.files.clear()


def _conflict(write: FileWrite, found: int | None) -> WriteConflict:
    where = f"{write.track}/{write.name} (user_id={write.scope.user_id}, agent_id={write.scope.agent_id})"
    expected = "a new file" if write.expected_revision is None else f"revision {write.expected_revision}"
    now = {None: "no such file", -1: "a copy created concurrently"}.get(found, f"revision {found}")
    return WriteConflict(
        f"recall file {where} changed since it was read: expected {expected}, found {now}; "
        "nothing was written, retry the commit"
    )


def _write_file(conn: Any, write: FileWrite, now: Any, fp_id: int | None, dim: int, plan: _SegmentPlan) -> None:
    import sqlalchemy as sa

    key = {"u": write.scope.user_id, "a": write.scope.agent_id, "t": write.track, "n": write.name}
    row = conn.execute(
        sa.text(
            "SELECT id, revision FROM memu_files "
            "WHERE user_id = :u AND agent_id = :a AND track = :t AND name = :n FOR UPDATE"
        ),
        key,
    ).one_or_none()
    values = {**key, "d": write.description, "c": write.content, "h": write.content_hash, "now": now}
    existing: list[Any] = []
    if row is None:
        if write.expected_revision is not None:
            raise _conflict(write, None)
        file_id = str(uuid.uuid4())
        # ON CONFLICT covers a writer that bypassed the lock; the unique constraint is the truth.
        inserted = conn.execute(
            sa.text(
                "INSERT INTO memu_files (id, user_id, agent_id, track, name, description, content, "
                "content_hash, revision, created_at, updated_at) "
                "VALUES (:id, :u, :a, :t, :n, :d, :c, :h, 1, :now, :now) "
                "ON CONFLICT ON CONSTRAINT memu_files_scope_track_name DO NOTHING RETURNING id"
            ),
            {**values, "id": file_id},
        ).one_or_none()
        if inserted is None:
            raise _conflict(write, -1)
    else:
        if write.expected_revision != row.revision:
            raise _conflict(write, row.revision)
        file_id = row.id
        if file_id in plan.files:
            # The same file twice in one change set: its earlier segments must be in the table
            # before this write reconciles against them.
            _write_segments(conn, plan)
            plan.reset()
        conn.execute(
            sa.text(
                # The revision always moves (the engine planned against it); updated_at only
                # when the file really changed, so an idempotent re-commit leaves it alone.
                "UPDATE memu_files SET revision = revision + 1, updated_at = CASE WHEN "
                "description IS DISTINCT FROM :d OR content IS DISTINCT FROM :c "
                "OR content_hash IS DISTINCT FROM :h THEN :now ELSE updated_at END, "
                "description = :d, content = :c, content_hash = :h WHERE id = :id"
            ),
            {**values, "id": file_id},
        )
        existing = list(
            conn.execute(
                sa.text(
                    "SELECT id, text, context, kind, ordinal FROM memu_segments "
                    "WHERE file_id = :id ORDER BY ordinal, id"
                ),
                {"id": file_id},
            )
        )

    plan.files.add(file_id)
    by_text: dict[str, list[Any]] = {}
    for old in existing:
        by_text.setdefault(old.text, []).append(old)
    label = f"{write.track}/{write.name}"
    for draft in write.segments:
        if draft.vector is not None and fp_id is None:
            raise UsageError(f"{label}: the commit carries vectors but no fingerprint; set ChangeSet.fingerprint")
        vector = None if draft.vector is None else _vector(draft.vector, dim, f"segment of {label}")
        same = by_text.get(draft.text)
        if same:
            old = same.pop(0)
            if old.context != draft.context:
                plan.retokenised.append(old.id)
            if (old.context, old.kind, old.ordinal) != (draft.context, draft.kind, draft.ordinal):
                ix = index_text("s", draft.text, draft.context)
                plan.updates.append(
                    {
                        "id": old.id,
                        "kind": draft.kind,
                        "ord": draft.ordinal,
                        "ctx": draft.context,
                        "tsv": ix.tsv,
                        "nt": ix.ntokens,
                        "tf": ix.tf,
                    }
                )
            if vector is not None:
                plan.vectors.append({"id": old.id, "v": vector, "fp": fp_id})
            continue
        ix = index_text("s", draft.text, draft.context)
        plan.inserts.append(
            {
                "id": str(uuid.uuid4()),
                "file": file_id,
                "u": write.scope.user_id,
                "a": write.scope.agent_id,
                "t": write.track,
                "kind": draft.kind,
                "ord": draft.ordinal,
                "text": draft.text,
                "ctx": draft.context,
                "tsv": ix.tsv,
                "nt": ix.ntokens,
                "tf": ix.tf,
                "fp": fp_id if vector is not None else None,
                "v": vector,
            }
        )
    plan.removed.extend(old.id for rows in by_text.values() for old in rows)


def _write_segments(conn: Any, plan: _SegmentPlan) -> None:
    import sqlalchemy as sa

    _stats.adjust(conn, "s", plan.removed + plan.retokenised, -1)
    if plan.removed:
        conn.execute(sa.text("DELETE FROM memu_segments WHERE id = ANY(:ids)"), {"ids": plan.removed})
    if plan.updates:
        conn.execute(
            sa.text(
                "UPDATE memu_segments SET kind = :kind, ordinal = :ord, context = :ctx, "
                "tsv = CAST(:tsv AS tsvector), ntokens = :nt, tf = CAST(:tf AS jsonb) WHERE id = :id"
            ),
            plan.updates,
        )
    if plan.vectors:
        conn.execute(sa.text("UPDATE memu_segments SET embedding = :v, fp_id = :fp WHERE id = :id"), plan.vectors)
    if plan.inserts:
        conn.execute(
            sa.text(
                "INSERT INTO memu_segments (id, file_id, user_id, agent_id, track, kind, ordinal, text, "
                "context, tsv, ntokens, tf, fp_id, embedding) VALUES (:id, :file, :u, :a, :t, :kind, :ord, "
                ":text, :ctx, CAST(:tsv AS tsvector), :nt, CAST(:tf AS jsonb), :fp, :v)"
            ),
            plan.inserts,
        )
    _stats.adjust(conn, "s", [row["id"] for row in plan.inserts] + plan.retokenised, 1)


def _write_resource(conn: Any, write: ResourceWrite, now: Any, fp_id: int | None, dim: int) -> None:
    import sqlalchemy as sa

    if write.vector is not None and fp_id is None:
        raise UsageError(
            f"resource {write.path}: the commit carries vectors but no fingerprint; set ChangeSet.fingerprint"
        )
    vector = None if write.vector is None else _vector(write.vector, dim, f"resource {write.path}")
    key = {"u": write.scope.user_id, "a": write.scope.agent_id, "p": write.path}
    row = conn.execute(
        sa.text(
            "SELECT id, description, fp_id FROM memu_resources "
            "WHERE user_id = :u AND agent_id = :a AND path = :p FOR UPDATE"
        ),
        key,
    ).one_or_none()
    ix = index_text("r", write.description or "", write.path)
    values = {**key, "d": write.description, "tsv": ix.tsv, "nt": ix.ntokens, "tf": ix.tf, "now": now}
    if row is None:
        rid = str(uuid.uuid4())
        conn.execute(
            sa.text(
                "INSERT INTO memu_resources (id, user_id, agent_id, path, description, tsv, ntokens, tf, "
                "fp_id, embedding, created_at, updated_at) VALUES (:id, :u, :a, :p, :d, "
                "CAST(:tsv AS tsvector), :nt, CAST(:tf AS jsonb), :fp, :v, :now, :now)"
            ),
            {**values, "id": rid, "fp": fp_id if vector is not None else None, "v": vector},
        )
        _stats.adjust(conn, "r", [rid], 1)
        return
    _stats.adjust(conn, "r", [row.id], -1)
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
    _stats.adjust(conn, "r", [row.id], 1)


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


def apply(conn: Any, changes: ChangeSet) -> None:
    """Write ``changes`` inside the caller's transaction (see ``MemoryStore.apply``)."""
    _check_text(changes)
    _check_vectors(changes)
    live = _meta.lock_writer(conn)
    fp_id, dim = live.fp_id, 0
    offered = changes.fingerprint
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
    plan = _SegmentPlan()
    # A stable order keeps row locks in one sequence even for writers that skip the meta lock.
    for write in sorted(changes.files, key=lambda w: (w.scope.user_id, w.scope.agent_id, w.track, w.name)):
        _write_file(conn, write, now, fp_id, dim, plan)
    _write_segments(conn, plan)
    for resource in changes.resources:
        _write_resource(conn, resource, now, fp_id, dim)
    _meta.bump_generation(conn)


def delete_file(conn: Any, scope: Scope, track: str, name: str) -> RecallFile | None:
    """Delete one file and (by cascade) its segments inside the caller's transaction."""
    import sqlalchemy as sa

    _meta.lock_writer(conn)
    row = conn.execute(
        sa.text(
            f"SELECT {FILE_COLUMNS} FROM memu_files "
            "WHERE user_id = :u AND agent_id = :a AND track = :t AND name = :n FOR UPDATE"
        ),
        {"u": scope.user_id, "a": scope.agent_id, "t": track, "n": name},
    ).one_or_none()
    if row is None:
        return None
    ids = list(conn.execute(sa.text("SELECT id FROM memu_segments WHERE file_id = :f"), {"f": row.id}).scalars())
    _stats.adjust(conn, "s", ids, -1)
    conn.execute(sa.text("DELETE FROM memu_files WHERE id = :f"), {"f": row.id})
    _meta.bump_generation(conn)
    return to_file(row)
