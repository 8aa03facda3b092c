"""Benchmark: secret redaction throughput over realistic Claude Code session lines.

Builds a seeded sample (about 20 MB by default) shaped like real sessions: prose turns, tool
calls, multi-line tool outputs (git logs with SHAs, pip output with versions, JSON, source code,
paths), usage blocks full of ``*_tokens`` keys, UUIDs and base64 signatures, and one planted
secret in about one record in fifty (from :mod:`memu_core.testing.secrets`). Each session is
redacted the way ``prepare`` does it (one :meth:`Redactor.lines` call per session).

Before timing, it checks the output: no planted secret survives anywhere, every line is still
JSON, and the sample's secret-free lines come out unchanged. Prints MB/s as median and min-max
over several runs.

    python tests/bench/bench_redact.py [--runs 7] [--sessions 100] [--records 200]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import statistics
import sys
import time
import uuid

import _harness

from memu_core._bridge.redact import Redactor
from memu_core.testing.secrets import claude_code_line, secret_cases

WORDS = tuple(
    """
    the build fails when pytest runs the integration suite against sqlite because the fixture
    opens a second connection without WAL and the migration step races with the writer so we
    pin the connection and retry the upgrade after checking the alembic revision in the store
    """.split()  # noqa: SIM905 - a word list reads better as prose
)


def _prose(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _tool_output(rng: random.Random) -> str:
    """One multi-line tool output of a common kind (its newlines become JSON escapes)."""
    kind = rng.randrange(5)
    if kind == 0:
        return "\n".join(
            f"commit {hashlib.sha1(rng.randbytes(8)).hexdigest()}\nAuthor: Dev <dev@example.com>\n\n"
            f"    {_prose(rng, 8)}\n"
            for _ in range(rng.randint(2, 6))
        )
    if kind == 1:
        return "\n".join(
            f"Collecting pkg{i}=={rng.randrange(3)}.{rng.randrange(30)}.{rng.randrange(9)}\n"
            f"  Using cached pkg{i}-{rng.randrange(3)}.{rng.randrange(30)}-py3-none-any.whl "
            f"(sha256={hashlib.sha256(rng.randbytes(8)).hexdigest()})"
            for i in range(rng.randint(3, 10))
        )
    if kind == 2:
        rows = [
            {"id": str(uuid.UUID(int=rng.getrandbits(128))), "name": _prose(rng, 3), "size": rng.randrange(10**6)}
            for _ in range(rng.randint(2, 8))
        ]
        return json.dumps({"items": rows, "next": None}, indent=2)
    if kind == 3:
        return "\n".join(
            f'    def {rng.choice(WORDS)}_{rng.choice(WORDS)}(self, token: str, path: "Path") -> None:\n'
            f'        """{_prose(rng, 10)}."""\n        self._cache[token] = path / "{rng.choice(WORDS)}.json"'
            for _ in range(rng.randint(2, 6))
        )
    return "\n".join(
        f"-rw-r--r--  1 dev staff {rng.randrange(99999):>6} Jan  1 10:00 "
        f"src/memu_core/_bridge/{rng.choice(WORDS)}_{rng.choice(WORDS)}.py"
        for _ in range(rng.randint(4, 16))
    )


def _assistant(rng: random.Random, sid: str, n: int) -> str:
    blocks: list[dict[str, object]] = [
        {"type": "thinking", "thinking": _prose(rng, 30), "signature": base64.b64encode(rng.randbytes(120)).decode()},
        {"type": "text", "text": _prose(rng, rng.randint(10, 80))},
    ]
    if rng.random() < 0.6:
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_01{rng.getrandbits(64):016x}",
                "name": "Bash",
                "input": {"command": f"pytest -q tests/test_{rng.randrange(99)}.py", "description": _prose(rng, 5)},
            }
        )
    record = {
        "parentUuid": str(uuid.UUID(int=rng.getrandbits(128))),
        "sessionId": sid,
        "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
        "timestamp": f"2026-01-01T10:{n % 60:02d}:00Z",
        "type": "assistant",
        "message": {
            "id": f"msg_01{rng.getrandbits(64):016x}",
            "role": "assistant",
            "content": blocks,
            "usage": {
                "input_tokens": rng.randrange(9),
                "cache_creation_input_tokens": rng.randrange(9999),
                "cache_read_input_tokens": rng.randrange(99999),
                "output_tokens": rng.randrange(999),
                "service_tier": "standard",
            },
        },
    }
    return json.dumps(record, separators=(",", ":"))


def sample(sessions: int, records: int, seed: int = 20) -> tuple[list[list[str]], list[str]]:
    """``sessions`` lists of JSON lines, and the secrets planted in them."""
    rng = random.Random(seed)
    cases = secret_cases()
    planted: list[str] = []
    out: list[list[str]] = []
    for _ in range(sessions):
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        lines: list[str] = []
        for n in range(records):
            roll = rng.random()
            if roll < 0.02:
                case = cases[len(planted) % len(cases)]
                planted.append(case.secret)
                lines.append(claude_code_line(f"{_prose(rng, 6)}\n{case.text}\n{_prose(rng, 4)}", session=sid, n=n))
            elif roll < 0.45:
                lines.append(_assistant(rng, sid, n))
            elif roll < 0.6:
                lines.append(claude_code_line(_prose(rng, rng.randint(5, 40)), tool=False, session=sid, n=n))
            else:
                lines.append(claude_code_line(_tool_output(rng), session=sid, n=n))
        out.append(lines)
    return out, planted


def check(sessions: list[list[str]], planted: list[str]) -> None:
    """Exit with the first leak, broken line or altered secret-free line."""
    redacted = [Redactor().lines(lines) for lines in sessions]
    text = "\n".join("\n".join(s) for s in redacted)
    leaks = [p for p in planted if p in text or json.dumps(p)[1:-1] in text]
    if leaks:
        sys.exit(f"{len(leaks)} of {len(planted)} planted secrets leaked, e.g. {leaks[0]!r}")
    changed = 0
    for before, after in zip(sessions, redacted, strict=True):
        for a, b in zip(before, after, strict=True):
            json.loads(b)
            changed += a != b
    if changed > len(planted):
        sys.exit(f"{changed} lines changed for {len(planted)} planted secrets: something else was redacted")
    print(f"Checked: all {len(planted)} planted secrets redacted, every line still JSON, {changed} lines changed.")


def main() -> None:
    """Build the sample, check the output, time it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--records", type=int, default=200)
    opts = parser.parse_args()
    sessions, planted = sample(opts.sessions, opts.records)
    size = sum(len(line.encode()) + 1 for s in sessions for line in s)
    print("## Redaction throughput\n")
    print(_harness.machine_line())
    print(f"\n{opts.sessions} sessions x {opts.records} records = {size / 1e6:.1f} MB, {len(planted)} planted secrets")
    check(sessions, planted)
    rates: list[float] = []
    for _ in range(opts.runs):
        start = time.process_time()
        for lines in sessions:
            Redactor().lines(lines)
        rates.append(size / 1e6 / (time.process_time() - start))
    print(
        f"redaction: median {statistics.median(rates):.1f} MB/s, "
        f"min-max {min(rates):.1f}-{max(rates):.1f} MB/s over {len(rates)} runs (CPU time)"
    )


if __name__ == "__main__":
    main()
