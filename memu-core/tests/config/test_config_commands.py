"""``init``, ``config`` and ``config show``: guards, idempotence, output rows, no secrets."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest

from memu_core._config import commands, dotenv, resolve
from memu_core._config.commands import REFUSED, run_config, run_config_show, run_init
from memu_core.errors import MemuError, UsageError

BIN = "memu-test"


class Streams:
    """Captured stdout/stderr of one command."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.err = io.StringIO()

    @property
    def stdout(self) -> str:
        return self.out.getvalue()

    @property
    def stderr(self) -> str:
        return self.err.getvalue()


def _seed(path: Path, text: str | None) -> None:
    if text is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _config(target: str | None, force: bool = False, **values: str) -> tuple[int, Streams]:
    s = Streams()
    return run_config(BIN, target, values, force, s.out, s.err), s


def _init(key: str | None = None) -> tuple[int, Streams]:
    s = Streams()
    return run_init(BIN, key, s.out, s.err), s


def _values(path: Path) -> dict[str, str]:
    return dotenv.read_file(path)[0]


# --- the flip guard (memu-platform §2.4 table) -----------------------------------------------

FLIP_TABLE = [
    # (file content or None for missing, exit code of --local, exit code of --cloud)
    (None, 0, 0),
    ("", 0, 0),
    ("MEMU_MEMORY_MODE=local\n", 0, 0),
    ("MEMU_MEMORY_MODE=local\nMEMU_DB=/s.sqlite3\n", 0, REFUSED),
    ("MEMU_DB=/s.sqlite3\n", 0, REFUSED),
    ("MEMU_MEMORY_MODE=cloud\n", 0, 0),
    ("MEMU_MEMORY_MODE=cloud\nMEMU_CLOUD_API_KEY=k1\n", REFUSED, 0),
    ("MEMU_CLOUD_API_KEY=k1\n", 0, 0),
    ("MEMU_MEMORY_MODE=Cloud\nMEMU_CLOUD_API_KEY=k1\n", REFUSED, 0),
    ("MEMU_MEMORY_MODE=garbage\nMEMU_DB=/s.sqlite3\n", 0, REFUSED),
]


@pytest.mark.parametrize("target", ["local", "cloud"])
@pytest.mark.parametrize(("content", "local_code", "cloud_code"), FLIP_TABLE)
def test_flip_guard(config_file: Path, content: str | None, local_code: int, cloud_code: int, target: str) -> None:
    _seed(config_file, content)
    before = config_file.read_bytes() if config_file.exists() else None
    code, s = _config(target)
    expected = local_code if target == "local" else cloud_code
    assert code == expected
    if code == REFUSED:
        assert (config_file.read_bytes() if config_file.exists() else None) == before
        lines = s.stderr.splitlines()
        assert len(lines) == 2 and lines[0].startswith("error: ") and "--force" in lines[1]
        assert f"config --{target}" in lines[1]
        assert s.stdout == ""
    else:
        assert _values(config_file)["MEMU_MEMORY_MODE"] == target


@pytest.mark.parametrize("target", ["local", "cloud"])
@pytest.mark.parametrize(("content", "local_code", "cloud_code"), FLIP_TABLE)
def test_force_passes_every_row(
    config_file: Path, content: str | None, local_code: int, cloud_code: int, target: str
) -> None:
    _seed(config_file, content)
    code, s = _config(target, force=True)
    assert code == 0
    assert s.stdout.splitlines()[0] == commands.row("mode", f"{target} (forced)")
    assert _values(config_file)["MEMU_MEMORY_MODE"] == target


@pytest.mark.parametrize(
    "exported",
    [
        {"MEMU_CLOUD_API_KEY": "shell-key"},
        {"MEMU_MEMORY_MODE": "cloud"},
        {"MEMU_MEMORY_MODE": "local", "MEMU_DB": "/shell.sqlite3"},
    ],
)
@pytest.mark.parametrize(("content", "local_code", "cloud_code"), FLIP_TABLE)
def test_shell_exports_never_change_the_outcome(
    config_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    exported: dict[str, str],
    content: str | None,
    local_code: int,
    cloud_code: int,
) -> None:
    for name, value in exported.items():
        monkeypatch.setenv(name, value)
    for target, expected in (("local", local_code), ("cloud", cloud_code)):
        config_file.unlink(missing_ok=True)
        _seed(config_file, content)
        assert _config(target)[0] == expected


# --- the identity guard ----------------------------------------------------------------------

