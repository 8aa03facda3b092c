"""What every benchmark shares: timing with warm-up and repeats, peak RSS of child processes,
the machine line, seeded corpora, cached stores and the planted answers every retrieval is
checked against.

Benchmarks are scripts (``python tests/bench/bench_x.py``) that print Markdown; ``run_all.py``
runs them all. Figures are medians with the min-max range over several runs, never a single
sample, and never asserted against a clock in the test suite. A retrieval benchmark checks every
answer it times (:func:`check_answer`, :func:`check_hits`) and fails on an empty or wrong one:
a fast empty answer is the one figure that must never reach the page.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from memu_core.testing import corpus
from memu_core.testing.corpus import generate_files

REPO_ROOT = Path(__file__).resolve().parents[2]
SIZES = (10, 1_000, 10_000, 100_000)
"""Store sizes in recall files."""
SEED = corpus.SEED
"""Every corpus derives from this seed, so two runs measure the same data."""
CACHE_ENV = "MEMU_BENCH_CACHE"


# -- timing -----------------------------------------------------------------------------------
@dataclass
class Stats:
    """Samples of one figure (seconds, or whatever ``unit`` says) and their summary."""

    samples: list[float]
    unit: str = "s"
    peak_rss_mb: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float:
        """The median sample."""
        return statistics.median(self.samples)

    def cell(self) -> str:
        """``median (min-max)`` in a unit that keeps three significant figures readable."""
        if self.unit != "s":
            return f"{_num(self.median)} ({_num(min(self.samples))}-{_num(max(self.samples))}) {self.unit}"
        scale, unit = (1000.0, "ms") if self.median < 1 else (1.0, "s")
        lo, hi = min(self.samples) * scale, max(self.samples) * scale
        return f"{_num(self.median * scale)} {unit} ({_num(lo)}-{_num(hi)})"

    def rss_cell(self) -> str:
        """Peak resident memory in MiB, or a dash when not measured."""
        return "—" if self.peak_rss_mb is None else f"{self.peak_rss_mb:.0f} MiB"


def _num(x: float) -> str:
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def measure(
    fn: Callable[[], Any],
    *,
    repeats: int = 5,
    warmup: int = 1,
    check: Callable[[Any], object] | None = None,
) -> Stats:
    """Call ``fn`` ``warmup`` times untimed, then ``repeats`` times timed (wall clock).

    ``check`` receives every return value of ``fn`` (warm-ups included), outside the timed
    region, and raises to fail the benchmark.
    """
    for _ in range(warmup):
        out = fn()
        if check is not None:
            check(out)
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - started)
        if check is not None:
            check(out)
    return Stats(samples)


@dataclass
class ProcessRun:
    """One finished child process: wall time, peak RSS, exit code and output."""

    seconds: float
    peak_rss_mb: float
    returncode: int
    stdout: str
    stderr: str


def measure_process(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    repeats: int = 5,
    warmup: int = 1,
    timeout: float = 300,
    check: Callable[[str], object] | None = None,
) -> Stats:
    """Time ``cmd`` as a fresh process ``repeats`` times after ``warmup`` runs; fail on a bad exit.

    ``check`` receives the standard output of every run (warm-ups included) once the run has
    ended, so it costs the timed process nothing, and raises to fail the benchmark.
    """
    peak = 0.0
    samples = []
    for i in range(warmup + repeats):
        run = run_process(cmd, env=env, timeout=timeout)
        if run.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {run.returncode}: {run.stderr.strip()[-500:]}")
        if check is not None:
            check(run.stdout)
        peak = max(peak, run.peak_rss_mb)
        if i >= warmup:
            samples.append(run.seconds)
    return Stats(samples, peak_rss_mb=peak)


def run_process(
    cmd: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 300
) -> ProcessRun:
    """Run ``cmd`` to the end; reaping it with ``wait4`` gives its own peak RSS (in MiB)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        # Own session: a timeout stops the child and everything it started.
        proc = subprocess.Popen(
            list(cmd),
            env=dict(env) if env is not None else None,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        deadline = started + timeout
        polled = 0.0
        while True:
            polled = max(polled, _vm_hwm_mb(proc.pid))
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.002)
        elapsed = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        # Linux carries the parent's high-water mark into a forked child's ru_maxrss (it
        # survives exec), so a child of a big benchmark process would report the parent's
        # size. The child's own VmHWM, polled while it runs, is the figure; ru_maxrss is the
        # fallback for a child too quick to be seen (or a system without /proc).
        peak = polled if polled else usage.ru_maxrss / 1024.0
        return ProcessRun(elapsed, peak, proc.returncode, out.read(), err.read())


