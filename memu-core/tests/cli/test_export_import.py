"""``memu export`` and ``memu import`` (issue 19): a Markdown folder or a JSON payload out, the
same back in, all or nothing, idempotent, ``--prune``; bad input named file by file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memu_core._cli.export_cmd import MANIFEST, run_export
from memu_core._cli.import_cmd import run_import
from memu_core._cli.memory_cmds import read_payload, run_commit
from memu_core._compose import open_backend
from memu_core.errors import UsageError

FILES = [
    {"name": "deploy notes", "track": "memory", "description": "how we ship", "content": "- tag\n- push"},
    {"name": "deploy-notes", "track": "memory", "description": "", "content": "- a second name, one file name"},
    {"name": "Café ☕ 東京", "track": "memory", "description": 'quotes "inside": yes', "content": "- ünïcode ✓"},
    {"name": "release", "track": "skill", "description": "cut a release", "content": "1. bump\n2. tag"},
]


@pytest.fixture
def db(memu_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = memu_home / "memu.sqlite3"
    monkeypatch.setenv("MEMU_DB", str(path))
    return path


def commit(files: list[dict[str, str]], tmp: Path) -> None:
    payload = tmp / "payload.json"
    payload.write_text(json.dumps({"recall_files": files}), encoding="utf-8")
    run_commit(str(payload), None, as_json=True)


def stored() -> dict[tuple[str, str], tuple[str, str]]:
    backend = open_backend()
    out: dict[tuple[str, str], tuple[str, str]] = {}
    try:
        cursor = None
        while True:
            page = backend.list_all_recall_files(cursor=cursor, limit=200)
            for f in page["recall_files"]:
                out[(f["track"], f["name"])] = (f["description"], f["content"])
            cursor = page["next_cursor"]
            if not cursor:
                return out
    finally:
        backend.close()


def export(target: Path, **kw: Any) -> None:
    args: dict[str, Any] = {"tracks": None, "names": None, "where": {}, "force": False, "as_json": False}
    run_export(target, **{**args, **kw})


def import_(source: Path, *, prune: bool = False) -> None:
    run_import(source, from_memu=None, memu_home=None, prune=prune, where={}, as_json=False)


def use_store(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMU_DB", str(path))


def test_folder_round_trip_into_an_empty_store_and_again(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(FILES, tmp_path)
    before = stored()
    export(tmp_path / "out")
    files = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.md"))
    assert len(files) == 4 and "memory/deploy-notes.md" in files and "skill/release.md" in files
    manifest = json.loads((tmp_path / "out" / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["files"] == 4 and manifest["tracks"] == ["memory", "skill"]
    use_store(tmp_path / "empty.sqlite3", monkeypatch)
    capsys.readouterr()
    import_(tmp_path / "out")
    assert stored() == before
    assert "4 written, 0 unchanged" in capsys.readouterr().out
    import_(tmp_path / "out")  # idempotent: a second import changes nothing
    assert "0 written, 4 unchanged" in capsys.readouterr().out
    # The folder is also what `memu commit --from-dir` reads.
    use_store(tmp_path / "third.sqlite3", monkeypatch)
    run_commit(None, tmp_path / "out", as_json=True)
    assert stored() == before


def test_json_export_is_a_commit_payload(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit(FILES, tmp_path)
    before = stored()
    export(tmp_path / "all.json")
    body = read_payload(str(tmp_path / "all.json"))
    assert sorted(body) == ["recall_files"] and len(body["recall_files"]) == 4
    export(tmp_path / "skills.json", tracks=["skill"])
    assert [f["name"] for f in read_payload(str(tmp_path / "skills.json"))["recall_files"]] == ["release"]
    use_store(tmp_path / "empty.sqlite3", monkeypatch)
    import_(tmp_path / "all.json")
    assert stored() == before


def test_an_existing_target_is_refused_unless_forced(db: Path, tmp_path: Path) -> None:
    commit(FILES[:1], tmp_path)
    target = tmp_path / "out"
    target.mkdir()
    (target / "mine.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(UsageError, match=r"out exists and is not empty; .*--force"):
        export(target)
    assert sorted(os.listdir(target)) == ["mine.txt"]
    (tmp_path / "x.json").write_text("{}", encoding="utf-8")
    with pytest.raises(UsageError, match=r"x.json exists; .*--force"):
        export(tmp_path / "x.json")
    export(target, force=True)
    assert sorted(os.listdir(target)) == sorted([MANIFEST, "memory"])
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]  # no staging left behind
    with pytest.raises(UsageError, match="no recall file named 'nope'"):
        export(tmp_path / "new", names=["nope"])
    assert not (tmp_path / "new").exists()


def test_bad_files_are_named_and_nothing_is_written(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "in"
    (folder / "memory").mkdir(parents=True)
    (folder / "memory" / "good.md").write_text("---\nname: good\n---\n- fine\n", encoding="utf-8")
    (folder / "memory" / "latin1.md").write_bytes("---\nname: caf\xe9\n---\nx\n".encode("latin-1"))
    (folder / "memory" / "slash.md").write_text('---\nname: "a/b"\n---\nx\n', encoding="utf-8")
    (folder / "memory" / "dots.md").write_text("---\nname: ..\n---\nx\n", encoding="utf-8")
    (folder / "memory" / "one.md").write_text("---\nname: twice\n---\n- one\n", encoding="utf-8")
    (folder / "memory" / "two.md").write_text("---\nname: twice\n---\n- two\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"4 file\(s\) in .* cannot be imported .*nothing was written"):
        import_(folder)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 4 and all(line.startswith("not imported: ") for line in err)
    assert any("latin1.md is not UTF-8" in line and "save it as UTF-8" in line for line in err)
    assert any("slash.md" in line and "'/'" in line for line in err)
    assert any("dots.md" in line and "only dots" in line for line in err)
    assert any("one.md and" in line and "two.md" in line and "'twice'" in line for line in err)
    assert stored() == {}  # not even the good file: all or nothing


def test_json_with_a_name_twice_is_refused(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dup.json"
    path.write_text(json.dumps({"recall_files": [FILES[0], FILES[0], {**FILES[1], "name": "x/.."}]}), "utf-8")
    with pytest.raises(UsageError, match=r"2 item\(s\) in .*dup.json cannot be imported"):
        import_(path)
    err = capsys.readouterr().err
    assert "recall_files[1] and recall_files[0] both hold the memory file 'deploy notes'" in err
    assert "recall_files[2]: the name 'x/..'" in err
    assert stored() == {}


def test_prune_makes_the_store_match_the_export(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commit(FILES, tmp_path)
    export(tmp_path / "out")
    export(tmp_path / "some", names=["release"])
    commit([{"name": "later", "track": "memory", "description": "", "content": "- added after"}], tmp_path)
    (tmp_path / "out" / "skill" / "release.md").unlink()  # removed from the folder
    with pytest.raises(UsageError, match=r"export of chosen names .*without --prune"):
        import_(tmp_path / "some", prune=True)
    capsys.readouterr()
    import_(tmp_path / "out", prune=True)
    assert set(stored()) == {(f["track"], f["name"]) for f in FILES if f["name"] != "release"}
    out = capsys.readouterr().out
    assert "pruned 2 recall file(s)" in out and "memory/later" in out and "skill/release" in out


def test_export_of_a_track_prunes_only_that_track(db: Path, tmp_path: Path) -> None:
    commit(FILES, tmp_path)
    export(tmp_path / "skills", tracks=["skill"])
    (tmp_path / "skills" / "skill" / "release.md").unlink()
    import_(tmp_path / "skills", prune=True)
    assert {t for t, _ in stored()} == {"memory"}  # memory files were not part of the export


# Names every door accepts (no '/', '\\', controls, not only dots), with Unicode and blanks inside.
_name = (
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="/\\\x85"),
        min_size=1,
        max_size=24,
    )
    .map(str.strip)
    .filter(lambda n: n.replace(".", "").strip() != "")
)
# Content and descriptions as the store keeps them: stripped; line breaks are "\n" (a Markdown
# file read back means "\r\n" the same way).
_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x00"), max_size=80).map(
    str.strip
)
_files = st.dictionaries(
    st.tuples(st.sampled_from(["memory", "skill"]), _name), st.tuples(_text, _text), min_size=1, max_size=8
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=_files)
def test_export_then_import_into_an_empty_store_is_lossless(
    files: dict[tuple[str, str], tuple[str, str]], memu_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory(dir=memu_home) as tmp:
        work = Path(tmp)
        use_store(work / "a.sqlite3", monkeypatch)
        items = [{"track": t, "name": n, "description": d, "content": c} for (t, n), (d, c) in files.items()]
        commit(items, work)
        before = stored()
        assert before == {(t, n.strip()): v for (t, n), v in files.items()}
        export(work / "out")
        use_store(work / "b.sqlite3", monkeypatch)
        import_(work / "out")
        assert stored() == before
