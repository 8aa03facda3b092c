"""Corpus statistics for BM25, kept exact inside each write transaction.

BM25 needs, per kind (segments ``s``, resources ``r``): the row count, the total token count and
each term's document frequency. FTS5 keeps these in its own shadow tables; here they live in
``memu_meta`` and ``memu_terms`` and move with every write, under the writer lock, so a search
reads three small numbers per term instead of counting over the corpus.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal

Kind = Literal["s", "r"]

_TABLE = {"s": "memu_segments", "r": "memu_resources"}
_META = {"s": ("segment_rows", "segment_tokens"), "r": ("resource_rows", "resource_tokens")}


def adjust(conn: Any, kind: Kind, ids: Collection[str], sign: int) -> None:
    """Add (``sign`` 1) or remove (``-1``) the rows ``ids`` from the statistics.

    Call with -1 *before* those rows change or disappear and with 1 *after* they are written.
    """
    if not ids:
        return
    import sqlalchemy as sa

    table = _TABLE[kind]
    rows, tokens = _META[kind]
    params = {"kind": kind, "ids": list(ids), "sign": sign}
    conn.execute(
        sa.text(
            f"""
            INSERT INTO memu_terms (kind, term, df)
            SELECT :kind, u.lexeme, :sign * count(*)
            FROM {table} x CROSS JOIN LATERAL unnest(x.tsv) u
            WHERE x.id = ANY(:ids)
            GROUP BY u.lexeme
            ON CONFLICT (kind, term) DO UPDATE SET df = memu_terms.df + excluded.df
            """
        ),
        params,
    )
    conn.execute(
        sa.text(
            f"""
            UPDATE memu_meta m
            SET {rows} = m.{rows} + :sign * d.n, {tokens} = m.{tokens} + :sign * d.t
            FROM (SELECT count(*) AS n, coalesce(sum(ntokens), 0) AS t FROM {table} WHERE id = ANY(:ids)) d
            WHERE m.id = 1
            """
        ),
        params,
    )