def _vm_hwm_mb(pid: int) -> float:
    """The peak resident set of ``pid`` so far (``VmHWM``), in MiB; 0 when unreadable."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


# -- the machine ------------------------------------------------------------------------------
def memu_version() -> str:
    """The installed memu-core version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memu-core")
    except PackageNotFoundError:
        return "unknown"


def cpu_model() -> str:
    """The CPU's model name where Linux tells it, else the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, str]:
    """Cores, CPU, memory, OS, Python, memu version and the date: the context of every figure."""
    info = {
        "cores": str(os.cpu_count()),
        "cpu": cpu_model(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "memu": memu_version(),
        "date": f"{_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M} UTC",
    }
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        info["memory"] = f"{pages / 2**30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        pass
    with contextlib.suppress(OSError):
        info["load"] = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    return info


def machine_line() -> str:
    """One Markdown line describing the machine and the date."""
    i = machine_info()
    parts = [
        f"{i['cores']} cores ({i['cpu']})",
        i.get("memory", ""),
        i["os"],
        f"Python {i['python']}",
        f"memu {i['memu']}",
        i["date"],
    ]
    if "load" in i:
        parts.append(f"load average at start {i['load']}")
    return "Machine: " + ", ".join(p for p in parts if p) + "."


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table; the first column left-aligned, the rest right-aligned."""
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def python() -> str:
    """The interpreter running the benchmarks (children use the same environment)."""
    return sys.executable


# -- seeded corpora ---------------------------------------------------------------------------
# Files come from memu_core.testing.corpus (shared with the search tests); sessions and queries
# draw on its vocabulary.
def generate_sessions(
    count: int, *, records: int = 200, seed: int = SEED
) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """``count`` sessions of ``records`` conversation records each (role, text, timestamp), as
    ``(session_id, records)``; host benchmarks write them in their own log formats."""
    rng = random.Random(f"{seed}:sessions:{count}:{records}")
    start = _dt.datetime(2025, 1, 1, tzinfo=_dt.UTC)
    for s in range(count):
        stamp = start + _dt.timedelta(hours=s)
        out = []
        for r in range(records):
            out.append(
                {
                    "role": "user" if r % 2 == 0 else "assistant",
                    "text": corpus.sentence(rng, rng.randint(8, 40)),
                    "timestamp": (stamp + _dt.timedelta(seconds=20 * r)).isoformat(),
                }
            )
        yield f"session-{s:06d}", out


def queries(count: int, *, seed: int = SEED) -> list[str]:
    """Agent-like questions over the corpus vocabulary."""
    rng = random.Random(f"{seed}:queries")
    return [
        f"how do we {rng.choice(corpus.VERBS)} the {rng.choice(corpus.TOPICS)} {rng.choice(corpus.TOPICS)}"
        for _ in range(count)
    ]


# -- planted answers --------------------------------------------------------------------------
# Every cached store holds, beside its generated files, one short file per benchmark query whose
# only line is exactly that query's content words. BM25 ranks such a line first (it holds every
# term and is shorter than any generated line), so a retrieval that does not return it among its
# first k answers is wrong, and one that returns nothing is the bug of issue 12: a fast, empty
# answer timed as if it were a search.
PLANTED_QUERIES = 50
"""How many of :func:`queries` (from the first) have a planted answer in every cached store."""
PLANTED_PREFIX = "planted"


class WrongAnswer(AssertionError):
    """A timed retrieval answered nothing, or not its planted answer: its figure must not be reported."""


def planted_line(query: str) -> str:
    """The one line of ``query``'s planted file: its search terms (stopwords dropped), in order."""
    from memu_core.text import query_terms

    return " ".join(query_terms(query))


def planted_files(questions: Sequence[str] | None = None, *, prefix: str = PLANTED_PREFIX) -> list[dict[str, str]]:
    """One memory file per distinct set of search terms among ``questions`` (default: the first
    :data:`PLANTED_QUERIES` of :func:`queries`), in the ``memu commit`` payload shape."""
    out: dict[frozenset[str], dict[str, str]] = {}
    for q in questions if questions is not None else queries(PLANTED_QUERIES):
        line = planted_line(q)
        key = frozenset(line.split())
        if key not in out:
            name = f"{prefix}-{len(out):03d}"
            out[key] = {"track": "memory", "name": name, "description": "", "content": line}
    return list(out.values())


