"""``doctor``: one set of checks and one output for ``memu doctor`` and every ``memu-<host> doctor``.

A check is a function of the shared :class:`Context` returning rows; the runner prints each row
as it comes. ``memu doctor`` runs :data:`CORE`; a host binary runs the same list plus its own
checks (:mod:`memu_core._cli.host.doctor`), built the same way.

Output, on stdout: one row per finding, a label then what was found. A problem reads
``label     FAIL  what is wrong`` (``WARN`` when memu still works) with a ``fix:`` line under
it. The last line is ``all checks passed`` when nothing failed (warnings do not fail); otherwise
one ``error:`` line on stderr names the failed checks and the exit code is 1.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from memu_core.errors import ConfigError, MemuError

if TYPE_CHECKING:
    from memu_core.interfaces import Embedder, MemoryStore
    from memu_core.types import Fingerprint

SMOKE_QUERY = "memu doctor check"
WIDTH = 12

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True, slots=True)
class Row:
    """One finding: a label, what was found and, for a problem, its fix."""

    label: str
    detail: str
    status: Status = "ok"
    fix: str = ""

    def render(self) -> str:
        """The printed line(s)."""
        mark = {"ok": "", "warn": "WARN  ", "fail": "FAIL  "}[self.status]
        text = f"{self.label:<{WIDTH}}{mark}{self.detail}\n"
        return text + (f"{'':<{WIDTH}}fix: {self.fix}\n" if self.fix else "")


@dataclass(slots=True)
class Context:
    """What the checks share: the binary's name (for fixes) and what earlier checks found."""

    binary: str
    settings: Any = None
    store: MemoryStore | None = None
    stored_space: Fingerprint | None = None
    stop: bool = False
    """Set by a check whose failure leaves the later ones nothing to check."""
    closers: list[Callable[[], None]] = field(default_factory=list)

    @property
    def local(self) -> bool:
        """Whether the configured memory is the local engine."""
        return str(getattr(self.settings, "memory_mode", "local") or "local") == "local"

    def config_fix(self) -> str:
        """How to repair the configuration, in this binary's words."""
        return f"run `{self.binary} config show`, then `{self.binary} config --local --db <path>` or `--cloud`"


Check = Callable[[Context], Iterable[Row]]
"""A check: the rows it found. It may set ``Context.stop`` after a failure others depend on."""


def run(checks: Sequence[Check], ctx: Context, out: TextIO, err: TextIO, *, as_json: bool = False) -> int:
    """Run ``checks`` in order, print their rows, return the exit code (0, or 1 on a failure).

    ``as_json`` prints one JSON object at the end instead (``checks``: label, status, detail,
    fix; ``ok``); the exit code is the same."""
    failed: list[str] = []
    warned = 0
    rows: list[dict[str, str]] = []
    try:
        for check in checks:
            if ctx.stop:
                break
            for row in _rows(check, ctx):
                if as_json:
                    rows.append({"label": row.label, "status": row.status, "detail": row.detail, "fix": row.fix})
                    continue
                out.write(row.render())
                out.flush()
                warned += row.status == "warn"
                if row.status == "fail" and row.label not in failed:
                    failed.append(row.label)
    finally:
        for close in reversed(ctx.closers):
            with contextlib.suppress(Exception):  # tidying up; the verdict is already printed
                close()
    if as_json:
        import json

        out.write(json.dumps({"checks": rows, "ok": not failed}, indent=2, ensure_ascii=False) + "\n")
    if failed:
        names = ", ".join(failed)
        err.write(f"error: {len(failed)} check(s) failed ({names}); the FAIL rows above say how to fix them\n")
        return 1
    if as_json:
        return 0
    out.write("all checks passed" + (f" ({warned} warning(s) above)" if warned else "") + "\n")
    return 0


def _rows(check: Check, ctx: Context) -> Iterator[Row]:
    # A check that raises is a failed check, not a crashed doctor: the rows after it still help.
    label = str(getattr(check, "__name__", "check")).removeprefix("check_")
    try:
        yield from check(ctx)
    except MemuError as exc:
        yield Row(label, str(exc), "fail")
    except Exception as exc:
        yield Row(label, f"{type(exc).__name__}: {exc}", "fail")


# -- the core checks ---------------------------------------------------------------------------
def check_config(ctx: Context) -> Iterator[Row]:
    """Where the configuration lives, and whether it validates."""
    from memu_core._config.resolve import config_path
    from memu_core.settings import load_settings

    yield Row("config", str(config_path()))
    try:
        ctx.settings = load_settings()
    except MemuError as exc:
        ctx.stop = True
        yield Row("config", str(exc), "fail", ctx.config_fix())
        return
    yield Row("mode", str(ctx.settings.memory_mode))
    if ctx.local:
        from memu_core.settings import redact_dsn

        yield Row("store", redact_dsn(str(ctx.settings.db)))
    else:
        yield Row("endpoint", str(getattr(ctx.settings, "cloud_base_url", "") or "unset"))


