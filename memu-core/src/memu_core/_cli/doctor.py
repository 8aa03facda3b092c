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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
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


def run(checks: Sequence[Check], ctx: Context, out: TextIO, err: TextIO) -> int:
    """Run ``checks`` in order, print their rows, return the exit code (0, or 1 on a failure)."""
    failed: list[str] = []
    warned = 0
    try:
        for check in checks:
            if ctx.stop:
                break
            for row in _rows(check, ctx):
                out.write(row.render())
                out.flush()
                warned += row.status == "warn"
                if row.status == "fail" and row.label not in failed:
                    failed.append(row.label)
    finally:
        for close in reversed(ctx.closers):
            with contextlib.suppress(Exception):  # tidying up; the verdict is already printed
                close()
    if failed:
        names = ", ".join(failed)
        err.write(f"error: {len(failed)} check(s) failed ({names}); the FAIL rows above say how to fix them\n")
        return 1
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
    """The local store opens; which embedding space its vectors are in."""
    if not ctx.local:
        return
    from memu_core._compose import open_store

    try:
        store = open_store(ctx.settings)
    except Exception as exc:
        ctx.stop = True
        detail = str(exc) if isinstance(exc, MemuError) else f"{type(exc).__name__}: {exc}"
        yield Row("store", f"cannot open: {detail}", "fail", f"point MEMU_DB at a writable place; {ctx.config_fix()}")
        return
    ctx.store = store
    ctx.closers.append(store.close)
    ctx.stored_space = store.fingerprint()
    yield Row("vectors", ctx.stored_space.describe() if ctx.stored_space else "none stored yet")


def check_embedder(ctx: Context) -> Iterator[Row]:
    """The configured embedder builds, embeds, and matches the space the store's vectors are in."""
    if not ctx.local:
        return
    from memu_core._compose import embedder_factory

    embedder: Embedder | None = embedder_factory(ctx.settings)()
    if embedder is None:
        yield Row("embedder", "none (lexical search only; set MEMU_EMBED_PROVIDER=local for dense search)")
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


CORE: tuple[Check, ...] = (check_config, check_plugins, check_store, check_embedder, check_retrieval)
"""What every doctor checks, in order: configuration, plugins, store, embedder, retrieval."""


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
