"""The Postgres store ranks like the SQLite store: same corpus, same BM25 scores, same order."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from memu_backend_postgres import PostgresStore

from memu_core.testing.store_contract import file_write
from memu_core.types import ChangeSet, ResourceWrite, Scope

_WORDS = [
    "deploy",
    "docker",
    "compose",
    "kafka",
    "consumer",
    "lag",
    "alembic",
    "migration",
    "pytest",
    "fixture",
    "release",
    "checklist",
    "postgres",
    "index",
    "vector",
    "search",
    "cache",
    "token",
    "budget",
    "retry",
    "timeout",
    "config",
    "parser",
    "yaml",
    "toml",
    "café",
    "zürich",
    "review",
    "branch",
    "merge",
    "rebase",
    "hook",
    "lint",
    "format",
    "schema",
    "upgrade",
    "rollback",
]


def _corpus(seed: int) -> tuple[list, list]:  # type: ignore[type-arg]
    rng = random.Random(seed)
    files = []
    for f in range(12):
        lines = list(dict.fromkeys(" ".join(rng.choices(_WORDS, k=rng.randint(2, 9))) for _ in range(8)))
        contexts = [f"## {rng.choice(_WORDS)}" if rng.random() < 0.5 else "" for _ in lines]
        scope = Scope(("u1", "u2")[f % 2])
        files.append(
            file_write(
                f"file-{f}", lines, scope=scope, contexts=contexts, track=("memory", "skill")[f % 3 == 0]
            )
        )
    resources = [
        ResourceWrite(
            Scope(), f"src/{rng.choice(_WORDS)}/{i}.py", " ".join(rng.choices(_WORDS, k=4)) if i % 4 else None
        )
        for i in range(10)
    ]
    return files, resources


@pytest.mark.parametrize("seed", [1, 2])
def test_lexical_scores_match_sqlite(seed: int, pg_url: str, tmp_path: Path) -> None:
    sqlite_mod = pytest.importorskip("memu_core._stores.sqlite")
    files, resources = _corpus(seed)
    pg = PostgresStore.open(pg_url)
    lite = sqlite_mod.SqliteStore.open(str(tmp_path / "parity.db"))
    try:
        for store in (pg, lite):
            store.apply(ChangeSet(files=files, resources=resources))

        def seg_key(store: object, hits: list) -> list[tuple[str, str, float]]:  # type: ignore[type-arg]
            segs = store.fetch_segments([h.id for h in hits])  # type: ignore[attr-defined]
            files_by_id = store.fetch_files([s.file_id for s in segs.values()])  # type: ignore[attr-defined]
            return [(files_by_id[segs[h.id].file_id].name, segs[h.id].text, round(h.score, 6)) for h in hits]

        rng = random.Random(seed * 7)
        queries = [" ".join(rng.choices(_WORDS, k=rng.randint(1, 4))) for _ in range(15)] + ["Cafe ZURICH"]
        for query in queries:
            for where, tracks in (({}, None), ({"user_id": "u1"}, ["memory"])):
                got = seg_key(pg, pg.search_segments_lexical(query, where, tracks, 20))
                want = seg_key(lite, lite.search_segments_lexical(query, where, tracks, 20))
                # Same scores in the same order; equal scores may come out in either order (ids
                # differ between stores), and a tie at the limit may keep different members.
                assert [s for _, _, s in got] == [s for _, _, s in want], query
                floor = got[-1][2] if got else 0.0
                assert sorted(g for g in got if g[2] > floor) == sorted(w for w in want if w[2] > floor), (
                    query
                )
            got_r = pg.search_resources_lexical(query, {}, 10)
            want_r = lite.search_resources_lexical(query, {}, 10)
            assert [round(h.score, 6) for h in got_r] == [round(h.score, 6) for h in want_r], query
    finally:
        pg.close()
        lite.close()
