"""Corpus statistics for BM25, kept exact inside each write transaction.

BM25 needs, per kind (segments ``s``, resources ``r``): the row count, the total token count and
each term's document frequency. FTS5 keeps these in its own shadow tables; here they live in
``memu_meta`` and ``memu_terms`` and move with every write, so a search reads three small
numbers per term instead of counting over the corpus. Beside the frequency each term keeps
``tfmax``, the highest weighted frequency any row written has had for it, and ``dlmin``, the
fewest words of any such row (the one only grows, the other only shrinks, so both stay bounds
after deletes): what lexical search uses to leave unread the rows that cannot reach its answer
(ADR 0033).

A write collects its changes in a :class:`Delta` (from the term-frequency maps it already holds:
the rows it writes and the old rows it read) and applies them in two statements at the very end
of its transaction. Every writer touches the same few hot rows there (common terms, the one
``memu_meta`` row), so they are locked last, in one order (terms sorted, then ``memu_meta``): two
writers never deadlock on them and each holds them only from that point to its commit, not for
the whole write (ADR 0028).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["s", "r"]

_NO_ROW = 2**31 - 1
"""``dlmin`` sent for a term no written row holds (``least()`` keeps the stored one)."""

_META = {"s": ("segment_rows", "segment_tokens"), "r": ("resource_rows", "resource_tokens")}


@dataclass
class Delta:
    """Changes to the BM25 statistics and the generation counter, applied by :meth:`flush`."""

    df: Counter[tuple[str, str]] = field(default_factory=Counter)
    rows: Counter[str] = field(default_factory=Counter)
    tokens: Counter[str] = field(default_factory=Counter)
    tfmax: dict[tuple[str, str], float] = field(default_factory=dict)
    dlmin: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, kind: Kind, tf: Mapping[str, float], ntokens: int, sign: int) -> None:
        """Count one row of ``kind`` in (``sign`` 1) or out (``-1``) with its term-frequency map."""
        for term, freq in tf.items():
            self.df[(kind, term)] += sign
            if sign > 0:
                key = (kind, term)
                self.tfmax[key] = max(self.tfmax.get(key, 0.0), float(freq))
                self.dlmin[key] = min(self.dlmin.get(key, ntokens), ntokens)
        self.rows[kind] += sign
        self.tokens[kind] += sign * ntokens

    def flush(self, conn: Any) -> None:
        """Apply the counts and bump the generation (hot rows last, terms in sorted order)."""
        import sqlalchemy as sa

        # A term whose count nets out (a row rewritten) may still have a higher frequency now.
        changed = sorted(key for key in {*self.df, *self.tfmax} if self.df[key] or key in self.tfmax)
        if changed:
            conn.execute(
                sa.text(
                    "INSERT INTO memu_terms (kind, term, df, tfmax, dlmin) "
                    "SELECT k, t, d, m, l FROM unnest(CAST(:kinds AS text[]), CAST(:terms AS text[]), "
                    "CAST(:dfs AS bigint[]), CAST(:tfmax AS float8[]), CAST(:dlmin AS integer[])) AS v(k, t, d, m, l) "
                    'ORDER BY k, t COLLATE "C" '
                    "ON CONFLICT (kind, term) DO UPDATE SET df = memu_terms.df + excluded.df, "
                    "tfmax = greatest(memu_terms.tfmax, excluded.tfmax), "
                    "dlmin = least(memu_terms.dlmin, excluded.dlmin)"
                ),
                {
                    "kinds": [k for k, _ in changed],
                    "terms": [t for _, t in changed],
                    "dfs": [self.df[key] for key in changed],
                    "tfmax": [self.tfmax.get(key, 0.0) for key in changed],
                    # A term only counted out keeps its bound: no row length is smaller than this.
                    "dlmin": [max(self.dlmin.get(key, _NO_ROW), 1) for key in changed],
                },
            )
        sets = ["generation = generation + 1"]
        params: dict[str, int] = {}
        for kind, (rows, tokens) in _META.items():
            if self.rows[kind] or self.tokens[kind]:
                sets.append(f"{rows} = {rows} + :{rows}, {tokens} = {tokens} + :{tokens}")
                params.update({rows: self.rows[kind], tokens: self.tokens[kind]})
        conn.execute(sa.text(f"UPDATE memu_meta SET {', '.join(sets)} WHERE id = 1"), params)
