"""The plugin manager: the one typed facade over pluggy.

Nothing else in memu touches ``pm.hook``. memu-core's own plugin registers first; entry points
in the group ``memu`` load late and only when needed, each inside its own ``try``, so a broken
plugin becomes a line in the load report (``memu plugins``) instead of a dead CLI:

- a lookup by name (a store, a backend, a host id) asks what is registered first and, on a
  miss, loads only the entry points that declare that name in their metadata (group
  ``memu.stores``, ``memu.embedders``, … named after what they register) and those that declare
  nothing (hatch's ``ClassRegister.get``, narrowed): the per-turn ``retrieve`` on the built-in
  store imports no plugin module, and looking up the ``local`` embedder imports its plugin alone.
  Only a name that no plugin answers after that loads every entry point (for the error's list of
  what exists, and for a plugin that registers more than it declares);
- a whole registry (every template resolver) loads the plugins declaring that kind and those
  that declare nothing;
- a command that needs everything (``memu plugins``, a plugin's command, template resolution)
  loads every wanted entry point;
- event sinks come only from plugins that declare them (group ``memu.event_sinks``), so finding
  out there are none costs a read of the installed metadata, not an import.

Hooks are called through pluggy (:mod:`memu_core._plugins.calls`), so opt-in arguments,
``tryfirst``/``trylast`` and ``MEMU_TRACE_PLUGINS=1`` (pluggy's hook trace on stderr) work.
``MEMU_STRICT_PLUGINS=1`` loads every entry point on first use and turns any plugin failure
into an error; ``MEMU_LOAD_PLUGINS`` and ``MEMU_DISABLE_PLUGINS`` are kill switches.

Every memu process imports this module, so it imports little: :mod:`.registry` (whose generic
mapping classes cost more to create than the rest of this module) loads where a registry is
first built, and ``memu --help``, which only fires the command hook, never needs it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from memu_core import PROJECT_NAME
from memu_core._plugins import calls
from memu_core._plugins.entries import SINKS_GROUP, Entry, Switches, installed_entry_points, wanted_entries
from memu_core.errors import PluginError

if TYPE_CHECKING:
    import pluggy
    import typer

    from memu_core._hostkit.spec import HostSpec
    from memu_core._plugins.entries import EntryPointLister
    from memu_core._plugins.registry import Kind, Lookup, Registry
    from memu_core.interfaces import AgenticMemoryBackend, Embedder, EventSink, MemoryStore, TemplateResolver

T = TypeVar("T")

CORE_DISTRIBUTION = "memu-core"
IN_PROCESS = "in-process"
"""The distribution credited for a plugin registered with :meth:`Plugins.register`."""


class LoadRecord:
    """One line of ``memu plugins``: what loaded (or failed to), from where, with which hooks.

    A plain class, not a dataclass: a dataclass compiles its methods at import, and every process
    that asks a plugin anything (``memu --help``, the per-turn ``retrieve``) imports this module.
    """

    __slots__ = ("builtin", "distribution", "error", "hooks", "name", "notes", "version")

    def __init__(
        self,
        name: str,
        distribution: str,
        version: str,
        hooks: list[str] | None = None,
        error: str | None = None,
        builtin: bool = False,
        notes: list[str] | None = None,
    ) -> None:
        self.name = name
        self.distribution = distribution
        self.version = version
        self.hooks: list[str] = [] if hooks is None else hooks
        self.error = error
        self.builtin = builtin
        self.notes: list[str] = [] if notes is None else notes

    def as_dict(self) -> dict[str, object]:
        """The record as ``memu plugins --json`` prints it."""
        return {name: getattr(self, name) for name in _RECORD_FIELDS}

    def __repr__(self) -> str:
        return "LoadRecord(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in _RECORD_FIELDS) + ")"


_RECORD_FIELDS = ("name", "distribution", "version", "hooks", "error", "builtin", "notes")


class Plugins:
    """Owns one pluggy manager: loading, the load report, registries, commands and event sinks."""

    def __init__(
        self,
        *,
        entry_points: EntryPointLister = installed_entry_points,
        environ: Mapping[str, str] | None = None,
        builtins: Iterable[object] | None = None,
    ) -> None:
        import os

        self._entry_points = entry_points
        self.switches = Switches(os.environ if environ is None else environ)
        self._builtins = None if builtins is None else list(builtins)
        self._pm: pluggy.PluginManager | None = None
        self._entries: dict[str, Entry] | None = None
        self._tried: set[str] = set()
        self._third_party = True
        self._dist_of: dict[str, str] = {}
        self._sink_plugins: set[str] = set()
        self._generation = 0
        self._cache: dict[str, tuple[int, object]] = {}
        self._records: list[LoadRecord] = []

    @property
    def strict(self) -> bool:
        """``MEMU_STRICT_PLUGINS=1``: a plugin that fails to load or to answer is fatal."""
        return self.switches.strict

    # -- the pluggy manager and what is registered ------------------------------------------
    @property
    def pm(self) -> pluggy.PluginManager:
        """The pluggy manager, with memu-core's plugin registered (created on first use)."""
        return self._start()

    def _start(self) -> pluggy.PluginManager:
        if self._pm is None:
            import pluggy

            from memu_core import hookspecs

            self._pm = pluggy.PluginManager(PROJECT_NAME)
            self._pm.add_hookspecs(hookspecs)
            if self.switches.tracing:
                self._pm.trace.root.setwriter(sys.stderr.write)
                self._pm.enable_tracing()
            builtins = self._builtins
            if builtins is None:
                import importlib

                from memu_core._plugins.builtin import BUILTIN_PLUGINS

                builtins = [importlib.import_module(name) for name in BUILTIN_PLUGINS]
            for plugin in builtins:
                self._register(plugin, None, CORE_DISTRIBUTION, "", builtin=True)
            self._check_pending()
            if self.strict:  # strict means "tell me about every broken plugin": nothing stays unloaded
                self._load_entries(lambda entry: True)
        return self._pm

    def _register(self, plugin: object, name: str | None, dist: str, version: str, *, builtin: bool) -> str:
        assert self._pm is not None
        plugin = _hashable(plugin)
        registered = self._pm.register(plugin, name=name) or repr(plugin)
        self._dist_of[registered] = dist
        self._generation += 1
        hooks = sorted(caller.name for caller in self._pm.get_hookcallers(plugin) or [])
        self._records.append(LoadRecord(registered, dist, version, hooks, builtin=builtin))
        return registered

    def register(self, plugin: object, *, name: str | None = None, distribution: str = IN_PROCESS) -> str:
        """Register ``plugin`` in this process (an application embedding memu, or a test).

        It is asked like a built-in: before any entry point loads, and for event sinks without
        declaring them. Returns the name pluggy registered it under.
        """
        self._start()
        registered = self._register(plugin, name, distribution, "", builtin=False)
        self._sink_plugins.add(registered)
        self._check_pending()
        return registered

    @property
    def report(self) -> list[LoadRecord]:
        """Every plugin registered or tried so far, built-ins first."""
        for record in self._records:
            if not record.version:
                record.version = _version(record.distribution)
        return list(self._records)

    # -- loading entry points ---------------------------------------------------------------
    def _wanted(self) -> dict[str, Entry]:
        if self._entries is None:
            self._entries = wanted_entries(self._entry_points(), self.switches)
        return self._entries

    def _load_entries(self, wanted: Callable[[Entry], bool]) -> None:
        """Load (once each) the wanted entry points that ``wanted`` selects."""
        self._start()
        if not self._third_party:
            return
        fresh = [e for e in self._wanted().values() if e.name not in self._tried and wanted(e)]
        for entry in fresh:
            self._tried.add(entry.name)
            self._load_entry(entry)
        if fresh:
            self._check_pending()
            if self._tried >= self._wanted().keys():
                self._note_undeclared_sinks()

    def _load_entry(self, entry: Entry) -> None:
        ep = entry.ep
        dist = ep.dist.name if ep.dist is not None else "unknown"
        version = ep.dist.version if ep.dist is not None else "?"
        try:
            plugin = ep.load()
        except Exception as exc:  # isolate: a broken plugin must not take down memu
            error = f"{type(exc).__name__}: {exc}"
            self._records.append(LoadRecord(entry.name, dist, version, error=error))
            if self.strict:
                raise PluginError(
                    f"plugin {entry.name!r} from {dist} failed to load ({error}); "
                    f"fix or uninstall it, or unset MEMU_STRICT_PLUGINS"
                ) from exc
            if self.switches.tracing:
                import traceback

                traceback.print_exc(file=sys.stderr)
            return
        self._register(plugin, entry.name, dist, version, builtin=False)
        if entry.declares_sinks:
            self._sink_plugins.add(entry.name)

    def load(self, *, third_party: bool = True) -> Plugins:
        """Register memu-core's plugin and every wanted entry point, once. Returns ``self``.

        ``third_party=False`` is for commands that repair an install: this manager then never
        runs plugin code, whatever is asked of it later.
        """
        if not third_party:
            self._third_party = False
        self._load_entries(lambda entry: True)
        return self

    def _check_pending(self) -> None:
        """Drop plugins whose hook implementations match no spec (a misspelled ``memu_*`` name)."""
        import pluggy

        assert self._pm is not None
        while True:
            try:
                self._pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                name = self._pm.get_name(exc.plugin) or repr(exc.plugin)
                message = f"{exc} (a hook name is misspelled, or the plugin needs a newer memu-core)"
                if self.strict:
                    raise PluginError(f"plugin {name!r}: {message}") from exc
                self._note(name, error=message)
                self._pm.unregister(exc.plugin)
                self._generation += 1

    def _note(self, plugin: str, *, error: str | None = None, note: str | None = None) -> None:
        for record in self._records:
            if plugin in (record.name, record.distribution):
                if error is not None:
                    record.error = error
                if note is not None and note not in record.notes:
                    record.notes.append(note)
                return

    def _note_undeclared_sinks(self) -> None:
        for impl in self._start().hook.memu_register_event_sinks.get_hookimpls():
            if impl.plugin_name not in self._sink_plugins and impl.plugin_name not in self._builtin_names():
                self._note(
                    impl.plugin_name,
                    note=f"registers event sinks without declaring them under [project.entry-points."
                    f'"{SINKS_GROUP}"], so its sinks receive no events',
                )

    def note_undeclared_names(self) -> None:
        """Note, in the load report, each loaded plugin that declares names but registers one it
        did not declare: a lookup finds that name only after every plugin has loaded, and a whole
        registry (every template resolver) misses it. For ``memu plugins``, which loads them all."""
        from memu_core._plugins.registry import BACKENDS, EMBEDDERS, HOSTS, STORES, TEMPLATE_RESOLVERS

        kinds: tuple[Kind[Any], ...] = (STORES, EMBEDDERS, BACKENDS, HOSTS, TEMPLATE_RESOLVERS)
        pm = self._start()
        for entry in self._wanted().values():
            if not entry.provides or pm.get_plugin(entry.name) is None:
                continue
            for kind in kinds:
                answers = calls.collect(pm, kind.hook, self._failed, {entry.name})
                declared = entry.provides.get(kind.group, set())
                for name in sorted({kind.key(value) for _, value in answers} - declared):
                    self._note(
                        entry.name,
                        note=f"registers the {kind.label} {name!r} without declaring it under "
                        f'[project.entry-points."{kind.group}"], so memu finds it only after loading every plugin',
                    )

    def _builtin_names(self) -> set[str]:
        return {r.name for r in self._records if r.builtin}

    def _failed(self, plugin: str, hook: str, exc: Exception) -> None:
        if self.strict:
            raise PluginError(f"plugin {plugin!r} failed in {hook}: {exc}") from exc
        self._note(plugin, error=f"{hook}: {type(exc).__name__}: {exc}")

    # -- registries -------------------------------------------------------------------------
    def _present(self, kind: Kind[T], only: set[str] | None = None) -> Registry[T]:
        """The registry of ``kind`` over the plugins registered right now (``only`` those)."""
        from memu_core._plugins.registry import Registry

        pm = self._start()
        key = kind.hook if only is None else f"{kind.hook} {sorted(only)}"
        cached = self._cache.get(key)
        if cached is not None and cached[0] == self._generation:
            return cast("Registry[T]", cached[1])
        answers = calls.collect(pm, kind.hook, self._failed, only)
        # Registration order, built-ins first: a duplicate names the first registrant first.
        order = {record.name: index for index, record in enumerate(self._records)}
        answers.sort(key=lambda answer: order.get(answer[0], len(order)))
        registry = Registry(kind, ((cast("T", value), self._dist_of.get(name, name)) for name, value in answers))
        self._cache[key] = (self._generation, registry)
        return registry

    def registry(self, kind: Kind[T]) -> Registry[T]:
        """Everything registered for ``kind``, after every entry point that may register one
        (declares the kind, or declares nothing) has loaded."""
        group = kind.group
        self._load_entries(lambda entry: entry.may_provide(group))
        return self._present(kind)

    def _named(self, kind: Kind[T], name: str) -> T | None:
        """``name`` of ``kind`` from what is registered, then from the plugins that may register
        it, then (a name nobody declares) from every plugin; ``None`` when none has it."""
        present = self._present(kind)
        if name in present:
            return present[name]
        group = kind.group
        self._load_entries(lambda entry: entry.may_provide(group, name))
        present = self._present(kind)
        if name in present:
            return present[name]
        # Rare and off the hot paths: an unknown name, or a plugin registering what it did not
        # declare. Loading everything keeps the second working and lists what exists for the first.
        self._load_entries(lambda entry: True)
        return self._present(kind).get(name)

    def get(self, kind: Kind[T], name: str, *, hint: str = "") -> T:
        """``name`` of ``kind``: asked of what is registered, then of the plugins that may have it.

        Raises :class:`~memu_core.errors.ConfigError` listing what exists when nothing has it.
        """
        found = self._named(kind, name)
        if found is not None:
            return found
        return self._present(kind).require(name, hint=hint)

    def find(self, kind: Kind[T], match: Callable[[T], bool]) -> T | None:
        """The first value of ``kind`` that ``match`` accepts, built-ins first; ``None`` if none."""
        for registry in (self._present(kind), self.registry(kind)):
            for name in registry:
                if match(registry[name]):
                    return registry[name]
        return None

    def lookup(self, kind: Kind[T]) -> Lookup[T]:
        """A read-only map of ``kind`` that loads other plugins only for a name not found."""
        from memu_core._plugins.registry import Lookup

        return Lookup(lambda name: self._named(kind, name), lambda: self.registry(kind))

    def stores(self) -> Registry[type[MemoryStore]]:
        """Every registered :class:`~memu_core.interfaces.MemoryStore` class by name."""
        from memu_core._plugins.registry import STORES

        return self.registry(STORES)

    def embedders(self) -> Registry[type[Embedder]]:
        """Every registered :class:`~memu_core.interfaces.Embedder` class by name."""
        from memu_core._plugins.registry import EMBEDDERS

        return self.registry(EMBEDDERS)

    def backends(self) -> Registry[type[AgenticMemoryBackend]]:
        """Every registered :class:`~memu_core.interfaces.AgenticMemoryBackend` class by name."""
        from memu_core._plugins.registry import BACKENDS

        return self.registry(BACKENDS)

    def hosts(self) -> Registry[HostSpec]:
        """Every registered host spec by host id."""
        from memu_core._plugins.registry import HOSTS

        return self.registry(HOSTS)

    def template_resolvers(self) -> Registry[type[TemplateResolver]]:
        """Every registered :class:`~memu_core.interfaces.TemplateResolver` class by name."""
        from memu_core._plugins.registry import TEMPLATE_RESOLVERS

        return self.registry(TEMPLATE_RESOLVERS)

    def event_sinks(self) -> Registry[type[EventSink]]:
        """The :class:`~memu_core.interfaces.EventSink` classes that receive events, by name:
        those of memu-core, of in-process plugins and of entry points declaring sinks."""
        from memu_core._plugins.registry import EVENT_SINKS

        self._load_entries(lambda entry: entry.declares_sinks)
        return self._present(EVENT_SINKS, only=self._sink_plugins | self._builtin_names())

    # -- instances --------------------------------------------------------------------------
    def has_in_process_plugins(self) -> bool:
        """Whether an application or a test registered a plugin in this process (:meth:`register`)."""
        return any(record.distribution == IN_PROCESS for record in self._records)

    def may_have_event_sinks(self) -> bool:
        """Whether any plugin could register an event sink, answered without importing one.

        memu-core's own plugin registers none (a test holds it to that), so with the default
        built-ins only a declared entry point or an in-process plugin can.
        """
        if self._pm is not None or self._builtins is not None:
            return True
        return any(entry.declares_sinks for entry in self._wanted().values())

    def declared_sink_plugins(self) -> list[str]:
        """The names of the plugins that could register an event sink, found without importing
        one: the wanted entry points declaring sinks, and ``<in-process>`` when an application or
        a test registered a plugin here. The warm server hands this to the light per-turn client."""
        names = sorted(entry.name for entry in self._wanted().values() if entry.declares_sinks)
        return [*names, "<in-process>"] if self.has_in_process_plugins() else names

    def _instances(self, label: str, registry: Registry[type[T]], order: Callable[[str], tuple[int, str]]) -> list[T]:
        cached = self._cache.get(label)
        if cached is not None and cached[0] == self._generation:
            return cast("list[T]", cached[1])
        instances: list[T] = []
        for name in sorted(registry, key=order):
            try:
                instances.append(registry[name]())
            except Exception as exc:
                self._failed(registry.distribution(name), registry.kind.hook, exc)
        self._cache[label] = (self._generation, instances)
        return instances

    def sinks(self) -> list[EventSink]:
        """One instance of each event sink; ``[]`` at once when no plugin can register one."""
        if not self.may_have_event_sinks():
            return []
        return self._instances("sink instances", self.event_sinks(), lambda name: (0, name))

    def resolvers(self) -> list[TemplateResolver]:
        """One instance of each template resolver, in the order they are asked (priority, name)."""
        registry = self.template_resolvers()
        return self._instances(
            "resolver instances", registry, lambda name: (int(getattr(registry[name], "priority", 100)), name)
        )

    # -- hosts and commands -----------------------------------------------------------------
    def host(self, host_id: str) -> HostSpec:
        """The spec of host ``host_id``, loading as little as possible.

        A host binary's console script lives in its plugin's package, so that package is imported
        already: the entry points of imported packages load first (nearly free), every other
        entry point only if none of them registers ``host_id``.
        """
        from memu_core._plugins.registry import HOSTS

        if host_id not in self._present(HOSTS):
            self._load_entries(lambda entry: entry.package in sys.modules)
        return self.get(HOSTS, host_id, hint="install its memu-host-* distribution (`memu plugins` lists hosts)")

    def add_commands(self, app: typer.Typer, *, third_party: bool = True) -> None:
        """Fire ``memu_register_commands(app)``: memu-core's commands and, with ``third_party``,
        every plugin's. A plugin failing here is reported in ``memu plugins``, never fatal."""
        if third_party:
            self._load_entries(lambda entry: True)
        calls.call_each(self._start(), "memu_register_commands", {"app": app}, self._failed)

    def add_host_commands(self, spec: HostSpec, app: typer.Typer, *, third_party: bool = False) -> None:
        """Fire ``memu_register_host_commands(spec, app)`` for a host binary's app.

        The plugins that declare this host (its own, and any other adding verbs to it) load
        first: a spec handed to :func:`memu_core.host.run_host` directly, as tests and embedding
        applications do, did not come through a lookup that would have loaded them.
        ``third_party`` loads every other plugin too, for a verb neither memu-core nor the host adds.
        """
        from memu_core._plugins.registry import HOSTS

        if third_party:
            self._load_entries(lambda entry: True)
        else:
            self._load_entries(lambda entry: entry.may_provide(HOSTS.group, spec.id))
        calls.call_each(self._start(), "memu_register_host_commands", {"spec": spec, "app": app}, self._failed)


