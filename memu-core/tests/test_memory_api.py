"""The Python API (memu_core.open_memory) against real SQLite stores in a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memu_core.errors import ConfigError, UsageError
from memu_core.memory import CommitResult, Memory, NewFile, NewResource, RecallFileRecord, Retrieval, open_memory

RELEASE = NewFile("release", "- tag with `git tag vX.Y.Z`\n- push the tag; CI publishes", "How we cut a release")
# Read before any test moves HOME: the root conftest points this at the machine's exported model.
MODELS_DIR = os.environ.get("MEMU_MODELS_DIR", "")
PETS = NewFile("pets", "- the cat is called Tom\n- feed him at six", "The household's animals")


def test_commit_retrieve_list_forget_round_trip(memu_home: Path, tmp_path: Path) -> None:
    db = tmp_path / "api.sqlite3"
    with open_memory(db, embed_provider="none") as memory:
        result = memory.commit([RELEASE, PETS.as_payload()], [NewResource("scripts/release.sh", "pushes tags")])
        assert isinstance(result, CommitResult)
        assert [f.name for f in result.files] == ["release", "pets"]
        assert result.files_written == 2 and result.texts_embedded == 0
        assert result.resources[0].path == "scripts/release.sh"
        assert result.files[0].created_at is not None and result.files[0].created_at.tzinfo is not None

        found = memory.retrieve("who is the cat")
        assert isinstance(found, Retrieval) and found.mode == "lexical"
        assert found.files[0].file.name == "pets"
        assert "cat" in found.segments[0].text and found.segments[0].file_id == found.files[0].file.id
        assert found.raw["files"][0]["name"] == "pets"

        again = memory.commit([RELEASE])
        assert again.files_written == 0  # unchanged: nothing written

        assert sorted(f.name for f in memory.list_files()) == ["pets", "release"]
        gone = memory.forget("pets")
        assert isinstance(gone, RecallFileRecord) and gone.content.startswith("- the cat")
        assert memory.forget("pets") is None
        assert memory.retrieve("who is the cat").files == []
    assert db.is_file()


def test_the_library_and_the_cli_share_one_store(memu_home: Path, tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite3"
    with open_memory(str(db), embed_provider="none") as memory:
        memory.commit([RELEASE])
    env = {**os.environ, "MEMU_DB": str(db), "MEMU_EMBED_PROVIDER": "none", "MEMU_SERVE_AUTOSTART": "0"}
    out = subprocess.run(
        [sys.executable, "-m", "memu_core._cli.main", "list-files"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "memory/release" in out.stdout


def test_no_arguments_opens_what_memu_db_names(
    memu_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "from-env.sqlite3"
    monkeypatch.setenv("MEMU_DB", str(db))
    with open_memory() as memory:
        memory.commit([RELEASE])
    with open_memory(db) as memory:
        assert [f.name for f in memory.list_files()] == ["release"]


def test_scopes_keep_users_apart(memu_home: Path, tmp_path: Path) -> None:
    db = tmp_path / "scoped.sqlite3"
    with open_memory(db, user_id="alice") as alice:
        alice.commit([PETS])  # the configured scope is where commits go
        assert [f.user_id for f in alice.list_files()] == ["alice"]
    with open_memory(db) as default:
        default.commit([NewFile("cats", "- the neighbour's cat is grey", "Around the house")])
        # A search without a scope filter sees every scope, as `memu retrieve` does.
        assert {h.file.user_id for h in default.retrieve("cat").files} == {"alice", "default"}
        assert [f.name for f in default.list_files(user_id="alice")] == ["pets"]
        assert [h.file.name for h in default.retrieve("cat", user_id="default").files] == ["cats"]


def test_tracks_filter_retrieve_and_list(memu_home: Path, tmp_path: Path) -> None:
    with open_memory(tmp_path / "t.sqlite3") as memory:
        memory.commit([RELEASE, NewFile("release-skill", "1. tag\n2. push", "Release steps", track="skill")])
        assert [f.name for f in memory.list_files(track="skill")] == ["release-skill"]
        assert {h.file.track for h in memory.retrieve("release", tracks=["skill"]).files} == {"skill"}


def test_bad_input_is_refused_before_writing(memu_home: Path, tmp_path: Path) -> None:
    db = tmp_path / "bad.sqlite3"
    with open_memory(db) as memory:
        with pytest.raises(UsageError):
            memory.commit([RELEASE, NewFile("no/slashes", "- x")])
        assert memory.list_files() == []
    with pytest.raises(TypeError, match="embedder"):
        open_memory(db, embedder="none")
    with pytest.raises(ConfigError, match="MEMU_MEMORY_MODE"):
        open_memory(db, memory_mode="remote")


def test_import_memu_core_stays_light() -> None:
    code = (
        "import sys, memu_core; memu_core.open_memory; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'pydantic', 'memu_core', 'pluggy'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pydantic" not in out and "memu_core._compose" not in out and "pluggy" not in out
    assert "memu_core.memory" in out


def test_memory_wraps_any_backend(memu_home: Path, tmp_path: Path) -> None:
    from memu_core._compose import open_backend
    from memu_core.settings import load_settings

    memory = Memory(open_backend(load_settings(db=str(tmp_path / "w.sqlite3"))))
    memory.commit([RELEASE])
    assert memory.backend.list_all_recall_files()["recall_files"][0]["name"] == "release"
    memory.close()


def test_hybrid_retrieval_with_the_local_model(
    memu_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("memu_embed_local")
    # memu_home cleared MEMU_*; share the machine's exported model (exporting again takes a minute).
    if MODELS_DIR:
        monkeypatch.setenv("MEMU_MODELS_DIR", MODELS_DIR)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with open_memory(tmp_path / "h.sqlite3", embed_provider="local") as memory:
        result = memory.commit([RELEASE, PETS])
        assert result.texts_embedded and result.texts_embedded > 0
        found = memory.retrieve("publishing a new version")  # no word in common with the release notes
        assert found.mode == "hybrid"
        assert found.files[0].file.name == "release"