IDENTITY_TABLE = [
    # (file content, flags, expected exit code)
    ("MEMU_DB=/a.sqlite3\n", {"db": "/a.sqlite3"}, 0),
    ("MEMU_DB=/a.sqlite3\n", {"db": "/b.sqlite3"}, REFUSED),
    ("MEMU_DB=~/a.sqlite3\n", {"db": "{home}/a.sqlite3"}, 0),  # same store, other spelling
    ("", {"db": "/b.sqlite3"}, 0),  # setting an absent key is not a change
    ("MEMU_DB=\n", {"db": "/b.sqlite3"}, 0),
    ("MEMU_EMBED_PROVIDER=local\n", {"embed_provider": "LOCAL"}, 0),
    ("MEMU_EMBED_PROVIDER=local\n", {"embed_provider": "openai"}, REFUSED),
    ("MEMU_LLM_PROVIDER=openai\n", {"embed_provider": "local"}, REFUSED),  # legacy name counts
    ("MEMU_EMBED_MODEL=m1\n", {"embed_model": "m1"}, 0),
    ("MEMU_EMBED_MODEL=m1\n", {"embed_model": "m2"}, REFUSED),
    ("MEMU_EMBED_MODEL=m1\n", {"embed_api_key": "new", "embed_base_url": "http://127.0.0.1:9"}, 0),
    ("MEMU_DB=/a.sqlite3\nMEMU_EMBED_MODEL=m1\n", {"embed_model": "m2", "db": "/a.sqlite3"}, REFUSED),
    ("MEMU_EMBED_MODEL=m1\n", {"embed_model": "m2", "cloud_api_key": "k"}, REFUSED),
]


@pytest.mark.parametrize(("content", "flags", "expected"), IDENTITY_TABLE)
def test_identity_guard(cfg_home: Path, config_file: Path, content: str, flags: dict[str, str], expected: int) -> None:
    _seed(config_file, content)
    before = config_file.read_bytes()
    flags = {k: v.format(home=cfg_home) for k, v in flags.items()}
    code, s = _config("local", **flags)
    assert code == expected
    if code == REFUSED:
        assert config_file.read_bytes() == before
        assert s.stderr.startswith("error: MEMU_")
        assert "--force" in s.stderr
        assert s.stdout == ""
        # --force is the way through
        assert _config("local", force=True, **flags)[0] == 0
        for flag, key in commands.LOCAL_FLAGS.items():
            if flag in flags:
                assert _values(config_file)[key] == flags[flag]


def test_identity_refusal_redacts_dsn(config_file: Path) -> None:
    _seed(config_file, "MEMU_DB=postgresql://u:oldpw@h/db\n")
    code, s = _config("local", db="postgresql://u:newpw@h/other")
    assert code == REFUSED
    assert "oldpw" not in s.stderr and "newpw" not in s.stderr
    assert "u:***@h/db" in s.stderr


def test_config_without_target(config_file: Path) -> None:
    code, s = _config(None, db="/x")
    assert code == REFUSED
    assert "--local or --cloud" in s.stderr and f"`{BIN} config show`" in s.stderr
    assert not config_file.exists()


def test_config_local_writes_flags_and_ignores_cloud_ones(config_file: Path) -> None:
    code, s = _config(
        "local",
        db="/s.sqlite3",
        embed_provider="local",
        embed_model="all-MiniLM-L6-v2",
        embed_api_key="sk-embed",
        embed_base_url="http://127.0.0.1:8000/v1",
        cloud_api_key="ignored",
    )
    assert code == 0
    values = _values(config_file)
    assert values["MEMU_DB"] == "/s.sqlite3"
    assert values["MEMU_EMBED_PROVIDER"] == "local"
    assert values["MEMU_EMBED_MODEL"] == "all-MiniLM-L6-v2"
    assert values["MEMU_API_KEY"] == "sk-embed"
    assert values["MEMU_BASE_URL"] == "http://127.0.0.1:8000/v1"
    assert "MEMU_CLOUD_API_KEY" not in values
    lines = s.stdout.splitlines()
    assert lines[0] == "mode      local"
    assert lines[1] == "store     /s.sqlite3"
    assert re.fullmatch(r"client    [0-9a-f]{4}… \(generated\)", lines[2])
    assert lines[3].startswith(f"config    {config_file} (")
    assert lines[4] == f"ready — verify with `{BIN} doctor`"
    assert "sk-embed" not in s.stdout + s.stderr


