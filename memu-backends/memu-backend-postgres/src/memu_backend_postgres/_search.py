"""Ranked searches: BM25 over the ``tsvector`` columns and cosine over pgvector HNSW.

Lexical scores follow FTS5's ``bm25()`` formula (k1 1.2, b 0.75, IDF floored at 1e-6, the
column weights applied to term frequencies, document length over all columns) with the corpus
statistics of :mod:`memu_backend_postgres._stats`, so the SQLite and Postgres stores rank the
same corpus the same way. The GIN index finds the candidates (``tsv @@ query``); the score
reads each candidate's term positions, whose ``A``/``B`` weights tell the columns apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from memu_core.types import Hit, Where

from memu_backend_postgres import _lexical
from memu_backend_postgres._meta import read_live
from memu_backend_postgres._rows import tracks_sql, where_sql

_TABLES = {"s": ("memu_segments", "segment_rows", "segment_tokens"), "r": ("memu_resources", "resource_rows", "resource_tokens")}


def lexical(
    conn: Any, kind: Literal["s", "r"], query: str, where: Where, tracks: Sequence[str] | None, limit: int
) -> list[Hit]:
    """Best-first BM25 hits of ``query`` among segments (``s``) or resources (``r``)."""
    import sqlalchemy as sa

    terms = _lexical.lexemes(query)
    if not terms or limit <= 0:
        return []
    table, rows, tokens = _TABLES[kind]
    params: dict[str, Any] = {
        "kind": kind,
        "terms": terms,
        "tsq": _lexical.tsquery_literal(terms),
        "limit": limit,
        "k1": _lexical.BM25_K1,
        "b": _lexical.BM25_B,
        "w1": _lexical.WEIGHTS[kind][0],
        "w2": _lexical.WEIGHTS[kind][1],
    }
    filters = where_sql(where, params, "x") + tracks_sql(tracks, params, "x")
    sql = f"""
        WITH m AS (
            SELECT {rows}::float8 AS n, greatest({tokens}, 1)::float8 / greatest({rows}, 1) AS avgdl
            FROM memu_meta WHERE id = 1
        ), c AS (
            SELECT x.id, x.ntokens, x.tsv FROM {table} x
            WHERE x.tsv @@ CAST(:tsq AS tsquery){filters}
        ), f AS (
            SELECT c.id, c.ntokens, u.lexeme,
                   :w1 * cardinality(array_positions(u.weights, 'A'))
                 + :w2 * cardinality(array_positions(u.weights, 'B')) AS tf
            FROM c CROSS JOIN LATERAL unnest(c.tsv) u
            WHERE u.lexeme = ANY(:terms)
        )
        SELECT f.id,
               sum(greatest(ln((m.n - t.df + 0.5) / (t.df + 0.5)), 1e-6)
                   * (f.tf * (:k1 + 1)) / (f.tf + :k1 * (1 - :b + :b * f.ntokens / m.avgdl))) AS score
        FROM f JOIN memu_terms t ON t.kind = :kind AND t.term = f.lexeme CROSS JOIN m
        GROUP BY f.id
        ORDER BY score DESC, f.id
        LIMIT :limit
    """
    return [Hit(row.id, float(row.score)) for row in conn.execute(sa.text(sql), params)]


def dense(
    conn: Any,
    kind: Literal["s", "r"],
    vector: Sequence[float],
    where: Where,
    tracks: Sequence[str] | None,
    limit: int,
    iterative: bool,
) -> list[Hit]:
    """Best-first cosine hits among rows holding a live vector; ``[]`` before any vector."""
    import numpy as np
    import sqlalchemy as sa

    live = read_live(conn)
    if live.fp_id is None or live.fingerprint is None or limit <= 0:
        return []
    query = np.asarray(vector, dtype=np.float32)
    dim = live.fingerprint.dimension
    if query.ndim != 1 or query.shape[0] != dim:
        from memu_core.errors import FingerprintMismatch

        raise FingerprintMismatch(
            f"the query vector has {query.shape[0] if query.ndim == 1 else query.shape} dimensions but the "
            f"store's vectors come from {live.fingerprint.describe()}; configure that model or run `memu reindex`"
        )
    table = _TABLES[kind][0]
    params: dict[str, Any] = {"q": query, "limit": limit}
    filters = where_sql(where, params, "x") + tracks_sql(tracks, params, "x")
    # HNSW returns ef_search candidates before the scope filter runs; a larger pool and (with
    # pgvector >= 0.8) an iterative scan keep a narrow scope from coming back short.
    conn.execute(sa.text(f"SET LOCAL hnsw.ef_search = {max(40, min(2 * limit, 1000))}"))
    if iterative:
        conn.execute(sa.text("SET LOCAL hnsw.iterative_scan = strict_order"))
    # The cast and the fp_id literal must match the partial index expression exactly for the
    # planner to use it; both are integers read from our own tables.
    distance = f"(x.embedding::vector({int(dim)}) <=> CAST(:q AS vector({int(dim)})))"
    sql = f"""
        SELECT x.id, 1 - {distance} AS score FROM {table} x
        WHERE x.fp_id = {int(live.fp_id)}{filters}
        ORDER BY {distance}
        LIMIT :limit
    """
    return [Hit(row.id, float(row.score)) for row in conn.execute(sa.text(sql), params)]
