"""Bases for the small value classes a scheduled ``prepare`` imports: what a dataclass gives
them (``__eq__``, ``__repr__``, frozen fields and their hash), without the code a dataclass
generates and compiles when its module is imported.

Each dataclass cost 0.4-1 ms at import (a few ``exec`` calls of generated source); fifteen of
them sat on the steady ``prepare`` (ADR 0026's fourth amendment). A subclass declares its
fields twice: in ``__slots__`` (sorted, for the linter) and in ``_fields`` (their order, which
``__repr__``, ``__eq__``, the hash and pickling follow), and writes its own typed ``__init__``.
"""

from __future__ import annotations

from typing import Any, ClassVar


class Value:
    """A value compared, shown and listed by its fields, like a dataclass; not hashable (a
    mutable dataclass is not either)."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    """The fields in their declared order."""

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        # As a dataclass: only an instance of the very same class compares.
        if other.__class__ is self.__class__:
            return self._values() == other._values()
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
        return hash(self._values())

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (type(self), self._values())


__all__ = ["Frozen", "Value"]
