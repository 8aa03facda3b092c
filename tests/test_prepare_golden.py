"""``prepare`` writes byte for byte what it wrote before the issue 20 speed-ups (ADR 0026).

The speed-ups (a redaction pre-filter, a cheaper classification of Claude Code lines, the last
timestamp read once) must not change one byte of what an agent reads. This test mines a fixed
corpus with three real sources (Claude Code, Cowork, Codex) through the real pipeline and a real
SQLite store, and compares a digest of every job and slice file, the staged cursor and the
report's counts with ``prepare_golden.json``, which was written by the code *before* those
changes (``MEMU_WRITE_GOLDEN=1`` rewrites it; do that only for a deliberate output change).

The corpus is generated here from fixed seeds: bench-shaped sessions, every case of the redaction
corpus (:mod:`memu_core.testing.secrets`, in Claude Code and Codex records, as tool output and as
said), its near-misses, and lines that take every branch of the classifiers (``isMeta``, a text
block beside a tool block, thinking only, string content holding braces, escapes, non-ASCII,
corrupt and half-written lines). Secrets are built at run time, never stored in the repository.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memu_core._bridge import pipeline
from memu_core._bridge.backend import open_backend
from memu_core._layout import Layout
from memu_core.host import HostSpec
from memu_core.interfaces import TranscriptSource
from memu_core.testing.secrets import claude_code_line, codex_line, json_in_json, near_miss_cases, secret_cases

GOLDEN = Path(__file__).with_name("prepare_golden.json")
HOSTS = Path(__file__).resolve().parents[1] / "memu-hosts"
CLAUDE_FIXTURES = HOSTS / "memu-host-claude-code" / "tests" / "fixtures"
CODEX_FIXTURES = HOSTS / "memu-host-codex" / "tests" / "fixtures"
WRITE = os.environ.get("MEMU_WRITE_GOLDEN") == "1"
"""Read at import: the ``memu_home`` fixture clears every ``MEMU_*`` variable."""
MTIME = 1_780_000_000
WORDS = (
    "the",
    "build",
    "fails",
    "when",
    "pytest",
    "runs",
    "the",
    "integration",
    "suite",
    "against",
    "sqlite",
    "because",
    "the",
    "fixture",
    "opens",
    "a",
    "second",
    "connection",
    "without",
    "WAL",
    "deploy",
    "config",
    "docker",
    "compose",
    "kubernetes",
    "helm",
    "chart",
    "values",
    "staging",
    "production",
    "rollback",
    "ünïcode",
    "日本語",
    "{braces}",
    "[brackets]",
    "\\",
    "back\\slash",
    '"quoted"',
    "tab\there",
)


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _claude_record(rng: random.Random, i: int, sid: str) -> dict[str, Any]:
    """One Claude Code record of the kinds a real log holds (the benchmark's mix, and more)."""
    base: dict[str, Any] = {
        "parentUuid": f"p{i}",
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/u/proj",
        "sessionId": sid,
        "version": "2.1.220",
        "gitBranch": "main",
        "uuid": f"u{i}",
        "timestamp": f"2026-08-01T10:{i % 60:02d}:{i % 7:02d}Z",
    }
    roll = rng.randrange(16)
    user, assistant = {**base, "type": "user"}, {**base, "type": "assistant"}
    text = {"type": "text", "text": _text(rng, rng.randint(3, 40))}
    tool_use = {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"pytest -q t{i}.py"}}
    thinking = {"type": "thinking", "thinking": _text(rng, 12), "signature": "x" * 40}
    result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "\n".join(_text(rng, 9) for _ in range(4))}
    shapes: list[dict[str, Any]] = [
        {**user, "message": {"role": "user", "content": _text(rng, 20)}},
        {**user, "isMeta": True, "message": {"role": "user", "content": "<system-reminder>x</system-reminder>"}},
        {**user, "isMeta": False, "message": {"role": "user", "content": _text(rng, 5)}},
        {**assistant, "message": {"role": "assistant", "content": [text]}},
        {**assistant, "message": {"role": "assistant", "content": [thinking, text]}},
        {**assistant, "message": {"role": "assistant", "content": [thinking, tool_use]}},
        {**assistant, "message": {"role": "assistant", "content": [tool_use, text]}},
        {**assistant, "message": {"role": "assistant", "content": [thinking]}},
        {**user, "message": {"role": "user", "content": [result]}},
        {**user, "message": {"role": "user", "content": [result, text]}},
        {**user, "isMeta": True, "message": {"role": "user", "content": [text]}},
        {**user, "message": {"content": _text(rng, 4), "role": "user"}},
        {**user, "message": {"role": "user", "content": [{"text": "keys out of order", "type": "text"}]}},
        {**base, "type": "attachment", "attachment": {"type": "file", "content": _text(rng, 10)}},
        {"type": "queue-operation", "operation": "enqueue", "timestamp": base["timestamp"], "content": "x"},
        {**user, "message": {"role": "user", "content": [result]}, "toolUseResult": {"timestamp": "nested"}},
    ]
    return shapes[roll]


