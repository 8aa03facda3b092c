"""What every reliability test shares: counts that grow under the soak, seeded randomness, the
environment of a memu subprocess, a SIGKILL at a random moment, and the store's checks.

The bounded form (a plain ``pytest`` run) uses each test's small count; ``MEMU_SOAK=1`` (set by
``nox -s soak``) switches to the large one. ``MEMU_SOAK_SEED`` changes the seed (default fixed, so
the bounded form replays the same kill moments run after run). With ``MEMU_RELIABILITY_REPORT``
naming a folder, each test writes its figures there as ``<name>.json``; the soak prints them.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

SOAK = os.environ.get("MEMU_SOAK", "").strip() not in ("", "0")
SCALE = float(os.environ.get("MEMU_SOAK_SCALE", "1"))
"""Multiplies every soak count (``0.25`` for a quick soak, ``2`` for a long one)."""
SEED = int(os.environ.get("MEMU_SOAK_SEED", "20260820"))
RUN_TIMEOUT = 180.0
"""Seconds any one memu subprocess may take before the test fails (a hang is a failure too)."""


def count(bounded: int, soak: int) -> int:
    """How many cycles to run: ``bounded`` in the normal suite, ``soak`` under ``MEMU_SOAK=1``."""
    return max(1, round(soak * SCALE)) if SOAK else bounded


def rng(name: str) -> random.Random:
    """A random source seeded by the test's name and the run's seed: the same moments each run."""
    return random.Random(SEED * 1_000_003 + zlib.crc32(name.encode()))


def binary(name: str) -> str:
    """The installed console script ``name`` beside this interpreter."""
    path = Path(sys.executable).with_name(name)
    if not path.exists():
        raise FileNotFoundError(f"{name} is not installed beside {sys.executable}")
    return str(path)


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a memu subprocess: its own ``HOME``, no inherited ``MEMU_*`` setting,
    lexical-only, offline, and never a background ``memu serve`` (it would outlive the test)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMU_", "CLAUDE_CODE_")) and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    env.update(
        HOME=str(home),
        USERPROFILE=str(home),
        MEMU_EMBED_PROVIDER="none",
        MEMU_SERVE_AUTOSTART="0",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        NO_PROXY="127.0.0.1,localhost",
    )
    env.update(extra)
    return env


@dataclass(slots=True)
class Outcome:
    """How one subprocess ended."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    killed: bool
    """Our SIGKILL ended it (it had not exited by itself)."""
    seconds: float

    def explicit(self) -> bool:
        """Exit 0, killed by us, or a refusal that says why: a nonzero code and an ``error:`` line."""
        if self.killed or self.returncode == 0:
            return True
        errors = [line for line in self.stderr.splitlines() if line.startswith("error:")]
        # An internal error is a crash that happened to be caught, not a refusal.
        return self.returncode > 0 and bool(errors) and not any("internal error" in e for e in errors)

    def describe(self) -> str:
        tail = self.stderr.strip().splitlines()[-3:]
        command = " ".join([Path(self.argv[0]).name, *self.argv[1:]])
        return f"{command} -> {self.returncode}: {tail}"


def run(argv: Sequence[str], env: dict[str, str], cwd: Path, *, timeout: float = RUN_TIMEOUT) -> Outcome:
    """Run to the end (within ``timeout``)."""
    return run_and_kill(argv, env, cwd, None, timeout=timeout)


def run_and_kill(
    argv: Sequence[str], env: dict[str, str], cwd: Path, delay: float | None, *, timeout: float = RUN_TIMEOUT
) -> Outcome:
    """Start ``argv``; after ``delay`` seconds send SIGKILL to it (and anything it started), unless
    it already exited. ``delay=None`` lets it finish. Nothing it started is left running."""
    started = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    killed = False
    try:
        if delay is not None:
            try:
                proc.wait(delay)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
        out, err = proc.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    if killed and proc.returncode != -signal.SIGKILL:
        killed = False  # it exited on its own in the instant before the signal
    return Outcome(list(argv), proc.returncode, out, err, killed, time.monotonic() - started)


