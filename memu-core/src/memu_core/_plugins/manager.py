"""The plugin manager: built-ins and entry points loaded once, late, each isolated.

:class:`Plugins` is the one typed facade over pluggy. Nothing else in memu calls ``pm.hook``.
Entry points in the group ``memu`` load the first time a registry is asked for, each inside its
own ``try`` so one broken plugin becomes a line in the load report (``memu plugins``) instead of
a dead CLI. ``MEMU_STRICT_PLUGINS=1`` turns such a failure into an error.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Generic, TypeVar

import pluggy

from memu_core import PROJECT_NAME, hookspecs
from memu_core.errors import PluginError

T = TypeVar("T")

CORE_DISTRIBUTION = "memu-core"
_OFF = {"0", "none", "off", "false", "no"}
_ALL = {"*", "all"}


@dataclass(slots=True)
class LoadRecord:
    """One line of ``memu plugins``: what loaded (or failed to), from where, with which hooks."""

    name: str
    distribution: str
    version: str
    hooks: list[str] = field(default_factory=list)
    error: str | None = None
    builtin: bool = False


@dataclass(slots=True)
class Registered(Generic[T]):
    """A registered class and the distribution that registered it."""

    value: T
    distribution: str


class Registry(Mapping[str, T]):
    """A name → implementation map built from one registration hook; duplicates are refused."""

    def __init__(self, kind: str, entries: Iterable[tuple[str, T, str]]) -> None:
        self.kind = kind
        self._items: dict[str, Registered[T]] = {}
        for name, value, dist in entries:
            if name in self._items:
                first = self._items[name].distribution
                raise PluginError(
                    f"{kind} {name!r} is registered twice, by {first} and by {dist}; "
                    f"uninstall one of them or disable it with MEMU_DISABLE_PLUGINS"
                )
            self._items[name] = Registered(value, dist)

    def __getitem__(self, name: str) -> T:
        return self._items[name].value

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def distribution(self, name: str) -> str:
        """Which distribution registered ``name``."""
        return self._items[name].distribution

    def require(self, name: str, *, hint: str = "") -> T:
        """The implementation called ``name``, or a UsageError listing what is available."""
        try:
            return self[name]
        except KeyError:
            from memu_core.errors import ConfigError

            known = ", ".join(sorted(self._items)) or "none"
            raise ConfigError(
                f"no {self.kind} named {name!r} is installed (available: {known})" + (f"; {hint}" if hint else "")
            ) from None


EntryPointLister = Callable[[], Iterable[metadata.EntryPoint]]


def _installed_entry_points() -> Iterable[metadata.EntryPoint]:
    return metadata.entry_points(group=PROJECT_NAME)


def _split(value: str | None) -> set[str]:
    return {part.strip() for part in (value or "").split(",") if part.strip()}


class Plugins:
    """Owns one pluggy manager: loading, the load report, registries and event fan-out."""

    def __init__(
        self,
        *,
        entry_points: EntryPointLister = _installed_entry_points,
        environ: Mapping[str, str] | None = None,
        builtins: Iterable[object] | None = None,
    ) -> None:
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self._entry_points = entry_points
        self._environ = os.environ if environ is None else environ
        self._builtins = builtins
        self._loaded = False
        self._dist_of: dict[str, str] = {}
        self._registries: dict[str, Registry[Any]] = {}
        self.report: list[LoadRecord] = []

    # -- switches ---------------------------------------------------------------------------
    @property
    def strict(self) -> bool:
        """``MEMU_STRICT_PLUGINS=1``: a plugin that fails to load is fatal."""
        return self._environ.get("MEMU_STRICT_PLUGINS", "").strip().lower() in {"1", "true", "yes", "on"}

    def _wanted(self, name: str) -> bool:
        only = _split(self._environ.get("MEMU_LOAD_PLUGINS"))
        disabled = _split(self._environ.get("MEMU_DISABLE_PLUGINS"))
        if disabled & _ALL or name in disabled:
            return False
        if only:
            return not (only & _OFF) and (bool(only & _ALL) or name in only)
        return True

    # -- loading ----------------------------------------------------------------------------
    def load(self, *, third_party: bool = True) -> Plugins:
        """Register the built-ins, then every wanted entry point, once. Returns ``self``.

        ``third_party=False`` is for commands that repair an install: they never run plugin code.
        """
        if self._loaded:
            return self
        self._loaded = True
        if self._environ.get("MEMU_TRACE_PLUGINS", "").strip() not in {"", "0"}:
            self.pm.trace.root.setwriter(sys.stderr.write)
            self.pm.enable_tracing()
        builtins = self._builtins
        if builtins is None:
            from memu_core._plugins import builtin

            builtins = [builtin]
        for plugin in builtins:
            name = self.pm.register(plugin) or repr(plugin)
            self._dist_of[name] = CORE_DISTRIBUTION
            self.report.append(
                LoadRecord(name, CORE_DISTRIBUTION, _version(CORE_DISTRIBUTION), self._hooks_of(plugin), builtin=True)
            )
        if third_party:
            for ep in sorted(self._entry_points(), key=lambda e: e.name):
                if self._wanted(ep.name):
                    self._load_entry_point(ep)
        self._check_pending()
        return self

    def _load_entry_point(self, ep: metadata.EntryPoint) -> None:
        dist = ep.dist.name if ep.dist is not None else "unknown"
        version = ep.dist.version if ep.dist is not None else "?"
        record = LoadRecord(ep.name, dist, version)
        self.report.append(record)
        try:
            plugin = ep.load()
            self.pm.register(plugin, name=ep.name)
        except Exception as exc:  # isolate: a broken plugin must not take down memu
            record.error = f"{type(exc).__name__}: {exc}"
            if self.strict:
                raise PluginError(
                    f"plugin {ep.name!r} from {dist} failed to load ({record.error}); "
                    f"fix or uninstall it, or unset MEMU_STRICT_PLUGINS"
                ) from exc
            if self._environ.get("MEMU_TRACE_PLUGINS"):
                traceback.print_exc(file=sys.stderr)
            return
        self._dist_of[ep.name] = dist
        record.hooks = self._hooks_of(plugin)

    def _hooks_of(self, plugin: object) -> list[str]:
        return sorted(caller.name for caller in self.pm.get_hookcallers(plugin) or [])

    def _check_pending(self) -> None:
        """Drop plugins whose hook implementations match no spec (a misspelled ``memu_*`` name)."""
        while True:
            try:
                self.pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                name = self.pm.get_name(exc.plugin) or repr(exc.plugin)
                message = f"{exc} (a hook name is misspelled, or the plugin needs a newer memu-core)"
                if self.strict:
                    raise PluginError(f"plugin {name!r}: {message}") from exc
                self._note_error(name, message)
                self.pm.unregister(exc.plugin)

    # -- registries -------------------------------------------------------------------------
    def _registry(self, kind: str, hook_name: str, key: Callable[[Any], str]) -> Registry[Any]:
        if kind not in self._registries:
            self.load()
            hook = getattr(self.pm.hook, hook_name)
            entries: list[tuple[str, Any, str]] = []
            for impl in hook.get_hookimpls():
                dist = self._dist_of.get(impl.plugin_name, impl.plugin_name)
                try:
                    values = impl.function() or []
                except Exception as exc:
                    if self.strict:
                        raise PluginError(f"plugin {impl.plugin_name!r} failed in {hook_name}: {exc}") from exc
                    self._note_error(impl.plugin_name, f"{hook_name}: {type(exc).__name__}: {exc}")
                    continue
                entries.extend((key(value), value, dist) for value in values)
            self._registries[kind] = Registry(kind, entries)
        return self._registries[kind]

    def _note_error(self, plugin_name: str, message: str) -> None:
        for record in self.report:
            if record.name == plugin_name:
                record.error = message
                return

    def stores(self) -> Registry[Any]:
        """Registered :class:`~memu_core.interfaces.MemoryStore` classes by name."""
        return self._registry("store", "memu_register_stores", lambda cls: cls.name)

    def embedders(self) -> Registry[Any]:
        """Registered :class:`~memu_core.interfaces.Embedder` classes by name."""
        return self._registry("embedder", "memu_register_embedders", lambda cls: cls.name)

    def backends(self) -> Registry[Any]:
        """Registered :class:`~memu_core.interfaces.AgenticMemoryBackend` classes by name."""
        return self._registry("backend", "memu_register_backends", lambda cls: cls.name)

    def hosts(self) -> Registry[Any]:
        """Registered host specs by host id."""
        return self._registry("host", "memu_register_hosts", lambda spec: spec.id)

    def event_sinks(self) -> Registry[Any]:
        """Registered :class:`~memu_core.interfaces.EventSink` classes by name."""
        return self._registry("event sink", "memu_register_event_sinks", lambda cls: cls.name)

    def template_resolvers(self) -> Registry[Any]:
        """Registered :class:`~memu_core.interfaces.TemplateResolver` classes by name."""
        return self._registry("template resolver", "memu_register_template_resolvers", lambda cls: cls.name)

    def add_commands(self, app: Any) -> None:
        """Let plugins add commands to the ``memu`` typer app; a failing plugin is reported, not fatal."""
        self.load()
        for impl in self.pm.hook.memu_register_commands.get_hookimpls():
            try:
                impl.function(app=app)
            except Exception as exc:
                if self.strict:
                    raise PluginError(f"plugin {impl.plugin_name!r} failed adding commands: {exc}") from exc
                self._note_error(impl.plugin_name, f"memu_register_commands: {type(exc).__name__}: {exc}")

    def emit(self, event: str, properties: Mapping[str, Any]) -> None:
        """Send an event to every sink; a sink that raises is skipped, the others still receive it."""
        try:
            sinks = self.event_sinks()
        except PluginError:
            return
        for name in sinks:
            try:
                sinks[name]().emit(event, properties)
            except Exception:
                continue


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "0+unknown"


_current: Plugins | None = None


def get_plugins() -> Plugins:
    """The process-wide plugin manager (created on first use, loaded on first registry access)."""
    global _current
    if _current is None:
        _current = Plugins()
    return _current


def set_plugins(plugins: Plugins | None) -> None:
    """Replace the process-wide manager (tests install a fresh one; ``None`` resets)."""
    global _current
    _current = plugins
