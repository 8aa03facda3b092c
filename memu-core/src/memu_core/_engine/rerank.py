"""Re-ranking the fused candidates with what the candidates themselves show.

The stores rank words one at a time (BM25) and lines one at a time (cosine). Two signals need
the candidate lines in hand, so the engine adds them after fusion, on the best few dozen fused
candidates (``engine.RERANK_DEPTH``), identically for every store:

- **phrases**: a line that holds the query's words *next to each other* ("grand opening",
  "support group") is likelier the one meant than a line that holds them apart. Lines holding
  query phrases form one more ranking, fused like the others.
- **the file around a line**: a line from a file where many candidates matched is likelier
  relevant than an isolated match in an unrelated file (notes are kept by topic, sessions stay
  on a subject). Files are ranked by the summed score of their candidates, and each line gains a
  reciprocal-rank share of its file's place.

Both were measured on LoCoMo before they were kept (docs/benchmarks.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memu_core._engine.fusion import RRF_K
from memu_core.text import normalise
from memu_core.types import Hit, Segment

PHRASE_WEIGHT = 1.0
"""Fusion weight of the phrase ranking (lexical is 2, dense 1)."""
CONTEXT_PHRASE_CREDIT = 0.4
"""A phrase in a line's context counts this much of one in the line (FTS5's column weights)."""
FILE_PRIOR_WEIGHT = 0.5
"""Weight of a line's file rank, added as ``weight / (RRF_K + file rank)``."""


class _Phrase:
    """One query phrase, matched against a line's normalised text without re-tokenising it."""

    __slots__ = ("first", "pattern", "second")

    def __init__(self, phrase: str) -> None:
        self.first, self.second = phrase.split(" ", 1)
        # The two words as whole tokens, with only separators between them: the same test as
        # " first second " in index_text(line), at a fraction of the cost.
        self.pattern = re.compile(rf"(?<![^\W_]){re.escape(self.first)}[\W_]+{re.escape(self.second)}(?![^\W_])")

    def found_in(self, normalised: str) -> bool:
        # Two substring tests first: most candidates lack one of the words.
        return self.first in normalised and self.second in normalised and bool(self.pattern.search(normalised))


def phrase_ranking(hits: Sequence[Hit], segments: Mapping[str, Segment], phrases: Sequence[str]) -> list[Hit]:
    """The ``hits`` that hold at least one of ``phrases``, most phrases first.

    ``phrases`` come from :func:`memu_core.text.query_phrases`: two normalised words
    joined by one space. A line holds a phrase when the two words are adjacent tokens of the
    line as the stores index it (:func:`memu_core.text.index_text`). Ties keep the
    fused order.
    """
    if not phrases:
        return []
    wanted = [_Phrase(p) for p in phrases]
    scored: list[tuple[float, int, Hit]] = []
    for place, hit in enumerate(hits):
        seg = segments.get(hit.id)
        if seg is None:
            continue
        text, context = normalise(seg.text), normalise(seg.context)
        score = sum(
            (1.0 if p.found_in(text) else 0.0) + (CONTEXT_PHRASE_CREDIT if p.found_in(context) else 0.0)
            for p in wanted
        )
        if score > 0:
            scored.append((-score, place, hit))
    scored.sort(key=lambda item: item[:2])
    return [Hit(hit.id, -neg) for neg, _, hit in scored]


def lift_by_file(hits: Sequence[Hit], segments: Mapping[str, Segment], weight: float) -> list[Hit]:
    """``hits`` re-sorted after each gains ``weight / (RRF_K + its file's rank)``.

    Files rank by the summed fused score of their candidates. A hit whose segment is unknown
    (deleted meanwhile) keeps its score.
    """
    totals: dict[str, float] = {}
    for hit in hits:
        seg = segments.get(hit.id)
        if seg is not None:
            totals[seg.file_id] = totals.get(seg.file_id, 0.0) + hit.score
    rank = {file_id: place for place, file_id in enumerate(sorted(totals, key=lambda f: -totals[f]), start=1)}
    lifted = []
    for hit in hits:
        seg = segments.get(hit.id)
        bonus = weight / (RRF_K + rank[seg.file_id]) if seg is not None else 0.0
        lifted.append(Hit(hit.id, hit.score + bonus))
    return sorted(lifted, key=lambda h: -h.score)
