"""``memu stats``: what the store holds, per track and per host that wrote it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from memu_core._cli.history_run import local_engine
from memu_core._cli.output import print_json

PRE_HISTORY = "before history"
"""The actor of files written before the store kept history (migration 0002's default)."""


def host_of(actor: str) -> str:
    """The host (or tool) part of an actor: ``codex run 2026…`` → ``codex``, ``memu edit`` → ``memu``."""
    if not actor or actor == PRE_HISTORY:
        return "unknown"
    return actor.split()[0]


def run_stats(user: Mapping[str, str], as_json: bool) -> None:
    """Print files, segments, vectors, versions, size and the embedding space of the store."""
    from memu_core._compose import store_target
    from memu_core.settings import redact_dsn

    with local_engine() as engine:
        stats = engine.store.stats(dict(user))
        keep = engine.history_keep
    tracks: Counter[str] = Counter()
    hosts: Counter[str] = Counter()
    for track, actor, count in stats.files:
        tracks[track] += count
        hosts[host_of(actor)] += count
    fp = stats.fingerprint
    result = {
        "store": redact_dsn(store_target().url),
        "files": sum(tracks.values()),
        "segments": stats.segments,
        "vectors": stats.vectors,
        "resources": stats.resources,
        "versions": stats.versions,
        "history_keep": keep,
        "size_bytes": stats.size_bytes,
        "embedder": None if fp is None else {"provider": fp.provider, "model": fp.model, "dimension": fp.dimension},
        "tracks": dict(sorted(tracks.items())),
        "hosts": dict(sorted(hosts.items())),
    }
    if as_json:
        print_json(result)
        return
    print(f"store      {result['store']}")
    print(f"files      {result['files']}  ({', '.join(f'{t} {n}' for t, n in tracks.items()) or 'none'})")
    print(f"segments   {stats.segments}")
    print(f"vectors    {stats.vectors}" + ("" if fp is None else f"  ({fp.describe()})"))
    print(f"resources  {stats.resources}")
    print(f"versions   {stats.versions} past version(s) kept (MEMU_HISTORY_KEEP={keep})")
    print(f"size       {_size(stats.size_bytes)}")
    print(f"embedder   {'none (lexical only)' if fp is None else fp.describe()}")
    print("by host    " + (", ".join(f"{h} {n}" for h, n in sorted(hosts.items())) or "none"))


def _size(size: int | None) -> str:
    if size is None:
        return "unknown"
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