def _hashable(plugin: object) -> object:
    """``plugin``, or a module holding its ``memu_*`` attributes when it cannot be hashed.

    pluggy calls one plugin at a time through ``subset_hook_caller``, which keeps plugins in a
    set; a ``SimpleNamespace`` (handy in tests and scripts) would break that.
    """
    try:
        hash(plugin)
    except TypeError:
        import types

        module = types.ModuleType(f"{PROJECT_NAME}_plugin_{id(plugin):x}")
        for attr in dir(plugin):
            if attr.startswith(f"{PROJECT_NAME}_"):
                setattr(module, attr, getattr(plugin, attr))
        return module
    return plugin


def _version(dist: str) -> str:
    if dist == CORE_DISTRIBUTION:
        from memu_core._version import version

        return version()
    if dist == IN_PROCESS:
        return "-"
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "0+unknown"


_current: Plugins | None = None


def get_plugins() -> Plugins:
    """The process-wide plugin manager (created on first use; nothing loads until asked)."""
    global _current
    if _current is None:
        _current = Plugins()
    return _current


def set_plugins(plugins: Plugins | None) -> None:
    """Replace the process-wide manager (tests install a fresh one; ``None`` resets)."""
    global _current
    _current = plugins


__all__ = ["CORE_DISTRIBUTION", "IN_PROCESS", "LoadRecord", "Plugins", "get_plugins", "set_plugins"]
