"""Retrieval quality on LoCoMo: turn-level recall@k through memu's public commit and retrieve path.

Each conversation is committed the way an agent would keep it: one memory file per session, one
line per dialogue turn carrying its dia_id, the speaker and the session's date, in its own
scope (``user_id`` = the conversation's id). Every question is then retrieved at top-k and scored
with LoCoMo's own recall@k: the share of the question's evidence dia_ids among the retrieved
turns. The data is read from the path given (never copied into the repository: CC BY-NC 4.0).

    python tests/bench/bench_locomo.py [path/to/locomo10.json] [--modes lexical,dense,hybrid]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _harness

from memu_core._engine.engine import LocalEngine
from memu_core._engine.segments import split_long
from memu_core._retrieve_output import DEFAULT_MAX_BYTES, fit, render, shape_for_agent
from memu_core.interfaces import Embedder

DEFAULT_DATA = _harness.REPO_ROOT.parent / "shared" / "bench-data" / "locomo" / "locomo10.json"
KS = (5, 10, 25)
MODES = ("lexical", "dense", "hybrid")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
BAR_CATEGORIES = (1, 2, 3, 4)
BAR = 0.75
ANCHORS = (
    # LoCoMo paper (Maharana et al., ACL 2024, arXiv:2402.17753), Table 3: DRAGON over dialogue turns.
    ("DRAGON, dialogue turns (LoCoMo paper, Table 3)", {5: 0.567, 10: 0.662, 25: 0.767}),
)
_DIA_ID = re.compile(r"^D(\d+):(\d+)$")
_SESSION = re.compile(r"^session_(\d+)$")
_DATE = re.compile(r"\bon\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$")


@dataclass
class Question:
    """One scorable question: its conversation, category and evidence turns."""

    conversation: str
    category: int
    text: str
    evidence: frozenset[str]


@dataclass
class Conversation:
    """A conversation as recall files, plus the map from stored line text back to dia_id."""

    sample_id: str
    files: list[dict[str, str]]
    line_ids: dict[str, str] = field(default_factory=dict)


def session_date(raw: str) -> str:
    """``"1:56 pm on 8 May, 2023"`` → ``"8 May 2023"`` (the raw text when it has another shape)."""
    match = _DATE.search(raw.strip())
    return f"{match.group(1)} {match.group(2)} {match.group(3)}" if match else raw.strip()


def turn_line(turn: Mapping[str, Any], date: str) -> str:
    """One memory line per turn: dia_id, date, speaker, what was said (and any shared photo)."""
    text = " ".join(str(turn.get("text", "")).split())
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shared a photo: {' '.join(str(caption).split())}]"
    return f"{turn['dia_id']} ({date}) {turn['speaker']}: {text}"


def build_conversation(sample: Mapping[str, Any]) -> Conversation:
    """Recall files for every session that has turns (some date keys have none)."""
    conv = sample["conversation"]
    out = Conversation(sample_id=str(sample["sample_id"]), files=[])
    a, b = conv.get("speaker_a", "A"), conv.get("speaker_b", "B")
    numbers = sorted(int(m.group(1)) for key in conv if (m := _SESSION.match(key)))
    for n in numbers:
        turns = conv.get(f"session_{n}") or []
        if not turns:
            continue
        date = session_date(str(conv.get(f"session_{n}_date_time", "")))
        name = f"session-{n:02d}"
        description = f"Conversation between {a} and {b}, session {n}, {date}"
        lines = [turn_line(t, date) for t in turns]
        content = "\n".join(lines)
        out.files.append({"track": "memory", "name": name, "description": description, "content": content})
        # Map every stored segment back to its turn with the engine's own line splitting (a long
        # turn becomes several segments; each counts as that turn).
        for line, turn in zip(lines, turns, strict=True):
            for piece in split_long(line):
                out.line_ids.setdefault(piece, str(turn["dia_id"]))
    return out


def questions_of(sample: Mapping[str, Any], known: set[str]) -> tuple[list[Question], dict[str, int]]:
    """Scorable questions, and counts of the skipped ones by reason."""
    kept: list[Question] = []
    skipped: dict[str, int] = defaultdict(int)
    for qa in sample.get("qa", []):
        evidence = qa.get("evidence") or []
        category = qa.get("category")
        if category not in CATEGORIES:
            skipped["unknown category"] += 1
            continue
        if not evidence:
            skipped["empty evidence"] += 1
            continue
        if not all(isinstance(e, str) and _DIA_ID.match(e) for e in evidence):
            skipped["malformed evidence id"] += 1
            continue
        if not all(e in known for e in evidence):
            skipped["evidence id not in the conversation"] += 1
            continue
        kept.append(Question(str(sample["sample_id"]), int(category), str(qa["question"]), frozenset(evidence)))
    return kept, dict(skipped)


def local_embedder(cache_dir: Path | None) -> Embedder:
    """MiniLM through memu-embed-local, behind a disk cache unless ``cache_dir`` is ``None``."""
    from memu_embed_local import LocalEmbedder

    inner: Embedder = LocalEmbedder()
    if cache_dir is None:
        return inner
    from _embedcache import CachedEmbedder

    return CachedEmbedder(inner, cache_dir / "locomo-vectors.sqlite")


def open_engine(store_kind: str, workdir: Path, embedder: Embedder | None) -> LocalEngine:
    """A local engine over a fresh store of ``store_kind`` (``sqlite`` or ``memory``)."""
    if store_kind == "sqlite":
        from memu_core._stores.sqlite.store import SqliteStore

        store: Any = SqliteStore.open(str(workdir / "locomo.db"))
    else:
        from memu_core._stores.memory import MemoryStore as MemStore

        store = MemStore.open("memory://")
    return LocalEngine(store, embedder=embedder)


@dataclass
class Scores:
    """Sums of recall per (mode, k, category) and question counts per category."""

    sums: dict[tuple[str, int, int], float] = field(default_factory=lambda: defaultdict(float))
    counts: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    sizes: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    """Bytes of each printed answer, per mode."""

    def mean(self, mode: str, k: int, cats: Iterable[int]) -> float | None:
        """Mean recall over the questions of ``cats`` (``None`` when there are none)."""
        cats = list(cats)
        n = sum(self.counts[c] for c in cats)
        return sum(self.sums[(mode, k, c)] for c in cats) / n if n else None


def evaluate(
    engine: LocalEngine,
    conversations: Mapping[str, Conversation],
    questions: Sequence[Question],
    modes: Sequence[str],
    ks: Sequence[int],
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Scores:
    """Retrieve every question at every k in every mode and accumulate recall.

    What is scored is what a host's ``retrieve`` prints: the answer shaped for the agent and fit
    to ``max_bytes`` (``0`` = the engine's whole answer), with no mirror, so every file's text is
    inline (trimmed), the largest form an answer takes. Segments the budget leaves out count as
    not retrieved."""
    scores = Scores()
    for q in questions:
        scores.counts[q.category] += 1
    for mode in modes:
        for top, prefixes in _retrievals(ks):
            for q in questions:
                result = engine.progressive_retrieve(q.text, {"user_id": q.conversation}, top_k=top, mode=mode)
                printed = fit(shape_for_agent(result, None), max_bytes)
                scores.sizes[mode].append(len(render(printed).encode()))
                ids = conversations[q.conversation].line_ids
                turns = [ids.get(s["text"]) for s in printed["segments"]]
                for k in prefixes:
                    found = {t for t in turns[:k] if t is not None}
                    scores.sums[(mode, k, q.category)] += len(found & q.evidence) / len(q.evidence)
    return scores


def _retrievals(ks: Sequence[int]) -> list[tuple[int, list[int]]]:
    """One retrieval per distinct candidate pool: ``(top_k to ask for, ks scored on its prefix)``.

    The engine sizes its candidate pool from top_k (``max(k * CANDIDATES_PER_RESULT,
    MIN_CANDIDATES)``); two ks with the same pool rank identically, so the smaller one is exactly
    the prefix of the larger. Different pools are retrieved separately.
    """
    from memu_core._engine import engine as eng

    groups: dict[int, list[int]] = defaultdict(list)
    for k in sorted(set(ks)):
        groups[max(k * eng.CANDIDATES_PER_RESULT, eng.MIN_CANDIDATES)].append(k)
    return [(max(group), group) for group in groups.values()]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def report(scores: Scores, modes: Sequence[str], ks: Sequence[int]) -> list[str]:
    """Markdown tables: overall, categories 1-4 (the bar) and per category, beside the anchors."""
    lines = ["| retriever | questions | " + " | ".join(f"R@{k}" for k in ks) + " |"]
    lines.append("|---|---:|" + "---:|" * len(ks))
    everything = list(CATEGORIES)
    n_all = sum(scores.counts[c] for c in everything)
    n_bar = sum(scores.counts[c] for c in BAR_CATEGORIES)
    for mode in modes:
        lines.append(
            f"| memu {mode}, all categories | {n_all} | "
            + " | ".join(_pct(scores.mean(mode, k, everything)) for k in ks)
            + " |"
        )
    for mode in modes:
        lines.append(
            f"| memu {mode}, categories 1-4 | {n_bar} | "
            + " | ".join(_pct(scores.mean(mode, k, BAR_CATEGORIES)) for k in ks)
            + " |"
        )
    for label, anchor in ANCHORS:
        lines.append(f"| {label} | all | " + " | ".join(_pct(anchor.get(k)) for k in ks) + " |")
    lines += ["", "Per category (recall@10 unless the column says otherwise):", ""]
    head = "| category | questions | " + " | ".join(f"{m} R@{k}" for m in modes for k in ks) + " |"
    lines += [head, "|---|---:|" + "---:|" * (len(modes) * len(ks))]
    for cat, label in CATEGORIES.items():
        cells = " | ".join(_pct(scores.mean(m, k, [cat])) for m in modes for k in ks)
        lines.append(f"| {cat} {label} | {scores.counts[cat]} | {cells} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), help="path to locomo10.json")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: lexical,dense,hybrid")
    parser.add_argument("--ks", default=",".join(map(str, KS)))
    parser.add_argument("--store", choices=("sqlite", "memory"), default="sqlite")
    parser.add_argument("--limit", type=int, default=0, help="only the first N conversations (0 = all)")
    parser.add_argument(
        "--cache-dir",
        default=str(Path(tempfile.gettempdir()) / "memu-bench-cache"),
        help="where turn vectors are cached between runs ('' = no cache)",
    )
    parser.add_argument(
        "--max-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        help="score the answer as printed within this budget (0 = the whole answer)",
    )
    parser.add_argument("--json", dest="json_out", default="", help="also write the scores as JSON here")
    args = parser.parse_args(argv)
    data_path = Path(args.data)
    if not data_path.is_file():
        print(
            f"bench_locomo: {data_path} not found; download data/locomo10.json from "
            "github.com/snap-research/LoCoMo and pass its path",
            file=sys.stderr,
        )
        return 2
    modes = [m for m in args.modes.split(",") if m]
    ks = [int(k) for k in args.ks.split(",") if k]
    samples = json.loads(data_path.read_text(encoding="utf-8"))
    if args.limit:
        samples = samples[: args.limit]

    embedder = local_embedder(Path(args.cache_dir) if args.cache_dir else None) if modes != ["lexical"] else None
    conversations: dict[str, Conversation] = {}
    questions: list[Question] = []
    skipped: dict[str, int] = defaultdict(int)
    with tempfile.TemporaryDirectory(prefix="memu-locomo-") as tmp:
        engine = open_engine(args.store, Path(tmp), embedder)
        started = time.perf_counter()
        turns = 0
        for sample in samples:
            conv = build_conversation(sample)
            conversations[conv.sample_id] = conv
            engine.commit_results(recall_files=conv.files, user={"user_id": conv.sample_id})
            turns += sum(len(f["content"].splitlines()) for f in conv.files)
            kept, why = questions_of(sample, set(conv.line_ids.values()))
            questions += kept
            for reason, n in why.items():
                skipped[reason] += n
        ingest = time.perf_counter() - started
        started = time.perf_counter()
        scores = evaluate(engine, conversations, questions, modes, ks, args.max_bytes)
        query_time = time.perf_counter() - started
        engine.close()

    print("## LoCoMo retrieval quality\n")
    print(_harness.machine_line())
    print()
    print(
        f"Data: `{data_path.name}`, {len(samples)} conversations, "
        f"{sum(len(c.files) for c in conversations.values())} sessions, {turns} turns, "
        f"{len(questions)} questions scored; skipped: "
        + (", ".join(f"{n} {reason}" for reason, n in sorted(skipped.items())) or "none")
        + f". Store: {args.store}. Ingest {ingest:.1f} s, {len(questions) * len(modes) * len(ks)} "
        f"retrievals in {query_time:.1f} s.\n"
    )
    print("\n".join(report(scores, modes, ks)))
    budget = f"within --max-bytes {args.max_bytes}" if args.max_bytes else "with no byte budget"
    print(
        f"\nScored on each answer as a host prints it {budget} (no mirror: file text inline, trimmed); "
        "printed size median (max): "
        + ", ".join(
            f"{m} {statistics.median(scores.sizes[m]) / 1000:.1f} KB ({max(scores.sizes[m]) / 1000:.1f} KB)"
            for m in modes
        )
        + "."
    )
    bar = scores.mean("hybrid", 10, BAR_CATEGORIES) if "hybrid" in modes and 10 in ks else None
    if bar is not None:
        verdict = "met" if bar >= BAR else "NOT met"
        print(f"\nBar: hybrid recall@10 over categories 1-4 = {bar:.3f} (needs ≥ {BAR}): {verdict}.")
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps(
                {
                    f"{m}@{k}": {
                        "all": scores.mean(m, k, CATEGORIES),
                        "1-4": scores.mean(m, k, BAR_CATEGORIES),
                        **{str(c): scores.mean(m, k, [c]) for c in CATEGORIES},
                    }
                    for m in modes
                    for k in ks
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
