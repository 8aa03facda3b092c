"""The config.env reader and writer: parsing rules, merge-in-place, atomicity, round trips."""

from __future__ import annotations

import codecs
import os
import stat
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memu_core._config import dotenv
from memu_core.errors import ConfigError, UsageError


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("A=b", ("A", "b")),
        ("  A = b  ", ("A", "b")),
        ("A=", ("A", "")),
        ("A=b=c", ("A", "b=c")),
        ("export A=b", ("A", "b")),
        ("export   A = 'b c'", ("A", "b c")),
        ("A='single # not a comment'", ("A", "single # not a comment")),
        ('A="double # not a comment"', ("A", "double # not a comment")),
        ('A="x" # trailing comment', ("A", "x")),
        ("A='x'   # trailing comment", ("A", "x")),
        ("A=bare # comment", ("A", "bare")),
        ("A=bare#hash", ("A", "bare#hash")),
        ("A= #only a comment", ("A", "")),
        ("A=#value", ("A", "#value")),
        ('A="line\\nbreak"', ("A", "line\nbreak")),
        ('A="say \\"hi\\""', ("A", 'say "hi"')),
        ('A="back\\\\slash"', ("A", "back\\slash")),
        ('A="C:\\path"', ("A", "C:\\path")),
        ("A='no \\n escapes'", ("A", "no \\n escapes")),
        ('A="it\'s"', ("A", "it's")),
        ("A=\"unmatched'", ("A", "\"unmatched'")),
        ('A="unterminated', ("A", '"unterminated')),
        ('A="x"junk', ("A", '"x"junk')),
        ("export=1", ("export", "1")),
        ("A=  spaced value  ", ("A", "spaced value")),
        ("# comment", None),
        ("   # indented comment", None),
        ("", None),
        ("   ", None),
    ],
)
def test_parse_line(line: str, expected: tuple[str, str] | None) -> None:
    assert dotenv.parse_line(line) == expected


@pytest.mark.parametrize("line", ["just words", "export A", "1A=x", "A B=x", "=x", "A-B=x", "export =x"])
def test_bad_lines_are_problems(line: str) -> None:
    assert isinstance(dotenv.parse_line(line), str)


def test_parse_reports_line_numbers_and_keeps_going() -> None:
    text = "# header\nA=1\nnot an assignment\n\n9X=bad\nB=2\nA=3\n"
    values, problems = dotenv.parse(text)
    assert values == {"A": "3", "B": "2"}  # last assignment wins
    assert [number for number, _ in problems] == [3, 5]
    assert "'9X'" in problems[1][1]


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_line_endings(eol: str) -> None:
    values, problems = dotenv.parse(eol.join(["A=1", "B='two'", "# c", "C=3"]) + eol)
    assert values == {"A": "1", "B": "two", "C": "3"}
    assert problems == []


def test_only_real_line_breaks_split() -> None:
    # A form feed or U+2028 inside a quoted value is content, not a line break.
    values, _ = dotenv.parse("A='x\x0cy'\nB='p\u2028q'\n")
    assert values == {"A": "x\x0cy", "B": "p\u2028q"}


@pytest.mark.parametrize(
    "data",
    [
        codecs.BOM_UTF8 + "A=é\nB=2\n".encode(),
        codecs.BOM_UTF16_LE + "A=é\nB=2\n".encode("utf-16-le"),
        codecs.BOM_UTF16_BE + "A=é\nB=2\n".encode("utf-16-be"),
    ],
)
def test_boms_are_decoded(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "config.env"
    path.write_bytes(data)
    assert dotenv.read_file(path) == ({"A": "é", "B": "2"}, [])
    assert dotenv.decode(data, path)[1] is False


def test_invalid_utf8_names_file_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "config.env"
    path.write_bytes(b"A=ok\nB=\xff\xfe broken\n")
    with pytest.raises(ConfigError) as info:
        dotenv.read_file(path)
    message = str(info.value)
    assert str(path) in message and "UTF-8" in message and "re-save" in message
    assert "\n" not in message


def test_missing_file_reads_empty(tmp_path: Path) -> None:
    assert dotenv.read_file(tmp_path / "nope" / "config.env") == ({}, [])


# --- writer ---------------------------------------------------------------------------------


def test_write_creates_private_dir_and_file(tmp_path: Path) -> None:
    path = tmp_path / "new" / "config.env"
    written, changed = dotenv.write_values(path, {"MEMU_DB": "/x/y.sqlite3", "MEMU_EMBED_MODEL": "a b"})
    assert (written, changed) == (path, True)
    assert path.read_text() == "MEMU_DB=/x/y.sqlite3\nMEMU_EMBED_MODEL='a b'\n"
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) & 0o077 == 0