def _claude_corpus(root: Path) -> None:
    shutil.copytree(CLAUDE_FIXTURES / "projects", root)
    rng = random.Random(20)
    for s in range(12):
        sid = f"{s:08d}-0000-4000-8000-{rng.getrandbits(48):012x}"
        lines = [json.dumps(_claude_record(rng, i, sid), separators=(",", ":")) for i in range(120)]
        if s % 3 == 0:  # what ensure_ascii and default separators look like
            lines[5] = json.dumps(_claude_record(rng, 5, sid), ensure_ascii=False)
        if s % 4 == 1:  # lines that are not records, a blank one, a CRLF ending
            lines[7:7] = ["{not json", "[1, 2]", "", '"a string"']
            lines[20] += "\r"
        data = "\n".join(lines) + "\n"
        if s % 5 == 2:
            data += lines[9][: len(lines[9]) // 2]  # a record still being written
        (root / f"-home-u-gen{s % 3}").mkdir(parents=True, exist_ok=True)
        (root / f"-home-u-gen{s % 3}" / f"{sid}.jsonl").write_text(data, encoding="utf-8")
    secrets = root / "-home-u-secrets"
    secrets.mkdir()
    cases = secret_cases()
    lines = [claude_code_line(c.text, tool=n % 2 == 0, session="sec", n=n) for n, c in enumerate(cases)]
    lines += [json_in_json(c.text) for c in cases[::7]]
    (secrets / "secrets.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    near = near_miss_cases()
    lines = [claude_code_line(c.text, tool=n % 3 != 0, session="near", n=n) for n, c in enumerate(near)]
    (secrets / "near-misses.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _codex_corpus(root: Path) -> None:
    shutil.copytree(CODEX_FIXTURES / "sessions", root)
    day = root / "2026" / "09" / "01"
    day.mkdir(parents=True)
    lines = [codex_line(c.text, n=n) for n, c in enumerate(secret_cases())]
    (day / "rollout-2026-09-01T10-00-00-0198aaaa-bbbb-7ccc-8ddd-eeeeffff0001.jsonl").write_text(
        "\n".join(lines) + "\n", encoding="utf-8"
    )


def _stamp(root: Path) -> None:
    # Fixed modification times: the cursor records them, and they order the jobs.
    for n, path in enumerate(sorted(root.rglob("*.jsonl"))):
        os.utime(path, (MTIME + n * 60, MTIME + n * 60))


def _sources(tmp: Path) -> dict[str, TranscriptSource]:
    from memu_host_claude_code.source import ClaudeCodeSource, CoworkSource
    from memu_host_codex.source import CodexSource

    _claude_corpus(tmp / "projects")
    shutil.copytree(CLAUDE_FIXTURES / "cowork", tmp / "cowork")
    _codex_corpus(tmp / "codex")
    for name in ("projects", "cowork", "codex"):
        _stamp(tmp / name)
    return {
        "claude-code": ClaudeCodeSource(tmp / "projects"),
        "cowork": CoworkSource([tmp / "cowork"]),
        "codex": CodexSource(tmp / "codex"),
    }


def _digests(layout: Layout) -> dict[str, str]:
    base = str(layout.base)
    out: dict[str, str] = {}
    for folder in (layout.jobs, layout.sessions):
        for path in sorted(folder.iterdir()):
            data = path.read_bytes().replace(base.encode(), b"<BASE>")
            out[f"{folder.name}/{path.name}"] = hashlib.sha256(data).hexdigest()
    # A Cowork key names its data root by a digest of the root's path, which is a temp folder here.
    cursor = json.loads(layout.cursor_pending.read_text(encoding="utf-8"))
    keys = {re.sub(r"^cowork/[0-9a-f]{12}/", "cowork/", key): entry for key, entry in cursor.items()}
    out["cursor"] = hashlib.sha256(json.dumps(keys, sort_keys=True).encode()).hexdigest()
    return out


def _mine_all(tmp: Path) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for host, source in _sources(tmp).items():
        spec = HostSpec(id=host, display=host, source="x:y", package="memu_host_codex", session_dir=str(source.root()))
        layout = Layout.at(tmp / "trees" / host, host)
        report = pipeline.prepare(spec, source, layout, open_backend, max_jobs=100, environ={})
        counts = {k: getattr(report, k) for k in ("sessions", "jobs", "remaining", "redacted", "corrupt", "unreadable")}
        result[host] = {"report": counts, "files": _digests(layout)}
    return result


@pytest.fixture(params=["prefilter", "rules-only"])
def redaction(request: pytest.FixtureRequest) -> Iterator[str]:
    """The redaction prefilter loaded (the corpus is below the size that loads it by itself), or
    not: both must write the golden bytes."""
    from memu_core._bridge import _prefilter

    saved = _prefilter.reset_for_tests()
    try:
        if request.param == "prefilter" and not _prefilter.load():
            pytest.skip("hyperscan is not installed here (no wheel for this platform)")
        if request.param == "rules-only":
            _prefilter.reset_for_tests(None, tried=True)
        yield request.param
    finally:
        _prefilter.reset_for_tests(*saved)


def test_prepare_output_is_byte_identical_to_the_golden(memu_home: Path, tmp_path: Path, redaction: str) -> None:
    got = _mine_all(tmp_path)
    if WRITE:
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip(f"wrote {GOLDEN.name}")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for host in want:
        assert got[host]["report"] == want[host]["report"], host
        differ = sorted(
            k
            for k in want[host]["files"].keys() | got[host]["files"].keys()
            if want[host]["files"].get(k) != got[host]["files"].get(k)
        )
        assert not differ, f"{host}: these files differ from the golden output: {differ[:10]}"
    assert sum(want[h]["report"]["redacted"] for h in want) > 1000  # the secrets were planted and found
