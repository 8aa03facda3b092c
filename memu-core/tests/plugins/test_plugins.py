"""The plugin system: built-ins through the same hooks, isolation, duplicates, kill switches."""

from __future__ import annotations

import types
from typing import ClassVar

import pytest

from memu_core import hookimpl
from memu_core._plugins import builtin
from memu_core._plugins.manager import Plugins
from memu_core.errors import ConfigError, PluginError
from memu_core.testing import fake_entry_point, registered


class _Store:
    name: ClassVar[str] = "extra"


class _SqliteImpostor:
    name: ClassVar[str] = "sqlite"


def _plugin(*classes: type, hook: str = "memu_register_stores") -> types.SimpleNamespace:
    def register() -> list[type]:
        return list(classes)

    register.__name__ = hook
    return types.SimpleNamespace(**{hook: hookimpl(register)})


def _manager(eps: list, env: dict[str, str] | None = None) -> Plugins:
    return Plugins(entry_points=lambda: eps, environ=env or {}, builtins=[builtin])


def test_builtins_register_through_the_hooks() -> None:
    plugins = _manager([]).load()
    assert set(plugins.stores()) == {"memory", "sqlite"}
    assert set(plugins.backends()) == {"local"}
    assert plugins.stores().distribution("sqlite") == "memu-core"
    record = plugins.report[0]
    assert record.builtin and record.hooks == ["memu_register_backends", "memu_register_stores"]


def test_an_entry_point_plugin_is_loaded_and_reported() -> None:
    plugins = _manager([fake_entry_point("memu-extra", _plugin(_Store), dist="memu-extra")])
    assert plugins.stores()["extra"] is _Store
    assert plugins.stores().distribution("extra") == "memu-extra"
    (record,) = [r for r in plugins.report if r.name == "memu-extra"]
    assert record.hooks == ["memu_register_stores"] and record.error is None


def test_a_duplicate_name_names_both_distributions() -> None:
    plugins = _manager([fake_entry_point("impostor", _plugin(_SqliteImpostor), dist="memu-impostor")])
    with pytest.raises(PluginError, match="registered twice, by memu-core and by memu-impostor"):
        plugins.stores()


def test_a_broken_plugin_is_isolated_into_the_report() -> None:
    eps = [
        fake_entry_point("broken", ImportError("No module named 'missing_sdk'"), dist="memu-broken"),
        fake_entry_point("memu-extra", _plugin(_Store), dist="memu-extra"),
    ]
    plugins = _manager(eps)
    assert "extra" in plugins.stores()
    (record,) = [r for r in plugins.report if r.name == "broken"]
    assert "missing_sdk" in (record.error or "")


def test_strict_mode_makes_a_broken_plugin_fatal() -> None:
    eps = [fake_entry_point("broken", ImportError("boom"), dist="memu-broken")]
    with pytest.raises(PluginError, match="plugin 'broken' from memu-broken failed to load"):
        _manager(eps, {"MEMU_STRICT_PLUGINS": "1"}).load()


def test_a_misspelled_hook_is_caught_by_check_pending() -> None:
    typo = types.SimpleNamespace(memu_register_storez=hookimpl(lambda: [_Store]))
    plugins = _manager([fake_entry_point("typo", typo)])
    assert "extra" not in plugins.stores()
    (record,) = [r for r in plugins.report if r.name == "typo"]
    assert "memu_register_storez" in (record.error or "")
    with pytest.raises(PluginError, match="memu_register_storez"):
        _manager(
            [fake_entry_point("typo2", types.SimpleNamespace(memu_register_storez=hookimpl(lambda: [])))],
            {"MEMU_STRICT_PLUGINS": "1"},
        ).load()


def test_a_hook_that_raises_is_reported_not_fatal() -> None:
    def memu_register_stores() -> list[type]:
        raise RuntimeError("exploded")

    plugins = _manager(
        [fake_entry_point("angry", types.SimpleNamespace(memu_register_stores=hookimpl(memu_register_stores)))]
    )
    assert set(plugins.stores()) == {"memory", "sqlite"}
    assert "exploded" in (next(r for r in plugins.report if r.name == "angry").error or "")


@pytest.mark.parametrize(
    ("env", "loaded"),
    [
        ({}, {"a", "b"}),
        ({"MEMU_DISABLE_PLUGINS": "a"}, {"b"}),
        ({"MEMU_DISABLE_PLUGINS": "all"}, set()),
        ({"MEMU_LOAD_PLUGINS": "b"}, {"b"}),
        ({"MEMU_LOAD_PLUGINS": "0"}, set()),
        ({"MEMU_LOAD_PLUGINS": "a,b", "MEMU_DISABLE_PLUGINS": "b"}, {"a"}),
    ],
)
def test_kill_switches(env: dict[str, str], loaded: set[str]) -> None:
    eps = [fake_entry_point("a", types.SimpleNamespace()), fake_entry_point("b", types.SimpleNamespace())]
    plugins = _manager(eps, env).load()
    assert {r.name for r in plugins.report if not r.builtin} == loaded


def test_entry_points_load_once_and_late() -> None:
    calls: list[int] = []

    def lister() -> list:
        calls.append(1)
        return []

    plugins = Plugins(entry_points=lister, environ={}, builtins=[builtin])
    assert calls == []  # nothing loads at construction
    plugins.stores()
    plugins.backends()
    assert calls == [1]


def test_third_party_code_can_be_skipped() -> None:
    plugins = _manager([fake_entry_point("memu-extra", _plugin(_Store))]).load(third_party=False)
    assert "extra" not in plugins.stores()


def test_registry_require_lists_what_exists() -> None:
    with pytest.raises(ConfigError, match=r"no store named 'nope' is installed \(available: memory, sqlite\)"):
        _manager([]).stores().require("nope")


def test_event_fan_out_isolates_a_raising_sink() -> None:
    received: list[str] = []

    class Loud:
        name: ClassVar[str] = "loud"

        def emit(self, event: str, properties: dict) -> None:
            raise RuntimeError("sink down")

    class Quiet:
        name: ClassVar[str] = "quiet"

        def emit(self, event: str, properties: dict) -> None:
            received.append(event)

    with registered(_plugin(Loud, Quiet, hook="memu_register_event_sinks")) as plugins:
        plugins.emit("commit", {})
    assert received == ["commit"]


def test_plugins_can_add_commands() -> None:
    import typer

    def memu_register_commands(app: typer.Typer) -> None:
        @app.command("hello")
        def hello() -> None:
            print("hi")

    app = typer.Typer()
    plugins = _manager(
        [fake_entry_point("cmds", types.SimpleNamespace(memu_register_commands=hookimpl(memu_register_commands)))]
    )
    plugins.add_commands(app)
    assert [c.name for c in app.registered_commands] == ["hello"]


def test_host_and_template_registrations_are_keyed() -> None:
    spec = types.SimpleNamespace(id="demo-host")

    class Resolver:
        name: ClassVar[str] = "demo-templates"

    hosts = types.SimpleNamespace(memu_register_hosts=hookimpl(lambda: [spec]))
    templates = types.SimpleNamespace(memu_register_template_resolvers=hookimpl(lambda: [Resolver]))
    plugins = _manager([fake_entry_point("h", hosts), fake_entry_point("t", templates)])
    assert plugins.hosts()["demo-host"] is spec
    assert plugins.template_resolvers()["demo-templates"] is Resolver