@pytest.mark.parametrize(
    ("content", "flags", "key_row"),
    [
        ("", {"cloud_api_key": "k1"}, "key       set"),
        ("MEMU_MEMORY_MODE=cloud\nMEMU_CLOUD_API_KEY=k1\n", {"cloud_api_key": "k1"}, "key       set"),
        ("MEMU_MEMORY_MODE=cloud\nMEMU_CLOUD_API_KEY=k1\n", {}, "key       set"),
        (
            "MEMU_MEMORY_MODE=cloud\nMEMU_CLOUD_API_KEY=k1\n",
            {"cloud_api_key": "k2"},
            "key       replaced — the memU Cloud key stored before is gone",
        ),
    ],
)
def test_config_cloud_key_rows(config_file: Path, content: str, flags: dict[str, str], key_row: str) -> None:
    _seed(config_file, content)
    code, s = _config("cloud", **flags)
    assert code == 0
    assert s.stdout.splitlines()[1] == key_row
    for secret in ("k1", "k2"):
        assert f" {secret}" not in s.stdout + s.stderr


def test_config_cloud_without_key_says_so(config_file: Path) -> None:
    code, s = _config("cloud")
    assert code == 0
    assert s.stdout.splitlines()[1].startswith("key       unset — ")


def test_config_cloud_base_url_default_is_not_written(config_file: Path) -> None:
    _config("cloud", cloud_base_url=commands.DEFAULT_CLOUD_BASE_URL)
    assert "MEMU_CLOUD_BASE_URL" not in _values(config_file)
    _config("cloud", cloud_base_url="http://127.0.0.1:8765/api/v4/memory/")
    assert _values(config_file)["MEMU_CLOUD_BASE_URL"] == "http://127.0.0.1:8765/api/v4/memory/"
    _config("cloud", cloud_base_url=commands.DEFAULT_CLOUD_BASE_URL)  # going back is possible
    assert _values(config_file)["MEMU_CLOUD_BASE_URL"] == commands.DEFAULT_CLOUD_BASE_URL


def test_switching_keeps_the_other_modes_keys(config_file: Path) -> None:
    _seed(config_file, "MEMU_MEMORY_MODE=local\nMEMU_DB=/s.sqlite3\n")
    assert _config("cloud", force=True, cloud_api_key="k")[0] == 0
    values = _values(config_file)
    assert values["MEMU_DB"] == "/s.sqlite3" and values["MEMU_MEMORY_MODE"] == "cloud"


def test_config_rejects_unknown_flags(config_file: Path) -> None:
    with pytest.raises(UsageError, match="bogus"):
        _config("local", bogus="1")


def test_config_refreshes_the_resolver(config_file: Path) -> None:
    assert resolve.lookup("MEMU_DB") is None
    _config("local", db="/fresh.sqlite3")
    assert resolve.lookup("MEMU_DB") == "/fresh.sqlite3"


# --- init -------------------------------------------------------------------------------------


def test_init_is_idempotent(config_file: Path) -> None:
    code, first = _init()
    assert code == 0
    content = config_file.read_bytes()
    lines = first.stdout.splitlines()
    assert lines[0].startswith("mode      local (default")
    assert re.fullmatch(r"client    [0-9a-f]{4}… \(generated\)", lines[1])
    assert lines[-1] == f"ready — continue with `{BIN} docs install`"
    code, second = _init()
    assert code == 0
    assert config_file.read_bytes() == content  # byte-identical, no second client id
    assert second.stdout.splitlines()[0] == "mode      local (kept)"
    assert "(generated)" not in second.stdout
    if os.name == "posix":
        assert config_file.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("content", "mode_row", "mode_value"),
    [
        ("MEMU_MEMORY_MODE=cloud\nMEMU_CLOUD_API_KEY=k\n", "mode      cloud (kept)", "cloud"),
        ("MEMU_DB=/s.sqlite3\n", "mode      local (recorded; the configured store stays as it is)", "local"),
        ("MEMU_MEMORY_MODE=remote\n", "mode      local (default store ~/.memu/memu.sqlite3)", "local"),
    ],
)
def test_init_without_key_never_demotes(config_file: Path, content: str, mode_row: str, mode_value: str) -> None:
    _seed(config_file, content)
    code, s = _init()
    assert code == 0
    assert s.stdout.splitlines()[0] == mode_row
    assert _values(config_file)["MEMU_MEMORY_MODE"] == mode_value


