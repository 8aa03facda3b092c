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
    from memu_core.testing import registered

    monkeypatch.setenv("COLUMNS", "100")
    # A fresh plugin manager, as `python -m memu_core._cli.reference` has: plugins an earlier
    # test loaded into this process would add their commands to the built-in list.
    with registered():
        rendered = cli_reference.render()
    assert (DOCS / "cli.md").read_text() == rendered, (
        "docs/cli.md is stale: COLUMNS=100 python -m memu_core._cli.reference > docs/cli.md"
    )


def test_every_hook_is_exercised_by_a_test() -> None:
    # datasette's rule: a hook without a test that shows it firing is not shipped. The firing
    # tests are named after the hook, exactly; a mention elsewhere does not count.
    firing = (REPO / "memu-core" / "tests" / "plugins" / "test_hooks_fire.py").read_text(encoding="utf-8")
    defined = set(re.findall(r"^def (test_memu_\w+)\(", firing, re.M))
    for name in hook_reference.hook_names():
        assert f"test_{name}" in defined, f"no test shows the hook {name} firing (test_hooks_fire.py)"


def test_the_plugin_tutorial_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memu_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (DOCS / "plugins.md").read_text()
    code = re.search(r"```python\n(# memu_event_log/plugin.py\n.*?)```", text, re.S)
    assert code, "the tutorial's plugin code block is missing"
    module = types.ModuleType("memu_event_log_plugin")
    exec(compile(code.group(1), "docs/plugins.md", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    log = tmp_path / "events.jsonl"
    monkeypatch.setenv("MEMU_EVENT_LOG", str(log))
    monkeypatch.setenv("MEMU_TELEMETRY", "1")  # events reach installed sinks only when switched on

    from memu_core._cli.main import main
    from memu_core.testing import fake_entry_point, registered

    # Installed the way the tutorial's pyproject.toml declares it: in `memu` and in `memu.event_sinks`.
    eps = [
        fake_entry_point("memu-event-log", module, dist="memu-event-log"),
        fake_entry_point("memu-event-log", module, dist="memu-event-log", group="memu.event_sinks"),
    ]
    with registered(entry_points=eps) as plugins:
        with pytest.raises(SystemExit) as done:
            main(["commit", "--from-dir", str(REPO / "examples")])
        assert done.value.code == 0, capsys.readouterr().err
        record = next(r for r in plugins.report if r.name == "memu-event-log")
        assert record.hooks == ["memu_register_event_sinks"] and record.error is None
    (line,) = [json.loads(raw) for raw in log.read_text().splitlines()]
    assert line["event"] == "memory_commit_succeeded" and line["host"] == ""
    assert line["recall_file_count"] == 4 and isinstance(line["latency_ms"], int)


GUIDES = sorted((REPO / "memu-hosts").glob("*/src/*/guides"))
NATIVE = ("codex", "openclaw", "workbuddy", "cola")


@pytest.mark.parametrize("guides", GUIDES, ids=lambda p: p.parent.name)
def test_host_guides_report_and_say_what_telemetry_keeps(guides: Path) -> None:
    install = (guides / "INSTALL.md").read_text(encoding="utf-8")
    assert "`{{binary}} report install`" in install and "--stage install" in install
    assert install.index("report install") < install.index("## Report the outcome")
    for switch in ("MEMU_TELEMETRY=0", "DO_NOT_TRACK=1", "config --telemetry off", "off** unless"):
        assert switch in install, f"{guides}: INSTALL.md does not say how telemetry is turned off ({switch})"
    uninstall = (guides / "UNINSTALL.md").read_text(encoding="utf-8")
    assert "`{{binary}} report uninstall`" in uninstall and "--stage uninstall" in uninstall
    assert uninstall.index("report uninstall") < uninstall.index("pip uninstall")  # while the command exists
    assert "~/.memu/events.jsonl" in uninstall and "events.*.sending" in uninstall
    if guides.parent.name.removeprefix("memu_host_").replace("_", "-") in NATIVE:
        task = (guides / "BRIDGING_TASK.md").read_text(encoding="utf-8")
        prompt = task[task.index("```text") : task.index("```", task.index("```text") + 7)]
        assert "ON FAILURE" in prompt and "{{binary}} report error --stage remember --detail" in prompt