# -- the SQLite store --------------------------------------------------------------------------


def integrity_problems(db: Path) -> list[str]:
    """What SQLite, its foreign keys and both FTS5 indexes say is wrong with the store (``[]``: nothing)."""
    problems: list[str] = []
    conn = sqlite3.connect(str(db), timeout=30)
    try:
        rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
        if rows != ["ok"]:
            problems.extend(f"integrity_check: {r}" for r in rows)
        problems.extend(f"foreign key: {r}" for r in conn.execute("PRAGMA foreign_key_check"))
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for fts in ("segments_fts", "resources_fts"):
            if fts in tables:
                try:
                    conn.execute(f"INSERT INTO {fts}({fts}) VALUES ('integrity-check')")
                except sqlite3.DatabaseError as exc:
                    problems.append(f"{fts}: {exc}")
        if "segments" in tables:
            orphans = conn.execute(
                "SELECT count(*) FROM segments WHERE file_id NOT IN (SELECT id FROM files)"
            ).fetchone()[0]
            if orphans:
                problems.append(f"{orphans} segments without their file")
    finally:
        conn.close()
    return problems


@dataclass(slots=True)
class StoredFile:
    content: str
    revision: int
    lines: list[str]
    """The text of the file's ``line`` segments, in order."""


def stored_files(db: Path, user_id: str = "default") -> dict[str, StoredFile]:
    """Every recall file of one user as the store holds it, with the segments indexed from it."""
    if not db.exists():
        return {}
    conn = sqlite3.connect(str(db), timeout=30)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "files" not in tables:
            return {}
        out = {
            f"{track}/{name}": StoredFile(content, revision, [])
            for track, name, content, revision in conn.execute(
                "SELECT track, name, content, revision FROM files WHERE user_id = ?", (user_id,)
            )
        }
        for track, name, text in conn.execute(
            "SELECT f.track, f.name, s.text FROM segments s JOIN files f ON f.id = s.file_id "
            "WHERE s.kind = 'line' AND f.user_id = ? ORDER BY s.file_id, s.ordinal",
            (user_id,),
        ):
            out[f"{track}/{name}"].lines.append(text)
    finally:
        conn.close()
    return out


def content_lines(content: str) -> list[str]:
    return [line for line in content.splitlines() if line.strip()]


# -- figures -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    """What a reliability test did and found; written to ``MEMU_RELIABILITY_REPORT`` at the end."""

    name: str
    attempts: int = 0
    killed: int = 0
    """Attempts our SIGKILL ended mid-way (the rest had finished before the moment came)."""
    refused: int = 0
    """Commands that exited nonzero on their own, with an ``error:`` line."""
    refusals: list[str] = field(default_factory=list)
    """The first few refusals, as said."""
    failures: list[str] = field(default_factory=list)
    records_generated: int = 0
    records_lost: int = 0
    records_doubled: int = 0
    seconds: float = 0.0

    def fail(self, what: str) -> None:
        self.failures.append(what)

    def note(self, outcome: Outcome) -> None:
        self.attempts += 1
        self.killed += outcome.killed
        if not outcome.killed and outcome.returncode != 0:
            if outcome.explicit():
                self.refused += 1
                if len(self.refusals) < 10:
                    self.refusals.append(outcome.describe())
            else:
                self.fail(f"no explicit exit: {outcome.describe()}")

    def write(self) -> None:
        folder = os.environ.get("MEMU_RELIABILITY_REPORT")
        if not folder:
            return
        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        data = asdict(self)
        data["failure_count"] = len(self.failures)
        data["soak"] = SOAK
        data["seed"] = SEED
        (path / f"{self.name}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")

    def verdict(self) -> None:
        """Fail the test with every failure found (after all cycles ran, so the soak counts them all)."""
        assert not self.failures, f"{len(self.failures)} failure(s) in {self.attempts} attempts:\n" + "\n".join(
            self.failures[:30]
        )


@contextlib.contextmanager
def tally(name: str) -> Iterator[Tally]:
    t = Tally(name)
    started = time.monotonic()
    try:
        yield t
    finally:
        t.seconds = round(time.monotonic() - started, 1)
        t.write()


