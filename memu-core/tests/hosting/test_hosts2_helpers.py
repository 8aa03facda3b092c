"""The helpers the SQLite and id-less hosts share: epoch stamps, the working-tree test,
read-only SQLite URIs and the filtered walker."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memu_core._hostkit.epoch import iso_utc
from memu_core._hostkit.sqlite_ro import columns, query, readonly_uri
from memu_core._hostkit.worktree import cwd_in_tree, escaped_in_tree, header_cwd
from memu_core._jsonl import jsonl_files, newest_first


@given(st.integers(min_value=100_000_001, max_value=4_000_000_000))  # 1973-2096: both sides of 1e11
def test_seconds_and_milliseconds_name_the_same_instant(seconds: int) -> None:
    assert iso_utc(seconds) == iso_utc(seconds * 1000) == datetime.fromtimestamp(seconds, UTC).isoformat()


@pytest.mark.parametrize("value", [None, True, [], {}, "", float("inf")])
def test_non_stamps_are_none(value: object) -> None:
    assert iso_utc(value) is None


def test_hermes_style_seconds_without_the_guess() -> None:
    assert iso_utc(1752537600000, ms_heuristic=False) is None  # year 57000: not representable


def test_working_tree_by_cwd_and_by_escaped_folder(tmp_path: Path) -> None:
    root = tmp_path / ".memu" / "hosts"
    assert cwd_in_tree(str(root / "cola"), [root]) and cwd_in_tree(str(root / "cola" / "sub") + "/", [root])
    assert not cwd_in_tree(str(tmp_path / ".memu" / "hostsx"), [root])
    assert (
        not cwd_in_tree(str(tmp_path), [root])
        and not cwd_in_tree(None, [root])
        and not cwd_in_tree("  ", [root])
    )
    escaped = str(root / "workbuddy").replace("/", "-")
    assert escaped_in_tree(escaped, [root]) and escaped_in_tree(escaped.replace("-.memu", "--memu"), [root])
    assert not escaped_in_tree(str(tmp_path / "memu-hostsfoo").replace("/", "-"), [root])


def test_header_cwd_reads_only_the_first_records(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('not json\n{"type":"session_meta","payload":{"cwd":"/w"}}\n')
    assert header_cwd(path) == "/w"
    path.write_text("{}\n" * 10 + '{"cwd":"/late"}\n')
    assert header_cwd(path) is None
    assert header_cwd(tmp_path / "missing.jsonl") is None


@pytest.mark.parametrize("name", ["plain", "100% sure", "a#b", "what?", "sp ace"])
def test_readonly_uri_keeps_odd_folder_names(tmp_path: Path, name: str) -> None:
    db = tmp_path / name / "x.db"
    db.parent.mkdir()
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (a, b)")
    conn.execute("INSERT INTO t VALUES (1, 2)")
    conn.commit()
    conn.close()
    assert readonly_uri(db).endswith("?mode=ro")
    assert query(db, "SELECT a, b FROM t") == [(1, 2)]
    assert columns(db, "t") == {"a", "b"} and columns(db, "nope") == set()
    with pytest.raises(sqlite3.OperationalError):
        query(db, "INSERT INTO t VALUES (3, 4)")
    with pytest.raises(ValueError):
        columns(db, "t; DROP TABLE t")


def test_walker_filters_and_orders(tmp_path: Path) -> None:
    for rel, t in [
        ("a/1.jsonl", 3),
        ("a/skip/2.jsonl", 9),
        ("b/3.jsonl", 5),
        ("b/3.trajectory.jsonl", 7),
        ("c.txt", 8),
    ]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("{}\n")
        os.utime(p, (t, t))
    found = newest_first(
        jsonl_files(tmp_path, keep_dir=lambda n: n != "skip", keep_file=lambda n: ".trajectory." not in n)
    )
    assert [s.path.name for s in found] == ["3.jsonl", "1.jsonl"]
    assert list(jsonl_files(tmp_path / "missing")) == []
