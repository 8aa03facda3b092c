"""The contract every :class:`~memu_core.interfaces.MemoryStore` passes.

Subclass :class:`StoreContract` in a test module and define ``make_store``::

    class TestMyStore(StoreContract):
        def make_store(self, tmp_path):
            return MyStore.open(str(tmp_path / "db"))

The suite only uses the public interface, so the memory, sqlite and postgres stores (and any
third-party store) run exactly the same checks.
"""

from __future__ import annotations

import hashlib
import itertools
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memu_core.errors import FingerprintMismatch, UsageError, WriteConflict
from memu_core.interfaces import MemoryStore
from memu_core.testing import strategies as mst
from memu_core.text import query_terms
from memu_core.types import (
    ChangeSet,
    FileWrite,
    Fingerprint,
    Hit,
    ResourceWrite,
    Scope,
    SegmentDraft,
    Where,
)

__all__ = ["FP", "FP_OTHER", "StoreContract", "file_write", "unit"]

DIM = 4
FP = Fingerprint("contract", "unit-vectors", DIM)
"""The fingerprint the suite writes vectors under."""
FP_OTHER = Fingerprint("contract", "other-model", 3)
"""A second embedding space (another dimension too) for mismatch and re-index checks."""


def unit(i: int, dim: int = DIM, tilt: float = 0.0) -> list[float]:
    """A unit vector along axis ``i``, optionally tilted towards the next axis."""
    vec = [0.0] * dim
    vec[i % dim] = 1.0
    vec[(i + 1) % dim] += tilt
    norm = sum(v * v for v in vec) ** 0.5
    return [v / norm for v in vec]


def file_write(
    name: str,
    lines: Sequence[str],
    *,
    track: str = "memory",
    scope: Scope | None = None,
    revision: int | None = None,
    vectors: Sequence[list[float] | None] | None = None,
    description: str = "",
    contexts: Sequence[str] | None = None,
) -> FileWrite:
    """A :class:`FileWrite` whose content is ``lines`` and whose segments are one per line."""
    content = "\n".join(lines)
    return FileWrite(
        scope=scope or Scope(),
        track=track,
        name=name,
        description=description,
        content=content,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
        expected_revision=revision,
        segments=[
            SegmentDraft(
                "line",
                i,
                line,
                context=contexts[i] if contexts else "",
                vector=vectors[i] if vectors else None,
            )
            for i, line in enumerate(lines)
        ],
    )


def _seg_id(store: MemoryStore, text: str, where: Where | None = None) -> str:
    """The id of the one segment whose text is ``text`` (found through lexical search)."""
    hits = store.search_segments_lexical(text, where or {}, None, 50)
    found = [s for s in store.fetch_segments([h.id for h in hits]).values() if s.text == text]
    assert len(found) == 1, f"expected one segment with text {text!r}, found {len(found)}"
    return found[0].id


