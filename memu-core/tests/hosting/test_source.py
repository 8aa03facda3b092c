"""The default incremental reader: byte-offset cursor, partial lines, rewrites, corrupt lines."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memu_core.host import RecordKind, SessionFile, TranscriptReadError

from .conftest import ToySource, toy_line


def _stat(path: Path) -> SessionFile:
    s = path.stat()
    return SessionFile(path, s.st_mtime_ns, s.st_size)


def test_reads_only_new_complete_lines(tmp_path: Path) -> None:
    src = ToySource(tmp_path)
    path = tmp_path / "s.jsonl"
    path.write_text(toy_line("user", "a") + toy_line("tool", "b") + '{"role": "assistant", "te')
    first = src.read_incremental(_stat(path), None)
    assert [r.kind for r in first.records] == [RecordKind.MESSAGE, RecordKind.TOOL]
    assert first.cursor["lines"] == 2
    # The half-written line is completed later: it is read whole, not lost (memU loses it).
    with path.open("a") as fh:
        fh.write('xt": "c"}\n' + toy_line("user", "d"))
    second = src.read_incremental(_stat(path), first.cursor)
    assert [json.loads(r.text)["text"] for r in second.records] == ["c", "d"]
    assert second.cursor["lines"] == 4
    third = src.read_incremental(_stat(path), second.cursor)
    assert not third.changed


def test_a_rewritten_shorter_file_is_read_again(tmp_path: Path) -> None:
    src = ToySource(tmp_path)
    path = tmp_path / "s.jsonl"
    path.write_text(toy_line("user", "long text " * 20))
    cur = src.read_incremental(_stat(path), None).cursor
    path.write_text(toy_line("user", "new"))
    again = src.read_incremental(_stat(path), cur)
    assert [json.loads(r.text)["text"] for r in again.records] == ["new"]


def test_corrupt_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    src = ToySource(tmp_path)
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b'not json\n[1, 2]\n"str"\n\xff\xfe garbage\n' + toy_line("user", "ok").encode() + b"\n\n"
    )
    read = src.read_incremental(_stat(path), None)
    assert read.corrupt == 4
    assert [json.loads(r.text)["text"] for r in read.records] == ["ok"]


def test_a_vanished_file_is_a_recoverable_read_error(tmp_path: Path) -> None:
    src = ToySource(tmp_path)
    path = tmp_path / "s.jsonl"
    path.write_text(toy_line("user", "x"))
    session = _stat(path)
    path.unlink()
    try:
        src.read_incremental(session, None)
    except TranscriptReadError as exc:
        assert "could not read transcript data" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected TranscriptReadError")


def test_classify_never_raises_on_odd_records() -> None:
    src = ToySource("/x")
    for odd in ["", "{", "null", "[]", '{"role": {"x": 1}}', "\x00"]:
        assert src.classify(odd) is RecordKind.OTHER


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(
        st.one_of(
            st.binary(max_size=40),
            st.text(max_size=40).map(lambda s: s.encode("utf-8", "surrogatepass")),
            st.sampled_from(["user", "assistant", "tool", "x"]).map(lambda r: toy_line(r, "t").encode()),
            st.sampled_from(["user", "tool"]).map(lambda r: toy_line(r, "truncated").encode()[:-5]),
        ),
        max_size=25,
    ),
    cut=st.integers(min_value=0, max_value=2000),
)
def test_malformed_and_truncated_input_never_raises(tmp_path: Path, lines: list[bytes], cut: int) -> None:
    src = ToySource(tmp_path)
    path = tmp_path / "h.jsonl"
    data = b"\n".join(line.replace(b"\n", b" ") for line in lines)
    path.write_bytes(data[:cut] if cut < len(data) else data)
    read = src.read_incremental(_stat(path), None)
    complete = data[: cut if cut < len(data) else len(data)]
    body = complete[: complete.rfind(b"\n") + 1]
    nonblank = [ln for ln in body.decode("utf-8", "replace").split("\n") if ln.strip()]
    assert len(read.records) + read.corrupt == len(nonblank)
    for rec in read.records:
        assert isinstance(json.loads(rec.text), dict)
    # Reading again from the cursor finds nothing new.
    assert not src.read_incremental(_stat(path), read.cursor).changed
