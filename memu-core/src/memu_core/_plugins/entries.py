"""Which entry points a process may load: the kill switches, and what each entry declares.

A plugin is one name in the group ``memu``. The same name in ``memu.event_sinks`` declares
that it registers event sinks, which is how memu knows, without importing it, that the plugin
must be loaded before an event is emitted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from memu_core import PROJECT_NAME

SINKS_GROUP = f"{PROJECT_NAME}.event_sinks"
"""Entry-point group declaring that a plugin registers event sinks (same name as in ``memu``)."""

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
    """One plugin to load: its entry point in ``memu``, and whether it declares event sinks."""

    __slots__ = ("declares_sinks", "ep", "name")

    def __init__(self, name: str, ep: EntryPointLike, declares_sinks: bool) -> None:
        self.name = name
        self.ep = ep
        self.declares_sinks = declares_sinks

    def __repr__(self) -> str:
        return f"Entry({self.name!r}, {self.ep!r}, declares_sinks={self.declares_sinks})"

    @property
    def package(self) -> str:
        """The top-level package of the module the entry point names."""
        return self.ep.value.partition(":")[0].strip().split(".")[0]


def wanted_entries(entry_points: Iterable[EntryPointLike], switches: Switches) -> dict[str, Entry]:
    """The entries the switches allow, by name, in name order."""
    if switches.none_wanted:
        return {}
    entries: dict[str, Entry] = {}
    for ep in entry_points:
        if ep.group not in (PROJECT_NAME, SINKS_GROUP) or not switches.wanted(ep.name):
            continue
        known = entries.get(ep.name)
        main = ep if known is None or ep.group == PROJECT_NAME else known.ep
        declares = ep.group == SINKS_GROUP or (known is not None and known.declares_sinks)
        entries[ep.name] = Entry(ep.name, main, declares)
    return dict(sorted(entries.items()))