class StoreContract:
    """pytest base class: every test takes the ``store`` fixture built by :meth:`make_store`."""

    def make_store(self, tmp_path: Path) -> MemoryStore:
        """Return a new, empty store rooted under ``tmp_path``."""
        raise NotImplementedError

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[MemoryStore]:
        """A fresh store, closed after the test."""
        made = self.make_store(tmp_path)
        try:
            yield made
        finally:
            made.close()

    # -- apply: create and update ----------------------------------------------------------
    def test_apply_creates_file_at_revision_1(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("prefs", ["uses tabs"], description="style")]))
        got = store.get_files(Scope(), [("memory", "prefs"), ("memory", "absent")])
        assert set(got) == {("memory", "prefs")}
        f = got[("memory", "prefs")].file
        assert (f.name, f.track, f.description, f.content, f.revision) == (
            "prefs",
            "memory",
            "style",
            "uses tabs",
            1,
        )
        assert f.scope == Scope()
        assert f.created_at == f.updated_at
        assert f.created_at.tzinfo is not None
        assert store.fetch_files([f.id]) == {f.id: f}

    def test_update_bumps_revision_keeps_id_and_created_at(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("prefs", ["one"])]))
        first = store.get_files(Scope(), [("memory", "prefs")])[("memory", "prefs")].file
        store.apply(ChangeSet(files=[file_write("prefs", ["one", "two"], revision=1)]))
        second = store.get_files(Scope(), [("memory", "prefs")])[("memory", "prefs")].file
        assert (second.id, second.created_at, second.revision) == (first.id, first.created_at, 2)
        assert second.content == "one\ntwo"
        assert second.updated_at >= first.updated_at

    def test_updated_at_kept_when_nothing_changed(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("prefs", ["one"], description="d")]))
        first = store.get_files(Scope(), [("memory", "prefs")])[("memory", "prefs")].file
        store.apply(ChangeSet(files=[file_write("prefs", ["one"], description="d", revision=1)]))
        second = store.get_files(Scope(), [("memory", "prefs")])[("memory", "prefs")].file
        assert second.revision == 2
        assert second.updated_at == first.updated_at

    def test_same_file_twice_in_one_change_set(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["a"]), file_write("f", ["b"], revision=1)]))
        f = store.get_files(Scope(), [("memory", "f")])[("memory", "f")].file
        assert (f.revision, f.content) == (2, "b")

    def test_unchanged_text_keeps_segment_and_vector(self, store: MemoryStore) -> None:
        store.apply(
            ChangeSet(
                files=[file_write("f", ["alpha line", "beta line"], vectors=[unit(0), unit(1)])],
                fingerprint=FP,
            )
        )
        alpha = _seg_id(store, "alpha line")
        store.apply(
            ChangeSet(
                files=[
                    file_write(
                        "f",
                        ["gamma line", "alpha line"],
                        revision=1,
                        vectors=[unit(2), None],
                        contexts=["## Heading", "## Heading"],
                    )
                ],
                fingerprint=FP,
            )
        )
        assert _seg_id(store, "alpha line") == alpha
        seg = store.fetch_segments([alpha])[alpha]
        assert (seg.ordinal, seg.context) == (1, "## Heading")
        assert store.search_segments_dense(unit(0), {}, None, 1)[0].id == alpha
        assert store.search_segments_lexical("beta", {}, None, 10) == []
        stored = store.get_files(Scope(), [("memory", "f")])[("memory", "f")]
        assert stored.segment_texts == frozenset({"alpha line", "gamma line"})

    def test_removed_lines_lose_their_segments(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["keep me", "drop me"])]))
        dropped = _seg_id(store, "drop me")
        store.apply(ChangeSet(files=[file_write("f", ["keep me"], revision=1)]))
        assert store.fetch_segments([dropped]) == {}
        assert store.search_segments_lexical("drop", {}, None, 10) == []

    def test_segment_texts_without_live_fingerprint_are_all_texts(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["one", "two"])]))
        assert store.fingerprint() is None
        got = store.get_files(Scope(), [("memory", "f")])[("memory", "f")]
        assert got.segment_texts == frozenset({"one", "two"})

    def test_segment_texts_with_live_fingerprint_are_embedded_texts(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["one", "two"], vectors=[unit(0), None])], fingerprint=FP))
        got = store.get_files(Scope(), [("memory", "f")])[("memory", "f")]
        assert got.segment_texts == frozenset({"one"})

    def test_get_files_is_exact_scope(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["x"], scope=Scope("u1", "a1"))]))
        assert store.get_files(Scope("u1", "a2"), [("memory", "f")]) == {}
        assert store.get_files(Scope(), [("memory", "f")]) == {}
        assert set(store.get_files(Scope("u1", "a1"), [("memory", "f")])) == {("memory", "f")}

    # -- conflicts and atomicity -----------------------------------------------------------
    @pytest.mark.parametrize("planned", [None, 2, 5])
    def test_revision_conflict_leaves_store_unchanged(self, store: MemoryStore, planned: int | None) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["one"])]))
        store.apply(ChangeSet(files=[file_write("f", ["two"], revision=1)]))  # now at revision 2
        if planned == 2:
            planned = 1  # stale: someone else wrote revision 2
        before = store.generation()
        with pytest.raises(WriteConflict, match="f"):
            store.apply(ChangeSet(files=[file_write("f", ["three"], revision=planned)]))
        f = store.get_files(Scope(), [("memory", "f")])[("memory", "f")].file
        assert (f.revision, f.content) == (2, "two")
        assert store.generation() == before
        assert store.search_segments_lexical("three", {}, None, 5) == []

    def test_create_with_a_revision_conflicts(self, store: MemoryStore) -> None:
        with pytest.raises(WriteConflict):
            store.apply(ChangeSet(files=[file_write("new", ["x"], revision=1)]))
        assert store.get_files(Scope(), [("memory", "new")]) == {}

    def test_conflict_on_second_file_rolls_back_the_first(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("b", ["bee"])]))
        before = store.generation()
        with pytest.raises(WriteConflict):
            store.apply(
                ChangeSet(
                    files=[file_write("a", ["ant"], vectors=[unit(0)]), file_write("b", ["wasp"])],
                    resources=[ResourceWrite(Scope(), "src/a.py", "ant farm")],
                    fingerprint=FP,
                )
            )
        assert store.get_files(Scope(), [("memory", "a")]) == {}
        assert store.get_resources(Scope(), ["src/a.py"]) == {}
        assert store.search_segments_lexical("ant wasp", {}, None, 5) == []
        assert store.fingerprint() is None
        assert store.generation() == before

    def test_unique_key_per_scope(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["x"])]))
        with pytest.raises(WriteConflict):
            store.apply(ChangeSet(files=[file_write("f", ["y"])]))
        store.apply(ChangeSet(files=[file_write("f", ["y"], scope=Scope("u2"))]))
        store.apply(ChangeSet(files=[file_write("f", ["z"], track="skill")]))
        page, _ = store.list_files({}, None, 10)
        assert sorted((f.scope.user_id, f.track) for f in page) == [
            ("default", "memory"),
            ("default", "skill"),
            ("u2", "memory"),
        ]

    def test_vectors_without_fingerprint_are_refused(self, store: MemoryStore) -> None:
        with pytest.raises(UsageError, match="fingerprint"):
            store.apply(ChangeSet(files=[file_write("f", ["x"], vectors=[unit(0)])]))
        with pytest.raises(UsageError, match="dimensions"):
            store.apply(ChangeSet(files=[file_write("f", ["x"], vectors=[[1.0, 0.0]])], fingerprint=FP))
        assert store.get_files(Scope(), [("memory", "f")]) == {}

    # -- resources ---------------------------------------------------------------------------
    def test_resources_create_keep_and_clear_vector(self, store: MemoryStore) -> None:
        res = ResourceWrite(Scope(), "src/parser.py", "the config parser", unit(0))
        store.apply(ChangeSet(resources=[res], fingerprint=FP))
        got = store.get_resources(Scope(), ["src/parser.py", "missing"])
        assert set(got) == {"src/parser.py"}
        rid = got["src/parser.py"].id
        assert got["src/parser.py"].description == "the config parser"
        # Same description, no vector: the stored vector stays.
        store.apply(ChangeSet(resources=[ResourceWrite(Scope(), "src/parser.py", "the config parser")]))
        assert [h.id for h in store.search_resources_dense(unit(0), {}, 5)] == [rid]
        first = store.get_resources(Scope(), ["src/parser.py"])["src/parser.py"]
        # New description, no vector: the stale vector is dropped.
        store.apply(ChangeSet(resources=[ResourceWrite(Scope(), "src/parser.py", "yaml loader")]))
        assert store.search_resources_dense(unit(0), {}, 5) == []
        now = store.get_resources(Scope(), ["src/parser.py"])["src/parser.py"]
        assert (now.id, now.created_at, now.description) == (rid, first.created_at, "yaml loader")
        assert store.fetch_resources([rid, "nope"]) == {rid: now}

    def test_resources_lexical_over_path_and_description(self, store: MemoryStore) -> None:
        store.apply(
            ChangeSet(
                resources=[
                    ResourceWrite(Scope(), "src/parser.py", "reads TOML settings"),
                    ResourceWrite(Scope(), "docs/guide.md", None),
                    ResourceWrite(Scope("u2"), "src/other.py", "toml writer"),
                ]
            )
        )
        ids = store.get_resources(Scope(), ["src/parser.py", "docs/guide.md"])
        assert [h.id for h in store.search_resources_lexical("toml", {"user_id": "default"}, 5)] == [
            ids["src/parser.py"].id
        ]
        assert [h.id for h in store.search_resources_lexical("guide", {}, 5)] == [ids["docs/guide.md"].id]
        assert len(store.search_resources_lexical("toml", {}, 5)) == 2

    def test_resource_unique_per_scope(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(resources=[ResourceWrite(Scope(), "a.py", "x")]))
        store.apply(ChangeSet(resources=[ResourceWrite(Scope(), "a.py", "y")]))
        store.apply(ChangeSet(resources=[ResourceWrite(Scope("u9"), "a.py", "z")]))
        assert len(store.search_resources_lexical("a py", {}, 10)) == 2
        assert store.get_resources(Scope(), ["a.py"])["a.py"].description == "y"

    # -- fingerprints ------------------------------------------------------------------------
    def test_fingerprint_recorded_then_mismatch_refused(self, store: MemoryStore) -> None:
        assert store.fingerprint() is None
        store.apply(ChangeSet(files=[file_write("f", ["x"], vectors=[unit(0)])], fingerprint=FP))
        assert store.fingerprint() == FP
        before = store.generation()
        with pytest.raises(FingerprintMismatch) as info:
            store.apply(ChangeSet(files=[file_write("g", ["y"], vectors=[[1.0, 0.0, 0.0]])], fingerprint=FP_OTHER))
        message = str(info.value)
        assert FP.describe() in message and FP_OTHER.describe() in message and "memu reindex" in message
        assert store.get_files(Scope(), [("memory", "g")]) == {}
        assert store.generation() == before
        assert store.fingerprint() == FP

    def test_dense_query_of_wrong_dimension_is_refused(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["x"], vectors=[unit(0)])], fingerprint=FP))
        with pytest.raises(FingerprintMismatch):
            store.search_segments_dense([1.0, 0.0], {}, None, 5)

    # -- listing -----------------------------------------------------------------------------
    def test_list_files_pages_3_3_2(self, store: MemoryStore) -> None:
        writes = [file_write(f"f{i}", [f"line {i}"], track=("memory", "skill")[i % 2]) for i in range(8)]
        store.apply(ChangeSet(files=writes))
        sizes: list[int] = []
        seen: list[tuple[str, str, str]] = []
        after = None
        while True:
            page, after = store.list_files({}, after, 3)
            sizes.append(len(page))
            seen.extend((f.track, f.name, f.id) for f in page)
            if after is None:
                break
        assert sizes == [3, 3, 2]
        assert seen == sorted(seen) and len(set(seen)) == 8
        assert [k[0] for k in seen] == ["memory"] * 4 + ["skill"] * 4

    @pytest.mark.parametrize("limit", [0, -1])
    def test_list_files_refuses_non_positive_limit(self, store: MemoryStore, limit: int) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["x"])]))
        with pytest.raises(UsageError, match="limit"):
            store.list_files({}, None, limit)

    def test_list_files_where_filters(self, store: MemoryStore) -> None:
        store.apply(
            ChangeSet(
                files=[
                    file_write("a", ["x"], scope=Scope("u1", "a1")),
                    file_write("b", ["x"], scope=Scope("u1", "a2")),
                    file_write("c", ["x"], scope=Scope("u2", "a1")),
                ]
            )
        )

        def names(where: dict[str, str | list[str]]) -> list[str]:
            return [f.name for f in store.list_files(where, None, 10)[0]]

        assert names({"user_id": "u1"}) == ["a", "b"]
        assert names({"agent_id": ["a1", "a9"]}) == ["a", "c"]
        assert names({"user_id": "u1", "agent_id": "a2"}) == ["b"]
        assert names({}) == ["a", "b", "c"]
        with pytest.raises(UsageError, match="track"):
            store.list_files({"track": "memory"}, None, 10)

    @settings(
        max_examples=30,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
    )
    @given(keys=mst.file_keys, limit=st.integers(1, 7))
    def test_paging_returns_each_file_once_in_order(
        self, store: MemoryStore, keys: set[tuple[str, str]], limit: int
    ) -> None:
        # One store for every example: each example writes into its own fresh scope.
        scope = Scope(user_id=uuid.uuid4().hex)
        if keys:
            store.apply(ChangeSet(files=[file_write(n, [n], track=t, scope=scope) for t, n in keys]))
        seen: list[tuple[str, str, str]] = []
        after = None
        for _ in range(len(keys) + 2):
            page, after = store.list_files({"user_id": scope.user_id}, after, limit)
            assert len(page) <= limit
            seen.extend((f.track, f.name, f.id) for f in page)
            if after is None:
                break
        assert after is None
        assert [(t, n) for t, n, _ in seen] == sorted(keys)

    # -- lexical search ----------------------------------------------------------------------
    @settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
    )
    @given(lines=st.lists(mst.segment_texts, min_size=1, max_size=6, unique=True))
    def test_every_line_is_found_by_its_own_words(self, store: MemoryStore, lines: list[str]) -> None:
        # Any script, accents, digits and punctuation: the store's tokenizer must meet query_terms.
        scope = Scope(user_id=uuid.uuid4().hex)
        store.apply(ChangeSet(files=[file_write("f", lines, scope=scope)]))
        for line in lines:
            if not query_terms(line):
                continue  # punctuation only: nothing to search for
            hits = store.search_segments_lexical(line, {"user_id": scope.user_id}, None, 50)
            found = {s.text for s in store.fetch_segments([h.id for h in hits]).values()}
            assert line in found

    def test_lexical_ranks_matching_line_first(self, store: MemoryStore) -> None:
        store.apply(
            ChangeSet(
                files=[
                    file_write(
                        "notes",
                        [
                            "the deploy script lives in ops/deploy.sh",
                            "prefer pytest fixtures over setup methods",
                            "database migrations run with alembic",
                        ],
                    )
                ]
            )
        )
        hits = store.search_segments_lexical("how do we run the alembic migrations?", {}, None, 10)
        assert hits
        assert store.fetch_segments([hits[0].id])[hits[0].id].text == "database migrations run with alembic"
        assert all(a.score >= b.score for a, b in itertools.pairwise(hits))

    def test_lexical_text_weighs_more_than_context(self, store: MemoryStore) -> None:
        store.apply(
            ChangeSet(
                files=[file_write("f", ["release checklist item", "bump the version"], contexts=["", "## release"])]
            )
        )
        hits = store.search_segments_lexical("release", {}, None, 10)
        texts = [store.fetch_segments([h.id])[h.id].text for h in hits]
        assert texts == ["release checklist item", "bump the version"]

    def test_lexical_ignores_accents_and_case(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["Meeting at the Café Zürich", "unrelated"])]))
        for query in ("cafe zurich", "CAFÉ", "ZÜRICH"):
            hits = store.search_segments_lexical(query, {}, None, 10)
            assert [store.fetch_segments([h.id])[h.id].text for h in hits] == ["Meeting at the Café Zürich"]

    def test_lexical_scope_and_track_filters(self, store: MemoryStore) -> None:
        store.apply(
            ChangeSet(
                files=[
                    file_write("m", ["kafka consumer lag"], scope=Scope("u1")),
                    file_write("s", ["kafka consumer lag"], scope=Scope("u1"), track="skill"),
                    file_write("o", ["kafka consumer lag"], scope=Scope("u2")),
                ]
            )
        )

        def files_of(hits: list[Hit]) -> list[str]:
            segs = store.fetch_segments([h.id for h in hits]).values()
            files = store.fetch_files([s.file_id for s in segs])
            return sorted(files[s.file_id].name for s in segs)

        assert files_of(store.search_segments_lexical("kafka", {}, None, 10)) == ["m", "o", "s"]
        assert files_of(store.search_segments_lexical("kafka", {"user_id": "u1"}, None, 10)) == ["m", "s"]
        assert files_of(store.search_segments_lexical("kafka", {"user_id": "u1"}, ["skill"], 10)) == ["s"]
        assert files_of(store.search_segments_lexical("kafka", {}, ["memory"], 10)) == ["m", "o"]
        assert store.search_segments_lexical("kafka", {"user_id": "nobody"}, None, 10) == []
        assert store.search_segments_lexical("kafka", {}, [], 10) == []

    def test_lexical_stopword_only_and_empty_queries(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["what we did on friday", "other line"])]))
        hits = store.search_segments_lexical("what did we do", {}, None, 10)
        assert [store.fetch_segments([h.id])[h.id].text for h in hits] == ["what we did on friday"]
        assert store.search_segments_lexical("", {}, None, 10) == []
        assert store.search_segments_lexical("?! ...", {}, None, 10) == []
        assert store.search_segments_lexical("friday", {}, None, 0) == []

    def test_lexical_respects_limit(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", [f"shared word {i}" for i in range(12)])]))
        assert len(store.search_segments_lexical("shared", {}, None, 5)) == 5

    def test_unknown_where_key_is_refused(self, store: MemoryStore) -> None:
        with pytest.raises(UsageError, match="session"):
            store.search_segments_lexical("x", {"session": "s"}, None, 5)

    # -- dense search ------------------------------------------------------------------------
    def test_dense_nearest_first_and_unembedded_absent(self, store: MemoryStore) -> None:
        store.apply(
            ChangeSet(
                files=[
                    file_write(
                        "f",
                        ["north", "north-east", "east", "no vector"],
                        vectors=[unit(0), unit(0, tilt=0.8), unit(1), None],
                    )
                ],
                fingerprint=FP,
            )
        )
        hits = store.search_segments_dense(unit(0), {}, None, 10)
        texts = [store.fetch_segments([h.id])[h.id].text for h in hits]
        assert texts == ["north", "north-east", "east"]
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)
        assert [store.fetch_segments([h.id])[h.id].text for h in store.search_segments_dense(unit(0), {}, None, 1)] == [
            "north"
        ]

    def test_dense_without_vectors_is_empty(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["x"])]))
        assert store.search_segments_dense(unit(0), {}, None, 5) == []
        assert store.search_resources_dense(unit(0), {}, 5) == []

    def test_dense_scope_and_track_filters(self, store: MemoryStore) -> None:
        store.apply(
            ChangeSet(
                files=[
                    file_write("m", ["mine"], scope=Scope("u1"), vectors=[unit(0)]),
                    file_write("s", ["skill"], scope=Scope("u1"), track="skill", vectors=[unit(0, tilt=0.1)]),
                    file_write("o", ["theirs"], scope=Scope("u2"), vectors=[unit(0)]),
                ],
                fingerprint=FP,
            )
        )

        def texts(where: dict[str, str | list[str]], tracks: list[str] | None) -> list[str]:
            hits = store.search_segments_dense(unit(0), where, tracks, 10)
            return sorted(store.fetch_segments([h.id])[h.id].text for h in hits)

        assert texts({}, None) == ["mine", "skill", "theirs"]
        assert texts({"user_id": "u1"}, None) == ["mine", "skill"]
        assert texts({"user_id": "u1"}, ["memory"]) == ["mine"]
        assert texts({"user_id": ["u2"]}, ["memory", "skill"]) == ["theirs"]

    def test_dense_sees_new_writes(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("a", ["first"], vectors=[unit(1)])], fingerprint=FP))
        assert len(store.search_segments_dense(unit(0), {}, None, 5)) == 1
        store.apply(ChangeSet(files=[file_write("b", ["second"], vectors=[unit(0)])], fingerprint=FP))
        hits = store.search_segments_dense(unit(0), {}, None, 5)
        assert store.fetch_segments([hits[0].id])[hits[0].id].text == "second"

    # -- delete ------------------------------------------------------------------------------
    def test_delete_file_cascades(self, store: MemoryStore) -> None:
        store.apply(
            ChangeSet(
                files=[
                    file_write("gone", ["doomed line"], vectors=[unit(0)]),
                    file_write("kept", ["surviving line"], vectors=[unit(1)]),
                ],
                fingerprint=FP,
            )
        )
        doomed = _seg_id(store, "doomed line")
        before = store.generation()
        deleted = store.delete_file(Scope(), "memory", "gone")
        assert deleted is not None and deleted.name == "gone"
        assert store.generation() > before
        assert store.fetch_segments([doomed]) == {}
        assert store.fetch_files([deleted.id]) == {}
        assert store.search_segments_lexical("doomed", {}, None, 5) == []
        dense = store.search_segments_dense(unit(0), {}, None, 5)
        assert doomed not in [h.id for h in dense] and len(dense) == 1
        assert store.get_files(Scope(), [("memory", "gone")]) == {}
        assert all(kind != "segment" or i != doomed for kind, i, _ in store.texts_to_embed(FP_OTHER, 10))
        assert store.delete_file(Scope(), "memory", "gone") is None
        assert store.delete_file(Scope("u1"), "memory", "kept") is None

    def test_deleted_name_can_be_created_again(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["x"])]))
        store.delete_file(Scope(), "memory", "f")
        store.apply(ChangeSet(files=[file_write("f", ["y"])]))
        assert store.get_files(Scope(), [("memory", "f")])[("memory", "f")].file.revision == 1

    # -- generation --------------------------------------------------------------------------
    def test_generation_grows_with_every_write(self, store: MemoryStore) -> None:
        seen = [store.generation()]
        store.apply(ChangeSet(files=[file_write("f", ["x"], vectors=[unit(0)])], fingerprint=FP))
        seen.append(store.generation())
        store.apply(ChangeSet(resources=[ResourceWrite(Scope(), "r", "d")]))
        seen.append(store.generation())
        (_, sid, _), *_ = store.texts_to_embed(FP_OTHER, 1)
        store.store_vectors(FP_OTHER, [("segment", sid, [1.0, 0.0, 0.0])])
        seen.append(store.generation())
        store.switch_fingerprint(FP_OTHER)
        seen.append(store.generation())
        store.delete_file(Scope(), "memory", "f")
        seen.append(store.generation())
        assert seen == sorted(seen) and len(set(seen)) == len(seen)

    # -- fetch -------------------------------------------------------------------------------
    def test_fetch_missing_ids_are_absent(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["x"], contexts=["## Section"])]))
        sid = _seg_id(store, "x")
        got = store.fetch_segments([sid, "missing"])
        assert set(got) == {sid}
        seg = got[sid]
        assert (seg.kind, seg.ordinal, seg.text, seg.context, seg.track, seg.scope) == (
            "line",
            0,
            "x",
            "## Section",
            "memory",
            Scope(),
        )
        assert store.fetch_files(["missing"]) == {}
        assert store.fetch_resources([]) == {}

    # -- re-embedding ------------------------------------------------------------------------
    def test_reindex_stages_then_switches(self, store: MemoryStore) -> None:
        store.apply(
            ChangeSet(
                files=[file_write("f", ["one", "two"], vectors=[unit(0), unit(1)])],
                resources=[
                    ResourceWrite(Scope(), "a.py", "described", unit(2)),
                    ResourceWrite(Scope(), "b.py", None),
                ],
                fingerprint=FP,
            )
        )
        assert store.texts_to_embed(FP, 10) == []
        todo = store.texts_to_embed(FP_OTHER, 10)
        assert sorted((k, t) for k, _, t in todo) == [
            ("resource", "described"),
            ("segment", "one"),
            ("segment", "two"),
        ]
        assert len(store.texts_to_embed(FP_OTHER, 2)) == 2
        # The optional count (a reindex's progress total) agrees with what is handed out.
        count = getattr(store, "count_texts_to_embed", None)
        if count is not None:
            assert (count(FP), count(FP_OTHER)) == (0, 3)
        new = {"one": [0.0, 1.0, 0.0], "two": [1.0, 0.0, 0.0], "described": [0.0, 0.0, 1.0]}
        store.store_vectors(FP_OTHER, [(k, i, new[t]) for k, i, t in todo])
        if count is not None:
            assert count(FP_OTHER) == 0  # staged rows are not handed out again
        # Staged, not live: searches still use the old space.
        assert store.fingerprint() == FP
        assert store.texts_to_embed(FP_OTHER, 10) == []
        old_hits = store.search_segments_dense(unit(0), {}, None, 5)
        assert store.fetch_segments([old_hits[0].id])[old_hits[0].id].text == "one"
        with pytest.raises(FingerprintMismatch):
            store.search_segments_dense([1.0, 0.0, 0.0], {}, None, 5)
        store.switch_fingerprint(FP_OTHER)
        assert store.fingerprint() == FP_OTHER
        hits = store.search_segments_dense([1.0, 0.0, 0.0], {}, None, 5)
        assert store.fetch_segments([hits[0].id])[hits[0].id].text == "two"
        assert len(store.search_resources_dense([0.0, 0.0, 1.0], {}, 5)) == 1
        # The old space is gone.
        assert len(store.texts_to_embed(FP, 10)) == 3
        stored = store.get_files(Scope(), [("memory", "f")])[("memory", "f")]
        assert stored.segment_texts == frozenset({"one", "two"})

    def test_killed_reindex_keeps_old_vectors_live(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["one", "two"], vectors=[unit(0), unit(1)])], fingerprint=FP))
        kind, sid, _ = store.texts_to_embed(FP_OTHER, 1)[0]
        store.store_vectors(FP_OTHER, [(kind, sid, [1.0, 0.0, 0.0])])
        # "killed" here: no switch. The old space still answers; resuming skips staged rows.
        assert len(store.search_segments_dense(unit(0), {}, None, 5)) == 2
        assert [i for _, i, _ in store.texts_to_embed(FP_OTHER, 10)] != [sid]
        assert len(store.texts_to_embed(FP_OTHER, 10)) == 1

    def test_store_vectors_checks_input(self, store: MemoryStore) -> None:
        store.apply(ChangeSet(files=[file_write("f", ["one"])]))
        _, sid, _ = store.texts_to_embed(FP, 1)[0]
        with pytest.raises(UsageError):
            store.store_vectors(FP, [("segment", sid, [1.0])])
        with pytest.raises(UsageError):
            store.store_vectors(FP, [("file", sid, unit(0))])
        store.store_vectors(FP, [("segment", "vanished-id", unit(0)), ("segment", sid, unit(0))])
        assert store.texts_to_embed(FP, 5) == []
