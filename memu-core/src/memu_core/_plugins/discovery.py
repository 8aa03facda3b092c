"""Installed entry points in memu's groups, read straight from the installed metadata.

``importlib.metadata`` costs about 50 ms to import and scan, more than a warm ``retrieve``
takes in total. memu needs only its own groups, so this module reads the ``entry_points.txt``
of each ``*.dist-info`` / ``*.egg-info`` directory on ``sys.path`` itself (about 2 ms), keeps
the first distribution of a name like ``importlib.metadata`` does, and imports a plugin module
only when :meth:`InstalledEntryPoint.load` is called.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys

_SUFFIXES = (".dist-info", ".egg-info")


# Plain classes, not dataclasses: generating a frozen dataclass's methods costs most of this
# module's import (about 1.5 ms), and every host command reads the entry points.
class InstalledDistribution:
    """The distribution an entry point comes from (name normalised as in PEP 503)."""

    __slots__ = ("name", "version")

    def __init__(self, name: str, version: str) -> None:
        self.name = name
        self.version = version

    def __repr__(self) -> str:
        return f"InstalledDistribution(name={self.name!r}, version={self.version!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InstalledDistribution):
            return NotImplemented
        return (self.name, self.version) == (other.name, other.version)

    def __hash__(self) -> int:
        return hash((self.name, self.version))


class InstalledEntryPoint:
    """One ``name = module[:attr]`` line of an installed distribution's entry points."""

    __slots__ = ("dist", "group", "name", "value")

    def __init__(self, name: str, value: str, group: str, dist: InstalledDistribution | None) -> None:
        self.name = name
        self.value = value
        self.group = group
        self.dist = dist

    def __repr__(self) -> str:
        return (
            f"InstalledEntryPoint(name={self.name!r}, value={self.value!r}, group={self.group!r}, dist={self.dist!r})"
        )

    def _key(self) -> tuple[str, str, str, InstalledDistribution | None]:
        return (self.name, self.value, self.group, self.dist)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InstalledEntryPoint):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def load(self) -> object:
        """Import the module and return the named attribute (the module itself when none)."""
        module_name, _, attr = self.value.partition(":")
        target: object = importlib.import_module(module_name.strip())
        for part in filter(None, attr.strip().split(".")):
            target = getattr(target, part)
        return target


def _normalise(name: str) -> str:
    return name.replace("_", "-").replace(".", "-").lower()


def _distribution(folder: str, entry: str) -> InstalledDistribution:
    stem = entry.rsplit(".", 1)[0]
    name, _, version = stem.partition("-")
    if not version:  # ``name.egg-info`` of a develop install: the version is in PKG-INFO
        version = _header(os.path.join(folder, entry, "PKG-INFO"), "Version") or "?"
    return InstalledDistribution(_normalise(name), version.split("-")[0])


def _header(path: str, key: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.strip():
                    break
                field, _, value = line.partition(":")
                if field.strip().lower() == key.lower():
                    return value.strip()
    except OSError:
        pass
    return ""


def _parse(text: str, prefix: str, dist: InstalledDistribution) -> list[InstalledEntryPoint]:
    found: list[InstalledEntryPoint] = []
    group = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
            continue
        if group != prefix and not group.startswith(prefix + "."):
            continue
        name, eq, value = line.partition("=")
        if eq:
            # ``module:attr [extra]``: extras are deprecated for entry points and ignored here.
            found.append(InstalledEntryPoint(name.strip(), value.split("[")[0].strip(), group, dist))
    return found


def _read(path: str) -> bytes | None:
    """The bytes of ``path``, or ``None`` when it cannot be opened (most distributions have no
    ``entry_points.txt``). A raw descriptor, not a text file object: this runs for every
    installed distribution, and the buffered text reader cost most of the scan (ADR 0026's sixth
    pass)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    chunks: list[bytes] = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks)


@functools.cache
def _scan(prefix: str, path: tuple[str, ...]) -> tuple[InstalledEntryPoint, ...]:
    seen: set[str] = set()
    found: list[InstalledEntryPoint] = []
    marker = f"[{prefix}".encode()
    for folder in path:
        base = folder or "."
        try:
            entries = sorted(os.listdir(base))
        except OSError:
            continue
        for entry in entries:
            if not entry.endswith(_SUFFIXES):
                continue
            # The name alone decides shadowing; the version (PKG-INFO for a develop install) is
            # read only for a distribution that has entry points in the group.
            name = _normalise(entry.rsplit(".", 1)[0].partition("-")[0])
            if name in seen:
                continue  # an earlier sys.path entry shadows this copy, as for imports
            seen.add(name)
            data = _read(os.path.join(base, entry, "entry_points.txt"))
            if data is not None and marker in data:
                found.extend(_parse(data.decode("utf-8"), prefix, _distribution(base, entry)))
    return tuple(found)


def entry_points(prefix: str) -> list[InstalledEntryPoint]:
    """Every installed entry point in group ``prefix`` or a group under it (``prefix.x``).

    Read once per ``sys.path``: installing a distribution needs a new process to be seen.
    """
    return list(_scan(prefix, tuple(sys.path)))


__all__ = ["InstalledDistribution", "InstalledEntryPoint", "entry_points"]
