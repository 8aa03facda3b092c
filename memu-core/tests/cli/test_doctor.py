"""One doctor: the runner's rules, ``memu doctor`` and a host's doctor sharing checks and format."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._cli import doctor
from memu_core._cli.doctor import Context, Row
from memu_core._cli.main import MEMU
from memu_core._cli.shell import run
from memu_core.errors import UsageError
from memu_core.testing import fake_entry_point, registered
from memu_core.testing.rehearse import call


def _run(*checks: doctor.Check, ctx: Context | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = doctor.run(checks, ctx or Context("memu"), out, err)
    return code, out.getvalue(), err.getvalue()


def check_fine(ctx: Context) -> Iterator[Row]:
    yield Row("fine", "ok")


def check_odd(ctx: Context) -> Iterator[Row]:
    yield Row("odd", "unusual but working", "warn", "look at it")


def check_raises(ctx: Context) -> Iterator[Row]:
    raise UsageError("the thing is missing; add it")
    yield Row("never", "")  # pragma: no cover - makes this a generator


def check_blocks(ctx: Context) -> Iterator[Row]:
    ctx.stop = True
    ctx.closers.append(lambda: ctx.closers.append(lambda: None))
    yield Row("base", "cannot go on", "fail", "repair the base")


def test_rows_render_in_one_format() -> None:
    assert Row("store", "/x").render() == "store       /x\n"
    assert Row("store", "gone", "fail", "recreate it").render() == (
        "store       FAIL  gone\n            fix: recreate it\n"
    )


def test_warnings_do_not_fail_and_are_counted() -> None:
    code, out, err = _run(check_fine, check_odd)
    assert code == 0 and err == ""
    assert out == "fine        ok\nodd         WARN  unusual but working\n            fix: look at it\n" + (
        "all checks passed (1 warning(s) above)\n"
    )


def test_a_check_that_raises_is_a_failed_row_and_the_rest_still_run() -> None:
    code, out, err = _run(check_raises, check_fine)
    assert code == 1
    assert out == "raises      FAIL  the thing is missing; add it\nfine        ok\n"
    assert err == "error: 1 check(s) failed (raises); the FAIL rows above say how to fix them\n"


def test_a_failure_others_depend_on_ends_the_run_and_everything_is_closed() -> None:
    ctx = Context("memu")
    code, out, _ = _run(check_blocks, check_fine, ctx=ctx)
    assert code == 1 and "fine" not in out and len(ctx.closers) == 2  # the closer ran


def test_memu_and_a_host_print_the_same_core_rows(memu_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memu_host_codex.spec import SPEC

    old_umask = os.umask(0o077)  # the private modes memu gives ~/.memu, so no row warns
    try:
        assert run(MEMU, ["doctor"]) == 0
        memu_out = capsys.readouterr().out.splitlines()
        code, host_out, _ = call(SPEC, "doctor")
    finally:
        os.umask(old_umask)
    assert code == 0
    assert memu_out[-1] == "all checks passed"
    core_rows = memu_out[:-1]
    assert host_out.splitlines()[: len(core_rows)] == core_rows
    assert [r.split()[0] for r in core_rows] == [
        "config", "mode", "store", "plugins", "writable", "integrity", "schema", "vectors", "embedder",
        "search", "retrieval", "permissions",
    ]  # fmt: skip


def test_a_broken_plugin_fails_memu_doctor(memu_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = fake_entry_point("broken", ImportError("No module named 'missing_sdk'"), dist="memu-broken")
    with registered(entry_points=[broken]):
        assert run(MEMU, ["doctor"]) == 1
    out, err = capsys.readouterr()
    assert "plugin      FAIL  broken (memu-broken): " in out and "missing_sdk" in out
    assert "fix: reinstall memu-broken, or uninstall it" in out
    assert err.startswith("error: 1 check(s) failed (plugin)")
    assert "retrieval   ok (" in out  # a broken plugin does not stop the other checks


def test_a_configuration_error_stops_at_the_config_row(
    memu_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMU_MEMORY_MODE", "nonsense")
    assert run(MEMU, ["doctor"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines()[1].startswith("config      FAIL  ")
    assert "fix: run `memu config show`" in out and "store" not in out
    assert err.startswith("error: 1 check(s) failed (config)")
