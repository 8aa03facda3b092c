"""Per-term bounds (``tfmax``, migration 0005; ``dlmin``, 0007), the two-part lexical scoring
they allow, and GIN indexes without a pending list (0006); ADR 0033's amendment.

A search whose candidates are an OR of required terms scores the rows holding two or more of
its terms first, then only those single-term rows whose term can still reach the limit. The
answers must be exactly those of scoring every candidate; ``memu_terms.tfmax`` must stay an
upper bound and ``dlmin`` a lower bound through inserts, rewrites and deletes. A commit's index entries must be merged
into the lexical indexes as it writes them, not left in a list every search reads.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import pytest
from memu_backend_postgres import PostgresStore, _search

from memu_core.testing.store_contract import file_write
from memu_core.text import expand_query
from memu_core.types import ChangeSet, FileWrite


def _tfmax(store: PostgresStore) -> dict[str, float]:
    return {term: top for term, (top, _) in _bounds(store).items()}


def _bounds(store: PostgresStore) -> dict[str, tuple[float, int]]:
    import sqlalchemy as sa

    with store._engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT term, tfmax, dlmin FROM memu_terms WHERE kind = 's'")).all()
    return {row.term: (row.tfmax, row.dlmin) for row in rows}


def test_tfmax_follows_writes_and_stays_a_bound(pg_url: str) -> None:
    store = PostgresStore.open(pg_url, background_fold=False)
    try:
        store.apply(ChangeSet(files=[file_write("a", ["cache cache warm"], contexts=["## cache"])]))
        # Two words in the line (weight 1) and one in the context (0.4).
        assert _tfmax(store)["cache"] == pytest.approx(2.4) and _tfmax(store)["warm"] == pytest.approx(1.0)
        # Another row holding the word more often raises the bound.
        store.apply(ChangeSet(files=[file_write("b", ["warm warm warm"])]))
        assert _tfmax(store)["warm"] == pytest.approx(3.0)
        # The shortest row holding a term sets its dlmin (words in the line and its context).
        assert _bounds(store)["warm"][1] == 3 and _bounds(store)["cache"][1] == 4
        store.apply(ChangeSet(files=[file_write("c", ["cache"])]))
        assert _bounds(store)["cache"][1] == 1
        # Deleting the rows that set them leaves both bounds where they were.
        store.apply(ChangeSet(files=[dataclasses.replace(file_write("b", ["cold"]), expected_revision=1)]))
        store.apply(ChangeSet(files=[dataclasses.replace(file_write("c", ["cold"]), expected_revision=1)]))
        assert _bounds(store)["warm"][0] == pytest.approx(3.0) and _bounds(store)["warm"][1] == 3
        assert _bounds(store)["cache"][1] == 1
    finally:
        store.close()


def _corpus(seed: int) -> list[FileWrite]:
    """Lines where a few words are rare and a few are everywhere, some repeated in one line."""
    rng = random.Random(seed)
    common = ["billing", "cache", "deploy", "retry", "worker", "ledger"]
    rare = ["pgvector", "outage", "upgrade", "friday"]
    files = []
    for f in range(60):
        lines = []
        for _ in range(20):
            words = rng.choices(common, k=rng.randint(1, 4)) + rng.choices(["the", "we", "fix", "run"], k=3)
            if rng.random() < 0.05:
                words.append(rng.choice(rare))
            lines.append(" ".join(words))
        files.append(file_write(f"f{f}", list(dict.fromkeys(lines))))
    return files


@pytest.mark.parametrize("seed", [1, 2])
def test_two_part_scoring_answers_like_scoring_every_candidate(
    seed: int, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = PostgresStore.open(pg_url, background_fold=False)
    split: list[int] = []
    real = _search._singles

    def counted(*args: object) -> list[tuple[str, float]]:
        out = real(*args)  # type: ignore[arg-type]
        split.append(len(out))
        return out

    try:
        store.apply(ChangeSet(files=_corpus(seed)))
        rng = random.Random(seed * 11)
        words = ["billing", "cache", "deploy", "retry", "worker", "ledger", "pgvector", "outage", "upgrade", "fix"]
        queries = [" ".join(rng.sample(words, rng.randint(2, 4))) for _ in range(25)]
        for query in queries:
            for limit in (1, 5, 20, 100):
                monkeypatch.setattr(_search, "_singles", counted)
                got = store.search_segments_lexical(expand_query(query), {}, None, limit)
                monkeypatch.setattr(_search, "_singles", lambda *args: [])
                want = store.search_segments_lexical(expand_query(query), {}, None, limit)
                assert [(h.id, h.score) for h in got] == [(h.id, h.score) for h in want], (query, limit)
        assert any(split), "no query was scored in two parts: the test corpus no longer exercises the split"
    finally:
        store.close()


def _pending_list_off(store: PostgresStore) -> bool:
    import sqlalchemy as sa

    with store._engine.connect() as conn:
        options = conn.execute(
            sa.text(
                "SELECT relname, reloptions FROM pg_class WHERE relname IN ('memu_segments_tsv', 'memu_resources_tsv')"
            )
        ).all()
    return len(options) == 2 and all("fastupdate=off" in (row.reloptions or []) for row in options)


def test_lexical_indexes_take_a_commit_without_a_pending_list(pg_url: str) -> None:
    store = PostgresStore.open(pg_url, background_fold=False)
    try:
        store.apply(ChangeSet(files=[file_write("a", ["a line to index"])]))
        assert _pending_list_off(store)
        assert len(store.search_segments_lexical("index line", {}, None, 5)) == 1
    finally:
        store.close()


def test_a_store_at_0004_gets_its_bounds_on_upgrade(new_database: Callable[[], str]) -> None:
    import sqlalchemy as sa
    from alembic import command
    from memu_backend_postgres._schema import HEAD_REVISION
    from memu_backend_postgres._url import normalise_url
    from memu_backend_postgres.migrate import _alembic_config

    url = new_database()
    store = PostgresStore.open(url, background_fold=False)
    store.apply(ChangeSet(files=[file_write("a", ["retry retry billing"], contexts=["## retry"])]))
    store.close()
    engine = sa.create_engine(normalise_url(url))
    try:
        with engine.begin() as conn:  # back to the schema before the bounds, as an old store has it
            command.downgrade(_alembic_config(conn), "0004")
    finally:
        engine.dispose()
    assert PostgresStore.schema_revision(url) == "0004"
    store = PostgresStore.open(url, background_fold=False)  # upgrades on open
    try:
        assert PostgresStore.schema_revision(url) == HEAD_REVISION == "0007"
        assert _tfmax(store) == pytest.approx({"retry": 2.4, "billing": 1.0})
        assert {term: shortest for term, (_, shortest) in _bounds(store).items()} == {"retry": 4, "billing": 4}
        assert _pending_list_off(store)
        (hit,) = store.search_segments_lexical("retry billing", {}, None, 5)
        assert hit.score > 0
    finally:
        store.close()