def test_init_ignores_a_shell_mode(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMU_MEMORY_MODE", "cloud")
    _init()
    assert _values(config_file)["MEMU_MEMORY_MODE"] == "local"


def test_init_keeps_an_existing_client_id(config_file: Path) -> None:
    _seed(config_file, "MEMU_CLIENT_ID=abcdef-123\n")
    _, s = _init()
    assert "client    abcd…" in s.stdout.splitlines()
    assert _values(config_file)["MEMU_CLIENT_ID"] == "abcdef-123"


def test_init_with_key_over_a_local_store_warns(config_file: Path) -> None:
    _seed(config_file, "MEMU_DB=/s.sqlite3\n")
    events: list[str] = []
    s = Streams()
    code = run_init(BIN, "secret-cloud-key", s.out, s.err, after_write=lambda: events.append("installed"))
    assert code == 0 and events == ["installed"]
    lines = s.stdout.splitlines()
    assert lines[0] == "mode      cloud (from --cloud-api-key)"
    assert lines[1].startswith("switched  ")
    assert lines[2] == "key       set"
    assert s.stderr.startswith("warning: ") and f"`{BIN} config --local --force`" in s.stderr
    assert "secret-cloud-key" not in s.stdout + s.stderr
    values = _values(config_file)
    assert values["MEMU_CLOUD_API_KEY"] == "secret-cloud-key"
    assert values["MEMU_MEMORY_MODE"] == "cloud" and values["MEMU_DB"] == "/s.sqlite3"


def test_init_with_a_new_key_reports_the_replacement(config_file: Path) -> None:
    _seed(config_file, "MEMU_MEMORY_MODE=cloud\nMEMU_CLOUD_API_KEY=old\n")
    _, s = _init("new")
    assert "key       replaced — the memU Cloud key stored before is gone" in s.stdout.splitlines()
    assert s.stderr == ""  # already cloud: nothing orphaned


def test_init_refuses_a_blank_key(config_file: Path) -> None:
    with pytest.raises(UsageError, match="--cloud-api-key"):
        _init("   ")
    assert not config_file.exists()


# --- config show ------------------------------------------------------------------------------


def test_show_on_missing_file_writes_nothing(config_file: Path) -> None:
    s = Streams()
    assert run_config_show(BIN, s.out, s.err) == 0
    assert s.stdout.splitlines()[0] == f"config    {config_file} (not created yet)"
    assert s.stdout.splitlines()[1].startswith("mode      local (default")
    assert not config_file.parent.exists()


def test_show_never_prints_a_secret(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _seed(
        config_file,
        "MEMU_MEMORY_MODE=local\n"
        "MEMU_DB=postgresql://memu:s3cr3t-pw@db.lan:5432/memu?sslmode=require&password=qpw\n"
        "MEMU_API_KEY=sk-embed-secret\n"
        "MEMU_CLOUD_API_KEY=cloud-secret\n"
        "MEMU_EMBED_MODEL=all-MiniLM-L6-v2\n"
        "MEMU_LLM_PROVIDER=openai\n"
        "MEMU_CLIENT_ID=0123456789\n"
        "broken line\n",
    )
    monkeypatch.setenv("MEMU_API_KEY", "env-secret")
    monkeypatch.setenv("MEMU_EMBED_MODEL", "other-model")
    s = Streams()
    assert run_config_show(BIN, s.out, s.err) == 0
    shown = s.stdout + s.stderr
    for secret in ("s3cr3t-pw", "qpw", "sk-embed-secret", "cloud-secret", "env-secret", "0123456789"):
        assert secret not in shown
    assert s.stdout.splitlines() == [
        f"config    {config_file}",
        "mode      local",
        "store     postgresql://memu:***@db.lan:5432/memu?sslmode=require&password=***",
        "provider  openai (from legacy MEMU_LLM_PROVIDER)",
        "model     all-MiniLM-L6-v2",
        "embed key set",
        "client    0123…",
        "telemetry off (default)",
        "note: the environment overrides what this file says for MEMU_API_KEY, MEMU_EMBED_MODEL",
    ]
    assert s.stderr == f"warning: {config_file} line 8 skipped: no '=' (expected KEY=value)\n"


def test_show_cloud(config_file: Path) -> None:
    _seed(config_file, "MEMU_MEMORY_MODE=cloud\nMEMU_CLOUD_API_KEY=k\n")
    s = Streams()
    run_config_show(BIN, s.out, s.err)
    assert s.stdout.splitlines()[1:] == [
        "mode      cloud",
        "key       set",
        "endpoint  default",
        "client    unset",
        "telemetry off (default)",
    ]


def test_show_flags_an_invalid_mode(config_file: Path) -> None:
    _seed(config_file, "MEMU_MEMORY_MODE=remote\n")
    s = Streams()
    run_config_show(BIN, s.out, s.err)
    assert s.stdout.splitlines()[1].startswith("mode      invalid ('remote')")


def test_show_is_read_only(config_file: Path) -> None:
    _seed(config_file, "MEMU_DB=/s\n")
    before = (config_file.read_bytes(), config_file.stat().st_mtime_ns)
    run_config_show(BIN, io.StringIO(), io.StringIO())
    assert (config_file.read_bytes(), config_file.stat().st_mtime_ns) == before


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs POSIX permissions as non-root")
def test_unwritable_home_is_one_line_error(config_file: Path) -> None:
    config_file.parent.mkdir()
    config_file.parent.chmod(0o500)
    try:
        with pytest.raises(MemuError, match="cannot be written"):
            _init()
    finally:
        config_file.parent.chmod(0o700)


def test_write_failure_is_one_line_error(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: Path, updates: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(dotenv, "write_values", refuse)
    with pytest.raises(MemuError) as info:
        _config("local", db="/x")
    assert "cannot be written (Permission denied)" in str(info.value)
    assert "\n" not in str(info.value)


def test_core_binary_points_at_doctor(config_file: Path) -> None:
    s = Streams()
    run_init("memu", None, s.out, s.err)
    assert s.stdout.splitlines()[-1].startswith("ready — verify with `memu doctor`")


def test_failing_install_hook_does_not_fail_init(config_file: Path) -> None:
    def broken() -> None:
        raise RuntimeError("spool unwritable")

    s = Streams()
    assert run_init(BIN, None, s.out, s.err, after_write=broken) == 0
    assert s.stdout.splitlines()[-1].startswith("ready — ")


# --- config --telemetry on|off ----------------------------------------------------------------


def test_telemetry_alone_writes_only_the_switch(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memu_core import events

    monkeypatch.delenv("DO_NOT_TRACK", raising=False)
    _seed(config_file, "MEMU_MEMORY_MODE=cloud\nMEMU_CLOUD_API_KEY=k1\n# mine\n")
    s = Streams()
    assert run_config(BIN, None, {}, False, s.out, s.err, telemetry="on") == 0
    assert _values(config_file) == {"MEMU_MEMORY_MODE": "cloud", "MEMU_CLOUD_API_KEY": "k1", "MEMU_TELEMETRY": "1"}
    assert "# mine" in config_file.read_text()
    assert events.telemetry_on() and s.stderr == ""
    spool = config_file.parent / "events.jsonl"
    assert f"telemetry on — counts and durations go to {spool}; nothing leaves this machine" in s.stdout
    spool.write_text('{"event_id": "a"}\n{"event_id": "b"}\n')
    s = Streams()
    assert run_config(BIN, None, {}, False, s.out, s.err, telemetry="off") == 0
    assert _values(config_file)["MEMU_TELEMETRY"] == "0" and not events.telemetry_on()
    assert s.stdout.splitlines()[1:] == [
        "telemetry off — nothing is recorded or sent",
        f"note: 2 event(s) recorded earlier are still in {spool}; `memu events clear` deletes them",
    ]
    s = Streams()
    run_config_show(BIN, s.out, s.err)
    assert "telemetry off" in s.stdout.splitlines()


def test_telemetry_with_a_mode_and_the_environment_winning(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DO_NOT_TRACK", "1")
    monkeypatch.setenv("MEMU_EVENTS_BASE_URL", "http://127.0.0.1:9/api/memu/analytics/events")
    code, s = 0, Streams()
    code = run_config(BIN, "local", {"db": "/s.sqlite3"}, False, s.out, s.err, telemetry="ON")
    assert (
        code == 0 and _values(config_file)["MEMU_TELEMETRY"] == "1" and _values(config_file)["MEMU_DB"] == "/s.sqlite3"
    )
    assert "flushes send them to MEMU_EVENTS_BASE_URL" in s.stdout
    assert "note: DO_NOT_TRACK=1 in this environment wins: telemetry stays off in this shell" in s.stdout
    s = Streams()
    run_config_show(BIN, s.out, s.err)
    assert "telemetry on" in s.stdout.splitlines()
    monkeypatch.delenv("DO_NOT_TRACK")
    monkeypatch.setenv("MEMU_TELEMETRY", "1")
    s = Streams()
    assert run_config(BIN, None, {}, False, s.out, s.err, telemetry="off") == 0
    assert "note: MEMU_TELEMETRY=1 in this environment wins: telemetry stays on in this shell" in s.stdout


def test_telemetry_refuses_other_values(config_file: Path) -> None:
    with pytest.raises(UsageError, match="--telemetry on or --telemetry off"):
        run_config(BIN, None, {}, False, io.StringIO(), io.StringIO(), telemetry="maybe")
    assert not config_file.exists()