def planted_name(query: str, *, prefix: str = PLANTED_PREFIX) -> str:
    """The name of ``query``'s planted file (a query with the same search terms shares it)."""
    key = frozenset(planted_line(query).split())
    for f in planted_files(prefix=prefix):
        if frozenset(f["content"].split()) == key:
            return f["name"]
    raise KeyError(f"no planted answer for {query!r}: benchmark queries come from queries({PLANTED_QUERIES})")


def answer_files(result: Mapping[str, Any], k: int) -> list[str]:
    """The names of the first ``k`` files of a retrieve result, then the files of its first ``k``
    segments (engine results name a segment's file by id, ``memu retrieve`` output by path)."""
    files = list(result.get("files") or [])
    names = [str(f.get("name")) for f in files[:k]]
    by_id = {f.get("id"): str(f.get("name")) for f in files}
    for seg in list(result.get("segments") or [])[:k]:
        source = seg.get("source_file")
        name = source.rsplit("/", 1)[-1] if isinstance(source, str) else by_id.get(seg.get("recall_file_id"))
        if name is not None:
            names.append(name)
    return list(dict.fromkeys(names))


def check_answer(
    result: Mapping[str, Any], query: str, k: int, *, mode: str | None = None, prefix: str = PLANTED_PREFIX
) -> None:
    """Raise :class:`WrongAnswer` unless ``result`` (a ``progressive_retrieve`` result or the JSON
    ``memu retrieve`` prints) has segments and files, ran in ``mode`` when given, and, in lexical
    and hybrid mode, holds ``query``'s planted file among its first ``k`` files or segments.

    Dense mode is only checked for an answer: the stores' vectors are stand-ins from a hash of each
    text (see :class:`StandInEmbedder`), so which line is nearest the query is noise.
    """
    segments, files = result.get("segments") or [], result.get("files") or []
    used = result.get("mode")
    if not segments or not files:
        raise WrongAnswer(f"{query!r} ({used}): an empty answer, {len(segments)} segments and {len(files)} files")
    if mode is not None and used != mode:
        raise WrongAnswer(f"{query!r}: answered in mode {used!r}, the benchmark times {mode!r}")
    if used == "dense":
        return
    want = planted_name(query, prefix=prefix)
    found = answer_files(result, k)
    if want not in found:
        raise WrongAnswer(f"{query!r} ({used}): its planted file {want} is not in the first {k} answers {found}")


def check_output(stdout: str, query: str, k: int, *, mode: str | None = None) -> None:
    """:func:`check_answer` on the JSON a ``retrieve`` command printed."""
    import json

    try:
        result = json.loads(stdout)
    except ValueError as exc:
        raise WrongAnswer(f"{query!r}: the command printed no JSON answer: {stdout[:200]!r}") from exc
    check_answer(result, query, k, mode=mode)


def check_hits(store: Any, hits: Sequence[Any], what: str, *, planted: str | None = None, k: int = 10) -> None:
    """Raise :class:`WrongAnswer` unless a store-level search returned hits and, when ``planted``
    (a segment text) is given, that segment is among the first ``k`` hits."""
    if not hits:
        raise WrongAnswer(f"{what}: no hits")
    if planted is None:
        return
    top = store.fetch_segments([hit.id for hit in hits[:k]])
    if not any(seg.text == planted for seg in top.values()):
        raise WrongAnswer(f"{what}: the planted segment {planted!r} is not among the first {k} hits")


