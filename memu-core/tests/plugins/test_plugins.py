"""The plugin manager: built-ins through the same hooks, loading late and only on a miss,
isolation, duplicates, kill switches, and pluggy's own features (opt-in arguments, ordering)."""

from __future__ import annotations

import functools
import types
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

import pytest
import typer

from memu_core import hookimpl
from memu_core._plugins import builtin, discovery, entries
from memu_core._plugins.manager import Plugins
from memu_core._plugins.registry import BACKENDS, EMBEDDERS, EVENT_SINKS, HOSTS, STORES, TEMPLATE_RESOLVERS, Kind
from memu_core.errors import ConfigError, PluginError
from memu_core.host import HostSpec
from memu_core.testing import fake_declaration, fake_entry_point


class _Store:
    name: ClassVar[str] = "extra"


class _SqliteImpostor:
    name: ClassVar[str] = "sqlite"


def _plugin(*classes: type, hook: str = "memu_register_stores") -> types.SimpleNamespace:
    def register() -> list[type]:
        return list(classes)

    register.__name__ = hook
    return types.SimpleNamespace(**{hook: hookimpl(register)})


def _manager(eps: list[Any], env: dict[str, str] | None = None) -> Plugins:
    return Plugins(entry_points=lambda: eps, environ=env or {})


def _loaded(plugins: Plugins) -> set[str]:
    return {r.name for r in plugins.report if not r.builtin}


def test_builtins_register_through_the_hooks() -> None:
    plugins = _manager([]).load()
    assert set(plugins.stores()) == {"memory", "sqlite"}
    assert set(plugins.backends()) == {"local"}
    assert set(plugins.template_resolvers()) == {"server", "cache", "embedded"}
    assert plugins.stores().distribution("sqlite") == "memu-core"
    hooks = {hook for record in plugins.report if record.builtin for hook in record.hooks}
    assert hooks == {
        "memu_register_backends",
        "memu_register_commands",
        "memu_register_host_commands",
        "memu_register_stores",
        "memu_register_template_resolvers",
    }


def test_memu_core_registers_no_event_sink() -> None:
    # Plugins.may_have_event_sinks answers "no" without importing anything on this ground.
    plugins = _manager([]).load()
    assert not plugins.pm.hook.memu_register_event_sinks.get_hookimpls()
    assert _manager([]).may_have_event_sinks() is False


def test_an_entry_point_plugin_is_loaded_and_reported() -> None:
    plugins = _manager([fake_entry_point("memu-extra", _plugin(_Store), dist="memu-extra")])
    assert plugins.stores()["extra"] is _Store
    assert plugins.stores().distribution("extra") == "memu-extra"
    (record,) = [r for r in plugins.report if r.name == "memu-extra"]
    assert record.hooks == ["memu_register_stores"] and record.error is None


def test_built_ins_answer_without_loading_an_entry_point() -> None:
    # The entry point would fail loudly if loaded: a built-in lookup must not touch it.
    plugins = _manager([fake_entry_point("loud", ImportError("must not load"))])
    assert plugins.get(STORES, "sqlite").name == "sqlite"
    assert _loaded(plugins) == set()
    with pytest.raises(ConfigError, match="no store named 'nope'"):
        plugins.get(STORES, "nope")  # a miss loads every entry point, then says what exists
    assert _loaded(plugins) == {"loud"}


def test_a_miss_loads_the_third_party_plugins() -> None:
    plugins = _manager([fake_entry_point("memu-extra", _plugin(_Store), dist="memu-extra")])
    assert plugins.get(STORES, "extra") is _Store
    assert plugins.find(STORES, lambda cls: cls.name == "extra") is _Store


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


def test_a_hook_that_raises_is_reported_and_the_others_still_count() -> None:
    def memu_register_stores() -> list[type]:
        raise RuntimeError("exploded")

    eps = [
        fake_entry_point("angry", types.SimpleNamespace(memu_register_stores=hookimpl(memu_register_stores))),
        fake_entry_point("memu-extra", _plugin(_Store), dist="memu-extra"),
    ]
    plugins = _manager(eps)
    assert set(plugins.stores()) == {"memory", "sqlite", "extra"}
    assert "exploded" in (next(r for r in plugins.report if r.name == "angry").error or "")
    with pytest.raises(PluginError, match="'angry' failed in memu_register_stores"):
        _manager(eps, {"MEMU_STRICT_PLUGINS": "1"}).stores()


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
    eps = [fake_entry_point("a", types.ModuleType("a")), fake_entry_point("b", types.ModuleType("b"))]
    assert _loaded(_manager(eps, env).load()) == loaded