def test_write_merges_in_place(tmp_path: Path) -> None:
    path = tmp_path / "config.env"
    original = (
        "# shared by every memu host\n"
        "MEMU_DB=/old.sqlite3  # the store\n"
        "NO_PROXY=localhost,127.0.0.1\n"
        "\n"
        "export MEMU_EMBED_MODEL=old\n"
        "not an assignment\n"
        "MEMU_DB=/older.sqlite3\n"
        "OTHER_HOST_KEY='kept  verbatim'"  # no final newline
    )
    path.write_text(original)
    _, changed = dotenv.write_values(path, {"MEMU_DB": "/new.sqlite3", "MEMU_EMBED_MODEL": "m", "NEW": "v"})
    assert changed
    assert path.read_text() == (
        "# shared by every memu host\n"
        "MEMU_DB=/new.sqlite3\n"
        "NO_PROXY=localhost,127.0.0.1\n"
        "\n"
        "export MEMU_EMBED_MODEL=m\n"
        "not an assignment\n"
        "MEMU_DB=/new.sqlite3\n"
        "OTHER_HOST_KEY='kept  verbatim'\n"
        "NEW=v\n"
    )


def test_write_keeps_crlf(tmp_path: Path) -> None:
    path = tmp_path / "config.env"
    path.write_bytes(b"# c\r\nA=1\r\n")
    dotenv.write_values(path, {"A": "2", "B": "3"})
    assert path.read_bytes() == b"# c\r\nA=2\r\nB=3\r\n"


def test_unchanged_write_only_restricts(tmp_path: Path) -> None:
    path = tmp_path / "config.env"
    path.write_text("A=1\n")
    path.chmod(0o644)
    before = path.stat().st_ino
    assert dotenv.write_values(path, {"A": "1"}) == (path, False)
    assert path.stat().st_ino == before  # not replaced
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_empty_update_creates_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "config.env"
    assert dotenv.write_values(path, {}) == (path, True)
    assert path.read_text() == ""


def test_bom_file_is_migrated_to_plain_utf8(tmp_path: Path) -> None:
    path = tmp_path / "config.env"
    path.write_bytes(codecs.BOM_UTF16_LE + "A=1\n".encode("utf-16-le"))
    assert dotenv.write_values(path, {"A": "1"}) == (path, True)
    assert path.read_bytes() == b"A=1\n"


@pytest.mark.parametrize(
    ("updates", "needle"),
    [
        ({"A": "two\nlines"}, "line break"),
        ({"A": "carriage\rreturn"}, "line break"),
        ({"BAD KEY": "x"}, "invalid"),
        ({"A": "\ud800"}, "UTF-8"),
    ],
)
def test_refused_updates_touch_nothing(tmp_path: Path, updates: dict[str, str], needle: str) -> None:
    path = tmp_path / "config.env"
    path.write_text("A=1\n")
    with pytest.raises(UsageError, match=needle):
        dotenv.write_values(path, {"OK": "fine", **updates})
    assert path.read_text() == "A=1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.env"]


def test_failed_replace_leaves_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.env"
    path.write_text("A=1\n")

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        dotenv.write_values(path, {"A": "2"})
    assert path.read_text() == "A=1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.env"]


# --- properties -----------------------------------------------------------------------------

_keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
# Anything a user could type on one line: no line breaks, no lone surrogates.
_values = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=30)
_lines = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=30),
    st.builds(lambda k, v: f"{k}={dotenv.format_value(v)}", _keys, _values),
    st.builds(lambda k, v: f"export {k}={v}", _keys, _values),
    st.sampled_from(["", "# comment", "  # indented", "KEY", "=x", "A=1 # c"]),
)


@given(st.dictionaries(_keys, _values, max_size=8))
@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_round_trip(tmp_path: Path, data: dict[str, str]) -> None:
    path = tmp_path / "rt" / "config.env"
    path.unlink(missing_ok=True)
    dotenv.write_values(path, data)
    assert dotenv.read_file(path) == (data, [])


@given(st.lists(_lines, max_size=12), st.dictionaries(_keys, _values, max_size=5))
@settings(max_examples=150)
def test_merge_keeps_unrelated_lines(lines: list[str], updates: dict[str, str]) -> None:
    original = "\n".join(lines)
    merged = dotenv.merge(original, updates)

    def untouched(all_lines: list[str]) -> list[str]:
        kept = []
        for line in all_lines:
            parsed = dotenv.parse_line(line)
            if not (isinstance(parsed, tuple) and parsed[0] in updates):
                kept.append(line)
        return kept

    before, _ = dotenv.parse(original)
    after, _ = dotenv.parse(merged)
    assert after == {**before, **updates}
    assert untouched(dotenv.split_lines(merged)) == untouched(dotenv.split_lines(original))
    assert merged == "" or merged.endswith("\n")


@pytest.mark.skipif(os.name != "posix", reason="symlinks need privileges on Windows")
def test_symlinked_file_is_updated_at_its_target(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "memu.env"
    real.parent.mkdir()
    real.write_text("# mine\nA=1\n")
    link = tmp_path / "home" / "config.env"
    link.parent.mkdir()
    link.symlink_to(real)
    assert dotenv.write_values(link, {"A": "2"}) == (link, True)
    assert link.is_symlink()
    assert real.read_text() == "# mine\nA=2\n"


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.env"
    writers = 8

    def write(n: int) -> None:
        for round_ in range(5):
            dotenv.write_values(path, {f"K{n}": str(round_)})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert dotenv.read_file(path) == ({f"K{n}": "4" for n in range(writers)}, [])
