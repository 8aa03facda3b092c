"""The sqlite store's commit: one change set applied inside the caller's ``BEGIN IMMEDIATE``.

Everything here runs on an open transaction; any exception makes the caller roll back, so a
conflict on the last file of a change set leaves the first ones unwritten too.
"""

from __future__ import annotations

import sqlite3

from memu_core._stores import _common as c
from memu_core._stores.sqlite import history
from memu_core._stores.sqlite.lexical import EVERY_ROW
from memu_core._stores.sqlite.rows import stamp, vector_blob
from memu_core.text import index_text
from memu_core.types import ChangeSet, FileWrite, Fingerprint, HistoryNote, ResourceWrite, utcnow


def read_live(conn: sqlite3.Connection) -> Fingerprint | None:
    """The live fingerprint recorded in ``meta``, or ``None``."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
    return None if row is None else c.fingerprint_from_key(row[0])


def write_live(conn: sqlite3.Connection, fp: Fingerprint) -> None:
    """Record ``fp`` as the live fingerprint."""
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('fingerprint', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (c.fingerprint_key(fp),),
    )


def apply_changes(conn: sqlite3.Connection, changes: ChangeSet) -> None:
    """Write resources, then files; the caller owns the transaction and the generation bump."""
    fp = changes.fingerprint
    fp_key = ""
    if fp is not None:
        live = read_live(conn)
        if live is None:
            write_live(conn, fp)
        elif live != fp:
            raise c.mismatch(live, fp)
        fp_key = c.fingerprint_key(fp)
    for rw in changes.resources:
        _write_resource(conn, rw, fp_key)
    for fw in changes.files:
        _write_file(conn, fw, fp_key, changes.note)


def _write_resource(conn: sqlite3.Connection, rw: ResourceWrite, fp_key: str) -> None:
    now = stamp(utcnow())
    row = conn.execute(
        "SELECT seq, id, description FROM resources WHERE user_id = ? AND agent_id = ? AND path = ?",
        (rw.scope.user_id, rw.scope.agent_id, rw.path),
    ).fetchone()
    if row is None:
        rid = c.new_id()
        cur = conn.execute(
            "INSERT INTO resources (id, user_id, agent_id, path, description, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (rid, rw.scope.user_id, rw.scope.agent_id, rw.path, rw.description, now, now),
        )
        conn.execute(
            "INSERT INTO resources_fts (rowid, path, description) VALUES (?, ?, ?)",
            (cur.lastrowid, index_text(rw.path), index_text(rw.description or "")),
        )
    else:
        seq, rid, old = row
        if old != rw.description:
            conn.execute(
                "UPDATE resources SET description = ?, updated_at = ? WHERE seq = ?",
                (rw.description, now, seq),
            )
            conn.execute(
                "UPDATE resources_fts SET description = ? WHERE rowid = ?",
                (index_text(rw.description or ""), seq),
            )
            # The old description's vectors (under every fingerprint) no longer describe it.
            conn.execute("DELETE FROM vectors WHERE owner_kind = 'resource' AND owner_id = ?", (rid,))
    if rw.vector is not None:
        conn.execute("DELETE FROM vectors WHERE owner_kind = 'resource' AND owner_id = ?", (rid,))
        conn.execute(
            "INSERT INTO vectors (owner_kind, owner_id, fingerprint, vector) VALUES ('resource', ?, ?, ?)",
            (rid, fp_key, vector_blob(rw.vector)),
        )


def _upsert_file(conn: sqlite3.Connection, fw: FileWrite, note: HistoryNote | None) -> str:
    """Check the planned revision, keep the previous version, write the file row; return its id."""
    now = stamp(utcnow())
    key = (fw.scope.user_id, fw.scope.agent_id, fw.track, fw.name)
    action, actor = (note.action, note.actor) if note is not None else ("commit", "")
    row = conn.execute(
        "SELECT id, revision, description, content, updated_at FROM files "
        "WHERE user_id = ? AND agent_id = ? AND track = ? AND name = ?",
        key,
    ).fetchone()
    actual = None if row is None else int(row[1])
    if actual != fw.expected_revision:
        raise c.conflict(fw.track, fw.name, fw.expected_revision, actual)
    if row is None:
        file_id = c.new_id()
        # A name forgotten earlier comes back numbered after its tombstone: versions never repeat.
        conn.execute(
            "INSERT INTO files (id, user_id, agent_id, track, name, description, content, "
            "content_hash, revision, created_at, updated_at, action, actor) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                file_id,
                *key,
                fw.description,
                fw.content,
                fw.content_hash,
                history.next_version(conn, key),
                now,
                now,
                action,
                actor,
            ),
        )
        return file_id
    file_id, revision, description, content, updated_at = row
    changed = (description, content) != (fw.description, fw.content)
    if note is not None and note.keep > 0:
        history.keep_previous(conn, file_id, key, note)
    conn.execute(
        "UPDATE files SET description = ?, content = ?, content_hash = ?, revision = ?, "
        "updated_at = ?, action = ?, actor = ? WHERE id = ?",
        (
            fw.description,
            fw.content,
            fw.content_hash,
            revision + 1,
            now if changed else updated_at,
            action,
            actor,
            file_id,
        ),
    )
    return str(file_id)


def _write_file(conn: sqlite3.Connection, fw: FileWrite, fp_key: str, note: HistoryNote | None) -> None:
    file_id = _upsert_file(conn, fw, note)
    # Reconcile segments by text: a text that survives keeps its row, its id and its vectors.
    spare: dict[str, list[tuple[int, str, str]]] = {}
    for seq, sid, text, context in conn.execute(
        "SELECT seq, id, text, context FROM segments WHERE file_id = ? ORDER BY seq", (file_id,)
    ):
        spare.setdefault(text, []).append((seq, sid, context))
    updates: list[tuple[str, int, str, int]] = []
    fts_updates: list[tuple[str, int]] = []
    inserts: list[tuple[str, ...] | tuple[object, ...]] = []
    fts_inserts: list[tuple[str, str, str]] = []
    vectors: list[tuple[str, str, bytes]] = []
    for draft in fw.segments:
        pool = spare.get(draft.text)
        if pool:
            seq, sid, old_context = pool.pop(0)
            updates.append((draft.kind, draft.ordinal, draft.context, seq))
            if old_context != draft.context:
                fts_updates.append((index_text(draft.context), seq))
        else:
            sid = c.new_id()
            inserts.append(
                (
                    sid,
                    file_id,
                    fw.scope.user_id,
                    fw.scope.agent_id,
                    fw.track,
                    draft.kind,
                    draft.ordinal,
                    draft.text,
                    draft.context,
                )
            )
            fts_inserts.append((index_text(draft.text), index_text(draft.context), sid))
        if draft.vector is not None:
            vectors.append((sid, fp_key, vector_blob(draft.vector)))
    stale = [(seq,) for pool in spare.values() for seq, _, _ in pool]
    # The delete trigger clears the FTS rows and vectors of the removed segments.
    conn.executemany("DELETE FROM segments WHERE seq = ?", stale)
    conn.executemany("UPDATE segments SET kind = ?, ordinal = ?, context = ? WHERE seq = ?", updates)
    conn.executemany("UPDATE segments_fts SET context = ? WHERE rowid = ?", fts_updates)
    conn.executemany(
        "INSERT INTO segments (id, file_id, user_id, agent_id, track, kind, ordinal, text, context) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        inserts,
    )
    conn.executemany(
        f"INSERT INTO segments_fts (rowid, text, context, tag) SELECT seq, ?, ?, '{EVERY_ROW}' "
        "FROM segments WHERE id = ?",
        fts_inserts,
    )
    conn.executemany(
        "INSERT OR REPLACE INTO vectors (owner_kind, owner_id, fingerprint, vector) VALUES ('segment', ?, ?, ?)",
        vectors,
    )