def test_nothing_is_listed_or_loaded_until_asked() -> None:
    calls: list[int] = []

    def lister() -> list[Any]:
        calls.append(1)
        return []

    plugins = Plugins(entry_points=lister, environ={})
    plugins.get(STORES, "sqlite")
    assert calls == []  # a built-in answered: the installed entry points were not even listed
    plugins.stores()
    plugins.backends()
    assert calls == [1]


def test_third_party_code_can_be_skipped() -> None:
    plugins = _manager([fake_entry_point("memu-extra", _plugin(_Store))]).load(third_party=False)
    assert "extra" not in plugins.stores()


def test_registry_require_lists_what_exists() -> None:
    with pytest.raises(ConfigError, match=r"no store named 'nope' is installed \(available: memory, sqlite\)"):
        _manager([]).stores().require("nope")


def test_an_implementation_may_take_fewer_arguments_than_the_spec() -> None:
    # memu_register_host_commands(spec, app): pluggy passes only what an implementation names.
    def memu_register_host_commands(app: typer.Typer) -> None:
        @app.command("hello")
        def hello() -> None:
            """Say hello."""

    plugins = _manager([])
    plugins.register(types.SimpleNamespace(memu_register_host_commands=hookimpl(memu_register_host_commands)))
    app = typer.Typer()
    spec = HostSpec(id="demo", display="Demo", source="memu_host_codex.source:CodexSource", package="memu_host_codex")
    plugins.add_host_commands(spec, app)
    assert "hello" in {c.name for c in app.registered_commands}
    assert all(r.error is None for r in plugins.report)


def test_tryfirst_and_trylast_order_the_calls() -> None:
    order: list[str] = []

    def plugin(label: str, *, tryfirst: bool = False, trylast: bool = False) -> types.SimpleNamespace:
        def memu_register_commands() -> None:
            order.append(label)

        marked = hookimpl(tryfirst=tryfirst, trylast=trylast)(memu_register_commands)
        return types.SimpleNamespace(memu_register_commands=marked)

    plugins = _manager([])
    plugins.register(plugin("last", trylast=True))
    plugins.register(plugin("plain"))
    plugins.register(plugin("first", tryfirst=True))
    plugins.add_commands(typer.Typer(), third_party=False)
    assert order == ["first", "plain", "last"]


def test_a_command_hook_that_raises_is_reported_and_the_others_still_add() -> None:
    def broken(app: typer.Typer) -> None:
        raise RuntimeError("no commands today")

    def fine(app: typer.Typer) -> None:
        app.command("hello")(lambda: None)

    plugins = _manager([])
    plugins.register(types.SimpleNamespace(memu_register_commands=hookimpl(broken)), name="broken")
    plugins.register(types.SimpleNamespace(memu_register_commands=hookimpl(fine)), name="fine")
    app = typer.Typer()
    plugins.add_commands(app, third_party=False)
    assert "hello" in {c.name for c in app.registered_commands}
    assert "no commands today" in (next(r for r in plugins.report if r.name == "broken").error or "")


def test_plugins_can_add_commands_only_when_asked() -> None:
    def memu_register_commands(app: typer.Typer) -> None:
        @app.command("hello")
        def hello() -> None:
            """Say hello."""

    eps = [fake_entry_point("cmds", types.SimpleNamespace(memu_register_commands=hookimpl(memu_register_commands)))]
    builtins_only = typer.Typer()
    _manager(eps).add_commands(builtins_only, third_party=False)
    everything = typer.Typer()
    _manager(eps).add_commands(everything)
    names = {c.name for c in builtins_only.registered_commands}
    assert "commit" in names and "hello" not in names
    assert "hello" in {c.name for c in everything.registered_commands}


def test_tracing_writes_pluggy_hook_trace(capsys: pytest.CaptureFixture[str]) -> None:
    _manager([], {"MEMU_TRACE_PLUGINS": "1"}).stores()
    assert "memu_register_stores [hook]" in capsys.readouterr().err


def test_a_host_is_found_in_the_already_imported_package_first() -> None:
    spec = types.SimpleNamespace(id="demo-host")
    mine = fake_entry_point("memu-host-demo", _plugin(spec, hook="memu_register_hosts"))  # type: ignore[arg-type]
    other = fake_entry_point("other", ImportError("must not load"))
    # fake_entry_point puts its module in sys.modules, as a console script imports its package;
    # the other one points at a package nobody imported.
    object.__setattr__(other, "value", "memu_nobody_imported_this:plugin")
    plugins = _manager([mine, other])
    assert plugins.host("demo-host") is spec
    assert _loaded(plugins) == {"memu-host-demo"}
    assert plugins.hosts()["demo-host"] is spec