def check_plugins(ctx: Context) -> Iterator[Row]:
    """Every installed plugin loads (a broken one is reported, never fatal to memu)."""
    from memu_core._plugins.manager import get_plugins

    report = get_plugins().load().report
    broken = [r for r in report if r.error]
    for record in broken:
        yield Row(
            "plugin",
            f"{record.name} ({record.distribution}): {record.error}",
            "fail",
            f"reinstall {record.distribution}, or uninstall it; `memu plugins` lists what loaded",
        )
    if not broken:
        yield Row("plugins", f"{len(report)} loaded")


def check_store(ctx: Context) -> Iterator[Row]:
    """The local store opens (and, for a SQLite file, is writable, sound and at the current
    schema: what a scheduled run needs); which embedding space its vectors are in."""
    if not ctx.local:
        return
    from memu_core._compose import store_target

    target = store_target(ctx.settings)
    path = _sqlite_path(target)
    before = _revision_before_open(path)
    try:
        store = target.open()
    except Exception as exc:
        ctx.stop = True
        detail = str(exc) if isinstance(exc, MemuError) else f"{type(exc).__name__}: {exc}"
        yield Row("store", f"cannot open: {detail}", "fail", f"point MEMU_DB at a writable place; {ctx.config_fix()}")
        return
    ctx.store = store
    ctx.closers.append(store.close)
    if path is not None:
        yield from _sqlite_rows(ctx, path, before)
    ctx.stored_space = store.fingerprint()
    yield Row("vectors", ctx.stored_space.describe() if ctx.stored_space else "none stored yet")


def _sqlite_path(target: Any) -> Path | None:
    """The store's file when it is a SQLite file (the file checks below are SQLite's)."""
    if getattr(target.cls, "name", "") != "sqlite":
        return None
    from memu_core._stores.sqlite.connection import path_from_url

    return path_from_url(target.url)


def _revision_before_open(path: Path | None) -> str | None:
    # Read before opening: opening a store whose schema is behind upgrades it.
    if path is None or not path.exists():
        return None
    from memu_core._stores.sqlite import health

    try:
        return health.revision(path)
    except Exception:  # the open below reports what is wrong with the file
        return None


def _sqlite_rows(ctx: Context, path: Path, before: str | None) -> Iterator[Row]:
    from memu_core._stores.sqlite import health

    problem = health.write_problem(path)
    if problem is None:
        yield Row("writable", "yes")
    elif problem[0] == "locked":
        yield Row("writable", problem[1], "warn", "retry when the other memu command has finished")
    else:
        yield Row(
            "writable",
            f"no: {problem[1]}; scheduled runs cannot commit",
            "fail",
            f"give this user write access to the store file and its folder (chmod u+w {shlex.quote(str(path))} "
            f"{shlex.quote(str(path.parent))}), or point MEMU_DB at a writable place",
        )
    found = health.integrity_problems(path)
    if found:
        yield Row(
            "integrity",
            f"PRAGMA quick_check found damage: {'; '.join(found)}",
            "fail",
            f"move {shlex.quote(str(path))} aside, restore it from a backup or rebuild it "
            "(commit your recall files again; each host's next run re-bridges its sessions)",
        )
    else:
        yield Row("integrity", "ok (quick check)")
    if before is not None and before != health.HEAD_REVISION:
        yield Row("schema", f"{health.HEAD_REVISION} (upgraded from {before} on open)")
    else:
        yield Row("schema", f"{health.HEAD_REVISION} (current)")


def check_embedder(ctx: Context) -> Iterator[Row]:
    """The configured embedder is installed, builds, embeds, and matches the space the store's
    vectors are in."""
    if not ctx.local:
        return
    from memu_core._compose import embedder_factory
    from memu_core._engine.embedders import INSTALL_HINTS, LITELLM, LOCAL, choose
    from memu_core._plugins.manager import get_plugins
    from memu_core._plugins.registry import EMBEDDERS

    registry = get_plugins().lookup(EMBEDDERS)
    try:
        choice = choose(ctx.settings, registry)
    except ConfigError as exc:  # a provider is configured whose distribution is not installed
        wanted = LOCAL if "memu-embed-local" in str(exc) else LITELLM
        yield Row("embedder", str(exc), "fail", f"{INSTALL_HINTS[wanted]}, or set MEMU_EMBED_PROVIDER=none")
        return
    if choice.embedder is None:
        why = choice.reason.removesuffix(": lexical retrieval only")
        if choice.provider is not None:  # lexical-only on purpose
            yield Row("embedder", f"none (lexical search only; {why})")
        elif LOCAL in registry:
            yield Row("embedder", f"none (lexical search only; {why})", "warn", "see docs/embeddings.md for the model")
        else:
            yield Row(
                "embedder",
                f"none (lexical search only; {why})",
                "warn",
                f"for dense search: {INSTALL_HINTS[LOCAL]} (it is then used by default)",
            )
        return
    try:
        embedder: Embedder | None = embedder_factory(ctx.settings)()
    except ConfigError as exc:
        hint = INSTALL_HINTS.get(choice.embedder, "")
        fix = hint or "install the embedder's distribution, or set MEMU_EMBED_PROVIDER=none for lexical search"
        yield Row("embedder", f"not installed: {exc}", "fail", fix)
        return
    if embedder is None:
        yield Row("embedder", f"none ({choice.reason})")
        return
    close = getattr(embedder, "close", None)
    if callable(close):
        ctx.closers.append(close)
    space = embedder.fingerprint
    yield Row("embedder", space.describe())
    vectors = embedder.embed([SMOKE_QUERY])
    yield Row("embedding", f"ok ({len(vectors[0])} dims)")
    if ctx.stored_space is not None and ctx.stored_space != space:
        yield Row(
            "space",
            f"the store's vectors are {ctx.stored_space.describe()}, the embedder makes {space.describe()}",
            "fail",
            "run `memu reindex` (or set MEMU_EMBED_PROVIDER back)",
        )


