"""Docs that are checked against the code: the hook and CLI references, and the plugin tutorial."""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest

from memu_core._cli import reference as cli_reference
from memu_core._plugins import reference as hook_reference

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def test_hook_reference_matches_the_hookspecs() -> None:
    assert (DOCS / "hooks.md").read_text() == hook_reference.render(), (
        "docs/hooks.md is stale: python -m memu_core._plugins.reference > docs/hooks.md"
    )


def test_cli_reference_matches_the_help(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert (DOCS / "cli.md").read_text() == cli_reference.render(), (
        "docs/cli.md is stale: COLUMNS=100 python -m memu_core._cli.reference > docs/cli.md"
    )


def test_every_hook_is_exercised_by_a_test() -> None:
    test_text = "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in REPO.rglob("test_*.py")
        if ".venv" not in p.parts and ".nox" not in p.parts
    )
    for name in hook_reference.hook_names():
        assert name in test_text, f"no test exercises the hook {name}"


def test_the_plugin_tutorial_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (DOCS / "plugins.md").read_text()
    code = re.search(r"```python\n(# memu_event_log/plugin.py\n.*?)```", text, re.S)
    assert code, "the tutorial's plugin code block is missing"
    module = types.ModuleType("memu_event_log_plugin")
    exec(compile(code.group(1), "docs/plugins.md", "exec"), module.__dict__)
    sys.modules[module.__name__] = module
    log = tmp_path / "events.jsonl"
    monkeypatch.setenv("MEMU_EVENT_LOG", str(log))

    from memu_core.testing import fake_entry_point, registered

    with registered(entry_points=[fake_entry_point("memu-event-log", module, dist="memu-event-log")]) as plugins:
        assert "jsonl-event-log" in plugins.event_sinks()
        plugins.emit("commit", {"files": 2})
        record = next(r for r in plugins.report if r.name == "memu-event-log")
        assert record.hooks == ["memu_register_event_sinks"] and record.error is None
    assert json.loads(log.read_text()) == {"event": "commit", "files": 2}
