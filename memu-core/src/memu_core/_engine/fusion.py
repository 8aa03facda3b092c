"""Reciprocal-rank fusion of ranked lists (lexical, dense) into one ranking.

RRF needs no score calibration between BM25 and cosine, which is why it is the fusion here: a
hit's fused score is the sum over lists of ``weight / (k + rank)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from memu_core.types import Hit

RRF_K = 10
"""Damps the difference between rank 1 and rank 2 without erasing it. Smaller than the classic
60: with a few dozen candidates per list, 60 makes rank 1 and rank 30 nearly equal, and the top
of each list is where the answer is (LoCoMo hybrid recall@10: 60 → 20 → 10 each lifted it)."""


def fuse(rankings: Sequence[tuple[Sequence[Hit], float]], *, k: int | None = None) -> list[Hit]:
    """Fuse ``(hits, weight)`` rankings, best first. Ties keep first-seen order (stable).

    ``k`` defaults to :data:`RRF_K`.
    """
    k = RRF_K if k is None else k
    scores: dict[str, float] = {}
    for hits, weight in rankings:
        if weight <= 0:
            continue
        for rank, hit in enumerate(hits, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + weight / (k + rank)
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    return [Hit(id=hit_id, score=score) for hit_id, score in ordered]
