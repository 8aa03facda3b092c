"""Keyed registries built from the registration hooks, and the kinds of thing they hold.

A :class:`Kind` names a registration hook and how to key what it returns (a class's ``name``, a
host spec's ``id``); a :class:`Registry` is the merged answer, refusing a name registered twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Generic, TypeVar

from memu_core.errors import ConfigError, PluginError

if TYPE_CHECKING:
    from memu_core._hostkit.spec import HostSpec
    from memu_core.interfaces import AgenticMemoryBackend, Embedder, EventSink, MemoryStore, TemplateResolver

T = TypeVar("T")


# Plain classes, not dataclasses: a dataclass compiles its methods when the module is imported
# (about a millisecond each), and every memu process that asks a plugin anything imports this.
class Kind(Generic[T]):
    """One registration hook: what it registers (for messages), its name, the key of a value, and
    the entry-point group where a plugin declares the names it registers (``memu.stores``)."""

    __slots__ = ("group", "hook", "key", "label")

    def __init__(self, label: str, hook: str, key: Callable[[T], str]) -> None:
        self.label = label
        self.hook = hook
        self.key = key
        self.group = "memu." + hook.removeprefix("memu_register_")

    def __repr__(self) -> str:
        return f"Kind({self.label!r}, {self.hook!r})"


STORES: Kind[type[MemoryStore]] = Kind("store", "memu_register_stores", lambda cls: cls.name)
EMBEDDERS: Kind[type[Embedder]] = Kind("embedder", "memu_register_embedders", lambda cls: cls.name)
BACKENDS: Kind[type[AgenticMemoryBackend]] = Kind("backend", "memu_register_backends", lambda cls: cls.name)
HOSTS: Kind[HostSpec] = Kind("host", "memu_register_hosts", lambda spec: spec.id)
EVENT_SINKS: Kind[type[EventSink]] = Kind("event sink", "memu_register_event_sinks", lambda cls: cls.name)
TEMPLATE_RESOLVERS: Kind[type[TemplateResolver]] = Kind(
    "template resolver", "memu_register_template_resolvers", lambda cls: cls.name
)


class Registered(Generic[T]):
    """A registered value and the distribution that registered it."""

    __slots__ = ("distribution", "value")

    def __init__(self, value: T, distribution: str) -> None:
        self.value = value
        self.distribution = distribution

    def __repr__(self) -> str:
        return f"Registered({self.value!r}, {self.distribution!r})"


class Registry(Mapping[str, T]):
    """A name → value map built from one registration hook; a duplicate name is refused."""

    def __init__(self, kind: Kind[T], entries: Iterable[tuple[T, str]]) -> None:
        self.kind = kind
        self._items: dict[str, Registered[T]] = {}
        for value, dist in entries:
            name = kind.key(value)
            if name in self._items:
                first = self._items[name].distribution
                raise PluginError(
                    f"{kind.label} {name!r} is registered twice, by {first} and by {dist}; "
                    f"uninstall one of them or disable it with MEMU_DISABLE_PLUGINS"
                )
            self._items[name] = Registered(value, dist)

    def __getitem__(self, name: str) -> T:
        return self._items[name].value

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def distribution(self, name: str) -> str:
        """Which distribution registered ``name``."""
        return self._items[name].distribution

    def require(self, name: str, *, hint: str = "") -> T:
        """The value called ``name``, or a :class:`ConfigError` listing what is available."""
        try:
            return self[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise ConfigError(
                f"no {self.kind.label} named {name!r} is installed (available: {known})" + (f"; {hint}" if hint else "")
            ) from None


class Lookup(Mapping[str, T]):
    """A registry read built-in first: looking a name up loads other plugins only on a miss,
    listing (iterating, ``len``) loads them all."""

    def __init__(self, find: Callable[[str], T | None], everything: Callable[[], Registry[T]]) -> None:
        self._find = find
        self._everything = everything

    def __getitem__(self, name: str) -> T:
        value = self._find(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._find(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._everything())

    def __len__(self) -> int:
        return len(self._everything())


__all__ = [
    "BACKENDS",
    "EMBEDDERS",
    "EVENT_SINKS",
    "HOSTS",
    "STORES",
    "TEMPLATE_RESOLVERS",
    "Kind",
    "Lookup",
    "Registered",
    "Registry",
]
