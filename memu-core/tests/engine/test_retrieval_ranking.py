"""Ranking behaviour behind the LoCoMo figures: word forms, line context, headers, fusion weights."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memu_core._engine import engine as engine_mod
from memu_core._engine import rerank
from memu_core._engine import segments as segments_mod
from memu_core._engine.engine import LocalEngine
from memu_core._engine.fusion import fuse
from memu_core._engine.rerank import lift_by_file, phrase_ranking
from memu_core._engine.segments import segment_file
from memu_core._stores.memory import InMemoryStore
from memu_core._stores.sqlite.store import SqliteStore
from memu_core.testing.embedders import HashingEmbedder
from memu_core.text import expand_query, query_phrases, query_terms, word_forms
from memu_core.types import Hit, Scope, Segment


@pytest.mark.parametrize(
    ("word", "forms"),
    [
        ("painting", {"paint", "paints", "painted"}),
        ("hiking", {"hike", "hikes", "hiked"}),
        ("studies", {"study", "studied", "studying"}),
        ("running", {"run", "runs"}),
        ("classes", {"class"}),
    ],
)
def test_word_forms_meet_common_inflections(word: str, forms: set[str]) -> None:
    assert forms <= set(word_forms(word))
    assert word not in word_forms(word)


def test_short_words_and_numbers_are_not_expanded() -> None:
    assert word_forms("go") == []
    assert word_forms("2023") == []
    assert word_forms("v2beta") == []


def test_expand_query_keeps_the_typed_words_first() -> None:
    expanded = query_terms(expand_query("When did Melanie go camping?"))
    assert expanded[:3] == ["melanie", "go", "camping"]
    assert "camping" in expanded and "camped" in expanded
    assert expand_query("go") == "go"


def test_line_context_holds_the_lines_around_it_within_its_section() -> None:
    drafts = segment_file("memory", "notes", "", "# A\nfirst\nsecond\nthird\n# B\nfourth")
    by_text = {d.text: d.context for d in drafts}
    before, after = segments_mod.CONTEXT_BEFORE, segments_mod.CONTEXT_AFTER
    assert ("first" in by_text["second"]) == (before >= 1)
    assert ("third" in by_text["second"]) == (after >= 1)
    # A heading starts a new section: neighbours across it are not context.
    assert "third" not in by_text["fourth"]
    assert "fourth" not in by_text["third"]
    assert by_text["fourth"].startswith("notes B")


def test_fuse_weights_and_k() -> None:
    lexical = [Hit("a", 3.0), Hit("b", 2.0)]
    dense = [Hit("b", 0.9), Hit("a", 0.8)]
    assert [h.id for h in fuse([(lexical, 2.0), (dense, 1.0)])] == ["a", "b"]
    assert [h.id for h in fuse([(lexical, 1.0), (dense, 2.0)])] == ["b", "a"]
    assert fuse([(lexical, 1.0)], k=1)[0].score == pytest.approx(1 / 2)


@pytest.fixture(params=["sqlite", "memory"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LocalEngine]:
    store = SqliteStore.open(str(tmp_path / "s.db")) if request.param == "sqlite" else InMemoryStore.open()
    eng = LocalEngine(store, embedder=HashingEmbedder())
    yield eng
    eng.close()


def test_a_header_ranks_its_file_without_taking_a_segment_slot(engine: LocalEngine) -> None:
    engine.commit_results(
        recall_files=[
            {
                "name": "kubernetes",
                "description": "kubernetes cluster notes",
                "content": "use helm for kubernetes",
            },
            {"name": "other", "description": "misc", "content": "nothing to see"},
        ]
    )
    result = engine.progressive_retrieve("kubernetes", top_k=2, mode="lexical")
    kinds = [s["kind"] for s in result["segments"]]
    assert kinds.count("header") <= (engine_mod.HEADER_SLOTS if engine_mod.HEADER_SLOTS is not None else 2)
    assert result["files"][0]["name"] == "kubernetes"


def test_a_file_found_only_by_its_header_is_still_listed(engine: LocalEngine) -> None:
    engine.commit_results(
        recall_files=[{"name": "zebra", "description": "stripes", "content": "unrelated words"}]
    )
    result = engine.progressive_retrieve("zebra stripes", top_k=3, mode="lexical")
    assert [f["name"] for f in result["files"]] == ["zebra"]


def test_other_word_forms_are_found_lexically(engine: LocalEngine) -> None:
    engine.commit_results(
        recall_files=[{"name": "hobbies", "description": "", "content": "Melanie painted a lake"}]
    )
    result = engine.progressive_retrieve("painting", top_k=3, mode="lexical")
    found = [s["text"] for s in result["segments"]]
    assert ("Melanie painted a lake" in found) == engine_mod.EXPAND_FORMS


def _seg(i: str, file_id: str, ordinal: int, text: str, context: str = "") -> Segment:
    return Segment(
        id=i, file_id=file_id, scope=Scope(), track="memory", kind="line", ordinal=ordinal, text=text, context=context
    )


def test_query_phrases_pair_adjacent_words_only() -> None:
    assert query_phrases("What did Gina say about the Grand Opening?") == ["gina say", "grand opening"]
    assert query_phrases("opening of the studio") == []
    assert query_phrases("deploy") == []


def test_phrase_ranking_puts_adjacent_words_first_and_counts_context_less() -> None:
    segments = {
        "apart": _seg("apart", "f", 1, "the opening was grand"),
        "near": _seg("near", "f", 2, "see you at the grand opening"),
        "ctx": _seg("ctx", "f", 3, "so excited", context="the grand opening is tomorrow"),
    }
    fused = [Hit("apart", 3.0), Hit("ctx", 2.0), Hit("near", 1.0)]
    ranked = phrase_ranking(fused, segments, ["grand opening"])
    assert [h.id for h in ranked] == ["near", "ctx"]
    assert ranked[1].score == pytest.approx(rerank.CONTEXT_PHRASE_CREDIT)
    assert phrase_ranking(fused, segments, []) == []


def test_lift_by_file_favours_the_file_where_most_candidates_matched() -> None:
    segments = {
        "a1": _seg("a1", "a", 1, "x"),
        "a2": _seg("a2", "a", 2, "y"),
        "b1": _seg("b1", "b", 1, "z"),
    }
    fused = [Hit("b1", 0.100), Hit("a1", 0.099), Hit("a2", 0.09), Hit("gone", 0.2)]
    lifted = lift_by_file(fused, segments, 0.5)
    assert [h.id for h in lifted if h.id != "gone"] == ["a1", "b1", "a2"]
    assert next(h for h in lifted if h.id == "gone").score == pytest.approx(0.2)  # unknown: no lift
    assert lift_by_file(fused, segments, 0.0) == sorted(fused, key=lambda h: -h.score)


def test_a_line_holding_the_query_phrase_outranks_one_holding_its_words_apart(
    engine: LocalEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.commit_results(
        recall_files=[
            {"name": "apart", "description": "", "content": "opening was grand"},
            {"name": "phrase", "description": "", "content": "we planned the grand opening of the studio with friends"},
        ]
    )

    def first_line() -> str:
        result = engine.progressive_retrieve("grand opening", top_k=2, mode="lexical")
        return str(next(s["text"] for s in result["segments"] if s["kind"] == "line"))

    assert first_line().startswith("we planned the grand opening")
    monkeypatch.setattr(engine_mod, "PHRASE_WEIGHT", 0.0)
    assert first_line() == "opening was grand"  # BM25 alone prefers the shorter line


@given(
    line=st.text(alphabet=st.sampled_from(list("ab é_-.,AÉ1")), max_size=30),
    first=st.sampled_from(["a", "ab", "e", "1"]),
    second=st.sampled_from(["b", "ab", "e", "a1"]),
)
def test_phrase_match_agrees_with_the_indexed_words(line: str, first: str, second: str) -> None:
    from memu_core._engine.rerank import _Phrase
    from memu_core.text import index_text, normalise

    expected = f" {first} {second} " in f" {index_text(line)} "
    assert _Phrase(f"{first} {second}").found_in(normalise(line)) == expected
