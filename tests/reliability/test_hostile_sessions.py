"""Hostile session lines for every host dialect: deep nesting, huge lines, NUL, invalid UTF-8,
truncation, binary and symlinked files. Each is skipped (and counted) or read; none stops a run,
and the good records around it are still mined.

Real files (and the real SQLite databases of the hosts that keep sessions in one), read through
the hosts' own sources and the pipeline's scan; one end-to-end prepare per dialect goes through
the real local store.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memu_core._bridge import pipeline, scan
from memu_core._jsonl import MAX_DEPTH
from memu_core.interfaces import TranscriptSource

GOOD = "the deploy goes through make ship"


@dataclass(frozen=True)
class Dialect:
    """One host's JSONL log: its source over a root, where a session lives, a user turn."""

    host: str
    source: Callable[[Path], TranscriptSource]
    path: Callable[[Path, str], Path]
    turn: Callable[[str], dict[str, Any]]


def _claude(root: Path) -> TranscriptSource:
    from memu_host_claude_code.source import ClaudeCodeSource

    return ClaudeCodeSource(root)


def _codex(root: Path) -> TranscriptSource:
    from memu_host_codex.source import CodexSource

    return CodexSource(root)


def _cola(root: Path) -> TranscriptSource:
    from memu_host_cola.source import ColaSource

    return ColaSource(root)


def _cursor(root: Path) -> TranscriptSource:
    from memu_host_cursor.source import CursorSource

    return CursorSource(root)


def _generic(root: Path) -> TranscriptSource:
    from memu_host_generic.source import GenericSource

    return GenericSource(root)


def _openclaw(root: Path) -> TranscriptSource:
    from memu_host_openclaw.source import OpenClawSource

    return OpenClawSource(root)


def _workbuddy(root: Path) -> TranscriptSource:
    from memu_host_workbuddy.source import WorkBuddySource

    return WorkBuddySource(root)


