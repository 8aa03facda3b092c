"""Query handling and segmentation: the pure functions under every store's search."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memu_core._engine.cursor import decode_cursor, encode_cursor
from memu_core._engine.fusion import fuse
from memu_core._engine.segments import MAX_SEGMENT_CHARS, segment_file, split_long
from memu_core.text import normalise, query_terms
from memu_core.types import Hit


@given(st.text())
def test_normalise_is_idempotent(text: str) -> None:
    assert normalise(normalise(text)) == normalise(text)


def test_normalise_folds_case_and_accents() -> None:
    assert normalise("Café ÉTÉ") == "cafe ete"


def test_query_terms_drop_stopwords_but_never_empty() -> None:
    assert query_terms("How do we run the Database migrations?") == ["run", "database", "migrations"]
    assert query_terms("what did we do") == ["what", "did", "we", "do"]
    assert query_terms("  ") == []


def test_memU_cursor_format_round_trips() -> None:
    key = ("memory", "Profile", "6f1c2c9e-6a4e-4c57-9a55-2b8d0b1f3a10")
    cursor = encode_cursor(key)
    assert cursor == "WyJtZW1vcnkiLCAiUHJvZmlsZSIsICI2ZjFjMmM5ZS02YTRlLTRjNTctOWE1NS0yYjhkMGIxZjNhMTAiXQ=="
    assert decode_cursor(cursor) == key


@given(st.tuples(st.text(), st.text(), st.text()))
def test_any_key_round_trips_through_a_cursor(key: tuple[str, str, str]) -> None:
    assert decode_cursor(encode_cursor(key)) == key


def test_segments_header_lines_and_context() -> None:
    drafts = segment_file("memory", "billing", "facts", "# Gotchas\n- use cents\n\n- never floats\n---\n## Deep\n- x")
    assert [(d.kind, d.text) for d in drafts] == [
        ("header", "billing: facts"),
        ("line", "- use cents"),
        ("line", "- never floats"),
        ("line", "- x"),
    ]
    assert "Gotchas" in drafts[2].context and "- use cents" in drafts[2].context
    assert "Gotchas / Deep" in drafts[3].context


def test_skill_bodies_are_segmented() -> None:
    drafts = segment_file("skill", "deploy", "", "1. test\n2. tag")
    assert [(d.kind, d.text) for d in drafts] == [("header", "deploy"), ("body", "1. test"), ("body", "2. tag")]


@given(st.text(max_size=3000))
def test_segments_are_bounded_unique_and_non_empty(content: str) -> None:
    drafts = segment_file("memory", "n", "d", content)
    texts = [d.text for d in drafts]
    assert len(texts) == len(set(texts))
    assert all(t.strip() and len(t) <= MAX_SEGMENT_CHARS for t in texts[1:])
    assert [d.ordinal for d in drafts] == list(range(len(drafts)))


@given(st.text(max_size=2000))
def test_split_long_keeps_every_word(line: str) -> None:
    pieces = split_long(line.strip(), 50)
    assert all(len(p) <= 50 for p in pieces)
    assert "".join("".join(pieces).split()) == "".join(line.split())


def test_fusion_rewards_agreement_and_ignores_zero_weight() -> None:
    lexical = [Hit("a", 9.0), Hit("b", 5.0)]
    dense = [Hit("b", 0.9), Hit("c", 0.8)]
    assert [h.id for h in fuse([(lexical, 1.0), (dense, 1.0)])] == ["b", "a", "c"]
    assert [h.id for h in fuse([(lexical, 1.0), (dense, 0.0)])] == ["a", "b"]