# -- stand-in vectors for large stores --------------------------------------------------------
class StandInEmbedder:
    """Deterministic unit vectors from each text's hash, under another embedder's fingerprint.

    Embedding 300,000 lines with MiniLM takes hours on two cores, so the stores used for *timing*
    get these instead; the query in a timed retrieve is still embedded by the real model, and
    search cost does not depend on the values. Retrieval *quality* is measured on LoCoMo with
    the real model. Builds an :class:`Embedder` lazily to keep numpy off import.
    """

    name: ClassVar[str] = "stand-in"

    @staticmethod
    def build(provider: str = "local", model: str = "all-MiniLM-L6-v2", dimension: int = 384) -> Any:
        """An ``Embedder`` instance whose fingerprint is ``provider/model/dimension``."""
        import numpy as np

        from memu_core.interfaces import Embedder
        from memu_core.types import Fingerprint

        fp = Fingerprint(provider, model, dimension)

        class _StandIn(Embedder):
            name: ClassVar[str] = "stand-in"
            calls = 0

            @classmethod
            def from_settings(cls, settings: Any) -> Embedder:
                return cls()

            @property
            def fingerprint(self) -> Fingerprint:
                return fp

            def embed(self, texts: Sequence[str]) -> list[list[float]]:
                if not texts:
                    return []
                type(self).calls += 1
                out = np.empty((len(texts), dimension), dtype=np.float32)
                for i, text in enumerate(texts):
                    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
                    out[i] = np.random.default_rng(seed).standard_normal(dimension, dtype=np.float32)
                out /= np.linalg.norm(out, axis=1, keepdims=True)
                return out.tolist()

        return _StandIn()


# -- cached stores ----------------------------------------------------------------------------
def cache_dir() -> Path:
    """Where generated stores live between runs (``$MEMU_BENCH_CACHE`` or the temp dir)."""
    root = Path(os.environ.get(CACHE_ENV) or Path(tempfile.gettempdir()) / "memu-bench-cache")
    root.mkdir(parents=True, exist_ok=True)
    return root


def _code_tag() -> str:
    """A digest of the code that decides a store's bytes (schema, writes, segmentation)."""
    import memu_core

    root = Path(memu_core.__file__).parent
    digest = hashlib.sha256(b"v1")
    for rel in ("_engine/segments.py", "_stores/sqlite/writes.py", "_stores/sqlite/migrations/versions"):
        target = root / rel
        for f in sorted(target.rglob("*.py")) if target.is_dir() else [target]:
            digest.update(f.read_bytes())
    return digest.hexdigest()[:12]


STORE_FORMAT = "planted-v1"
"""Bumped when what a cached store holds changes (v1: the planted answers), so old ones are rebuilt."""


def store_path(size: int, *, vectors: bool) -> Path:
    """A SQLite store with ``size`` generated files and the planted answers (built once, then reused).

    The name carries memu's version and the seed, so a new engine or corpus builds a new store.
    """
    key = f"{memu_version()}:{SEED}:{size}:{vectors}:{_code_tag()}:{STORE_FORMAT}"
    tag = hashlib.sha256(key.encode()).hexdigest()[:10]
    path = cache_dir() / f"store-{size}-{'hybrid' if vectors else 'lexical'}-{tag}.db"
    done = path.with_suffix(".ok")
    if done.exists() and path.exists():
        return path
    # Stores of this size built by older code are dead weight (a 100,000-file one is ~1 GB).
    for stale in path.parent.glob(f"store-{size}-{'hybrid' if vectors else 'lexical'}-*"):
        stale.unlink(missing_ok=True)
    from memu_core._engine.engine import LocalEngine
    from memu_core._stores.sqlite.store import SqliteStore

    engine = LocalEngine(SqliteStore.open(str(path)), embedder=StandInEmbedder.build() if vectors else None)
    files = generate_files(size)
    for start in range(0, len(files), 2_000):
        engine.commit_results(recall_files=files[start : start + 2_000])
    engine.commit_results(recall_files=planted_files())
    engine.close()
    done.write_text("ok")
    return path


_Target = TypeVar("_Target")


def without_answer_caches(target: _Target) -> _Target:
    """``target`` (an engine or a store) with the caches that answer a repeated question from
    memory turned off: the engine's query vectors and the SQLite store's word-search hits.

    A benchmark that asks a question more than once in one process (modes one after another,
    settings interleaved, a short question list cycled) would otherwise time those caches, not
    the search. Rows meant to time repeated questions (``bench_warm_scale.py``) keep them and say
    so. Returns ``target``.
    """
    from memu_core._engine.queryvectors import QueryVectors
    from memu_core._stores.sqlite.wordhits import WordHits

    if hasattr(target, "query_vectors"):
        target.query_vectors = QueryVectors(size=0)
    store = getattr(target, "store", target)
    if hasattr(store, "word_hits"):
        store.word_hits = WordHits(size=0)
    return target


def isolated_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The environment for a child memu process: a private HOME, offline, no warm server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update(
        {
            "HOME": str(tmp),
            "MEMU_CONFIG_ENV": str(tmp / "config.env"),
            "MEMU_SERVE_AUTOSTART": "0",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
    )
    env.update(extra)
    return env