# -- a host whose sessions we write: Claude Code ---------------------------------------------

TOKEN = re.compile(r"\brec(\d{6})\b")
HOST = "claude-code"


class BridgeWorld:
    """One home with Claude Code session logs we keep appending to, the ``memu-claude-code``
    binary run as the scheduled bridging run would, and a scripted agent in the LLM's place.

    Every generated record (a user or assistant turn) carries one token ``recNNNNNN``. The agent
    reads each memory job's slice and writes one memory file per slice and run, listing the
    tokens it saw; a record committed twice therefore shows up in two stored files, and a record
    never committed in none.
    """

    def __init__(self, root: Path, random: random.Random, *, max_jobs: int = 6) -> None:
        self.home = root / "home"
        self.project = self.home / "app"
        self.project.mkdir(parents=True)
        self.db = root / "store.sqlite3"
        self.env = cli_env(self.home, MEMU_DB=str(self.db))
        self.logs = self.home / ".claude" / "projects" / "-home-u-app"
        self.logs.mkdir(parents=True)
        self.base = self.home / ".memu" / "hosts" / HOST
        self.exe = binary("memu-claude-code")
        self.random = random
        self.max_jobs = max_jobs
        self.serial = 0
        self.sessions: list[Path] = []
        self.generated: set[str] = set()
        self.written: dict[str, str] = {}
        """Every memory file the agent wrote: name -> content."""
        self.runs = 0
        self.worked: str | None = None
        """The run marker (as written by prepare) of the jobs the agent last worked."""

    # the host writing its logs
    def generate(self) -> None:
        """New turns: a few new sessions, and more turns appended to some older ones."""
        for _ in range(self.random.randint(1, 3)):
            sid = f"{len(self.sessions):08x}-1111-4222-8333-444455556666"
            self.sessions.append(self.logs / f"{sid}.jsonl")
        grow = self.random.sample(self.sessions, min(len(self.sessions), self.random.randint(1, 4)))
        for path in grow:
            lines = []
            for _ in range(self.random.randint(1, 4)):
                self.serial += 1
                token = f"rec{self.serial:06d}"
                self.generated.add(token)
                if self.serial % 2:
                    message: dict[str, object] = {"role": "user", "content": f"please note {token} about the build"}
                    kind = "user"
                else:
                    message = {"role": "assistant", "content": [{"type": "text", "text": f"noted {token} for later"}]}
                    kind = "assistant"
                lines.append(
                    json.dumps(
                        {
                            "type": kind,
                            "sessionId": path.stem,
                            "timestamp": f"2026-08-20T10:{self.serial // 60 % 60:02d}:{self.serial % 60:02d}Z",
                            "message": message,
                        }
                    )
                )
            with open(path, "a", encoding="utf-8") as fh:
                fh.write("".join(line + "\n" for line in lines))

    # the bridging run's coded steps
    def prepare(self, delay: float | None = None) -> Outcome:
        return run_and_kill([self.exe, "prepare", "--max-jobs", str(self.max_jobs)], self.env, self.project, delay)

    def commit(self, delay: float | None = None) -> Outcome:
        return run_and_kill([self.exe, "commit"], self.env, self.project, delay)

    # the agent's part
    def agent(self) -> set[str]:
        """Work the memory jobs on disk: one memory file per slice with the tokens it holds."""
        self.runs += 1
        self.worked = self.marker()
        seen: set[str] = set()
        jobs = self.base / "jobs"
        for job in sorted(jobs.glob("*.txt")) if jobs.is_dir() else []:
            text = job.read_text(encoding="utf-8")
            found = re.search(r"^\s+(\S+/sessions/\d+\.jsonl)\s*$", text, re.M)
            folder = re.search(r"^\s+(\S+/memory)\s*$", text, re.M)
            if not found or not folder:
                continue  # a skill or resource job
            tokens = sorted(set(TOKEN.findall(Path(found.group(1)).read_text(encoding="utf-8"))))
            if not tokens:
                continue
            name = f"run{self.runs:04d}-{job.stem}"
            body = "\n".join(f"- saw rec{t} in a session" for t in tokens)
            content = f"---\nname: {name}\ndescription: tokens of run {self.runs} job {job.stem}\n---\n{body}\n"
            Path(folder.group(1)).mkdir(parents=True, exist_ok=True)
            (Path(folder.group(1)) / f"{name}.md").write_text(content, encoding="utf-8")
            self.written[name] = body
            seen |= {f"rec{t}" for t in tokens}
        return seen

    def marker(self) -> str | None:
        """The unfinished run's marker file as text (``None``: no run is open)."""
        for path in self.base.glob(".bridging_run.*"):
            try:
                return path.read_text(encoding="utf-8")
            except FileNotFoundError:
                return None
        return None

    def finish(self, t: Tally) -> None:
        """What a refused prepare asks for: the open run's agent finishes its jobs (unless it
        already did), then its commit runs."""
        current = self.marker()
        if current is not None and current != self.worked:
            self.agent()
        t.note(self.commit())

    # what reached the store
    def stored_tokens(self) -> dict[str, list[str]]:
        """Token -> the stored memory files that hold it."""
        where: dict[str, list[str]] = {}
        for key, stored in stored_files(self.db).items():
            for token in TOKEN.findall(stored.content):
                where.setdefault(f"rec{token}", []).append(key)
        return where

    def check_store(self, t: Tally, where: str) -> None:
        """Integrity, and each stored memory file is exactly what the agent wrote (no mix)."""
        for problem in integrity_problems(self.db) if self.db.exists() else []:
            t.fail(f"{where}: {problem}")
        for key, stored in stored_files(self.db).items():
            name = key.split("/", 1)[1]
            if key.startswith("memory/") and name in self.written:
                if stored.content.strip() != self.written[name].strip():
                    t.fail(f"{where}: {key} holds content the agent never wrote")
                if stored.lines != content_lines(stored.content):
                    t.fail(f"{where}: {key}'s indexed lines differ from its content")

    def cycle(self, t: Tally, where: str) -> bool:
        """One unkilled run: prepare (finishing a refused earlier run first), agent, commit."""
        prep = self.prepare()
        t.note(prep)
        if prep.returncode != 0 and not prep.killed:
            # An unfinished earlier run refused: finish it the way the error tells a user to.
            self.finish(t)
            prep = self.prepare()
            t.note(prep)
            if prep.returncode != 0:
                t.fail(f"{where}: prepare failed after the earlier run was committed: {prep.describe()}")
                return False
        self.agent()
        done = self.commit()
        t.note(done)
        if done.returncode != 0:
            t.fail(f"{where}: commit failed: {done.describe()}")
            return False
        return "prepared 0 session(s)" in prep.stdout and "remain" not in prep.stdout

    def drain(self, t: Tally, limit: int = 40) -> None:
        """Run unkilled cycles until prepare finds nothing new."""
        for i in range(limit):
            before = len(t.failures)
            if self.cycle(t, f"drain {i}"):
                return
            if len(t.failures) > before:
                return  # the failure is reported; more runs would only repeat it
        t.fail(f"prepare still found new turns after {limit} draining runs")

    def account(self, t: Tally) -> None:
        """Compare the generated records with what the store holds: lost and doubled records."""
        stored = self.stored_tokens()
        lost = sorted(self.generated - stored.keys())
        doubled = {k: v for k, v in stored.items() if len(v) > 1}
        t.records_generated = len(self.generated)
        t.records_lost = len(lost)
        t.records_doubled = len(doubled)
        if lost:
            t.fail(f"{len(lost)} record(s) never committed, e.g. {lost[:5]}")
        if doubled:
            sample = sorted(doubled.items())[:5]
            t.fail(f"{len(doubled)} record(s) committed more than once, e.g. {sample}")
        unknown = sorted(stored.keys() - self.generated)
        if unknown:
            t.fail(f"the store holds tokens nobody generated: {unknown[:5]}")
