"""Ranked searches: BM25 over the ``tsvector`` columns and cosine over pgvector HNSW.

Lexical scores follow FTS5's ``bm25()`` formula (k1 1.2, b 0.75, IDF floored at 1e-6, the
column weights applied to term frequencies, document length over all columns) with the corpus
statistics of :mod:`memu_backend_postgres._stats`, so the SQLite and Postgres stores rank the
same corpus the same way. The GIN index finds the candidates (``tsv @@ query``); the score
reads each candidate's column-weighted term frequencies from its ``tf`` map (stored
uncompressed, ADR 0033). The statistics may come from the store's memory; the scoring
statement returns the counters it saw, so the caller can tell when they were stale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from memu_backend_postgres import _lexical
from memu_backend_postgres._meta import Live, read_live
from memu_backend_postgres._rows import tracks_sql, where_sql
from memu_backend_postgres._termstats import Snapshot, TermStats
from memu_core.text import CandidateRule, candidate_rules
from memu_core.types import Hit, Where

EF_SEARCH = 200
"""HNSW candidate list per search (pgvector's default is 40), set on every pooled connection:
enough for the engine's 100 segment candidates; more candidates, better recall."""

BUDGET = 10_000
"""Matching rows scored before the candidates narrow to the rarest terms (the SQLite store's;
the rule is :func:`memu_core.text.candidate_rules`)."""

_TABLES = {
    "s": ("memu_segments", "segment_rows", "segment_tokens"),
    "r": ("memu_resources", "resource_rows", "resource_tokens"),
}


def lexical(
    conn: Any,
    kind: Literal["s", "r"],
    query: str,
    where: Where,
    tracks: Sequence[str] | None,
    limit: int,
    known: TermStats | None = None,
) -> list[Hit] | None:
    """Best-first BM25 hits of ``query`` among segments (``s``) or resources (``r``); ``None``
    when the statistics moved between the statements it sent (only outside a transaction).

    With ``known`` the statistics of terms seen before come from memory and the search is one
    statement, which checks them (:mod:`memu_backend_postgres._termstats`).
    """
    params: dict[str, Any] = {}
    filters = where_sql(where, params, "x") + tracks_sql(tracks, params, "x")  # validates first
    terms, typed = _lexical.lexemes(query)
    if not terms or limit <= 0:
        return []
    snap = known.get(kind, terms) if known is not None else None
    # Remembered statistics are only trusted through the search statement's check, so an answer
    # of nothing without a statement (no rows, no term held) always comes from a fresh read.
    if snap is None or not snap.n_rows or not any(snap.df.values()):
        snap = read_stats(conn, kind, terms)
        if known is not None:
            known.put(kind, snap)
    if not snap.n_rows:
        return []
    df = snap.df
    # A term no row holds adds 0 to every score and matches nothing: leave it out of both the
    # scoring expression and the candidate query (expanded word forms are mostly such terms).
    idf = _idf(snap)
    stored = [(term, idf[term]) for term in terms if df.get(term, 0) > 0]
    if not stored:
        return []
    params.update(limit=limit)
    hits: list[Hit] = []
    for rule in candidate_rules(terms, df, BUDGET, typed):
        params["tsq"] = _tsquery(rule, df)
        sql = _lexical_sql(kind, snap, stored, filters, _singles(kind, snap, rule, stored))
        rows = conn.execute(sql, params).all()
        if not snap.matches(rows[0].generation, rows[0].n_rows, rows[0].n_tokens):
            if known is not None:
                known.forget(kind)
            return None
        hits = [Hit(row.id, float(row.score)) for row in rows if row.id is not None]
        # A narrow candidate rule that cannot fill the limit gives way to a wider one.
        if len(hits) >= limit:
            break
    return hits


def read_stats(conn: Any, kind: Literal["s", "r"], terms: list[str]) -> Snapshot:
    """The corpus totals, the generation and the terms' document frequencies, in one round trip."""
    import sqlalchemy as sa

    _, rows_col, tokens_col = _TABLES[kind]
    row = conn.execute(
        sa.text(
            f"SELECT m.generation, m.{rows_col} AS n_rows, m.{tokens_col} AS n_tokens, "
            "(SELECT coalesce(jsonb_object_agg(term, jsonb_build_array(df, tfmax, dlmin)), '{}'::jsonb) "
            "FROM memu_terms "
            "WHERE kind = :kind AND term = ANY(CAST(:terms AS text[]))) AS df FROM memu_meta m WHERE m.id = 1"
        ),
        {"kind": kind, "terms": terms},
    ).one()
    df = {term: 0 for term in terms}
    df.update((term, int(count)) for term, (count, _, _) in row.df.items())
    tfmax = {term: float(top) for term, (_, top, _) in row.df.items()}
    dlmin = {term: int(shortest) for term, (_, _, shortest) in row.df.items()}
    return Snapshot(int(row.generation), int(row.n_rows), int(row.n_tokens), df, tfmax, dlmin)


def _idf(snap: Snapshot) -> dict[str, float]:
    """FTS5's bm25() IDF of each term, floored at 1e-6."""
    n = snap.n_rows
    return {t: max(math.log((n - d + 0.5) / (d + 0.5)), 1e-6) for t, d in snap.df.items()}


def _lexical_sql(
    kind: Literal["s", "r"],
    snap: Snapshot,
    stored: list[tuple[str, float]],
    filters: str,
    singles: list[tuple[str, float]] | None = None,
) -> Any:
    """The scoring statement: BM25 of every stored term over the candidates of ``:tsq``, with the
    counters of ``memu_meta`` it saw (one row of them and no hit when nothing matches).

    With ``singles`` (:func:`_singles`) the candidates are scored in two parts, so that rows
    which cannot reach the limit are never read (ADR 0033, amendment): first the candidates
    holding two or more of the stored terms; then, of the candidates holding exactly one, only
    those whose term could still beat the worst of the first part's best ``:limit`` rows.
    """
    import sqlalchemy as sa

    table, rows_col, tokens_col = _TABLES[kind]
    # The document length counts every column, including the SQLite store's one-word marker
    # column (EXTRA_TOKENS), so lengths here add it too.
    extra = _lexical.EXTRA_TOKENS[kind]
    avgdl = (snap.n_tokens + extra * snap.n_rows) / snap.n_rows
    # All arithmetic in float8 (numeric literals would make Postgres compute in slow numeric);
    # the constants are floats computed here, so splicing their repr() is safe.
    k1, b = _lexical.BM25_K1, _lexical.BM25_B
    freqs, parts = [], []
    for i, (term, weight) in enumerate(stored):
        # Terms are runs of letters and digits (no quote can occur), and as literals the
        # planner folds each key lookup to a constant instead of a parameter per row.
        quoted = term.replace("'", "''")
        freqs.append(f"coalesce((x.tf ->> '{quoted}')::float8, 0) AS f{i}")
        parts.append(f"{weight!r}::float8 * f{i} * {k1 + 1!r}::float8 / (f{i} + k)")

    def ranked(where: str) -> str:
        # The inner query reads each candidate's term frequencies once (OFFSET 0 keeps the
        # planner from inlining them into every reference, which doubled the JSON lookups).
        return f"""
            SELECT id, {" + ".join(parts)} AS score
            FROM (
                SELECT x.id, {k1!r}::float8 * ({1 - b!r}::float8
                       + {b!r}::float8 * (x.ntokens + {int(extra)}) / {avgdl!r}::float8) AS k,
                       {", ".join(freqs)}
                FROM {table} x
                WHERE {where}{filters}
                OFFSET 0
            ) c
            ORDER BY score DESC, id
            LIMIT :limit"""

    if singles:
        best = _split_sql(ranked, [term for term, _ in stored], singles)
    else:
        best = ranked("x.tsv @@ CAST(:tsq AS tsquery)")
    # The outer join returns memu_meta's counters from the same snapshot as the hits, so the
    # caller can tell whether the statistics it scored with are the ones this snapshot holds.
    return sa.text(f"""
        SELECT m.generation, m.{rows_col} AS n_rows, m.{tokens_col} AS n_tokens, h.id, h.score
        FROM memu_meta m LEFT JOIN LATERAL ({best}
        ) h ON true
        WHERE m.id = 1
        ORDER BY h.score DESC, h.id
    """)


def _singles(
    kind: Literal["s", "r"], snap: Snapshot, rule: CandidateRule, stored: list[tuple[str, float]]
) -> list[tuple[str, float]]:
    """For a rule whose candidates may hold a single stored term (an OR of required terms):
    each such term with the highest score a row holding only it can reach; else nothing.

    A row's BM25 part for one term is ``idf * f * (k1 + 1) / (f + k)``: it grows with the
    term's weighted frequency ``f``, at most the term's ``tfmax``, and falls as the row's
    ``k`` grows with its length, at least the term's ``dlmin`` words. Without a known
    ``tfmax`` the part is still below ``idf * (k1 + 1)``. Rules that AND two groups have no
    rows of one term.
    """
    if rule.also or rule.each or len(stored) < 2:
        return []
    weight = dict(stored)
    k1, b = _lexical.BM25_K1, _lexical.BM25_B
    extra = _lexical.EXTRA_TOKENS[kind]
    avgdl = (snap.n_tokens + extra * snap.n_rows) / snap.n_rows
    out = []
    for term in rule.required:
        if snap.df.get(term, 0) <= 0 or term not in weight:
            continue
        top = snap.tfmax.get(term, 0.0)
        shortest = k1 * (1 - b + b * (max(snap.dlmin.get(term, 1), 1) + extra) / avgdl)
        ceiling = weight[term] * (k1 + 1) * (top / (top + shortest) if top > 0 else 1.0)
        # A margin far above float rounding, far below any gap between two real scores.
        out.append((term, ceiling * (1 + 1e-6)))
    return out


def _split_sql(ranked: Any, terms: list[str], singles: list[tuple[str, float]]) -> str:
    """The best ``:limit`` candidates of ``:tsq`` in two parts (see :func:`_lexical_sql`).

    ``multi``: candidates holding two or more of ``terms``, ranked. ``cut``: the score of the
    last of them when there are ``:limit``, the score every answer must reach. ``single``:
    candidates holding exactly one of ``terms``, limited in the index to the terms whose bound
    reaches the cut (all of them when there is no cut). A row left out scores below ``limit``
    rows of ``multi``, so the best ``:limit`` of both parts are the best of all candidates.
    """
    # tsquery literals spliced as SQL strings: terms are letters and digits only, so doubling
    # the quotes around them is all the escaping they need.
    required = [f"''{t}''" for t, _ in singles]
    others = [f"''{t}''" for t in terms if t not in dict(singles)]
    # Every candidate holds a required term, so one holding two or more terms holds two
    # required ones or any other term. Written that way the index evaluates a short OR instead
    # of every pair of terms (which cost more than the rows it saved).
    pairs = [f"({a} & ({' | '.join(required[i + 1 :])}))" for i, a in enumerate(required[:-1])]
    two = " | ".join(pairs + others)
    bounds = ", ".join(f"('''{t}''', {ub!r}::float8)" for t, ub in singles)
    # The InitPlan builds the single-term part's query from the cut; NULL (no term can reach
    # it) makes the index scan return nothing without reading a posting list.
    allowed = (
        "(SELECT CAST(string_agg(v.q, ' | ') AS tsquery) FROM (VALUES "
        f"{bounds}) v(q, ub), cut WHERE cut.theta IS NULL OR v.ub >= cut.theta)"
    )
    single = f"x.tsv @@ (CAST(:tsq AS tsquery) && !!'{two}'::tsquery) AND x.tsv @@ {allowed}"
    return f"""
            WITH multi AS ({ranked(f"x.tsv @@ (CAST(:tsq AS tsquery) && '{two}'::tsquery)")}
            ), cut AS (
                SELECT CASE WHEN count(*) >= :limit THEN min(score) END AS theta FROM multi
            )
            SELECT id, score FROM multi
            UNION ALL
            SELECT id, score FROM ({ranked(single)}
            ) single
            ORDER BY score DESC, id
            LIMIT :limit"""


def _tsquery(rule: CandidateRule, df: dict[str, int]) -> str:
    """The candidates of ``rule`` as a ``tsquery`` literal (scoring reads every term anyway);
    terms no row holds are left out (an OR group keeps at least one term, so it stays valid)."""

    def held(group: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(t for t in group if df.get(t, 0) > 0) or group[:1]

    required = _lexical.tsquery_literal(held(rule.required))
    groups = [held(group) for group in (rule.also, *rule.each) if group]
    if not groups:
        return required
    return " & ".join(f"({_lexical.tsquery_literal(g)})" for g in (held(rule.required), *groups))


def needs_transaction(limit: int) -> bool:
    """Whether a dense search for ``limit`` hits must raise ``ef_search`` (in a transaction)."""
    return 2 * limit > EF_SEARCH


def dense(
    conn: Any,
    kind: Literal["s", "r"],
    vector: Sequence[float],
    where: Where,
    tracks: Sequence[str] | None,
    limit: int,
    live: Live,
) -> list[Hit] | None:
    """Best-first cosine hits among rows holding a vector of ``live`` (the caller's cached view of
    the live fingerprint); ``None`` when the store's live fingerprint is no longer ``live``.

    One statement (no transaction needed: it reads one snapshot). It checks the cached
    fingerprint itself, so the store reads ``memu_meta`` only when a switch made its cache stale.
    """
    import numpy as np
    import sqlalchemy as sa

    params: dict[str, Any] = {}
    filters = where_sql(where, params, "x") + tracks_sql(tracks, params, "x")  # validates first
    if live.fp_id is None or live.fingerprint is None or limit <= 0:
        return []
    query = np.asarray(vector, dtype=np.float32)
    dim = live.fingerprint.dimension
    if query.ndim != 1 or query.shape[0] != dim:
        from memu_core.errors import FingerprintMismatch

        raise FingerprintMismatch(
            f"the query vector has {query.shape[0] if query.ndim == 1 else query.shape} dimensions but the "
            f"store's vectors come from {live.fingerprint.describe()}; "
            "configure that model or run `memu reindex`"
        )
    table = _TABLES[kind][0]
    params.update(q=query, limit=limit)
    # HNSW returns ef_search candidates before the scope filter runs; the connection's default
    # (EF_SEARCH, with pgvector >= 0.8 an iterative scan) keeps a narrow scope from coming back
    # short. Only a limit past half of it needs a larger pool, set for this query's transaction.
    if needs_transaction(limit):
        conn.execute(sa.text(f"SELECT set_config('hnsw.ef_search', '{min(2 * limit, 1000)}', true)"))
    # The cast and the fp_id literal must match the partial index expression exactly for the
    # planner to use it; both are integers read from our own tables.
    fp = int(live.fp_id)
    distance = f"(x.embedding::vector({int(dim)}) <=> CAST(:q AS vector({int(dim)})))"
    sql = f"""
        SELECT x.id, 1 - {distance} AS score FROM {table} x
        WHERE x.fp_id = {fp}{filters}
          AND (SELECT live_fp_id FROM memu_meta WHERE id = 1) = {fp}
        ORDER BY {distance}
        LIMIT :limit
    """
    if kind == "s":
        sql = _with_pending(distance, fp, filters)
    hits = [Hit(row.id, float(row.score)) for row in conn.execute(sa.text(sql), params)]
    if not hits and read_live(conn).fp_id != fp:
        return None
    return hits


def _with_pending(distance: str, fp: int, filters: str) -> str:
    """The segment search: the HNSW index's best rows and the pending rows' best, merged.

    Pending vectors (ADR 0029) are outside the graph, in a narrow table of their own with the
    scope columns the filters read; they are compared exactly, so a row reads the same whether it is still pending or
    already folded (as far as the graph finds what an exact scan would). Ties break by id, the
    same order either way.
    """
    return f"""
        SELECT u.id, 1 - u.d AS score FROM (
            (SELECT x.id, {distance} AS d FROM memu_segments x
             WHERE x.fp_id = {fp}{filters} ORDER BY {distance} LIMIT :limit)
            UNION ALL
            (SELECT x.id, {distance} AS d FROM memu_pending_vectors x
             WHERE x.fp_id = {fp}{filters} ORDER BY {distance} LIMIT :limit)
        ) u
        WHERE (SELECT live_fp_id FROM memu_meta WHERE id = 1) = {fp}
        ORDER BY u.d, u.id
        LIMIT :limit
    """
