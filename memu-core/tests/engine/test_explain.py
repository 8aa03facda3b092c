"""``progressive_retrieve(explain=True)``: each line's score split into the shares that made it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memu_core._engine.engine import LocalEngine
from memu_core._stores.sqlite.store import SqliteStore
from memu_core.testing.embedders import HashingEmbedder

FILES = [
    {
        "name": "release",
        "description": "how we ship",
        "content": "Cut the release branch on Tuesday.\nDeploy the release to staging first.\nThe painting is blue.",
    },
    {"name": "garden", "description": "plants", "content": "Water the tomatoes every morning."},
]


@pytest.fixture(params=["lexical", "hybrid"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> LocalEngine:
    store = SqliteStore.open(str(tmp_path / "m.sqlite3"))
    embedder = HashingEmbedder() if request.param == "hybrid" else None
    engine = LocalEngine(store, embedder=embedder)
    engine.commit_results(recall_files=FILES)
    return engine


def test_shares_add_up_to_the_score_and_name_the_words(engine: LocalEngine) -> None:
    plain = engine.progressive_retrieve("release deploy paintings", top_k=5)
    explained = engine.progressive_retrieve("release deploy paintings", top_k=5, explain=True)
    # Explaining changes nothing else: same lines, same order, same scores.
    assert [{k: v for k, v in s.items() if k != "why"} for s in explained["segments"]] == plain["segments"]
    assert "why" not in plain["segments"][0]
    for seg in explained["segments"]:
        why = seg["why"]
        total = sum(part["share"] for part in why["parts"]) + why["rest"]
        assert total == pytest.approx(seg["score"], abs=1e-5)
        assert {part["source"] for part in why["parts"]} <= {"lexical", "dense", "phrase"}
    by_text = {s["text"]: s["why"] for s in explained["segments"]}
    assert by_text["Deploy the release to staging first."]["terms"] == ["release", "deploy"]
    # A form of a typed word counts: "paintings" finds "painting".
    assert by_text["The painting is blue."]["terms"] == ["paintings"]
    lexical_ranks = sorted(
        p["rank"] for s in explained["segments"] for p in s["why"]["parts"] if p["source"] == "lexical"
    )
    assert lexical_ranks[0] == 1
    if explained["mode"] == "hybrid":
        assert any(p["source"] == "dense" for s in explained["segments"] for p in s["why"]["parts"])
