"""Engine behaviour over both built-in stores: memU's tested behaviours plus memu's guarantees."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memu_core._engine.engine import LocalEngine
from memu_core._engine.segments import segment_file
from memu_core._stores.memory import InMemoryStore
from memu_core._stores.sqlite import SqliteStore
from memu_core.errors import FingerprintMismatch, UsageError
from memu_core.testing.embedders import HashingEmbedder, failing

PROFILE = {
    "name": "Profile",
    "track": "memory",
    "description": "who the user is",
    "content": "# Profile\n- prefers dark roast coffee\n- lives in Berlin",
}
DEPLOY = {
    "name": "deploy-checklist",
    "track": "skill",
    "description": "how to deploy",
    "content": "1. run the integration tests\n2. tag the release",
}


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "memory":
        s = InMemoryStore.open(":memory:")
    else:
        s = SqliteStore.open(str(tmp_path / "memu.sqlite3"))
    yield s
    s.close()


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture
def engine(store, embedder) -> LocalEngine:
    return LocalEngine(store, embedder=embedder)


def _listing(engine: LocalEngine) -> list[dict]:
    files: list[dict] = []
    cursor = None
    while True:
        page = engine.list_all_recall_files(cursor=cursor, limit=200)
        files += page["recall_files"]
        cursor = page["next_cursor"]
        if cursor is None:
            return files


def test_commit_then_list_covers_both_tracks_without_vectors(engine: LocalEngine) -> None:
    result = engine.commit_results(recall_files=[PROFILE, DEPLOY])
    assert [f["name"] for f in result["recall_files"]] == ["Profile", "deploy-checklist"]
    listed = _listing(engine)
    assert {(f["track"], f["name"]) for f in listed} == {("memory", "Profile"), ("skill", "deploy-checklist")}
    assert all("embedding" not in f for f in listed)


def test_retrieve_ranks_the_matching_line_and_its_file_first(engine: LocalEngine) -> None:
    engine.commit_results(
        recall_files=[PROFILE, DEPLOY], resource=[{"path": "/w/notes.md", "description": "meeting notes"}]
    )
    result = engine.progressive_retrieve("coffee")
    assert result["segments"][0]["text"] == "- prefers dark roast coffee"
    assert result["files"][0]["name"] == "Profile"
    assert result["mode"] == "hybrid"
    assert result["embedder"]["provider"] == "hashing"
    assert engine.progressive_retrieve("meeting notes")["resources"][0]["url"] == "/w/notes.md"


def test_skill_bodies_are_searchable(engine: LocalEngine) -> None:
    engine.commit_results(recall_files=[PROFILE, DEPLOY])
    result = engine.progressive_retrieve("integration tests", mode="lexical")
    assert result["files"][0]["name"] == "deploy-checklist"
    assert result["segments"][0]["text"] == "1. run the integration tests"


def test_recommit_replaces_content_and_drops_old_lines(engine: LocalEngine) -> None:
    engine.commit_results(recall_files=[PROFILE])
    engine.commit_results(recall_files=[{**PROFILE, "content": "- drinks green tea now"}])
    texts = [s["text"] for s in engine.progressive_retrieve("coffee tea", top_k=20)["segments"]]
    assert "- drinks green tea now" in texts
    assert "- prefers dark roast coffee" not in texts
    assert _listing(engine)[0]["content"] == "- drinks green tea now"


def test_identical_recommit_costs_no_embedding_and_no_write(engine: LocalEngine, embedder: HashingEmbedder) -> None:
    engine.commit_results(recall_files=[PROFILE, DEPLOY])
    before = _listing(engine)
    calls = embedder.calls
    result = engine.commit_results(recall_files=[PROFILE, DEPLOY])
    assert embedder.calls == calls
    assert result["stats"] == {"files_written": 0, "resources_written": 0, "texts_embedded": 0}
    assert _listing(engine) == before


def test_changed_memory_description_embeds_only_the_header(engine: LocalEngine, embedder: HashingEmbedder) -> None:
    engine.commit_results(recall_files=[PROFILE])
    embedder.texts.clear()
    engine.commit_results(recall_files=[{**PROFILE, "description": "facts about the user"}])
    assert embedder.texts == ["Profile: facts about the user"]
    assert _listing(engine)[0]["description"] == "facts about the user"


def test_changed_skill_description_replaces_its_header(engine: LocalEngine) -> None:
    engine.commit_results(recall_files=[DEPLOY])
    engine.commit_results(recall_files=[{**DEPLOY, "description": "shipping to production"}])
    hits = engine.progressive_retrieve("shipping production", mode="lexical")["segments"]
    assert hits[0]["text"] == "deploy-checklist: shipping to production"
    assert all(
        s["text"] != "deploy-checklist: how to deploy"
        for s in engine.progressive_retrieve("how to deploy", top_k=20)["segments"]
    )


def test_blank_description_keeps_the_stored_one(engine: LocalEngine) -> None:
    engine.commit_results(recall_files=[PROFILE])
    engine.commit_results(recall_files=[{**PROFILE, "description": "", "content": "- new line"}])
    assert _listing(engine)[0]["description"] == "who the user is"


def test_a_commit_makes_one_embedding_call(engine: LocalEngine, embedder: HashingEmbedder) -> None:
    engine.commit_results(recall_files=[PROFILE, DEPLOY], resource=[{"path": "/a", "description": "alpha"}])
    assert embedder.calls == 1


def test_failed_embedding_leaves_the_store_unchanged(engine: LocalEngine, embedder: HashingEmbedder) -> None:
    engine.commit_results(recall_files=[PROFILE])
    before_list = _listing(engine)
    before_hits = engine.progressive_retrieve("coffee")
    embedder.fail_with = failing()
    with pytest.raises(Exception, match="provider unavailable"):
        engine.commit_results(recall_files=[{**PROFILE, "content": "- changed"}, DEPLOY])
    embedder.fail_with = None
    assert _listing(engine) == before_list
    assert engine.progressive_retrieve("coffee") == before_hits


def test_repeated_path_appears_once_and_last_caption_wins(engine: LocalEngine) -> None:
    result = engine.commit_results(
        resource=[{"path": "/w/a.md", "description": "first"}, {"path": "/w/a.md", "description": "second"}]
    )
    assert [(r["url"], r["caption"]) for r in result["resources"]] == [("/w/a.md", "second")]


def test_resource_recommit_keeps_identity(engine: LocalEngine, embedder: HashingEmbedder) -> None:
    first = engine.commit_results(resource=[{"path": "/w/a.md", "description": "alpha notes"}])["resources"][0]
    calls = embedder.calls
    again = engine.commit_results(resource=[{"path": "/w/a.md", "description": "alpha notes"}])["resources"][0]
    assert embedder.calls == calls  # unchanged caption is not re-embedded
    assert (again["id"], again["created_at"]) == (first["id"], first["created_at"])
    changed = engine.commit_results(resource=[{"path": "/w/a.md", "description": "beta notes"}])["resources"][0]
    assert embedder.calls == calls + 1
    assert changed["id"] == first["id"] and changed["caption"] == "beta notes"
    cleared = engine.commit_results(resource=[{"path": "/w/a.md"}])["resources"][0]
    assert cleared["caption"] is None


def test_scope_filters_and_unknown_where_field(engine: LocalEngine) -> None:
    engine.commit_results(recall_files=[PROFILE], user={"user_id": "u1"})
    engine.commit_results(recall_files=[{**PROFILE, "content": "- likes tea"}], user={"user_id": "u2"})
    u1 = engine.list_all_recall_files({"user_id": "u1"})["recall_files"]
    assert len(u1) == 1 and u1[0]["user_id"] == "u1" and "coffee" in u1[0]["content"]
    assert len(_listing(engine)) == 2
    hits = engine.progressive_retrieve("tea coffee", {"user_id": "u2"})["files"]
    assert {f["user_id"] for f in hits} == {"u2"}
    with pytest.raises(UsageError, match="unknown filter field 'track'"):
        engine.list_all_recall_files({"track": "memory"})
    with pytest.raises(UsageError):
        engine.progressive_retrieve("x", {"user_id__gte": "a"})


def test_pagination_three_pages(engine: LocalEngine) -> None:
    files = [{"name": f"m{i}", "content": f"- line {i}"} for i in range(5)]
    files += [{"name": f"s{i}", "track": "skill", "description": f"skill {i}"} for i in range(3)]
    engine.commit_results(recall_files=files)
    pages, cursor = [], None
    while True:
        page = engine.list_all_recall_files(cursor=cursor, limit=3)
        pages.append([(f["track"], f["name"]) for f in page["recall_files"]])
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert [len(p) for p in pages] == [3, 3, 2]
    flat = [key for page in pages for key in page]
    assert flat == sorted(flat) and len(set(flat)) == 8


@pytest.mark.parametrize("limit", [0, -1, True, "3"])
def test_bad_limit_is_refused(engine: LocalEngine, limit: object) -> None:
    with pytest.raises(UsageError, match="limit"):
        engine.list_all_recall_files(limit=limit)  # type: ignore[arg-type]


@pytest.mark.parametrize("cursor", ["not-base64!", "bm90IGpzb24=", "WzEsIDIsIDNd"])
def test_malformed_cursor_is_refused(engine: LocalEngine, cursor: str) -> None:
    with pytest.raises(UsageError, match="malformed cursor"):
        engine.list_all_recall_files(cursor=cursor)


@pytest.mark.parametrize("query", ["", "   ", None])
def test_empty_query_is_refused(engine: LocalEngine, query: object) -> None:
    with pytest.raises(UsageError, match="empty query"):
        engine.progressive_retrieve(query)  # type: ignore[arg-type]


def test_missing_name_is_refused_and_nothing_changes(engine: LocalEngine, embedder: HashingEmbedder) -> None:
    engine.commit_results(recall_files=[PROFILE])
    before = _listing(engine)
    with pytest.raises(UsageError, match=r"recall_files\[1\] has no name"):
        engine.commit_results(recall_files=[{**PROFILE, "content": "- other"}, {"content": "orphan"}])
    assert _listing(engine) == before


def test_forget_removes_a_file_from_listing_and_search(engine: LocalEngine) -> None:
    engine.commit_results(recall_files=[PROFILE, DEPLOY])
    assert engine.forget("Profile")["forgotten"][0]["name"] == "Profile"
    assert [f["name"] for f in _listing(engine)] == ["deploy-checklist"]
    assert all(f["name"] != "Profile" for f in engine.progressive_retrieve("coffee Berlin")["files"])
    assert engine.forget("Profile") == {"forgotten": []}


def test_a_different_embedding_space_is_refused(store) -> None:
    LocalEngine(store, embedder=HashingEmbedder(model="a")).commit_results(recall_files=[PROFILE])
    other = LocalEngine(store, embedder=HashingEmbedder(model="b"))
    with pytest.raises(FingerprintMismatch, match="memu reindex"):
        other.commit_results(recall_files=[DEPLOY])
    with pytest.raises(FingerprintMismatch, match="hashing/a"):
        other.progressive_retrieve("coffee")
    with pytest.raises(FingerprintMismatch):
        LocalEngine(store).commit_results(recall_files=[DEPLOY])  # lexical-only into a dense store


def test_lexical_only_engine_says_so(store) -> None:
    engine = LocalEngine(store)
    engine.commit_results(recall_files=[PROFILE])
    result = engine.progressive_retrieve("coffee")
    assert (result["mode"], result["embedder"]) == ("lexical", None)
    assert result["files"][0]["name"] == "Profile"
    with pytest.raises(UsageError, match="dense search needs an embedder"):
        engine.progressive_retrieve("coffee", mode="dense")


def test_dense_only_finds_by_vector(engine: LocalEngine) -> None:
    engine.commit_results(recall_files=[PROFILE, DEPLOY])
    assert engine.progressive_retrieve("coffee roast", mode="dense")["files"][0]["name"] == "Profile"


def test_concurrent_commits_to_overlapping_files(tmp_path: Path) -> None:
    """8 threads, each committing the same 4 shared files plus one of its own."""
    path = str(tmp_path / "memu.sqlite3")
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        engine = LocalEngine(SqliteStore.open(path), embedder=HashingEmbedder())
        try:
            for round_ in range(3):
                shared = [
                    {"name": f"shared-{i}", "content": f"- written by {n} in round {round_}\n- common"}
                    for i in range(4)
                ]
                engine.commit_results(recall_files=[*shared, {"name": f"own-{n}", "content": f"- thread {n}"}])
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            engine.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    store = SqliteStore.open(path)
    engine = LocalEngine(store, embedder=HashingEmbedder())
    listed = _listing(engine)
    assert sorted(f["name"] for f in listed) == sorted(
        [f"shared-{i}" for i in range(4)] + [f"own-{n}" for n in range(8)]
    )
    for f in listed:
        # every file's searchable lines are exactly those of its final content: no mix of writers
        wanted = {d.text for d in segment_file(f["track"], f["name"], f["description"], f["content"])}
        stored = store.get_files(store.fetch_files([f["id"]])[f["id"]].scope, [(f["track"], f["name"])])
        assert stored[(f["track"], f["name"])].segment_texts == frozenset(wanted)
    store.close()
