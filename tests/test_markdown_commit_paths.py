"""One Markdown file, two ways into the store: ``memu commit --from-dir`` and a host's ``commit``
(the bridging path, through the generic host ``memu-agent``). Both must store the same name,
description and content, whatever the frontmatter's quoting, line endings or script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from memu_host_generic.spec import SPEC as AGENT

from memu_core._cli.main import MEMU
from memu_core._cli.shell import run
from memu_core.testing.rehearse import call

CASES: dict[str, str] = {
    "quoted": '---\nname: quoted\ndescription: "How we deploy"\n---\nShip with make ship.\n',
    "single": "---\nname: single\ndescription: 'It''s the staging box'\n---\nbody\n",
    "colon": "---\nname: colon\ndescription: Deploy: use make ship, never by hand\n---\nbody\n",
    "quoted-colon": '---\nname: quoted-colon\ndescription: "Note: \\"quotes\\" inside"\n---\nbody\n',
    "unicode": "---\nname: café-notes\ndescription: Größe, 東京, emoji 🚀\n---\nDéjà vu — 日本語.\n",
    "crlf": "---\r\nname: crlf\r\ndescription: saved on Windows\r\n---\r\nline one\r\nline two\r\n",
    "bom": "\ufeff---\nname: bom\ndescription: with a byte-order mark\n---\nbody\n",
    "no-frontmatter": "Just a note without any frontmatter.\n",
    "empty-body": "---\nname: empty-body\ndescription: nothing below\n---\n",
    "no-description": "---\nname: no-description\n---\nbody only\n",
    "upper-keys": "---\nName: upper-keys\nDescription: Capitalised keys\n---\nbody\n",
    "blank-lines": "---\nname: blank-lines\n\ndescription:   padded   \n---\n\n\nbody after blanks\n\n",
    "hash": "---\nname: hash\ndescription: issue #42 # not a comment\n---\nbody\n",
    "dashes-in-body": "---\nname: dashes-in-body\ndescription: d\n---\nabove\n---\nbelow\n",
}


def _store(env: dict[str, str]) -> list[dict[str, Any]]:
    out = subprocess.run(
        [sys.executable, "-m", "memu_core._cli.main", "list-files", "--json"],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    ).stdout
    return _identities(json.loads(out)["recall_files"])


def _identities(files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        ({k: f[k] for k in ("track", "name", "description", "content")} for f in files),
        key=lambda f: (f["track"], f["name"]),
    )


def _env(home: Path, db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update(HOME=str(home), USERPROFILE=str(home), MEMU_DB=str(db), MEMU_EMBED_PROVIDER="none")
    env.update(MEMU_SERVE_AUTOSTART="0", PYTHONIOENCODING="utf-8")
    return env


def _binary(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip(f"{name} is not installed in this environment")
    return found


def test_the_installed_binaries_store_every_case_alike(tmp_path: Path) -> None:
    home = tmp_path / "home"
    notes = tmp_path / "notes"
    tree = tmp_path / "tree"
    for folder in (home, notes, tree / "memory"):
        folder.mkdir(parents=True)
    for stem, text in CASES.items():
        (notes / f"{stem}.md").write_bytes(text.encode("utf-8"))
        (tree / "memory" / f"{stem}.md").write_bytes(text.encode("utf-8"))

    from_dir = _env(home, tmp_path / "from-dir.db")
    done = subprocess.run([_binary("memu"), "commit", "--from-dir", str(notes)], env=from_dir, capture_output=True)
    assert done.returncode == 0, done.stderr
    bridged = _env(home, tmp_path / "bridged.db")
    done = subprocess.run([_binary("memu-agent"), "commit", "--base-dir", str(tree)], env=bridged, capture_output=True)
    assert done.returncode == 0, done.stderr

    stored = _store(from_dir)
    assert stored == _store(bridged)
    by_name = {f["name"]: f for f in stored}
    assert len(by_name) == len(CASES)
    assert by_name["quoted"]["description"] == "How we deploy"  # the quotes are syntax, not text
    assert by_name["single"]["description"] == "It's the staging box"
    assert by_name["colon"]["description"] == "Deploy: use make ship, never by hand"
    assert by_name["quoted-colon"]["description"] == 'Note: "quotes" inside'
    assert by_name["café-notes"]["description"] == "Größe, 東京, emoji 🚀"
    assert by_name["crlf"]["content"] == "line one\nline two"  # the engine trims the ends
    assert by_name["bom"]["description"] == "with a byte-order mark"
    assert by_name["no-frontmatter"]["content"] == CASES["no-frontmatter"].strip()
    assert by_name["no-description"]["description"] == ""
    assert by_name["upper-keys"]["description"] == "Capitalised keys"
    assert by_name["blank-lines"]["description"] == "padded"
    assert by_name["hash"]["description"] == "issue #42 # not a comment"
    assert by_name["dashes-in-body"]["content"] == "above\n---\nbelow"


# Open inputs: a frontmatter value in any of the three spellings, any body, either line ending.
_values = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\r\n"), max_size=24)
_bodies = st.text(st.characters(exclude_categories=("Cs",)), max_size=80)


@st.composite
def _spelled(draw: st.DrawFn, value: str) -> str:
    style = draw(st.sampled_from(["plain", "json", "single"]))
    if style == "json":
        return json.dumps(value, ensure_ascii=draw(st.booleans()))
    if style == "single":
        return "'" + value.replace("'", "''") + "'"
    return value


@st.composite
def _files(draw: st.DrawFn) -> str:
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    body = draw(_bodies)
    if not draw(st.booleans()):
        return body
    lines = ["---"]
    for key in draw(st.lists(st.sampled_from(["name", "description", "Description", "extra"]), max_size=4)):
        lines.append(f"{key}: {draw(_spelled(draw(_values)))}")
    lines.append("---")
    bom = "\ufeff" if draw(st.booleans()) else ""
    return bom + newline.join(lines) + newline + body


def _commit_both_ways(text: str, root: Path) -> tuple[Any, Any]:
    notes, tree = root / "notes", root / "tree"
    (tree / "memory").mkdir(parents=True)
    notes.mkdir()
    for folder in (notes, tree / "memory"):
        (folder / "note.md").write_bytes(text.encode("utf-8"))
    outcomes = []
    for db, commit in (
        ("from-dir.db", lambda: run(MEMU, ["commit", "--from-dir", str(notes), "--json"])),
        ("bridged.db", lambda: call(AGENT, "commit", "--base-dir", str(tree))[0]),
    ):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("MEMU_DB", str(root / db))
            code = commit()
            if code != 0:
                outcomes.append(("refused", code))
                continue
            from memu_core._bridge.backend import open_backend

            backend = open_backend()
            try:
                outcomes.append(_identities(backend.list_all_recall_files(limit=10)["recall_files"]))
            finally:
                backend.close()
    return outcomes[0], outcomes[1]


# The home is shared on purpose: each example commits into its own scratch folder and stores.
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(text=CASES["quoted"])
@example(text="---\nname: x\ndescription: '\"both\"'\n---\n")
@example(text="---\nname: unclosed\n")
@given(text=_files())
def test_any_file_is_stored_alike_both_ways(memu_home: Path, text: str) -> None:
    with tempfile.TemporaryDirectory(dir=memu_home) as scratch:
        from_dir, bridged = _commit_both_ways(text, Path(scratch))
    assert from_dir == bridged
