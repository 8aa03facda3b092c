"""Ranking behaviour behind the LoCoMo figures: word forms, line context, headers, fusion weights."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._engine import engine as engine_mod
from memu_core._engine import segments as segments_mod
from memu_core._engine.engine import LocalEngine
from memu_core._engine.fusion import fuse
from memu_core._engine.segments import segment_file
from memu_core._engine.text import expand_query, query_terms, word_forms
from memu_core._stores.memory import InMemoryStore
from memu_core._stores.sqlite.store import SqliteStore
from memu_core.testing.embedders import HashingEmbedder
from memu_core.types import Hit


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


def test_smoothing_lifts_the_line_next_to_a_strong_match() -> None:
    from memu_core._engine.engine import _smooth
    from memu_core.types import Scope, Segment

    def seg(i: str, ordinal: int, kind: str = "line") -> Segment:
        return Segment(id=i, file_id="f", scope=Scope(), track="memory", kind=kind, ordinal=ordinal, text=i)  # type: ignore[arg-type]

    segments = {"q": seg("q", 1), "a": seg("a", 2), "x": seg("x", 7), "h": seg("h", 0, "header")}
    fused = [Hit("q", 1.0), Hit("x", 0.5), Hit("a", 0.45), Hit("h", 0.4)]
    assert [h.id for h in _smooth(fused, segments, 0.0)] == ["q", "x", "a", "h"]
    lifted = _smooth(fused, segments, 0.3)
    assert [h.id for h in lifted][:2] == ["q", "a"]
    assert next(h for h in lifted if h.id == "h").score == pytest.approx(0.4)


def test_retrieval_with_smoothing_still_returns_top_k_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_mod, "NEIGHBOUR_WEIGHT", 0.3)
    eng = LocalEngine(SqliteStore.open(str(tmp_path / "s.db")), embedder=HashingEmbedder())
    lines = "\n".join(f"line {i} about topic{i % 3}" for i in range(12))
    eng.commit_results(recall_files=[{"name": "f", "description": "d", "content": lines}])
    result = eng.progressive_retrieve("topic1 line", top_k=4)
    assert len(result["segments"]) == 4
    assert len({s["id"] for s in result["segments"]}) == 4
    eng.close()
