"""``memu import --from-memu PATH``: bring a memU 0.10 store (``memu-cli``) across.

memU 0.10 keeps its local store in one SQLite file (``MEMU_DB``, ``./data/memu.sqlite3`` for
its bare CLI) with three tables, ``memu_recall_files``, ``memu_recall_file_segments`` and
``memu_resources``, and no schema version of its own: the version is recognised by those
tables and their columns, and anything else is refused in one line rather than read by guess.
The file is opened read-only. Every recall file (memory and skill) and every workspace resource
is committed into memu's configured store and embedded there under memu's embedder; memU's own
vectors (JSON lists, made by whatever model memU used) are not carried over. memU has no unique
key on a file's name, so a name held twice in one scope keeps its most recently updated row.

memU's per-host cursors (``<home>/hosts/<id>/.session_manifest.<id>.json``, a count of lines
per session) are where memu's bridge looks for its own, and memu's bridge resumes after memU's
count (:meth:`memu_core.interfaces.TranscriptSource.read_incremental`); when memU's home is
elsewhere (``--memu-home``), each cursor entry memu does not have yet is copied in, so the
sessions memU already mined are not mined again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memu_core.errors import UsageError

KNOWN = "memU 0.10 (memu-cli 0.10.x)"
TABLES: dict[str, frozenset[str]] = {
    "memu_recall_files": frozenset(
        {"id", "created_at", "updated_at", "name", "description", "embedding", "content", "track"}
    ),
    "memu_recall_file_segments": frozenset(
        {"id", "created_at", "updated_at", "recall_file_id", "track", "text", "embedding"}
    ),
    "memu_resources": frozenset(
        {"id", "created_at", "updated_at", "url", "local_path", "caption", "embedding", "track"}
    ),
}
"""memU 0.10's tables and the columns each must have (its default scope adds user_id, agent_id)."""
SCOPE_COLUMNS = frozenset({"user_id", "agent_id"})
MEMU_TABLES = frozenset({"files", "segments", "vectors", "meta"})
"""memu's own store, recognised to say so rather than call it an unknown memU version."""


@dataclass(slots=True)
class MemuStore:
    """What a memU store holds, grouped by scope (``(user_id, agent_id)``, ``default`` for NULL)."""

    files: dict[tuple[str, str], list[dict[str, str]]] = field(default_factory=dict)
    resources: dict[tuple[str, str], list[dict[str, str]]] = field(default_factory=dict)
    duplicates: int = 0
    """Rows dropped because a newer row of the same scope, track and name exists."""

    @property
    def file_count(self) -> int:
        """Recall files across every scope."""
        return sum(len(v) for v in self.files.values())

    @property
    def resource_count(self) -> int:
        """Resources across every scope."""
        return sum(len(v) for v in self.resources.values())


def _path_of(raw: str) -> Path:
    if raw.startswith(("postgres://", "postgresql")):
        raise UsageError(
            f"--from-memu {raw}: memu reads memU's SQLite store only; point memU at a SQLite file "
            "(MEMU_DB=/path/memu.sqlite3), commit its files there, and import that file"
        )
    if raw.startswith("sqlite:///"):
        raw = raw[len("sqlite:///") :]
    path = Path(raw).expanduser()
    if not path.is_file():
        raise UsageError(
            f"--from-memu {path}: no such file; pass memU's SQLite store (its MEMU_DB, by default "
            "./data/memu.sqlite3 where memU's `memu` ran)"
        )
    return path


def _connect(path: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.absolute()))}?mode=ro", uri=True)
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"--from-memu {path} is not a SQLite database ({exc}); pass memU's MEMU_DB file") from None
    return conn


