"""The ``sqlite`` store: the shared contract plus what only a file-backed store can show."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memu_core._stores.sqlite import SqliteStore, connection, migrate
from memu_core.errors import StoreError, UsageError, WriteConflict
from memu_core.interfaces import MemoryStore
from memu_core.testing.store_contract import FP, StoreContract, file_write, unit
from memu_core.types import ChangeSet, Scope


class TestSqliteStore(StoreContract):
    def make_store(self, tmp_path: Path) -> MemoryStore:
        return SqliteStore.open(str(tmp_path / "memu.db"))


# -- schema and migrations ---------------------------------------------------------------------


def test_head_constant_matches_the_shipped_migrations() -> None:
    assert migrate.head() == connection.HEAD_REVISION
    assert connection.HEAD_REVISION in connection.KNOWN_REVISIONS


def test_upgrade_empty_to_head_and_idempotent(tmp_path: Path) -> None:
    url = str(tmp_path / "fresh.db")
    assert migrate.current(url) is None
    assert not Path(url).exists()  # inspecting creates nothing
    assert migrate.upgrade(url) == connection.HEAD_REVISION
    assert migrate.current(url) == connection.HEAD_REVISION
    assert migrate.upgrade(url) == connection.HEAD_REVISION
    conn = sqlite3.connect(url)
    assert conn.execute("SELECT count(*) FROM alembic_version").fetchone() == (1,)
    assert conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone() == ("0",)


def test_migrated_schema_matches_the_metadata(tmp_path: Path) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from sqlalchemy import create_engine

    from memu_core._stores.sqlite.schema import UNMODELLED, metadata

    url = str(tmp_path / "m.db")
    migrate.upgrade(url)
    engine = create_engine(f"sqlite:///{url}")
    with engine.connect() as conn:
        ctx = MigrationContext.configure(
            conn,
            opts={
                "include_name": lambda name, type_, _p: not (type_ == "table" and name and name.startswith(UNMODELLED))
            },
        )
        assert compare_metadata(ctx, metadata) == []
    engine.dispose()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    url = str(tmp_path / "new.db")
    migrate.upgrade(url)
    conn = sqlite3.connect(url)
    conn.execute("UPDATE alembic_version SET version_num = '9999'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        SqliteStore.open(url)


def test_pragmas_wal_foreign_keys(tmp_path: Path) -> None:
    store = SqliteStore.open(str(tmp_path / "p.db"))
    conn = store._conn  # the store's own connection: per-connection PRAGMAs are what matter
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == connection.BUSY_TIMEOUT_MS
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    store.close()
    assert sqlite3.connect(tmp_path / "p.db").execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _open_at_once(path: Path, count: int) -> tuple[list[str], list[BaseException]]:
    """``count`` threads open ``path`` at the same instant and write a row; their modes and errors."""
    start = threading.Barrier(count)
    errors: list[BaseException] = []
    modes: list[str] = []

    def opener() -> None:
        start.wait()
        try:
            conn = connection.connect(path)
            # A writer beside the openers, as a commit in another thread would be.
            conn.execute("CREATE TABLE IF NOT EXISTS t (x)")
            conn.execute("INSERT INTO t VALUES (1)")
            modes.append(str(conn.execute("PRAGMA journal_mode").fetchone()[0]))
            conn.close()
        except BaseException as exc:  # surfaced by the caller
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return modes, errors


def test_many_connections_opening_a_fresh_file_at_once_all_get_wal(tmp_path: Path) -> None:
    # Switching a fresh file to WAL needs it to itself; SQLite refused the losers of that race at
    # once ("database is locked"), without waiting out the busy timeout.
    for attempt in range(30):
        modes, errors = _open_at_once(tmp_path / f"fresh-{attempt}.db", 12)
        assert not errors, errors[0]
        assert modes == ["wal"] * 12


# -- urls --------------------------------------------------------------------------------------


def test_url_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    store = SqliteStore.open("~/deep/er/memu.db")
    assert store.path == str(tmp_path / "deep" / "er" / "memu.db")
    store.close()
    store = SqliteStore.open(f"sqlite:///{tmp_path}/other.db")
    assert Path(store.path) == tmp_path / "other.db"
    store.close()
    monkeypatch.chdir(tmp_path)
    store = SqliteStore.open("sqlite:///rel.db")
    assert Path(store.path) == Path("rel.db")
    assert (tmp_path / "rel.db").exists()
    store.close()


@pytest.mark.parametrize("url", ["", "sqlite://", "sqlite:///", ":memory:"])
def test_bad_urls_are_usage_errors(url: str) -> None:
    with pytest.raises(UsageError, match="MEMU_DB"):
        SqliteStore.open(url)


def test_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot open"):
        SqliteStore.open(str(blocker / "memu.db"))


# -- persistence and consistency ---------------------------------------------------------------


def test_reopen_keeps_everything(tmp_path: Path) -> None:
    url = str(tmp_path / "r.db")
    store = SqliteStore.open(url)
    store.apply(ChangeSet(files=[file_write("f", ["persisted line"], vectors=[unit(0)])], fingerprint=FP))
    store.close()
    again = SqliteStore.open(url)
    assert again.fingerprint() == FP
    hits = again.search_segments_lexical("persisted", {}, None, 5)
    assert len(hits) == 1
    assert [h.id for h in again.search_segments_dense(unit(0), {}, None, 5)] == [hits[0].id]
    again.close()


def test_fts_stays_in_step_with_segments(tmp_path: Path) -> None:
    store = SqliteStore.open(str(tmp_path / "f.db"))
    store.apply(ChangeSet(files=[file_write("a", ["one", "two", "three"]), file_write("b", ["four"])]))
    store.apply(ChangeSet(files=[file_write("a", ["two", "five"], revision=1, contexts=["## h", ""])]))
    store.delete_file(Scope(), "memory", "b")
    conn = store._conn
    assert conn.execute("SELECT count(*) FROM segments").fetchone() == (2,)
    assert conn.execute("SELECT count(*) FROM segments_fts").fetchone() == (2,)
    assert conn.execute("SELECT count(*) FROM segments s JOIN segments_fts f ON f.rowid = s.seq").fetchone() == (2,)
    conn.execute("INSERT INTO segments_fts (segments_fts) VALUES ('integrity-check')")
    assert [r[0] for r in conn.execute("PRAGMA foreign_key_check")] == []
    store.close()


def test_open_at_head_imports_no_sqlalchemy(tmp_path: Path) -> None:
    url = str(tmp_path / "light.db")
    migrate.upgrade(url)
    code = (
        "import sys\n"
        "from memu_core._stores.sqlite import SqliteStore\n"
        f"s = SqliteStore.open({url!r})\n"
        "s.search_segments_lexical('anything', {}, None, 5)\n"
        "heavy = [m for m in ('sqlalchemy', 'alembic', 'numpy', 'faiss') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_concurrent_first_opens_migrate_once(tmp_path: Path) -> None:
    url = str(tmp_path / "race.db")
    code = "import sys\nfrom memu_core._stores.sqlite import SqliteStore\nSqliteStore.open(sys.argv[1]).close()\n"
    procs = [subprocess.Popen([sys.executable, "-c", code, url], stderr=subprocess.PIPE) for _ in range(3)]
    errors = [p.communicate()[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    assert migrate.current(url) == connection.HEAD_REVISION


def test_threads_writing_overlapping_files_leave_no_duplicates(tmp_path: Path) -> None:
    url = str(tmp_path / "t.db")
    SqliteStore.open(url).close()
    names = [f"shared-{i}" for i in range(4)]
    rounds = 5
    failures: list[BaseException] = []

    def writer(worker: int) -> None:
        store = SqliteStore.open(url)  # one connection per thread: real SQLite locking
        try:
            for r in range(rounds):
                for name in names:
                    while True:  # what the engine does: re-plan and retry on a conflict
                        stored = store.get_files(Scope(), [("memory", name)])
                        rev = stored[("memory", name)].file.revision if stored else None
                        try:
                            store.apply(
                                ChangeSet(files=[file_write(name, [f"w{worker} r{r}", "common line"], revision=rev)])
                            )
                            break
                        except WriteConflict:
                            continue
        except BaseException as exc:
            failures.append(exc)
        finally:
            store.close()

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    store = SqliteStore.open(url)
    page, _ = store.list_files({}, None, 100)
    assert sorted(f.name for f in page) == names
    assert {f.revision for f in page} == {8 * rounds}
    conn = store._conn
    assert conn.execute("SELECT count(*) FROM segments").fetchone() == (2 * len(names),)
    assert conn.execute("SELECT count(*) FROM segments_fts").fetchone() == (2 * len(names),)
    store.close()


def test_dense_cache_is_reused_until_a_write(tmp_path: Path) -> None:
    store = SqliteStore.open(str(tmp_path / "c.db"))
    store.apply(ChangeSet(files=[file_write("a", ["x"], vectors=[unit(0)])], fingerprint=FP))
    store.search_segments_dense(unit(0), {}, None, 5)
    entries = dict(store._dense._entries)
    store.search_segments_dense(unit(1), {}, None, 5)
    assert store._dense._entries == entries  # same index object, not reloaded
    store.apply(ChangeSet(files=[file_write("b", ["y"], vectors=[unit(1)])], fingerprint=FP))
    hits = store.search_segments_dense(unit(1), {}, None, 5)
    assert len(hits) == 2
    store.close()


def test_narrowed_lexical_query_scores_like_the_full_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memu_core._stores.sqlite import lexical

    store = SqliteStore.open(str(tmp_path / "n.db"))
    lines = [f"common word line {i}" for i in range(30)]
    lines += ["common rare pair", "rare alone here", "common word rare"]
    store.apply(ChangeSet(files=[file_write("f", lines)]))
    query = "common word rare"
    full = store.search_segments_lexical(query, {}, None, 3)
    filtered_full = store.search_segments_lexical(query, {"user_id": "default"}, ["memory"], 3)
    monkeypatch.setattr(lexical, "BUDGET", 5)  # "rare" (3 rows) fits, "common"/"word" do not
    narrowed = store.search_segments_lexical(query, {}, None, 3)
    filtered = store.search_segments_lexical(query, {"user_id": "default"}, ["memory"], 3)
    assert [h.id for h in narrowed] == [h.id for h in full]
    assert [h.score for h in narrowed] == pytest.approx([h.score for h in full])
    assert [h.id for h in filtered] == [h.id for h in filtered_full] == [h.id for h in full]
    texts = [store.fetch_segments([h.id])[h.id].text for h in narrowed]
    assert texts[0] == "common word rare"
    store.close()


def test_every_word_pass_scores_like_the_full_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a large store the rows holding every typed word are tried first, scored as a plain OR would."""
    from memu_core._stores.sqlite import lexical

    store = SqliteStore.open(str(tmp_path / "e.db"))
    lines = [f"alpha filler line {i}" for i in range(20)] + [f"beta other line {i}" for i in range(20)]
    lines += [f"alpha beta pair {i} {'padding ' * (i % 4)}" for i in range(6)] + ["alpha", "beta beta"]
    store.apply(ChangeSet(files=[file_write("f", lines)]))
    everything = {h.id: h.score for h in store.search_segments_lexical("alpha beta", {}, None, 100)}
    monkeypatch.setattr(lexical, "BUDGET", 10)  # alpha (27 rows) and beta (27) are both over it
    with store._read() as conn:
        matches = lexical.segment_matches(conn, ["alpha", "beta"], 2)
    assert matches[0] == '("alpha") AND ("beta")' and len(matches) == 3
    scoped: dict[str, str | list[str]] = {"user_id": "default"}
    for where, tracks in (({}, None), (scoped, ["memory"])):
        hits = store.search_segments_lexical("alpha beta", where, tracks, 4)
        texts = [store.fetch_segments([h.id])[h.id].text for h in hits]
        assert len(hits) == 4 and all(t.startswith("alpha beta pair") for t in texts)
        assert [h.score for h in hits] == pytest.approx([everything[h.id] for h in hits])
        assert [h.id for h in hits] == sorted(everything, key=lambda i: -everything[i])[:4]
    # Six rows hold both words: a limit of 10 falls back to the wider rules and still fills.
    wider = store.search_segments_lexical("alpha beta", {}, None, 10)
    assert len(wider) == 10
    assert [h.score for h in wider] == pytest.approx([everything[h.id] for h in wider])
    store.close()