def test_an_unknown_host_says_how_to_install_one() -> None:
    with pytest.raises(ConfigError, match=r"no host named 'nope' is installed.*memu-host-"):
        _manager([]).host("nope")


def test_event_sinks_come_only_from_declaring_plugins() -> None:
    class Sink:
        name: ClassVar[str] = "declared"

        def emit(self, event: object) -> None:
            """Nothing."""

    class Undeclared(Sink):
        name: ClassVar[str] = "undeclared"

    module = types.ModuleType("memu_sinky")
    module.memu_register_event_sinks = hookimpl(lambda: [Sink])  # type: ignore[attr-defined]
    eps = [
        fake_entry_point("sinky", module),
        fake_entry_point("sinky", module, group="memu.event_sinks"),
        fake_entry_point("quiet", _plugin(Undeclared, hook="memu_register_event_sinks")),
        fake_entry_point("loud", ImportError("must not load for events")),
    ]
    plugins = _manager(eps)
    assert plugins.may_have_event_sinks()
    assert set(plugins.event_sinks()) == {"declared"}
    assert _loaded(plugins) == {"sinky"}
    plugins.load()
    assert set(plugins.event_sinks()) == {"declared"}
    (quiet,) = [r for r in plugins.report if r.name == "quiet"]
    assert quiet.notes and "memu.event_sinks" in quiet.notes[0]


def test_no_declared_sink_means_no_plugin_import() -> None:
    plugins = _manager([fake_entry_point("loud", ImportError("must not load"))])
    assert plugins.sinks() == []
    assert plugins.report == []  # not even memu-core's plugin was registered


def test_an_unhashable_plugin_object_still_registers() -> None:
    plugins = _manager([])
    plugins.register(_plugin(_Store))
    assert plugins.get(STORES, "extra") is _Store
    assert HOSTS.hook == "memu_register_hosts"


def test_builtin_plugins_are_named_not_imported_by_the_manager() -> None:
    assert builtin.BUILTIN_PLUGINS[0] == builtin.__name__


def test_discovery_finds_what_importlib_metadata_finds() -> None:
    ours = {(e.name, e.value, e.group, e.dist and e.dist.name) for e in discovery.entry_points("memu")}
    theirs = {
        (e.name, e.value, e.group, e.dist and e.dist.name.replace("_", "-").lower())
        for group in ("memu", "memu.event_sinks", *entries.DECLARATION_GROUPS)
        for e in metadata.entry_points(group=group)
    }
    assert ours == theirs and ours


class _Resolver:
    name: ClassVar[str] = "extra-resolver"


def _declared(name: str, target: Any, group: str, *names: str) -> list[Any]:
    plugin = fake_entry_point(name, target, dist=name)
    return [plugin, *(fake_declaration(plugin, group, provided) for provided in names)]


def test_a_lookup_loads_only_the_plugins_declaring_the_name() -> None:
    eps = [
        *_declared("memu-extra", _plugin(_Store), "memu.stores", "extra"),
        *_declared("loud-embedder", ImportError("declares only an embedder"), "memu.embedders", "other"),
        *_declared("loud-store", ImportError("declares only another store"), "memu.stores", "elsewhere"),
        fake_entry_point("undeclared", _plugin(hook="memu_register_hosts"), dist="undeclared"),
    ]
    plugins = _manager(eps)
    assert plugins.get(STORES, "extra") is _Store
    # A plugin that declares nothing may register anything: it still loads, as before declarations.
    assert _loaded(plugins) == {"memu-extra", "undeclared"}
    assert plugins.lookup(STORES)["extra"] is _Store and _loaded(plugins) == {"memu-extra", "undeclared"}


def test_a_whole_registry_loads_only_the_plugins_declaring_its_kind() -> None:
    eps = [
        *_declared(
            "resolving",
            _plugin(_Resolver, hook="memu_register_template_resolvers"),
            "memu.template_resolvers",
            "extra-resolver",
        ),
        *_declared("loud-host", ImportError("declares only a host"), "memu.hosts", "h"),
    ]
    plugins = _manager(eps)
    assert "extra-resolver" in plugins.template_resolvers()
    assert _loaded(plugins) == {"resolving"}
    assert plugins.find(STORES, lambda cls: cls.name == "nope") is None and _loaded(plugins) == {"resolving"}


