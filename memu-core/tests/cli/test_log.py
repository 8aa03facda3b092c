"""The structured log: quiet and structlog-free by default, key=value events on stderr with -v."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from memu_core import _log


@pytest.fixture(autouse=True)
def quiet_again() -> Iterator[None]:
    yield
    _log.configure(verbose=False)


def test_quiet_by_default_and_structlog_stays_unimported() -> None:
    code = (
        "import sys\nfrom memu_core import _log\n"
        "_log.configure(verbose=False)\n_log.get_logger('memu.test').debug('hidden', n=1)\n"
        "print('structlog' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False" and out.stderr == ""


def test_verbose_writes_key_value_events_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    _log.configure(verbose=True)
    log = _log.get_logger("memu.test")
    assert log.enabled()
    log.debug("store opened", store="sqlite", files=3)
    captured = capsys.readouterr()
    assert captured.out == ""
    line = captured.err.strip().splitlines()[-1]
    assert 'level=debug logger=memu.test event="store opened"' in line and "store=sqlite files=3" in line


def test_warnings_show_without_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    _log.configure(verbose=False)
    log = _log.get_logger("memu.test")
    assert not log.enabled()
    log.debug("hidden")
    log.warning("store is read-only", path="/x")
    err = capsys.readouterr().err
    assert "hidden" not in err and 'event="store is read-only"' in err


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")

    __repr__ = __str__


def test_a_field_that_cannot_be_rendered_never_fails_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    _log.configure(verbose=True)
    _log.get_logger("memu.test").debug("odd", value=Unprintable())
    capsys.readouterr()


@pytest.mark.parametrize(("value", "on"), [("1", True), ("true", True), ("0", False), ("", False)])
def test_memu_debug(monkeypatch: pytest.MonkeyPatch, value: str, on: bool) -> None:
    monkeypatch.setenv("MEMU_DEBUG", value)
    assert _log.debug_from_env() is on
