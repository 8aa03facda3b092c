"""The vector change log (``vector_changes``): which owners' vectors changed since a position.

Triggers on ``vectors`` (migration 0003) append one row per inserted or deleted vector in the
writer's transaction, so the log covers every writer of the file, this process or another. A
warm dense index remembers the log position it reflects and reads only the rows after it
(:mod:`memu_core._stores.sqlite.dense`). The log is pruned at the end of write transactions;
``meta.vector_changes_from`` (the horizon) says from where it is still complete.
"""

from __future__ import annotations

import sqlite3

from memu_core._stores.sqlite.rows import chunks, placeholders

HORIZON_KEY = "vector_changes_from"
"""``meta`` key: an index positioned before this log position cannot catch up from the log."""

KEEP = 50_000
"""Log rows kept after a prune. An index further behind reloads, which it would do anyway past
a tenth of its rows (rows are ~150 bytes: a few MB at most)."""


def head(conn: sqlite3.Connection) -> int:
    """The newest log position (0 for an empty log)."""
    return int(conn.execute("SELECT coalesce(max(seq), 0) FROM vector_changes").fetchone()[0])


def horizon(conn: sqlite3.Connection) -> int:
    """The position an index must be at or past to catch up from the log."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (HORIZON_KEY,)).fetchone()
    return 0 if row is None else int(row[0])


def owners_since(conn: sqlite3.Connection, after: int, kind: str, fp_key: str, most: int) -> list[str] | None:
    """Distinct owners of ``kind`` whose vector under ``fp_key`` changed after ``after``, oldest
    change first; ``None`` when there are more than ``most`` log rows for them (reload instead)."""
    sql = "SELECT owner_id FROM vector_changes WHERE seq > ? AND owner_kind = ? AND fingerprint = ? ORDER BY seq"
    rows = conn.execute(f"{sql} LIMIT ?", (after, kind, fp_key, most + 1)).fetchall()
    if len(rows) > most:
        return None
    return list(dict.fromkeys(r[0] for r in rows))


def current_rows(
    conn: sqlite3.Connection, kind: str, fp_key: str, owners: list[str], where: str, params: list[str]
) -> list[tuple[int, str, bytes]]:
    """``(rowid, owner, vector)`` of the ``owners`` that have a vector under ``fp_key`` and match the
    scope condition ``where`` (on alias ``o``), in table order: the order a fresh load reads them."""
    table = "segments" if kind == "segment" else "resources"
    found: list[tuple[int, str, bytes]] = []
    for part in chunks(owners):
        if where:
            sql = (
                f"SELECT v.rowid, v.owner_id, v.vector FROM vectors v JOIN {table} o ON o.id = v.owner_id "
                f"WHERE v.owner_kind = ? AND v.fingerprint = ? AND v.owner_id IN ({placeholders(len(part))}){where}"
            )
        else:
            sql = (
                "SELECT rowid, owner_id, vector FROM vectors "
                f"WHERE owner_kind = ? AND fingerprint = ? AND owner_id IN ({placeholders(len(part))})"
            )
        found.extend(conn.execute(sql, [kind, fp_key, *part, *params]).fetchall())
    found.sort()
    return found


def prune(conn: sqlite3.Connection) -> None:
    """Drop old log rows once there are more than twice :data:`KEEP` past the horizon (inside the
    caller's write transaction). The newest row is never dropped, so positions never repeat."""
    newest = head(conn)
    floor = horizon(conn)
    if newest - floor <= 2 * KEEP:
        return
    cut = newest - KEEP
    conn.execute("DELETE FROM vector_changes WHERE seq <= ?", (cut,))
    conn.execute("UPDATE meta SET value = ? WHERE key = ?", (str(cut), HORIZON_KEY))
