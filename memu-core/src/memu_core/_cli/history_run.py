"""Bodies of ``memu show``, ``history``, ``diff`` and ``restore`` (docs/memory-management.md).

They work on the local engine (history lives in the store), opened the way every command opens
it; a cloud backend is refused with the fix. Results go to stdout (JSON with ``--json``).
"""

from __future__ import annotations

import datetime as _dt
import difflib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from memu_core._cli.output import print_json
from memu_core.errors import UsageError

if TYPE_CHECKING:
    from memu_core._engine.engine import LocalEngine
    from memu_core.types import FileVersion


@contextmanager
def local_engine() -> Iterator[LocalEngine]:
    """The configured local engine, closed afterwards; a cloud backend is a ``UsageError``."""
    from memu_core._compose import open_backend
    from memu_core._engine.engine import LocalEngine

    backend = open_backend()
    try:
        if not isinstance(backend, LocalEngine):
            raise UsageError(
                f"file history lives in the local store, but MEMU_MEMORY_MODE selects the {backend.name!r} "
                "backend; run this on the machine whose store it is (or set MEMU_MEMORY_MODE=local)"
            )
        yield backend
    finally:
        backend.close()


def render(version: FileVersion) -> str:
    """The version as a Markdown file with frontmatter (what ``memu commit --from-dir`` reads)."""
    from memu_core import _markdown

    meta = {"name": version.name, "description": version.description, "track": version.track}
    return _markdown.render(meta, version.content)


def stored(engine: LocalEngine, name: str, track: str | None, user: Mapping[str, str] | None) -> FileVersion:
    """The stored (current) version of ``name``; a one-line ``UsageError`` when there is none."""
    versions = engine.history(name, track, user=user)
    if versions and versions[0].current:
        return versions[0]
    where = f"{track}/{name}" if track else repr(name)
    if versions:
        raise UsageError(
            f"{where} was forgotten (version {versions[0].version}); `memu restore {name} --undo-forget` brings it back"
        )
    raise UsageError(f"no recall file {where} in this scope; `memu list-files` shows what exists")


def run_show(name: str, track: str | None, version: int | None, user: Mapping[str, str], as_json: bool) -> None:
    """``memu show NAME [--version V]``: the file as Markdown, or its version as JSON."""
    with local_engine() as engine:
        found = (
            engine.version(name, version, track, user=user or None)
            if version is not None
            else stored(engine, name, track, user or None)
        )
    if as_json:
        print_json(found.to_json())
        return
    text = render(found)
    print(text, end="" if text.endswith("\n") else "\n")


def _when(at: _dt.datetime) -> str:
    return at.astimezone(_dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def run_history(name: str, track: str | None, user: Mapping[str, str], as_json: bool) -> None:
    """``memu history NAME``: versions newest first, with who, when and the size change."""
    with local_engine() as engine:
        versions = engine.history(name, track, user=user or None)
    if as_json:
        print_json({"name": name, "versions": [_entry(v, versions) for v in versions]})
        return
    if not versions:
        raise UsageError(f"{name!r} has no history in this scope; `memu list-files` shows what exists")
    print(f"{versions[0].track}/{name}: {len(versions)} version(s), newest first")
    for v in versions:
        change = _size_change(v, versions)
        mark = " (current)" if v.current else ""
        print(f"  v{v.version}  {_when(v.created_at)}  {v.action:<7}  {v.actor}  {v.size} B ({change}){mark}")


def _entry(v: FileVersion, versions: list[FileVersion]) -> dict[str, object]:
    item = v.to_json()
    del item["content"]  # `memu show NAME --version V --json` has it; a long history stays short
    item["size_change"] = _size_delta(v, versions)
    return item


def _size_delta(v: FileVersion, versions: list[FileVersion]) -> int | None:
    older = [o for o in versions if o.version < v.version]
    if v.deleted:
        return -v.size
    if not older:
        return None
    before = older[0]
    return v.size - (0 if before.deleted else before.size)


def _size_change(v: FileVersion, versions: list[FileVersion]) -> str:
    delta = _size_delta(v, versions)
    return "new" if delta is None else f"{delta:+d} B"


def run_diff(
    name: str, v1: int | None, v2: int | None, track: str | None, user: Mapping[str, str], as_json: bool
) -> None:
    """``memu diff NAME [V1 [V2]]``: unified diff, default the previous version against the newest."""
    with local_engine() as engine:
        versions = engine.history(name, track, user=user or None)
        if not versions:
            raise UsageError(f"{name!r} has no history in this scope; `memu list-files` shows what exists")
        if v1 is None:
            if len(versions) < 2:
                raise UsageError(f"{versions[0].track}/{name} has one version only: nothing to compare it with")
            new, old = versions[0], versions[1]
        else:
            old = engine.version(name, v1, track, user=user or None)
            new = engine.version(name, v2, track, user=user or None) if v2 is not None else versions[0]
    lines = list(
        difflib.unified_diff(
            _lines(old),
            _lines(new),
            fromfile=f"{old.track}/{name} v{old.version}" + (" (forgotten)" if old.deleted else ""),
            tofile=f"{new.track}/{name} v{new.version}" + (" (forgotten)" if new.deleted else ""),
        )
    )
    if as_json:
        print_json({"name": name, "from": old.version, "to": new.version, "diff": "".join(lines)})
        return
    print("".join(lines), end="")


def _lines(v: FileVersion) -> list[str]:
    # A tombstone is the file's absence; compare the frontmatter too, so a description change shows.
    if v.deleted:
        return []
    text = render(v)
    return [line + "\n" for line in text.split("\n")]


def run_restore(
    name: str,
    version: int | None,
    undo_forget: bool,
    track: str | None,
    user: Mapping[str, str],
    as_json: bool,
) -> None:
    """``memu restore NAME VERSION`` or ``memu restore NAME --undo-forget``."""
    if (version is None) == (not undo_forget):
        raise UsageError("restore needs exactly one of VERSION (see `memu history NAME`) or --undo-forget")
    with local_engine() as engine:
        if undo_forget:
            done = engine.undo_forget(name, track, user=user or None)
        else:
            assert version is not None
            done = engine.restore(name, version, track, user=user or None)
    if as_json:
        print_json(done.to_json())
        return
    what = "brought back" if undo_forget else f"restored version {version} of"
    print(f"{what} {done.track}/{name}: now version {done.version}")