def test_a_name_nobody_declares_loads_everything_and_lists_what_exists() -> None:
    # A plugin registering more than it declares is still found, at the cost of loading all,
    # and `memu plugins` says so.
    eps = [*_declared("under-declared", _plugin(_Store), "memu.stores", "something-else")]
    plugins = _manager(eps)
    assert plugins.get(STORES, "extra") is _Store
    plugins.load().note_undeclared_names()
    (record,) = [r for r in plugins.report if r.name == "under-declared"]
    assert record.notes == [
        "registers the store 'extra' without declaring it under "
        '[project.entry-points."memu.stores"], so memu finds it only after loading every plugin'
    ]
    with pytest.raises(ConfigError, match=r"no store named 'nope' is installed \(available: extra, memory, sqlite\)"):
        plugins.get(STORES, "nope")


def test_a_disabled_plugins_declarations_count_for_nothing() -> None:
    eps = [*_declared("memu-extra", _plugin(_Store), "memu.stores", "extra")]
    plugins = _manager(eps, {"MEMU_DISABLE_PLUGINS": "memu-extra"})
    with pytest.raises(ConfigError, match="no store named 'extra'"):
        plugins.get(STORES, "extra")
    assert _loaded(plugins) == set()


def test_strict_mode_still_loads_every_plugin_first() -> None:
    eps = [
        *_declared("memu-extra", _plugin(_Store), "memu.stores", "extra"),
        *_declared("loud", ImportError("broken"), "memu.hosts", "h"),
    ]
    with pytest.raises(PluginError, match="'loud'"):
        _manager(eps, {"MEMU_STRICT_PLUGINS": "1"}).get(STORES, "extra")


def test_every_kind_has_its_declaration_group() -> None:
    kinds: list[Kind[Any]] = [STORES, EMBEDDERS, BACKENDS, HOSTS, TEMPLATE_RESOLVERS]
    assert {kind.group for kind in kinds} == entries.DECLARATION_GROUPS
    assert EVENT_SINKS.group == entries.SINKS_GROUP


def test_installed_plugins_declare_exactly_what_they_register() -> None:
    # memu's own distributions declare their names; a stale declaration would hide a plugin.
    wanted = entries.wanted_entries(discovery.entry_points("memu"), entries.Switches({}))
    declared = [entry for entry in wanted.values() if entry.provides]
    assert declared
    kinds: list[Kind[Any]] = [STORES, EMBEDDERS, BACKENDS, HOSTS, TEMPLATE_RESOLVERS]
    for entry in declared:
        alone = Plugins(entry_points=functools.partial(list, [entry.ep]), environ={}, builtins=[])
        for kind in kinds:
            assert set(alone.registry(kind)) == entry.provides.get(kind.group, set()), (entry.name, kind.group)


def test_discovery_reads_each_distribution_once_with_its_version_and_any_line_ending(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "memu_extra-1.2.dist-info").mkdir(parents=True)
    (first / "memu_extra-1.2.dist-info" / "entry_points.txt").write_bytes(
        b"[console_scripts]\r\nx = y:z\r\n\r\n[memu]\r\nextra = memu_extra.plugin\r\n"
    )
    (first / "no_plugins-0.1.dist-info").mkdir()  # no entry_points.txt at all
    (first / "other-2.0.dist-info").mkdir()
    (first / "other-2.0.dist-info" / "entry_points.txt").write_text("[console_scripts]\nother = o:main\n")
    (second / "memu_extra-0.9.dist-info").mkdir(parents=True)  # shadowed by the first folder's copy
    (second / "memu_extra-0.9.dist-info" / "entry_points.txt").write_text("[memu]\nold = memu_extra.old\n")
    (second / "Develop_Plugin.egg-info").mkdir()  # a develop install: the version is in PKG-INFO
    (second / "Develop_Plugin.egg-info" / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: x\nVersion: 3.1\n\n")
    (second / "Develop_Plugin.egg-info" / "entry_points.txt").write_text("[memu.stores]\nkept = develop.plugin\n")
    found = discovery._scan("memu", (str(first), str(tmp_path / "missing"), str(second)))
    assert [(e.name, e.value, e.group, e.dist) for e in found] == [
        ("extra", "memu_extra.plugin", "memu", discovery.InstalledDistribution("memu-extra", "1.2")),
        ("kept", "develop.plugin", "memu.stores", discovery.InstalledDistribution("develop-plugin", "3.1")),
    ]