def test_term_counts_follow_writes(tmp_path: Path) -> None:
    store = SqliteStore.open(str(tmp_path / "t.db"))
    store.apply(ChangeSet(files=[file_write("a", ["solo word", "word again"])]))
    with store._read() as conn:
        assert store._term_counts.get(conn, ["word", "solo", "absent"]) == {"word": 2, "solo": 1, "absent": 0}
    store.apply(ChangeSet(files=[file_write("b", ["word three", "absent no more"])]))
    with store._read() as conn:
        assert store._term_counts.get(conn, ["word", "absent"]) == {"word": 3, "absent": 1}
    store.close()


def test_db_command_hooks(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/cmd.db"
    assert SqliteStore.schema_revision(url) is None
    assert SqliteStore.upgrade_schema(url) == connection.HEAD_REVISION
    assert SqliteStore.schema_revision(url) == connection.HEAD_REVISION


def test_a_sign_sqlite_does_not_know_does_not_hide_a_line(tmp_path: Path) -> None:
    """Found by hypothesis: SQLite's tokenizer glued U+115C1 to the digit before it, so the line
    "0𑗁" was not found by its own word "0". The store indexes pre-split words instead."""
    from memu_core._engine.engine import LocalEngine

    engine = LocalEngine(SqliteStore.open(str(tmp_path / "signs.db")))
    engine.commit_results(recall_files=[{"name": "n", "content": "0\U000115c1\nplain line"}])
    hits = engine.progressive_retrieve("0", top_k=5)["segments"]
    assert next(h["text"] for h in hits if h["kind"] == "line") == "0\U000115c1"
