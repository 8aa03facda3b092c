"""Bases for the small value classes a scheduled ``prepare`` imports: what a dataclass gives
them (``__eq__``, ``__repr__``, frozen fields and their hash), without the code a dataclass
generates and compiles when its module is imported.

Each dataclass cost 0.4-1 ms at import (a few ``exec`` calls of generated source); fifteen of
them sat on the steady ``prepare`` (ADR 0026's fourth amendment). A subclass declares its
fields twice: in ``__slots__`` (sorted, for the linter) and in ``_fields`` (their order, which
``__repr__``, ``__eq__``, the hash and pickling follow), and writes its own typed ``__init__``.

The public value classes a host plugin builds (``HostSpec`` and the transcript types) were
dataclasses, and a plugin may hand them to :func:`dataclasses.replace`, ``asdict``, ``fields``:
:class:`DataclassAPI` keeps them working with those functions, and ``dataclasses`` is imported
only when one of them is first used (ADR 0026's fifth amendment).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from collections.abc import Callable
    from dataclasses import Field


class Value:
    """A value compared, shown and listed by its fields, like a dataclass; not hashable (a
    mutable dataclass is not either)."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    """The fields in their declared order."""
    _compare: ClassVar[tuple[str, ...] | None] = None
    """The fields equality and the hash follow, when not all of them (a dataclass field's
    ``compare=False`` leaves one out)."""

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def _key(self) -> tuple[Any, ...]:
        names = self._fields if self._compare is None else self._compare
        return tuple(getattr(self, name) for name in names)

    def __eq__(self, other: object) -> bool:
        # As a dataclass: only an instance of the very same class compares.
        if other.__class__ is self.__class__:
            return self._key() == other._key()
        return NotImplemented

    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({fields})"

    def as_dict(self) -> dict[str, Any]:
        """``{field: value}`` in field order (the values themselves, not copies)."""
        return {name: getattr(self, name) for name in self._fields}


class Frozen(Value):
    """A :class:`Value` whose fields cannot be assigned after ``__init__`` (which sets them with
    :meth:`_init`), hashable by its fields, and pickled through its ``__init__`` (which
    must take every field, in ``_fields`` order, positionally)."""

    __slots__ = ()

    def _init(self, *values: object) -> None:
        """Set every field, in ``_fields`` order (what a subclass's ``__init__`` calls)."""
        for name, value in zip(self._fields, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        from dataclasses import FrozenInstanceError  # the error a frozen dataclass raises

        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._key())

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (type(self), self._values())


class DataclassAPI(Value):
    """A mixin that makes a :class:`Value` subclass pass for the dataclass it replaced with the
    :mod:`dataclasses` functions: ``is_dataclass``, ``fields``, ``replace``, ``asdict``,
    ``astuple``, a ``@dataclass`` subclass, and ``copy.replace`` (Python 3.13).

    Those functions read the class's ``__dataclass_fields__`` (and ``__dataclass_params__``).
    Both stand here as descriptors that, on first read, import :mod:`dataclasses`, build a twin
    class with :func:`dataclasses.make_dataclass` (the public API; the ``Field`` objects come
    out right for any Python) from the class's field annotations, ``__init__`` defaults,
    :attr:`_factories`, ``_compare`` and frozenness, and put the twin's values in their place.
    A class that never meets the dataclasses API never imports the module. Every field must be
    an ``__init__`` parameter of the same name, of the class or of a base it passes them on to
    (``replace`` passes them by keyword), and be annotated, or be a property (with a setter, for
    ``object.__setattr__``) whose getter's return annotation is the field's type.
    """

    __slots__ = ()
    _factories: ClassVar[dict[str, Callable[[], Any]]] = {}
    """The fields whose dataclass default was a ``default_factory`` (``__init__`` calls it when
    the argument is left out)."""

    if TYPE_CHECKING:
        # What typeshed's ``DataclassInstance`` protocol asks, so ``dataclasses.replace(x, ...)``
        # type-checks in a plugin's code.
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_fields" in cls.__dict__:  # a subclass that adds no fields inherits them, as in a dataclass
            for name in ("__dataclass_fields__", "__dataclass_params__"):
                setattr(cls, name, _Twin(cls, name))

    def __replace__(self, /, **changes: Any) -> Any:
        """A copy with ``changes`` (what ``copy.replace`` calls, as on a dataclass)."""
        import dataclasses

        return dataclasses.replace(self, **changes)

    def __setstate__(self, state: dict[str, Any] | list[Any] | tuple[Any, dict[str, Any]]) -> None:
        # A frozen value pickles through ``__init__``; what comes here is a pickle written while
        # the class was a dataclass: the values in field order (``slots=True``) or the instance's
        # dict, or a mutable value's ``(dict, slots)`` (the default state of a slotted object).
        if isinstance(state, tuple):
            state = {**(state[0] or {}), **state[1]}
        values = [state[name] for name in self._fields] if isinstance(state, dict) else state
        for name, value in zip(self._fields, values, strict=True):
            object.__setattr__(self, name, value)


class _Twin:
    """``__dataclass_fields__`` or ``__dataclass_params__`` of one :class:`DataclassAPI` class,
    made on first read from a twin dataclass, then stored on the class in its place."""

    __slots__ = ("_cls", "_name")

    def __init__(self, cls: type[DataclassAPI], name: str) -> None:
        self._cls = cls
        self._name = name

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        twin = _make_twin(self._cls)
        for name in ("__dataclass_fields__", "__dataclass_params__"):
            setattr(self._cls, name, getattr(twin, name))  # later reads find the plain values
        return getattr(twin, self._name)


def _make_twin(cls: type[DataclassAPI]) -> type:
    """The dataclass ``cls`` stands for: same fields, types, defaults, comparison, frozenness."""
    import dataclasses
    import inspect

    fields, factories = cls._fields, cls._factories
    compare = set(fields if cls._compare is None else cls._compare)
    annotations: dict[str, Any] = {}  # as strings, a subclass's over its bases'
    for base in reversed(cls.__mro__):
        annotations.update(inspect.get_annotations(base))
        for name, attr in vars(base).items():  # a field kept behind a property: its getter's type
            getter = attr.fget if isinstance(attr, property) else None
            if name in fields and getter is not None and "return" in inspect.get_annotations(getter):
                annotations[name] = inspect.get_annotations(getter)["return"]
    params: dict[str, inspect.Parameter] = {}  # a subclass's __init__ over its bases' (it may pass them on)
    for base in reversed(cls.__mro__[:-1]):
        if "__init__" in base.__dict__:
            params.update(inspect.signature(base.__dict__["__init__"]).parameters)
    specs: list[tuple[str, Any, Any]] = []
    for name in fields:
        if name not in annotations or name not in params:
            raise TypeError(f"{cls.__qualname__}.{name}: give the field an annotation and an __init__ parameter")
        if name in factories:
            spec = dataclasses.field(default_factory=factories[name], compare=name in compare)
        elif params[name].default is not inspect.Parameter.empty:
            spec = dataclasses.field(default=params[name].default, compare=name in compare)
        else:
            spec = dataclasses.field(compare=name in compare)
        specs.append((name, annotations[name], spec))
    return dataclasses.make_dataclass(
        cls.__name__,
        specs,
        frozen=issubclass(cls, Frozen),
        slots="__slots__" in cls.__dict__,
    )


__all__ = ["DataclassAPI", "Frozen", "Value"]