def check_schema(conn: sqlite3.Connection, path: Path) -> set[str]:
    """The scope columns of a memU 0.10 store, or a ``UsageError`` saying what it is instead."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if tables >= MEMU_TABLES:
        raise UsageError(
            f"--from-memu {path} is a memu store, not a memU one; point MEMU_DB at it, or copy its files "
            "across with `memu export` and `memu import`"
        )
    missing = sorted(set(TABLES) - tables)
    if missing:
        raise UsageError(
            f"--from-memu {path} is not a store of {KNOWN}: it has no {', '.join(missing)} table; "
            "pass the file memU's MEMU_DB names, or upgrade memU to 0.10 and let it open the store once"
        )
    scope: set[str] | None = None
    for table, needed in TABLES.items():
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        lacking = sorted(needed - columns)
        unknown = sorted(columns - needed - SCOPE_COLUMNS)
        if lacking or unknown:
            what = f"lacks {', '.join(lacking)}" if lacking else f"has unknown column(s) {', '.join(unknown)}"
            raise UsageError(
                f"--from-memu {path}: table {table} {what}, so this is not the schema of {KNOWN}; "
                "memu cannot read another memU schema version safely (nothing was imported)"
            )
        here = columns & SCOPE_COLUMNS
        scope = here if scope is None else scope & here
    return scope or set()


def _scope_of(row: sqlite3.Row, scope_columns: set[str]) -> tuple[str, str]:
    values = [(row[c] if c in scope_columns else None) for c in ("user_id", "agent_id")]
    return (str(values[0] or "default"), str(values[1] or "default"))


def read_store(raw: str) -> MemuStore:
    """Every recall file and workspace resource of the memU store at ``raw`` (path or sqlite URL)."""
    from memu_core.names import name_problem, show

    path = _path_of(raw)
    conn = _connect(path)
    conn.row_factory = sqlite3.Row
    try:
        scope_columns = check_schema(conn, path)
        extra = "".join(f", {c}" for c in sorted(scope_columns))
        out = MemuStore()
        chosen: dict[tuple[str, str, str, str], sqlite3.Row] = {}
        for row in conn.execute(
            f"SELECT id, name, description, content, track, updated_at{extra} FROM memu_recall_files "
            "ORDER BY updated_at, id"
        ):
            user, agent = _scope_of(row, scope_columns)
            key = (user, agent, (row["track"] or "memory").strip() or "memory", (row["name"] or "").strip())
            if key in chosen:
                out.duplicates += 1
            chosen[key] = row  # ordered by updated_at: the newest row of a name wins
        problems: list[str] = []
        for (user, agent, track, name), row in sorted(chosen.items()):
            problem = name_problem(name)
            if problem is not None:
                problems.append(f"recall file id {row['id']} ({track}): the name {show(row['name'])} {problem}")
                continue
            if track not in ("memory", "skill"):
                problems.append(f"recall file {name!r} (id {row['id']}) is on track {track!r}, which memu has not")
                continue
            out.files.setdefault((user, agent), []).append(
                {
                    "name": name,
                    "track": track,
                    "description": row["description"] or "",
                    "content": row["content"] or "",
                }
            )
        if problems:
            raise UsageError(
                f"--from-memu {path}: {len(problems)} recall file(s) memu cannot store ({'; '.join(problems[:5])}); "
                "rename or move them with memU's `memu commit` and import again (nothing was imported)"
            )
        for row in conn.execute(f"SELECT url, caption, track{extra} FROM memu_resources ORDER BY updated_at, id"):
            if row["track"] not in (None, "workspace") or not (row["url"] or "").strip():
                continue
            out.resources.setdefault(_scope_of(row, scope_columns), []).append(
                {"path": row["url"].strip(), "description": row["caption"] or ""}
            )
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"--from-memu {path} could not be read ({exc}); is memU writing to it right now?") from None
    finally:
        conn.close()
    return out


def _cursor_files(home: Path) -> Iterator[tuple[str, Path]]:
    """``(host id, promoted cursor file)`` of every host memU ran under ``home``."""
    hosts = home / "hosts"
    if hosts.is_dir():
        for tree in sorted(hosts.iterdir()):
            path = tree / f".session_manifest.{tree.name}.json"
            if path.is_file():
                yield tree.name, path
    # Before memU gave each host its own tree, Codex kept its cursor at the root.
    legacy = home / ".session_manifest.codex.json"
    if legacy.is_file():
        yield "codex", legacy


def carry_cursors(home: Path) -> list[str]:
    """Copy memU's per-host cursor entries that memu lacks into memu's host trees; one line each."""
    from memu_core import _layout
    from memu_core._atomic import read_json, write_json

    lines: list[str] = []
    for host, source in _cursor_files(home.expanduser()):
        target = _layout.host_tree(host) / f".session_manifest.{host}.json"
        theirs = read_json(source, None)
        if not isinstance(theirs, dict):
            lines.append(f"cursor {host}: {source} is not a JSON object; left alone")
            continue
        if source.resolve() == target.resolve():
            lines.append(f"cursor {host}: {len(theirs)} session(s) already in memu's place; kept as they are")
            continue
        ours = read_json(target, {})
        ours = ours if isinstance(ours, dict) else {}
        new = {key: entry for key, entry in theirs.items() if key not in ours and isinstance(entry, dict)}
        if new:
            _layout.ensure_private_dir(target.parent)
            write_json(target, {**ours, **new}, compact=True)
        lines.append(
            f"cursor {host}: {len(new)} session(s) brought over from memU, {len(theirs) - len(new)} already known"
        )
    return lines


def run_from_memu(raw: Path, *, memu_home: Path | None, where: dict[str, str], as_json: bool) -> None:
    """Import the memU store at ``raw``, scope by scope, then carry memU's cursors over."""
    from memu_core._cli.import_cmd import ImportSet, commit_set, report

    store = read_store(str(raw))
    total: dict[str, Any] = {"recall_files": [], "resources": [], "stats": {"files_written": 0, "texts_embedded": 0}}
    scopes = sorted(set(store.files) | set(store.resources))
    for user, agent in scopes:
        scope = {k: v for k, v in (("user_id", user), ("agent_id", agent)) if v != "default"}
        if where:
            scope = dict(where)  # the user asked for one scope: everything lands there
        batch = ImportSet(
            files=store.files.get((user, agent), []),
            resources=store.resources.get((user, agent), []),
            scope=scope,
            label=f"memU store {raw} (user_id={user} agent_id={agent})",
        )
        result = commit_set(batch, prune=False)
        total["recall_files"].extend(result["recall_files"])
        total["resources"].extend(result["resources"])
        for key in ("files_written", "texts_embedded"):
            total["stats"][key] += int((result.get("stats") or {}).get(key, 0))
    home = memu_home if memu_home is not None else _default_home()
    extra = carry_cursors(home)
    if store.duplicates:
        extra.insert(0, f"{store.duplicates} older duplicate row(s) in memU were passed over (the newest kept)")
    report(total, store.file_count, as_json, extra)


def _default_home() -> Path:
    from memu_core import _layout

    return _layout.home()