DIALECTS = [
    Dialect(
        "claude-code",
        _claude,
        lambda r, s: r / "-home-u-p" / f"{s}.jsonl",
        lambda t: {"type": "user", "message": {"role": "user", "content": t}},
    ),
    Dialect(
        "codex",
        _codex,
        lambda r, s: r / "2026" / "01" / "02" / f"rollout-{s}.jsonl",
        lambda t: {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]},
        },
    ),
    Dialect(
        "cola",
        _cola,
        lambda r, s: r / "desktop-local" / f"{s}.jsonl",
        lambda t: {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": t}]}},
    ),
    Dialect(
        "cursor",
        _cursor,
        lambda r, s: r / "-home-u-p" / "agent-transcripts" / s / f"{s}.jsonl",
        lambda t: {"role": "user", "message": {"content": [{"type": "text", "text": t}]}},
    ),
    Dialect("agent", _generic, lambda r, s: r / f"{s}.jsonl", lambda t: {"type": "user", "message": {"content": t}}),
    Dialect(
        "openclaw",
        _openclaw,
        lambda r, s: r / "main" / "sessions" / f"{s}.jsonl",
        lambda t: {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": t}]}},
    ),
    Dialect(
        "workbuddy",
        _workbuddy,
        lambda r, s: r / "d-Users-p" / f"{s}.jsonl",
        lambda t: {"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]},
    ),
]
IDS = [d.host for d in DIALECTS]


def _deep(depth: int) -> bytes:
    return ("[" * depth + "]" * depth).encode()


def _deep_object(depth: int) -> bytes:
    return ('{"a":' * depth + "1" + "}" * depth).encode()


# Complete hostile lines (each ends with a newline when written).
HOSTILE: dict[str, bytes] = {
    "deep array (2,000)": _deep(2000),
    "deep object (2,000)": _deep_object(2000),
    "deep, just over the limit": _deep_object(MAX_DEPTH + 1),
    "deep inside a record": b'{"type":"user","message":{"content":' + _deep(3000) + b"}}",
    "NUL bytes": b'{"type":"user",\x00"message":{"content":"x\x00y"}}',
    "invalid UTF-8": b'{"type":"user","message":{"content":"\xff\xfe\xc3("}}',
    "binary": bytes(range(256)).replace(b"\n", b""),
    "not an object": b"[1, 2, 3]",
    "a bare string": b'"hello"',
    "half an object": b'{"type":"user","message":{"content":"cut',
    "closing only": b"}}}}]]]]",
    "lone surrogate escape": b'{"type":"user","message":{"content":"\\ud800"}}',
}
hostile_lines = st.lists(st.sampled_from(sorted(HOSTILE)), min_size=1, max_size=6)
junk = st.binary(max_size=300).map(lambda b: b.replace(b"\n", b" "))


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _mine(source: TranscriptSource, cursor: dict[str, Any] | None = None) -> scan.ScanResult:
    with tempfile.TemporaryDirectory() as stage:
        return scan.scan(source, cursor or {}, set(), 10, Path(stage))


def _texts(found: scan.ScanResult) -> list[str]:
    return [m.key for m in found.picked]


@pytest.mark.parametrize("dialect", DIALECTS, ids=IDS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=hostile_lines, noise=junk, truncated=st.booleans())
def test_hostile_lines_are_skipped_and_counted_never_fatal(
    dialect: Dialect, tmp_path: Path, names: list[str], noise: bytes, truncated: bool
) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    path = dialect.path(root, "s1")
    path.parent.mkdir(parents=True, exist_ok=True)
    body = _line(dialect.turn(f"{GOOD} first"))
    for name in names:
        body += HOSTILE[name] + b"\n"
    body += noise + b"\n" + _line(dialect.turn(f"{GOOD} last"))
    if truncated:
        body += b'{"type":"user","message":{"content":"still being wri'  # no newline yet
    path.write_bytes(body)
    source = dialect.source(root)
    found = _mine(source)
    assert found.unreadable == 0 and found.errors == []
    [mined] = found.picked
    assert mined.records >= 2  # both good turns, whatever lay between them
    assert found.corrupt == sum(1 for f in found.corrupt_files for _ in range(f[1]))
    assert all(p == str(path) for p, _ in found.corrupt_files)
    # The cursor stops before the truncated tail and past everything else: nothing is stuck.
    again = _mine(source, found.cursor)
    assert again.picked == [] and again.unreadable == 0
    shutil.rmtree(root)


@pytest.mark.parametrize("dialect", DIALECTS, ids=IDS)
def test_a_huge_line_is_skipped_by_size(dialect: Dialect, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memu_core import interfaces

    monkeypatch.setattr(interfaces, "MAX_LINE_CHARS", 4096)  # the real limit is 32 MiB
    path = dialect.path(tmp_path, "big")
    path.parent.mkdir(parents=True, exist_ok=True)
    huge = dialect.turn("x" * 10_000)
    path.write_bytes(_line(huge) + _line(dialect.turn(GOOD)))
    found = _mine(dialect.source(tmp_path))
    assert found.corrupt == 1 and found.corrupt_files == [(str(path), 1)]
    assert found.picked[0].records == 1


@pytest.mark.parametrize("dialect", DIALECTS, ids=IDS)
def test_symlinked_session_files_and_folders_are_not_followed_out(dialect: Dialect, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jsonl").write_bytes(_line(dialect.turn("private elsewhere")))
    root = tmp_path / "root"
    path = dialect.path(root, "s1")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_line(dialect.turn(GOOD)))
    (path.parent / "loop").symlink_to(path.parent, target_is_directory=True)  # a cycle
    (path.parent / "away").symlink_to(outside, target_is_directory=True)
    (path.parent / "dangling.jsonl").symlink_to(tmp_path / "missing.jsonl")
    found = _mine(dialect.source(root))  # terminates, and no error
    assert found.unreadable == 0 and all("outside" not in m.key for m in found.picked)


@pytest.mark.parametrize("dialect", DIALECTS, ids=IDS)
def test_prepare_names_the_file_and_later_runs_are_not_blocked(
    dialect: Dialect, memu_home: Path, tmp_path: Path
) -> None:
    """The attack: one 2,000-deep line stopped `prepare` for the host forever, naming no file."""
    from memu_core._bridge.backend import open_backend
    from memu_core._layout import Layout
    from memu_core.host import HostSpec

    root = tmp_path / "logs"
    path = dialect.path(root, "s1")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_line(dialect.turn(GOOD)) + _deep(2000) + b"\n" + _line(dialect.turn(f"{GOOD} again")))
    spec = HostSpec(id="hostile", display="Hostile", source="x:y", package="memu_host_codex", session_dir=str(root))
    layout = Layout.at(tmp_path / "tree", "hostile")
    source = dialect.source(root)
    report = pipeline.prepare(spec, source, layout, open_backend, environ={})
    assert report.sessions == 1 and report.corrupt == 1 and report.unreadable == 0
    assert any(str(path) in w and "nested too deep" in w for w in report.warnings)
    pipeline.commit(layout, open_backend, "hostile")
    with path.open("ab") as fh:
        fh.write(_line(dialect.turn("a later turn")))
    os.utime(path)
    later = pipeline.prepare(spec, dialect.source(root), layout, open_backend, environ={})
    assert later.sessions == 1 and later.corrupt == 0


def test_hermes_rows_over_the_size_limit_are_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memu_host_hermes import source as hermes
    from memu_host_hermes.source import HermesSource
    from memu_host_hermes.testing import create_state_db

    monkeypatch.setattr(hermes, "MAX_LINE_CHARS", 4096)
    db = tmp_path / "state.db"
    conn = create_state_db(db)
    for n, content in enumerate(["x" * 10_000, GOOD, "[" * 3000]):
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
            ("s1", "user", content, 1_700_000_000 + n),
        )
    conn.close()
    found = _mine(HermesSource(db))
    assert found.unreadable == 0 and found.corrupt == 1
    assert found.picked[0].records == 2  # brackets in a text column are text, not nesting


def test_openclaw_stored_events_too_deep_are_skipped(tmp_path: Path) -> None:
    from memu_host_openclaw.source import OpenClawSource
    from memu_host_openclaw.testing import create_agent_db

    db = tmp_path / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    conn = create_agent_db(db)
    good = json.dumps({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": GOOD}]}})
    conn.execute("INSERT INTO session_windows VALUES ('s1', 'agent:main:main:s1', 'new', 1700000000000)")
    conn.execute("INSERT INTO transcript_rewrite_watermarks VALUES ('s1', 'g1', 0)")
    for seq, event in enumerate([good, '{"a":\n' * 3000 + "1" + "}" * 3000, good]):
        conn.execute("INSERT INTO transcript_events VALUES ('s1', ?, ?, ?)", (seq, event, 1_700_000_000_000 + seq))
    conn.close()
    found = _mine(OpenClawSource(tmp_path / "agents"))
    assert found.unreadable == 0 and found.errors == []
    assert found.picked[0].records == 2 and found.corrupt == 1
