"""The Postgres store against the ``MemoryStore`` docstrings, on a real server."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator

import pytest
from memu_backend_postgres import PostgresStore

from memu_core.errors import FingerprintMismatch, UsageError, WriteConflict
from memu_core.types import ChangeSet, FileWrite, Fingerprint, ResourceWrite, Scope, SegmentDraft

DIM = 16
FP = Fingerprint("test", "words", DIM)
FP_OTHER = Fingerprint("test", "other-words", DIM)
FP_WIDE = Fingerprint("test", "wide", 24)


def vectorise(text: str, dim: int = DIM) -> list[float]:
    """A unit vector summing one hashed direction per word."""
    vec = [0.0] * dim
    for word in text.lower().split():
        digest = hashlib.sha256(word.encode()).digest()
        vec[digest[0] % dim] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec] if any(vec) else [1.0] + [0.0] * (dim - 1)


def file_write(
    name: str,
    lines: list[str],
    *,
    scope: Scope | None = None,
    track: str = "memory",
    expected: int | None = None,
    vectors: bool = True,
    contexts: list[str] | None = None,
    description: str = "",
) -> FileWrite:
    """A memory file whose segments are its lines (with vectors unless ``vectors=False``)."""
    content = "\n".join(lines)
    drafts = [
        SegmentDraft(
            kind="line",
            ordinal=i,
            text=line,
            context=(contexts[i] if contexts else ""),
            vector=vectorise(line) if vectors else None,
        )
        for i, line in enumerate(lines)
    ]
    return FileWrite(
        scope=scope or Scope(),
        track=track,
        name=name,
        description=description,
        content=content,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
        expected_revision=expected,
        segments=drafts,
    )


def changes(
    *files: FileWrite, resources: list[ResourceWrite] | None = None, fp: Fingerprint | None = FP
) -> ChangeSet:
    """A change set; ``fp`` defaults to :data:`FP` (``None``: a lexical-only commit, vectors dropped)."""
    if fp is None:
        for write in files:
            for draft in write.segments:
                draft.vector = None
    return ChangeSet(files=list(files), resources=resources or [], fingerprint=fp)


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore.open(pg_url)
    try:
        yield opened
    finally:
        opened.close()


def test_a_fresh_store_is_empty(store: PostgresStore) -> None:
    assert store.fingerprint() is None
    assert store.list_files({}, None, 10) == ([], None)
    assert store.search_segments_lexical("anything", {}, None, 5) == []
    assert store.search_segments_dense(vectorise("anything"), {}, None, 5) == []


def test_apply_then_read_back(store: PostgresStore) -> None:
    before = store.generation()
    store.apply(changes(file_write("Profile", ["likes coffee", "works on memu"])))
    assert store.generation() > before
    assert store.fingerprint() == FP
    stored = store.get_files(Scope(), [("memory", "Profile"), ("memory", "Missing")])
    assert list(stored) == [("memory", "Profile")]
    assert stored[("memory", "Profile")].file.revision == 1
    assert stored[("memory", "Profile")].segment_texts == {"likes coffee", "works on memu"}


def test_new_file_that_exists_is_a_conflict_and_writes_nothing(store: PostgresStore) -> None:
    store.apply(changes(file_write("A", ["one"])))
    generation = store.generation()
    with pytest.raises(WriteConflict, match="memory/A"):
        store.apply(changes(file_write("B", ["two"]), file_write("A", ["three"])))
    assert store.generation() == generation
    assert store.get_files(Scope(), [("memory", "B")]) == {}


def test_stale_revision_is_a_conflict(store: PostgresStore) -> None:
    store.apply(changes(file_write("A", ["one"])))
    store.apply(changes(file_write("A", ["two"], expected=1)))
    with pytest.raises(WriteConflict, match="expected revision 1, found revision 2"):
        store.apply(changes(file_write("A", ["three"], expected=1)))


def test_unchanged_lines_keep_their_rows_and_removed_lines_go(store: PostgresStore) -> None:
    store.apply(changes(file_write("A", ["alpha line", "beta line"])))
    first = {h.id for h in store.search_segments_lexical("alpha", {}, None, 5)}
    write = file_write("A", ["alpha line", "gamma line"], expected=1)
    write.segments[0].vector = None  # the engine sends no vector for a text the store keeps
    store.apply(changes(write))
    assert {h.id for h in store.search_segments_lexical("alpha", {}, None, 5)} == first
    assert store.search_segments_lexical("beta", {}, None, 5) == []
    # The kept row still holds its vector. (Asked for several hits: HNSW is approximate, and on a
    # three-row graph with a deleted node it has been seen to rank a neighbour first.)
    dense = {h.id: h.score for h in store.search_segments_dense(vectorise("alpha line"), {}, None, 3)}
    (kept,) = first
    assert dense[kept] == pytest.approx(1.0, abs=1e-5)


def test_lexical_ranks_text_above_context_and_respects_scope_and_tracks(store: PostgresStore) -> None:
    mine, theirs = Scope("u1", "a"), Scope("u2", "a")
    store.apply(
        changes(
            file_write(
                "A",
                ["deploy with docker compose", "unrelated words here"],
                scope=mine,
                contexts=["", "docker notes"],
            ),
            file_write("S", ["docker skill body"], scope=mine, track="skill"),
            file_write("B", ["docker for someone else"], scope=theirs),
            fp=None,
        )
    )
    hits = store.search_segments_lexical("docker", {"user_id": "u1"}, ["memory"], 10)
    texts = [s.text for s in store.fetch_segments([h.id for h in hits]).values()]
    assert len(hits) == 2 and set(texts) == {"deploy with docker compose", "unrelated words here"}
    best = store.fetch_segments([hits[0].id])[hits[0].id]
    assert best.text == "deploy with docker compose" and hits[0].score > hits[1].score > 0
    assert len(store.search_segments_lexical("docker", {"user_id": ["u1", "u2"]}, None, 10)) == 4
    assert store.search_segments_lexical("what did we do", {}, None, 10) == []


def test_lexical_matches_accents_and_case_like_the_query(store: PostgresStore) -> None:
    store.apply(changes(file_write("A", ["Café opening hours"]), fp=None))
    assert len(store.search_segments_lexical("cafe", {}, None, 5)) == 1
    assert len(store.search_segments_lexical("CAFÉ", {}, None, 5)) == 1


def test_dense_search_orders_by_cosine_and_filters_scope(store: PostgresStore) -> None:
    store.apply(
        changes(
            file_write(
                "A", ["red apple pie", "blue ocean waves", "green forest trail"], scope=Scope("u1", "x")
            ),
            file_write("B", ["red apple pie"], scope=Scope("u2", "x")),
        )
    )
    hits = store.search_segments_dense(vectorise("red apple pie"), {"user_id": "u1"}, None, 3)
    segments = store.fetch_segments([h.id for h in hits])
    assert segments[hits[0].id].text == "red apple pie"
    assert all(s.scope.user_id == "u1" for s in segments.values())
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_different_fingerprint_is_refused_naming_both(store: PostgresStore) -> None:
    store.apply(changes(file_write("A", ["one"])))
    with pytest.raises(FingerprintMismatch) as caught:
        store.apply(changes(file_write("B", ["two"]), fp=FP_OTHER))
    assert FP.describe() in str(caught.value) and FP_OTHER.describe() in str(caught.value)
    assert "memu reindex" in str(caught.value)


def test_a_vector_of_the_wrong_length_is_a_usage_error(store: PostgresStore) -> None:
    write = file_write("A", ["one"])
    write.segments[0].vector = [0.1, 0.2]
    with pytest.raises(UsageError, match="2 dimensions"):
        store.apply(changes(write))
    assert store.fingerprint() is None  # the failed commit recorded nothing


def test_resources_upsert_keep_or_clear_vectors_and_search(store: PostgresStore) -> None:
    scope = Scope()
    store.apply(
        changes(resources=[ResourceWrite(scope, "/w/notes.md", "meeting notes", vectorise("meeting notes"))])
    )
    store.apply(changes(resources=[ResourceWrite(scope, "/w/notes.md", "meeting notes", None)]))
    assert len(store.search_resources_dense(vectorise("meeting notes"), {}, 5)) == 1
    store.apply(changes(resources=[ResourceWrite(scope, "/w/notes.md", "standup minutes", None)]))
    assert store.search_resources_dense(vectorise("meeting notes"), {}, 5) == []
    hits = store.search_resources_lexical("standup", {}, 5)
    resource = store.fetch_resources([hits[0].id])[hits[0].id]
    assert (resource.path, resource.description) == ("/w/notes.md", "standup minutes")
    assert store.search_resources_lexical("notes", {}, 5)[0].id == resource.id  # the path counts too
    assert list(store.get_resources(scope, ["/w/notes.md", "/nope"])) == ["/w/notes.md"]


def test_list_files_pages_in_track_name_id_order(store: PostgresStore) -> None:
    names = ["b", "a", "C", "é"]
    store.apply(
        changes(
            *(file_write(n, [f"line {n}"]) for n in names), file_write("z", ["skill"], track="skill"), fp=None
        )
    )
    seen, after = [], None
    while True:
        page, after = store.list_files({}, after, 2)
        seen += [(f.track, f.name) for f in page]
        if after is None:
            break
    assert seen == [("memory", "C"), ("memory", "a"), ("memory", "b"), ("memory", "é"), ("skill", "z")]
    with pytest.raises(UsageError):
        store.list_files({}, None, 0)


def test_delete_file_removes_segments_and_returns_it(store: PostgresStore) -> None:
    store.apply(changes(file_write("A", ["forget me"])))
    deleted = store.delete_file(Scope(), "memory", "A")
    assert deleted is not None and deleted.name == "A"
    assert store.search_segments_lexical("forget", {}, None, 5) == []
    assert store.search_segments_dense(vectorise("forget me"), {}, None, 5) == []
    assert store.delete_file(Scope(), "memory", "A") is None


def test_reindex_stages_then_switches_atomically(store: PostgresStore) -> None:
    store.apply(
        changes(
            file_write("A", ["one fish", "two fish"]),
            resources=[ResourceWrite(Scope(), "/r", "a resource", vectorise("a resource"))],
        )
    )
    todo = store.texts_to_embed(FP_WIDE, 100)
    assert sorted(kind for kind, _, _ in todo) == ["resource", "segment", "segment"]
    store.store_vectors(FP_WIDE, [(k, i, vectorise(t, 24)) for k, i, t in todo[:2]])
    assert len(store.texts_to_embed(FP_WIDE, 100)) == 1
    assert store.fingerprint() == FP  # staging changes nothing searchable
    assert len(store.search_segments_dense(vectorise("one fish"), {}, None, 5)) == 2
    store.store_vectors(FP_WIDE, [(k, i, vectorise(t, 24)) for k, i, t in store.texts_to_embed(FP_WIDE, 100)])
    store.switch_fingerprint(FP_WIDE)
    assert store.fingerprint() == FP_WIDE
    assert store.texts_to_embed(FP_WIDE, 100) == []
    assert len(store.search_segments_dense(vectorise("one fish", 24), {}, None, 5)) == 2
    assert len(store.search_resources_dense(vectorise("a resource", 24), {}, 5)) == 1
    with pytest.raises(FingerprintMismatch):
        store.apply(changes(file_write("B", ["x"]), fp=FP))


def test_lexical_only_store_reports_every_text_as_reusable(store: PostgresStore) -> None:
    store.apply(changes(file_write("A", ["one", "two"], vectors=False), fp=None))
    assert store.get_files(Scope(), [("memory", "A")])[("memory", "A")].segment_texts == {"one", "two"}
    assert store.fingerprint() is None
