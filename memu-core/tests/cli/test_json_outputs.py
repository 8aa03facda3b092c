"""``--json`` on the commands that print a result (issue 19): doctor and db print one JSON object."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memu_core._cli.main import MEMU
from memu_core._cli.shell import run
from memu_core._stores.sqlite.connection import HEAD_REVISION


@pytest.fixture
def db(memu_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "memu.sqlite3"
    for key, value in {"MEMU_DB": str(path), "MEMU_EMBED_PROVIDER": "none", "MEMU_SERVE_AUTOSTART": "0"}.items():
        monkeypatch.setenv(key, value)
    return path


def test_db_and_doctor_print_json(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert run(MEMU, ["db", "upgrade", "--json"]) == 0
    upgraded = json.loads(capsys.readouterr().out)
    assert upgraded == {"store": str(db), "kind": "sqlite", "revision": HEAD_REVISION}
    assert run(MEMU, ["db", "current", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["revision"] == HEAD_REVISION
    code = run(MEMU, ["doctor", "--json"])
    out = capsys.readouterr().out
    report = json.loads(out)
    assert report["ok"] is (code == 0)
    assert report["checks"] and {"label", "status", "detail", "fix"} <= set(report["checks"][0])
    assert "all checks passed" not in out
