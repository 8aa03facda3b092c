"""A host's doctor checks an installed schedule: the scheduler still holds the entry, and the
wrapper it starts is the one ``schedule install`` wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from memu_core._cli.host.doctor import _schedule_rows
from memu_core._schedule import backends, wrapper
from memu_core._schedule import plan as plans

from .conftest import SPEC, make_plan

pytestmark = pytest.mark.usefixtures("user_crontab")


def _rows(base: Path) -> list[str]:
    return [row.render() for row in _schedule_rows(SPEC, base)]


def _installed(tmp_path: Path) -> plans.Plan:
    plan = make_plan(tmp_path)
    text = "#!/bin/sh\nexec true\n"
    Path(plan.wrapper).write_text(text, encoding="utf-8")
    plan, _ = backends.get("cron").install(plan, SPEC, replace=False)
    plan = plans.Plan.from_json({**plan.as_json(), "wrapper_sha256": wrapper.digest(text)})
    plans.save(plan)
    return plan


def test_no_schedule_no_row(tmp_path: Path) -> None:
    assert _rows(tmp_path) == []


def test_an_intact_schedule_is_reported(tmp_path: Path) -> None:
    plan = _installed(tmp_path)
    try:
        assert _rows(plan.base_path) == [f"schedule    {plan.task_name} in cron, every 60 min, wrapper as installed\n"]
    finally:
        backends.get("cron").uninstall(plan)


def test_an_entry_gone_from_the_scheduler_fails_with_the_reinstall(tmp_path: Path) -> None:
    plan = _installed(tmp_path)
    backends.get("cron").uninstall(plan)
    (row,) = _rows(plan.base_path)
    assert row.startswith(f"schedule    FAIL  cron no longer holds {plan.task_name}: no run will start\n")
    assert f"fix: run `{SPEC.binary} schedule install --interval 60`" in row


def test_an_edited_or_missing_wrapper_is_reported(tmp_path: Path) -> None:
    plan = _installed(tmp_path)
    try:
        Path(plan.wrapper).write_text("#!/bin/sh\necho edited\n", encoding="utf-8")
        (row,) = _rows(plan.base_path)
        assert row.startswith(f"schedule    WARN  the wrapper {plan.wrapper} was edited since install\n")
        Path(plan.wrapper).unlink()
        (row,) = _rows(plan.base_path)
        assert "FAIL  the wrapper" in row and "is gone: the scheduler has nothing to start" in row
    finally:
        backends.get("cron").uninstall(plan)
