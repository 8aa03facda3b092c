"""The Hermes source against a real ``state.db`` (real schema, WAL, a live second writer)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from memu_host_hermes.source import HermesSource, classify_hermes_record, state_db_path

from memu_core.host import RecordKind, connect_readonly, readonly_uri

M, T, D = RecordKind.MESSAGE, RecordKind.TOOL, RecordKind.OTHER
NEW = "20260802_100000_ef34.gh"
OLD = "20260801_090000_ab12.cd"


def test_sessions_newest_first_keyed_by_full_id(hermes_db: Any) -> None:
    source = HermesSource(hermes_db.path)
    found = source.discover()
    assert [s.path.name for s in found] == [NEW, OLD]
    assert [source.key(s.path) for s in found] == [NEW, OLD]
    assert source.session_id(found[0].path) == NEW  # dots kept, not a "suffix"
    assert found[0].size == 5


def test_every_row_type_in_insertion_order(hermes_db: Any) -> None:
    source = HermesSource(hermes_db.path)
    read = source.read_incremental(source.discover()[0], None)
    assert [r.kind for r in read.records] == [D, M, T, T, M]
    assert read.records[0].text == '{"role": "system", "content": "you are hermes", "timestamp": 200.0}'
    assert '"tool_calls": "[{\\"name\\"' in read.records[2].text  # stays a JSON string
    assert read.last_timestamp == "1970-01-01T00:03:24+00:00"  # seconds, no ms guess
    assert read.cursor["lines"] == 5


def test_uri_survives_percent_and_hash_and_stays_read_only(hermes_db: Any) -> None:
    uri = readonly_uri(hermes_db.path)
    assert "%25" in uri and "%23" in uri and uri.endswith("?mode=ro")
    conn = connect_readonly(hermes_db.path)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM messages")
    finally:
        conn.close()


def test_reads_while_the_host_holds_the_write_lock(hermes_db: Any) -> None:
    source = HermesSource(hermes_db.path)
    first = source.read_incremental(source.discover()[0], None)
    writer = hermes_db.conn
    writer.execute("BEGIN IMMEDIATE")  # the live CLI mid-transaction: memu must neither block nor see it
    hermes_db.message(NEW, "user", 300.0, "uncommitted question")
    [latest, _] = source.discover()
    assert source.read_incremental(latest, first.cursor).records == []
    writer.execute("COMMIT")
    [latest, _] = source.discover()
    again = source.read_incremental(latest, first.cursor)
    assert [r.text for r in again.records] == [
        '{"role": "user", "content": "uncommitted question", "timestamp": 300.0}'
    ]
    assert again.cursor["lines"] == 6


def test_missing_database_discovers_nothing_and_prepare_says_what_to_pass(tmp_path: Path) -> None:
    from memu_core.errors import UsageError

    source = HermesSource(tmp_path / "none" / "state.db")
    assert source.discover() == []
    with pytest.raises(UsageError, match=r"no Hermes database at .*state\.db; pass --session-dir"):
        source.exists()


def test_state_db_location(tmp_path: Path) -> None:
    assert state_db_path({"HERMES_HOME": str(tmp_path)}, "linux") == tmp_path / "state.db"
    assert state_db_path({"HERMES_HOME": "  "}, "linux") == Path.home() / ".hermes" / "state.db"
    assert state_db_path({"LOCALAPPDATA": str(tmp_path)}, "win32") == tmp_path / "hermes" / "state.db"


@pytest.mark.parametrize(
    ("row", "kind"),
    [
        ({"role": "assistant", "content": "", "tool_calls": "[]"}, D),
        ({"role": "assistant", "content": "", "tool_calls": "[{}]"}, T),
        ({"role": "user"}, D),
        ({"role": "tool"}, T),
        ({"role": "developer", "content": "x"}, D),
    ],
)
def test_row_table(row: dict[str, Any], kind: RecordKind) -> None:
    assert classify_hermes_record(row) is kind


def test_a_file_that_is_not_hermes_state_is_a_one_line_error(tmp_path: Path) -> None:
    from memu_core.errors import UsageError

    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(UsageError, match=r"other\.db .*no such table: messages.*--session-dir"):
        HermesSource(other).discover()
