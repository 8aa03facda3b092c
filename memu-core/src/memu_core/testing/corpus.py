"""Seeded corpora of developer notes: the shape the benchmarks time and the search tests probe.

A corpus is a list of recall files (the ``memu commit`` payload shape) whose lines draw on a
small vocabulary, so on a large store a common word recurs in tens of thousands of lines: the
case where lexical search must narrow its candidates without losing answers. Every corpus
derives from a seed, so two runs (and two stores) see the same data.
"""

from __future__ import annotations

import random

SEED = 20240217
"""The default seed of every corpus."""

TOPICS: tuple[str, ...] = tuple(
    """
    deploy release database migration cache queue worker scheduler auth token login session api
    endpoint client server proxy certificate docker kubernetes helm terraform ansible nginx postgres
    sqlite redis kafka webhook cron backup restore logging metrics tracing alerting pytest fixture
    coverage linting typing refactor benchmark profiling memory latency throughput timeout retry
    rate limit pagination cursor index schema frontend react css build bundle webpack vite rust
    cargo golang module python poetry pip venv node npm yarn git branch rebase merge review ci
    pipeline artifact secret vault ssh
    """.split()  # noqa: SIM905 - a word list reads better as prose
)
"""Topic words: about 55% of a generated line."""

VERBS: tuple[str, ...] = tuple(
    """
    prefers uses avoids fixed configured pinned documented tested moved renamed replaced upgraded
    debugged measured enabled disabled split
    """.split()  # noqa: SIM905
)
"""Verbs: about 15% of a generated line."""

FILLER: tuple[str, ...] = (
    *"the a for with after before when because in on".split(),  # noqa: SIM905
    *("the team", "locally", "in production", "on staging", "every night", "by default", "on macOS", "on Linux"),
)
"""Function words and phrases: the rest of a generated line."""


def sentence(rng: random.Random, words: int) -> str:
    """``words`` vocabulary picks and a numbered identifier, as one capitalised sentence."""
    parts: list[str] = []
    while len(parts) < words:
        roll = rng.random()
        pool = TOPICS if roll < 0.55 else VERBS if roll < 0.7 else FILLER
        parts.append(rng.choice(pool))
    # A numbered identifier makes lines distinct, as real notes (versions, ports, tickets) are.
    parts.append(f"#{rng.randrange(100_000)}")
    return " ".join(parts).capitalize() + "."


def generate_files(
    count: int, *, seed: int = SEED, prefix: str = "note", lines: tuple[int, int] = (1, 3)
) -> list[dict[str, str]]:
    """``count`` memory files (name, description, content of ``lines`` bullet lines), reproducible."""
    rng = random.Random(f"{seed}:{prefix}:{count}")
    files = []
    for i in range(count):
        topic = rng.choice(TOPICS)
        body = [f"- {sentence(rng, rng.randint(6, 16))}" for _ in range(rng.randint(*lines))]
        files.append(
            {
                "track": "memory",
                "name": f"{prefix}-{i:06d}-{topic}",
                "description": sentence(rng, 5),
                "content": "\n".join(body),
            }
        )
    return files
