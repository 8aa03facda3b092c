"""Fast unit tests of the warm path's pieces: the run directory, the handshake stamp, the v4 rules."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memu_core import _layout, v4
from memu_core._serve import stamp
from memu_core.errors import UsageError


def test_run_dir_is_created_private_and_tightened_inside_memus_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(_layout.RUN_DIR_ENV, raising=False)
    created = _layout.ensure_run_dir()
    assert created == tmp_path / ".memu" / "run"
    assert stat.S_IMODE(os.stat(created).st_mode) == 0o700
    os.chmod(created, 0o755)
    _layout.ensure_run_dir()
    assert stat.S_IMODE(os.stat(created).st_mode) == 0o700


def test_a_run_dir_of_the_users_own_outside_memus_folder_is_left_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    run.mkdir(mode=0o755)
    os.chmod(run, 0o755)
    monkeypatch.setenv(_layout.RUN_DIR_ENV, str(run))
    assert _layout.ensure_run_dir() == run
    assert stat.S_IMODE(os.stat(run).st_mode) == 0o755, "memu did not create it: it is not chmod-ed"


def test_too_long_socket_path_is_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memu_core._serve.server import WarmServer

    monkeypatch.setenv(_layout.RUN_DIR_ENV, str(tmp_path / ("x" * 120)))
    with pytest.raises(UsageError, match="MEMU_RUN_DIR"):
        WarmServer.start(lambda: None, idle=0)


def test_config_fingerprint_tracks_what_decides_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.env"
    monkeypatch.setenv("MEMU_CONFIG_ENV", str(config))
    base = {"MEMU_CONFIG_ENV": str(config)}
    empty = stamp.config_fingerprint(base)
    config.write_text("MEMU_DB=/a.sqlite3\n")
    written = stamp.config_fingerprint(base)
    assert written != empty
    assert stamp.config_fingerprint({**base, "MEMU_EMBED_PROVIDER": "local"}) != written
    # run-time knobs of the server do not force a restart
    assert stamp.config_fingerprint({**base, "MEMU_SERVE_IDLE": "5", "MEMU_SERVE_AUTOSTART": "0"}) == written
    assert stamp.config_fingerprint({**base, "PATH": "/elsewhere"}) == written


def test_memu_version_is_stable_within_a_process() -> None:
    first = stamp.memu_version()
    assert first and first == stamp.memu_version()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(None, "default"), ("", "default"), ("  ", "default"), (" alice ", "alice"), (7, "7")],
)
def test_scope_values_follow_memus_rule(raw: object, expected: str) -> None:
    assert v4.scope_value(raw, "user_id") == expected


def test_unsupported_filters_and_foreign_scopes_are_refused() -> None:
    with pytest.raises(v4.ApiError) as info:
        v4.search(None, {"query": "x", "user_id__in": ["a"]})
    assert info.value.status == 422 and "user_id__in" in info.value.message
    with pytest.raises(v4.ApiError) as info:
        v4.list_files(None, {"limit": "500"})
    assert info.value.status == 422
    with pytest.raises(v4.ApiError) as info:
        v4.authorize(v4.ScopeKey("alice", "cli"), "alice", "web")
    assert info.value.status == 403 and info.value.code == "FORBIDDEN_SCOPE"
    v4.authorize(v4.ScopeKey("alice"), "alice", "web")  # a user-wide key covers every agent
    v4.authorize(None, "anyone", "any")  # the trusted socket
