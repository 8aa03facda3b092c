"""Which entry points a process may load: the kill switches, and what each entry declares.

A plugin is one name in the group ``memu``. The same name in ``memu.event_sinks`` declares
that it registers event sinks, which is how memu knows, without importing it, that the plugin
must be loaded before an event is emitted.

A plugin may also declare the names it registers, one entry point per name in the group of the
kind (:data:`DECLARATION_GROUPS`: ``memu.stores``, ``memu.embedders``, ``memu.backends``,
``memu.hosts``, ``memu.template_resolvers``), named after what it registers and pointing at the
same object as its entry in ``memu``. A lookup of a name then imports only the plugins that
declare it, and those that declare nothing at all (older and third-party plugins, which keep
working as before: they load on every miss).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from memu_core import PROJECT_NAME

SINKS_GROUP = f"{PROJECT_NAME}.event_sinks"
"""Entry-point group declaring that a plugin registers event sinks (same name as in ``memu``)."""

DECLARATION_GROUPS = frozenset(
    f"{PROJECT_NAME}.{kind}" for kind in ("stores", "embedders", "backends", "hosts", "template_resolvers")
)
"""Entry-point groups declaring a name a plugin registers: the entry's name is the store's,
embedder's, backend's or template resolver's ``name`` or the host's ``id``; its value is the
plugin's own (as in ``memu``). The group of a kind is ``memu.`` + its hook's name after
``memu_register_``."""

_TRUE = {"1", "true", "yes", "on"}
_OFF = {"0", "none", "off", "false", "no"}
_ALL = {"*", "all"}


if TYPE_CHECKING:  # protocols cost a class each at import time; only the type checker needs them

    class DistributionLike(Protocol):
        """What memu reads of an entry point's distribution."""

        @property
        def name(self) -> str: ...

        @property
        def version(self) -> str: ...

    class EntryPointLike(Protocol):
        """An installed entry point (``importlib.metadata.EntryPoint`` or a discovered one)."""

        @property
        def name(self) -> str: ...

        @property
        def value(self) -> str: ...

        @property
        def group(self) -> str: ...

        @property
        def dist(self) -> DistributionLike | None: ...

        def load(self) -> Any: ...

    EntryPointLister = Callable[[], Iterable[EntryPointLike]]


def installed_entry_points() -> Iterable[EntryPointLike]:
    """The entry points of the installed distributions in ``memu`` and its sub-groups."""
    from memu_core._plugins import discovery

    return discovery.entry_points(PROJECT_NAME)


def _split(value: str | None) -> set[str]:
    return {part.strip() for part in (value or "").split(",") if part.strip()}


# Plain classes, not dataclasses: a dataclass compiles its methods when the module is imported
# (about a millisecond each), and every memu process that asks a plugin anything imports this.
class Switches:
    """The plugin variables of one environment."""

    __slots__ = ("environ",)

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ

    @property
    def strict(self) -> bool:
        """``MEMU_STRICT_PLUGINS=1``: a plugin that fails to load or to answer is fatal."""
        return self.environ.get("MEMU_STRICT_PLUGINS", "").strip().lower() in _TRUE

    @property
    def tracing(self) -> bool:
        """``MEMU_TRACE_PLUGINS=1``: pluggy's hook trace and load tracebacks go to stderr."""
        return self.environ.get("MEMU_TRACE_PLUGINS", "").strip() not in {"", "0"}

    @property
    def none_wanted(self) -> bool:
        """``MEMU_LOAD_PLUGINS=0`` or ``MEMU_DISABLE_PLUGINS=all``: no entry point loads."""
        only = _split(self.environ.get("MEMU_LOAD_PLUGINS"))
        return bool(only & _OFF) or bool(_split(self.environ.get("MEMU_DISABLE_PLUGINS")) & _ALL)

    def wanted(self, name: str) -> bool:
        """Whether the entry point ``name`` may load (``MEMU_LOAD_PLUGINS``/``MEMU_DISABLE_PLUGINS``)."""
        if self.none_wanted or name in _split(self.environ.get("MEMU_DISABLE_PLUGINS")):
            return False
        only = _split(self.environ.get("MEMU_LOAD_PLUGINS"))
        return not only or bool(only & _ALL) or name in only


class Entry:
    """One plugin to load: its entry point in ``memu``, whether it declares event sinks, and the
    names it declares it registers (by declaration group)."""

    __slots__ = ("declares_sinks", "ep", "name", "provides")

    def __init__(
        self, name: str, ep: EntryPointLike, declares_sinks: bool, provides: dict[str, set[str]] | None = None
    ) -> None:
        self.name = name
        self.ep = ep
        self.declares_sinks = declares_sinks
        self.provides: dict[str, set[str]] = {} if provides is None else provides

    def __repr__(self) -> str:
        return f"Entry({self.name!r}, {self.ep!r}, declares_sinks={self.declares_sinks}, provides={self.provides!r})"

    @property
    def declared(self) -> bool:
        """Whether the plugin declares what it registers (any declaration group, or sinks)."""
        return self.declares_sinks or bool(self.provides)

    def may_provide(self, group: str, name: str | None = None) -> bool:
        """Whether loading this plugin could register ``name`` (any name when ``None``) of the
        kind whose declaration group is ``group``. A plugin that declares nothing may register
        anything; one that declares something registers only what it declares."""
        if not self.declared:
            return True
        if group == SINKS_GROUP:
            return self.declares_sinks
        names = self.provides.get(group)
        return names is not None and (name is None or name in names)

    @property
    def package(self) -> str:
        """The top-level package of the module the entry point names."""
        return self.ep.value.partition(":")[0].strip().split(".")[0]


def _target(ep: EntryPointLike) -> tuple[str, str]:
    """What ties a declaration to its plugin: the distribution and the object both point at."""
    return (ep.dist.name if ep.dist is not None else "", ep.value.strip())


def wanted_entries(entry_points: Iterable[EntryPointLike], switches: Switches) -> dict[str, Entry]:
    """The entries the switches allow, by name, in name order, with what each declares."""
    if switches.none_wanted:
        return {}
    entries: dict[str, Entry] = {}
    declarations: list[EntryPointLike] = []
    for ep in entry_points:
        if ep.group in DECLARATION_GROUPS:
            declarations.append(ep)  # named after what is registered, not the plugin: tied below
            continue
        if ep.group not in (PROJECT_NAME, SINKS_GROUP) or not switches.wanted(ep.name):
            continue
        known = entries.get(ep.name)
        main = ep if known is None or ep.group == PROJECT_NAME else known.ep
        declares = ep.group == SINKS_GROUP or (known is not None and known.declares_sinks)
        entries[ep.name] = Entry(ep.name, main, declares)
    by_target = {_target(entry.ep): entry for entry in entries.values()}
    for ep in declarations:
        entry = by_target.get(_target(ep))
        # A declaration whose plugin is not wanted (or not installed) declares nothing.
        if entry is not None:
            entry.provides.setdefault(ep.group, set()).add(ep.name)
    return dict(sorted(entries.items()))
