"""Why a line ranked where it did: the parts of its fused score, for people (``memu ui``).

The engine fuses ranked lists by reciprocal rank (:mod:`memu_core._engine.fusion`) and then
re-ranks by phrases and by the file around each line (:mod:`memu_core._engine.rerank`). A
line's score is therefore a sum of ``weight / (RRF_K + rank)`` shares plus a file lift; this
module takes the rankings the engine already computed and splits the score back into those
shares, and names the query words the line holds. Nothing is searched again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memu_core._engine.fusion import RRF_K
from memu_core.text import index_text, query_terms, word_forms
from memu_core.types import Hit


class Explainer:
    """The rankings of one retrieve, indexed by segment id, ready to explain any of its hits."""

    def __init__(self, query: str, rankings: Sequence[tuple[str, Sequence[Hit], float]]) -> None:
        self._ranks: list[tuple[str, float, dict[str, int]]] = [
            (label, weight, {hit.id: rank for rank, hit in enumerate(hits, start=1)})
            for label, hits, weight in rankings
            if weight > 0
        ]
        self._terms = [(term, {term, *word_forms(term)}) for term in query_terms(query)]

    def why(self, segment_id: str, text: str, score: float) -> dict[str, Any]:
        """``{"parts": [{"source", "rank", "share"}...], "rest", "terms"}`` for one hit.

        ``parts`` lists each ranking the line appeared in (``lexical``, ``dense``, ``phrase``)
        with its rank there and the share it added; ``rest`` is what the file-level lift added
        on top; ``terms`` are the query words (or one of their forms) found in the line.
        """
        parts: list[dict[str, Any]] = []
        for label, weight, ranks in self._ranks:
            rank = ranks.get(segment_id)
            if rank is not None:
                parts.append({"source": label, "rank": rank, "share": round(weight / (RRF_K + rank), 6)})
        rest = round(score - sum(p["share"] for p in parts), 6)
        words = set(index_text(text).split())
        terms = [term for term, forms in self._terms if forms & words]
        return {"parts": parts, "rest": rest if rest > 1e-6 else 0.0, "terms": terms}
