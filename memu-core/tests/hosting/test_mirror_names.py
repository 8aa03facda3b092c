"""Names in the mirror: one file per stored name on every file system, and a bad stored name
never stops a bridging cycle (issue 14, defects 1 and 3)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._bridge import pipeline, sync
from memu_core._engine.engine import LocalEngine
from memu_core._engine.inputs import FileInput
from memu_core._layout import Layout
from memu_core._mirror import file_name, place, read_doc, tagged_name
from memu_core._retrieve_output import locate_in_mirror
from memu_core._stores.sqlite import SqliteStore
from memu_core.errors import UsageError
from memu_core.types import ChangeSet, Scope


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[LocalEngine]:
    backend = LocalEngine(SqliteStore.open(str(tmp_path / "memu.sqlite3")))
    yield backend
    backend.close()


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout.at(tmp_path / "tree", "toy")


def plant(engine: LocalEngine, name: str, content: str = "- a line", track: str = "memory") -> None:
    """Store ``name`` past the doors, as a store written before the naming rules holds it."""
    write = engine._plan_file(Scope(), FileInput(track, name, "", content), None)
    assert write is not None
    engine.store.apply(ChangeSet(files=[write], resources=[]))


def names(engine: LocalEngine) -> set[str]:
    """Every stored name, page by page: one page of a full store is not the store."""
    return {doc.name for doc in sync.store_docs(engine)}


def cycle(layout: Layout, engine: LocalEngine) -> tuple[sync.SyncResult, pipeline.CommitReport]:
    """What prepare and commit do to the mirror: sync it from the store, then commit it back."""
    mirrored = sync.sync(layout, engine)
    return mirrored, pipeline.commit(layout, lambda: engine, "toy")


def test_two_names_with_one_readable_file_both_survive_cycles(layout: Layout, engine: LocalEngine) -> None:
    engine.commit_results(
        recall_files=[
            {"name": "deploy notes", "content": "- spaced"},
            {"name": "deploy-notes", "content": "- dashed"},
            {"name": "Deploy-Notes", "content": "- capitalised"},
        ]
    )
    for _ in range(3):
        _, report = cycle(layout, engine)
        assert report.forgotten == []
    assert names(engine) == {"deploy notes", "deploy-notes", "Deploy-Notes"}
    files = sorted(p.name for p in (layout.base / "memory").iterdir())
    # Exact names choose first (then by code point); the others get their tagged files.
    assert files == sorted(["Deploy-Notes.md", tagged_name("deploy-notes"), tagged_name("deploy notes")])


def test_dot_names_stored_before_the_rules_are_skipped_not_forgotten(layout: Layout, engine: LocalEngine) -> None:
    for name in (".", "..", "-", "untitled"):
        plant(engine, name)
    for _ in range(2):
        mirrored, report = cycle(layout, engine)
        assert report.forgotten == []
        assert len(mirrored.skipped) == 2
    assert names(engine) == {".", "..", "-", "untitled"}
    assert "memu forget" in mirrored.skipped[0] and "'.'" in mirrored.skipped[0]


@pytest.mark.parametrize("bad", ["nul\x00byte", "x" * 300, "a/b"])
def test_a_bad_stored_name_never_stops_the_mirror(layout: Layout, engine: LocalEngine, bad: str) -> None:
    plant(engine, bad)
    engine.commit_results(recall_files=[{"name": "good", "content": "- kept"}])
    mirrored, report = cycle(layout, engine)
    assert report.forgotten == []
    assert (layout.base / "memory" / "good.md").is_file()
    (warning,) = mirrored.skipped
    assert "is not mirrored" in warning and "memu forget" in warning
    assert names(engine) == {bad, "good"}


def test_an_existing_name_keeps_its_file_when_a_colliding_one_arrives(layout: Layout, engine: LocalEngine) -> None:
    engine.commit_results(recall_files=[{"name": "deploy notes", "content": "- first"}])
    cycle(layout, engine)
    assert (layout.base / "memory" / "deploy-notes.md").is_file()
    engine.commit_results(recall_files=[{"name": "deploy-notes", "content": "- second"}])
    _, report = cycle(layout, engine)
    assert report.forgotten == []
    assert "deploy notes" in (layout.base / "memory" / "deploy-notes.md").read_text()
    assert "- second" in (layout.base / "memory" / tagged_name("deploy-notes")).read_text()


def test_retrieve_points_at_the_tagged_file(layout: Layout, engine: LocalEngine) -> None:
    engine.commit_results(recall_files=[{"name": "a b", "content": "- spaced"}, {"name": "a-b", "content": "- dashed"}])
    cycle(layout, engine)
    locate = locate_in_mirror(layout.base)
    spaced = next(f for f in engine.list_all_recall_files()["recall_files"] if f["name"] == "a b")
    assert locate(spaced) == str(layout.base / "memory" / tagged_name("a b"))


def test_host_commit_refuses_a_bad_name_before_writing(layout: Layout, engine: LocalEngine) -> None:
    (layout.base / "memory").mkdir(parents=True)
    (layout.base / "memory" / "x.md").write_text('---\nname: "a/b"\n---\n- line\n')
    (layout.base / "memory" / "y.md").write_text("---\nname: fine\n---\n- line\n")
    with pytest.raises(UsageError, match=r"x\.md: the name 'a/b' holds '/'"):
        pipeline.commit(layout, lambda: engine, "toy")
    assert names(engine) == set()


def test_placement_is_collision_free_on_case_and_unicode_folding() -> None:
    ids = [("memory", "Café"), ("memory", "café"), ("memory", "Cafe\u0301")]
    placed = place(ids)
    keys = {p.casefold() for p in placed.rel.values()}
    assert len(keys) == 3 and not placed.clashing
    assert placed.rel[("memory", "Cafe\u0301")] == "memory/Cafe\u0301.md"  # first by code point


def test_readable_names_are_unchanged() -> None:
    # Existing mirrors keep their file names: the readable form is what it always was.
    assert file_name("deploy notes") == "deploy-notes.md"
    assert file_name("a: b?") == "a-b.md"
    assert file_name("notes.") == "notes.md"


def test_a_name_past_the_first_page_survives_a_cycle_of_a_file_named_after_itself(
    layout: Layout, engine: LocalEngine
) -> None:
    """The soak's failing example (test_hostile_names, MEMU_SOAK=1): 200 stored names, the last
    of the first page ``Ã!i¡``; the agent adds a file with an empty ``name:``, which is named after
    its own file name. Every cycle after keeps every name stored and mirrored as itself. (The
    soak's check read only the first page, which the new name, sorting earlier, had pushed
    ``Ã!i¡`` off: the store never lost it.)"""
    engine.commit_results(recall_files=[{"name": f"n{i:03d}", "content": "- filler"} for i in range(199)])
    engine.commit_results(recall_files=[{"name": "Ã!i¡", "content": "- kept"}])
    cycle(layout, engine)
    before = names(engine)
    agent = layout.base / "memory" / "agent-0123abcd.md"
    agent.write_text('---\nname: ""\n---\n- host\n', encoding="utf-8")
    for _ in range(3):
        _, report = cycle(layout, engine)
        assert report.forgotten == []
    assert names(engine) == before | {"agent-0123abcd"}
    first_page = {f["name"] for f in engine.list_all_recall_files(limit=200)["recall_files"]}
    assert "Ã!i¡" not in first_page  # why a one-page check saw it "missing"
    assert read_doc(layout.base / "memory" / "Ã!i¡.md", "memory").name == "Ã!i¡"
    assert read_doc(agent, "memory").name == "agent-0123abcd"  # the same file, read back as the same name
    assert sorted(p.name for p in (layout.base / "memory").glob("agent-*")) == ["agent-0123abcd.md"]


def test_a_case_insensitive_file_system_keeps_the_file_it_just_rewrote(
    layout: Layout, engine: LocalEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The agent writes memory/Deploy.md holding the name "deploy"; the next mirror writes the
    # name's readable file, memory/deploy.md. On macOS or Windows that write lands on Deploy.md
    # itself, so the "stale" Deploy.md must not be removed. This machine's file system is case
    # sensitive, so the test stands in for one: two spellings that fold alike are one file.
    (layout.base / "memory").mkdir(parents=True)
    (layout.base / "memory" / "Deploy.md").write_text("---\nname: deploy\n---\n- ship on Tuesdays\n", "utf-8")
    assert pipeline.commit(layout, lambda: engine, "toy").files == [("memory", "deploy")]
    monkeypatch.setattr(sync, "same_file", lambda a, b: a.name.casefold() == b.name.casefold())
    sync.sync(layout, engine)
    assert (layout.base / "memory" / "Deploy.md").exists(), "the file the mirror just wrote was removed"


def test_on_a_case_sensitive_file_system_the_old_spelling_gives_way(layout: Layout, engine: LocalEngine) -> None:
    (layout.base / "memory").mkdir(parents=True)
    (layout.base / "memory" / "Deploy.md").write_text("---\nname: deploy\n---\n- ship on Tuesdays\n", "utf-8")
    pipeline.commit(layout, lambda: engine, "toy")
    for _ in range(3):
        _, report = cycle(layout, engine)
        assert report.forgotten == []
    assert sorted(p.name for p in (layout.base / "memory").iterdir()) == ["deploy.md"]
    assert names(engine) == {"deploy"}
