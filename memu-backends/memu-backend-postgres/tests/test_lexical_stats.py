"""Remembered BM25 statistics (ADR 0033): one statement per warm search, never a stale score.

A store remembers the corpus totals and the document frequencies of the terms it searched, and
each search statement returns the counters it saw so a write by anyone (another store object, a
process elsewhere) is noticed in the same round trip.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from memu_backend_postgres import PostgresStore
from sqlalchemy import event

from memu_core.testing.store_contract import file_write
from memu_core.types import ChangeSet, FileWrite, Hit, ResourceWrite, Scope


def changes(*files: FileWrite, resources: list[ResourceWrite] | None = None) -> ChangeSet:
    """A lexical-only change set."""
    return ChangeSet(files=list(files), resources=resources or [])


@pytest.fixture
def pair(pg_url: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """Two store objects on one schema: a reader that remembers, and a writer beside it."""
    reader = PostgresStore.open(pg_url, background_fold=False)
    writer = PostgresStore.open(pg_url, background_fold=False)
    try:
        yield reader, writer
    finally:
        reader.close()
        writer.close()


def _statements(store: PostgresStore) -> Callable[[], list[str]]:
    """Start recording the statements ``store`` sends; the returned function reads them."""
    sent: list[str] = []

    @event.listens_for(store._engine, "before_cursor_execute")
    def _record(conn: object, cursor: object, statement: str, *args: object) -> None:
        sent.append(" ".join(statement.split()))

    return lambda: sent


def _fresh(url: str, search: Callable[[PostgresStore], list[Hit]]) -> list[Hit]:
    """The answer of a store object that has remembered nothing."""
    store = PostgresStore.open(url, background_fold=False)
    try:
        return search(store)
    finally:
        store.close()


def test_a_warm_search_is_one_statement(pair: tuple[PostgresStore, PostgresStore]) -> None:
    reader, writer = pair
    writer.apply(changes(file_write("a", ["deploy the billing service", "rotate the keys"])))
    first = reader.search_segments_lexical("billing deploy", {}, None, 10)
    sent = _statements(reader)
    assert reader.search_segments_lexical("billing deploy", {}, None, 10) == first
    assert len(sent()) == 1, sent()
    assert "BEGIN" not in " ".join(sent()).upper()
    # A term not seen before costs one statement more (its document frequency), still no transaction.
    reader.search_segments_lexical("billing keys", {}, None, 10)
    assert len(sent()) == 3, sent()


@pytest.mark.parametrize("kind", ["segments", "resources"])
def test_a_write_elsewhere_is_seen_by_the_next_search(
    pair: tuple[PostgresStore, PostgresStore], pg_url: str, kind: str
) -> None:
    reader, writer = pair

    def search(store: PostgresStore) -> list[Hit]:
        hits: list[Hit] = (
            store.search_segments_lexical("billing invoices", {}, None, 10)
            if kind == "segments"
            else store.search_resources_lexical("billing invoices", {}, 10)
        )
        return hits

    def commit(names: list[str]) -> None:
        files = [file_write(n, [f"{n} billing notes", "invoices and billing"]) for n in names]
        resources = [ResourceWrite(Scope(), f"src/{n}.py", f"{n} billing invoices") for n in names]
        writer.apply(changes(*files, resources=resources))

    commit(["a", "b"])
    before = search(reader)
    assert before == _fresh(pg_url, search)
    # New rows move N, the average length and both terms' document frequencies: every score
    # changes, so an answer scored with the remembered statistics would differ.
    commit(["c", "d", "e"])
    after = search(reader)
    assert after == _fresh(pg_url, search)
    assert {h.id: h.score for h in after} != {h.id: h.score for h in before}


def test_terms_no_row_held_are_looked_up_again_after_a_write(pair: tuple[PostgresStore, PostgresStore]) -> None:
    # The answer "nothing" needs no search statement, so it must not come from memory.
    reader, writer = pair
    writer.apply(changes(file_write("a", ["deploy the billing service"])))
    assert reader.search_segments_lexical("bastion", {}, None, 10) == []
    writer.apply(changes(file_write("b", ["the bastion host"])))
    assert len(reader.search_segments_lexical("bastion", {}, None, 10)) == 1


def test_term_maps_are_stored_uncompressed_beside_a_vector(pg_url: str) -> None:
    # A 384-dimension row is past the 2 kB at which Postgres shrinks rows; its term map must stay
    # readable as it is (the vector goes out of line instead), and both searches still answer.
    import math

    import sqlalchemy as sa

    from memu_core.types import Fingerprint

    dim = 384
    fp = Fingerprint("test", "wide", dim)
    line = " ".join(f"word{i} billing" for i in range(30))
    vector = [math.sin(i + 1.0) for i in range(dim)]
    norm = math.sqrt(sum(v * v for v in vector))
    store = PostgresStore.open(pg_url, defer_graph=False, background_fold=False)
    try:
        write = file_write("wide", [line])
        write.segments[0].vector = [v / norm for v in vector]
        store.apply(ChangeSet(files=[write], fingerprint=fp))
        with store._engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT pg_column_compression(tf) AS c, fp_id FROM memu_segments")).all()
        assert rows and all(row.c is None and row.fp_id is not None for row in rows), rows
        (hit,) = store.search_segments_lexical("billing word7", {}, None, 5)
        (near,) = store.search_segments_dense(vector, {}, None, 1)
        assert near.id == hit.id and near.score == pytest.approx(1.0, abs=1e-5)
    finally:
        store.close()
