"""``memu templates keygen|sign|list``: a team signs what it publishes, memu accepts it, and
``list`` shows where each template came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memu_core._cli.main import main as memu_main

from .conftest import Publisher, job


def memu(*args: str) -> int:
    try:
        memu_main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_keygen_sign_and_list(
    memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = memu_home / "team.key"
    assert memu("templates", "keygen", "--out", str(key)) == 0
    public = capsys.readouterr().out.split("public key: ")[1].split()[0]
    assert key.stat().st_mode & 0o777 == 0o600
    assert memu("templates", "keygen", "--out", str(key)) == 2  # never overwrites a key
    assert "already exists" in capsys.readouterr().err

    template = publisher.put("skill-job.txt", job("skill-job", "4"))
    assert memu("templates", "sign", "--key", str(key), str(template)) == 0
    assert (publisher.root / "skill-job.txt.sig").is_file()

    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    monkeypatch.setenv("MEMU_TEMPLATE_KEYS", public)
    capsys.readouterr()
    assert memu("templates", "list", "--json") == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert (rows["skill-job"]["source"], rows["skill-job"]["version"]) == ("server", "v4")
    assert rows["skill-job"]["others"] == [
        {"source": "cache", "version": "v4"},
        {"source": "embedded", "version": "v1"},
    ]
    assert rows["memory-job"]["source"] == "embedded"


def test_sign_refuses_a_template_memu_would_refuse(memu_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = memu_home / "team.key"
    assert memu("templates", "keygen", "--out", str(key)) == 0
    broken = memu_home / "memory-job.txt"
    broken.write_text("<!-- memu-template memory-job v2 -->\nonly {input_path}\n")
    assert memu("templates", "sign", "--key", str(key), str(broken)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "lacks the placeholder(s) {track_dir}" in err and err.count("\n") == 1
    assert not broken.with_name("memory-job.txt.sig").exists()


def test_sign_with_a_missing_key_is_one_line(memu_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert memu("templates", "sign", "--key", str(memu_home / "nope.key"), str(memu_home / "x.txt")) == 2
    err = capsys.readouterr().err
    assert "cannot read the key file" in err and "memu templates keygen" in err and err.count("\n") == 1
