"""The one frontmatter format: what it writes reads back unchanged, and what people write reads
as they meant it (quotes, colons, CRLF, a byte-order mark, no frontmatter at all)."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memu_core._markdown import MarkdownDoc, parse, quote, read, render
from memu_core._mirror import RecallDoc, read_doc
from memu_core.errors import UsageError

_keys = st.text(string.ascii_lowercase + "_-", min_size=1, max_size=12)
_values = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
# Bodies as a file read back holds them: line endings are already "\n".
_bodies = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\r"), max_size=200)


@given(meta=st.dictionaries(_keys, _values, max_size=4), body=_bodies)
def test_render_then_parse_gives_everything_back(meta: dict[str, str], body: str) -> None:
    assert parse(render(meta, body)) == MarkdownDoc(meta, body)


@given(value=_values)
def test_a_value_is_written_on_one_line(value: str) -> None:
    assert "\n" not in quote(value) and "\r" not in quote(value)


@example(value="=")  # YAML 1.1's value key: a reader refuses it bare
@example(value="<<")  # the merge key, likewise
@given(value=_values)
def test_a_written_value_reads_the_same_in_yaml(value: str) -> None:
    yaml = pytest.importorskip("yaml")
    loaded = yaml.safe_load(f"key: {quote(value)}\n")["key"]
    # A plain number or date is YAML's own type there; any string must be the value itself.
    assert loaded == value or not isinstance(loaded, str)


@pytest.mark.parametrize(
    ("text", "meta", "body"),
    [
        ('---\ndescription: "quoted"\n---\nb', {"description": "quoted"}, "b"),
        ("---\ndescription: 'it''s'\n---\nb", {"description": "it's"}, "b"),
        ("---\ndescription: a: b\n---\nb", {"description": "a: b"}, "b"),
        ('---\ndescription: "half\n---\nb', {"description": '"half'}, "b"),
        ('---\ndescription: "\\x41"\n---\nb', {"description": '"\\x41"'}, "b"),  # not JSON: kept
        ("---\r\nName: crlf\r\n---\r\nx\r\ny\r\n", {"name": "crlf"}, "x\ny\n"),
        ("\ufeff---\nname: bom\n---\n", {"name": "bom"}, ""),
        ("---  \nname: trailing blanks on the fences\n---\t\nb", {"name": "trailing blanks on the fences"}, "b"),
        ("---\nname: n\n---", {"name": "n"}, ""),
        ("---\n# a comment line\nnot a field\n---\nb", {}, "b"),
        ("no frontmatter\n---\n", {}, "no frontmatter\n---\n"),
        ("", {}, ""),
    ],
)
def test_what_people_write_reads_as_meant(text: str, meta: dict[str, str], body: str) -> None:
    assert parse(text) == MarkdownDoc(meta, body)


def test_an_unclosed_frontmatter_names_the_file_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"
    path.write_text("---\nname: bad\nno end\n")
    with pytest.raises(UsageError, match=r"bad\.md: the frontmatter opened with '---' is never closed"):
        read(path)


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "latin1.md"
    path.write_bytes("---\nname: caf\xe9\n---\n".encode("latin-1"))
    with pytest.raises(UsageError, match=r"latin1\.md is not UTF-8"):
        read(path)


def test_the_mirror_writes_what_it_reads(tmp_path: Path) -> None:
    doc = RecallDoc("memory", "deploy: prod", '"Quoted" description # with a hash', "Body\n")
    path = tmp_path / "memory" / "x.md"
    path.parent.mkdir()
    path.write_text(doc.render(), encoding="utf-8")
    assert read_doc(path, "memory") == doc


def test_crlf_in_the_store_is_not_an_edit(tmp_path: Path) -> None:
    stored = RecallDoc("memory", "n", "d", "one\r\ntwo\r\n")
    path = tmp_path / "n.md"
    path.write_bytes(stored.render().encode("utf-8"))
    assert read_doc(path, "memory").digest() == stored.digest()
