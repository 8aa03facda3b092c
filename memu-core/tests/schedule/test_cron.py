"""The cron backend against the real ``crontab``: the user's own lines survive byte for byte."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from memu_core._schedule import cron
from memu_core._schedule.system import ScheduleError

from .conftest import SPEC, crontab_text, make_plan, set_crontab

THEIRS = "# my jobs\nMAILTO=me@example.invalid\n*/5 * * * * /usr/bin/true # keep me\n"


@pytest.mark.usefixtures("user_crontab")
def test_install_and_uninstall_leave_the_users_lines_byte_identical(tmp_path: Path) -> None:
    set_crontab(THEIRS)
    backend = cron.Cron()
    plan, _ = backend.install(make_plan(tmp_path), SPEC, replace=False)
    table = crontab_text()
    assert table is not None and table.startswith(THEIRS)
    ours = [line for line in table.splitlines() if "memu:" in line]
    assert ours == [f"0 * * * * '{plan.wrapper}' # memu:{SPEC.task_name}"]
    assert not any(line.startswith("PATH=") for line in table.splitlines()), "no global PATH= line, ever"
    assert backend.installed(plan)
    assert backend.uninstall(plan)
    assert crontab_text() == THEIRS


@pytest.mark.usefixtures("user_crontab")
def test_a_user_without_a_crontab_has_none_again_after_uninstall(tmp_path: Path) -> None:
    set_crontab(None)
    backend = cron.Cron()
    plan, _ = backend.install(make_plan(tmp_path), SPEC, replace=False)
    assert plan.crontab_existed is False
    assert crontab_text() is not None
    backend.uninstall(plan)
    assert crontab_text() is None


@pytest.mark.usefixtures("user_crontab")
def test_install_twice_keeps_one_entry_and_takes_the_new_interval(tmp_path: Path) -> None:
    set_crontab(THEIRS)
    backend = cron.Cron()
    plan, _ = backend.install(make_plan(tmp_path), SPEC, replace=False)
    plan, _ = backend.install(
        make_plan(tmp_path, interval=15, crontab_existed=plan.crontab_existed), SPEC, replace=False
    )
    table = crontab_text() or ""
    assert [line.split(" '")[0] for line in table.splitlines() if "memu:" in line] == ["*/15 * * * *"]
    backend.uninstall(plan)
    assert crontab_text() == THEIRS


@pytest.mark.usefixtures("user_crontab")
def test_an_entry_memu_did_not_write_is_replaced_only_when_asked(tmp_path: Path) -> None:
    pasted = f"PATH=/usr/bin:/bin\n0 * * * * $HOME/.memu/hosts/{SPEC.id}/bridge.sh # {SPEC.task_name}\n"
    set_crontab(THEIRS + pasted)
    backend = cron.Cron()
    with pytest.raises(ScheduleError, match="--replace"):
        backend.install(make_plan(tmp_path), SPEC, replace=False)
    assert crontab_text() == THEIRS + pasted, "a refused install changes nothing"
    plan, notes = backend.install(make_plan(tmp_path), SPEC, replace=True)
    table = crontab_text() or ""
    assert "bridge.sh # memu-bridging" not in table and f"# memu:{SPEC.task_name}" in table
    assert notes == ["replaced 1 earlier entry"]
    backend.uninstall(plan)
    assert crontab_text() == THEIRS + "PATH=/usr/bin:/bin\n"


@pytest.mark.parametrize(
    ("minutes", "expected"),
    [(1, "* * * * *"), (5, "*/5 * * * *"), (30, "*/30 * * * *"), (60, "0 * * * *"), (180, "0 */3 * * *")],
)
def test_intervals_cron_can_express(minutes: int, expected: str) -> None:
    assert cron.expression(minutes) == expected


@pytest.mark.parametrize("minutes", [7, 90, 420])
def test_an_interval_cron_cannot_express_is_refused_with_the_choices(minutes: int) -> None:
    with pytest.raises(ScheduleError, match="divisor of 60"):
        cron.expression(minutes)


def test_next_run_follows_the_expression() -> None:
    after = datetime(2026, 12, 3, 10, 7, 30)
    assert cron.next_run(15, after) == datetime(2026, 12, 3, 10, 15)
    assert cron.next_run(60, after) == datetime(2026, 12, 3, 11, 0)
    assert cron.next_run(180, after) == datetime(2026, 12, 3, 12, 0)


def test_a_wrapper_path_with_a_percent_sign_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScheduleError, match="'%'"):
        cron.entry(make_plan(tmp_path, wrapper=str(tmp_path / "100%" / "bridge.sh")))