def check_permissions(ctx: Context) -> Iterator[Row]:
    """``~/.memu`` keeps memory private: folders 0700, files 0600 (the store, config, runs)."""
    from memu_core import _layout

    root = _layout.home()
    if not root.is_dir():
        return
    loose = _loose_modes(root)
    if not loose:
        yield Row("permissions", f"{root} private (folders 0700, files 0600)")
        return
    shown = ", ".join(f"{p} ({mode:o})" for p, mode in loose[:PERMISSION_EXAMPLES])
    more = f" and {len(loose) - PERMISSION_EXAMPLES} more" if len(loose) > PERMISSION_EXAMPLES else ""
    quoted = shlex.quote(str(root))
    yield Row(
        "permissions",
        f"other users can read or enter: {shown}{more}",
        "warn",
        f"chmod -R go-rwx {quoted}",
    )


PERMISSION_EXAMPLES = 3
"""How many too-open paths the permissions row names."""
PERMISSION_SCAN_LIMIT = 20_000
"""At most this many entries under ``~/.memu`` are looked at (host mirrors can be large)."""


def _loose_modes(root: Path) -> list[tuple[Path, int]]:
    """Paths under ``root`` (itself included) that group or others can access."""
    found: list[tuple[Path, int]] = []
    seen = 0
    for folder, dirs, files in os.walk(root):
        for entry in (folder, *(os.path.join(folder, f) for f in files)):
            seen += 1
            if seen > PERMISSION_SCAN_LIMIT:
                return found
            try:
                info = os.lstat(entry)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode) or stat.S_ISSOCK(info.st_mode):
                continue  # a link's own mode means nothing; sockets are bound 0600 by memu
            mode = stat.S_IMODE(info.st_mode)
            if mode & 0o077:
                found.append((Path(entry), mode))
        dirs.sort()
    return found


def check_retrieval(ctx: Context) -> Iterator[Row]:
    """The retrieval every agent turn runs answers a test query through the configured backend."""
    from memu_core._compose import open_backend

    try:
        backend = open_backend(ctx.settings)
        ctx.closers.append(backend.close)
        result = backend.progressive_retrieve(SMOKE_QUERY)
    except ConfigError as exc:
        yield Row("retrieval", str(exc), "fail", ctx.config_fix())
        return
    except Exception as exc:
        detail = str(exc) if isinstance(exc, MemuError) else f"{type(exc).__name__}: {exc}"
        fix = _transport_hint(exc) or f"rerun with -v for the traceback; {ctx.config_fix()}"
        yield Row("retrieval", f"the test query failed: {detail}", "fail", fix)
        return
    hits = sum(len(result.get(k) or []) for k in ("segments", "files", "resources"))
    yield Row("search", str(result.get("mode") or "unknown"))
    yield Row("retrieval", f"ok ({hits} hit(s) for a test query; 0 is fine on a new store)")


CORE: tuple[Check, ...] = (
    check_config,
    check_plugins,
    check_store,
    check_embedder,
    check_retrieval,
    check_permissions,
)
"""What every doctor checks, in order: configuration, plugins, store (writable, integrity,
schema), embedder, retrieval, and the privacy of ``~/.memu``."""


_TRANSPORT = ("502", "503", "504", "timeout", "timed out", "connect", "unreachable", "proxy")


def _transport_hint(exc: BaseException) -> str:
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        text = f"{type(link).__name__} {link}".lower()
        if any(word in text for word in _TRANSPORT):
            return (
                "this looks like a network problem: check that the server answers, and if a proxy is "
                "configured for a non-loopback address of this machine, add that address to NO_PROXY"
            )
        link = link.__cause__ or link.__context__
    return ""
