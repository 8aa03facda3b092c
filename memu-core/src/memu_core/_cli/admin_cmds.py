"""Bodies of ``memu plugins``, ``doctor`` and ``db``."""

from __future__ import annotations

import sys
from dataclasses import asdict
from typing import Any

from memu_core._cli.output import print_json


def run_plugins(as_json: bool) -> None:
    """List every plugin that loaded or failed, with its distribution, version and hooks."""
    from memu_core._plugins.manager import get_plugins

    plugins = get_plugins().load()
    registered: dict[str, list[str]] = {}
    for kind, registry_of in (
        ("stores", plugins.stores),
        ("embedders", plugins.embedders),
        ("backends", plugins.backends),
        ("hosts", plugins.hosts),
        ("event sinks", plugins.event_sinks),
        ("template resolvers", plugins.template_resolvers),
    ):
        try:
            registered[kind] = sorted(registry_of())
        except Exception as exc:  # a duplicate name is reported, not fatal, here
            registered[kind] = [f"error: {exc}"]
    if as_json:
        print_json({"plugins": [asdict(r) for r in plugins.report], "registered": registered})
        return
    for record in plugins.report:
        origin = "built-in" if record.builtin else "entry point"
        print(f"{record.name}  ({record.distribution} {record.version}, {origin})")
        if record.hooks:
            print(f"    hooks: {', '.join(record.hooks)}")
        if record.error:
            print(f"    LOAD ERROR: {record.error}")
        for note in record.notes:
            print(f"    note: {note}")
    for kind, names in registered.items():
        print(f"{kind}: {', '.join(names) or 'none'}")


def _check(label: str, fn: Any, problems: list[str]) -> Any:
    from memu_core.errors import MemuError

    try:
        value = fn()
    except MemuError as exc:
        print(f"{label:<10}FAIL  {exc}")
        problems.append(label)
        return None
    except Exception as exc:
        print(f"{label:<10}FAIL  {type(exc).__name__}: {exc}")
        problems.append(label)
        return None
    return value


def run_doctor() -> int:
    """Check each layer in order and say what is wrong with it; exit 1 on any failure."""
    from memu_core._plugins.manager import get_plugins
    from memu_core.settings import load_settings, redact_dsn

    problems: list[str] = []
    settings = _check("config", load_settings, problems)
    if settings is None:
        return 1
    from memu_core._config.resolve import config_path

    print(f"{'config':<10}{config_path()}")
    print(f"{'mode':<10}{settings.memory_mode}")
    broken = [r for r in get_plugins().load().report if r.error]
    for record in broken:
        print(f"{'plugin':<10}FAIL  {record.name} ({record.distribution}): {record.error}")
        problems.append("plugin")
    if settings.memory_mode != "local":
        from memu_core.runtime import open_backend

        backend = _check("backend", lambda: open_backend(settings), problems)
        if backend is not None:
            _check("retrieve", lambda: backend.progressive_retrieve("memu doctor check"), problems)
            print(f"{'backend':<10}{settings.memory_mode} ok")
        return 1 if problems else 0

    from memu_core._engine.engine import LocalEngine
    from memu_core.runtime import embedder_factory, open_store

    print(f"{'store':<10}{redact_dsn(str(settings.db))}")
    store = _check("store", lambda: open_store(settings), problems)
    if store is None:
        return 1
    files, _ = store.list_files({}, None, 1)
    stored_fp = store.fingerprint()
    print(f"{'vectors':<10}{stored_fp.describe() if stored_fp else 'none (lexical only so far)'}")
    embedder = _check("embedder", embedder_factory(settings), problems)
    if embedder is not None:
        fp = _check("embedder", lambda: embedder.fingerprint, problems)
        if fp is not None:
            print(f"{'embedder':<10}{fp.describe()}")
            vec = _check("embedding", lambda: embedder.embed(["memu doctor check"]), problems)
            if vec is not None:
                print(f"{'embedding':<10}ok ({len(vec[0])} dims)")
            if stored_fp is not None and stored_fp != fp:
                print(
                    f"{'space':<10}FAIL  store {stored_fp.describe()} != embedder {fp.describe()}; run `memu reindex`"
                )
                problems.append("space")
    elif "embedder" not in problems:
        print(f"{'embedder':<10}none (lexical search only; set MEMU_EMBED_PROVIDER=local for dense)")
    engine = LocalEngine(store, embedder=embedder)
    result = _check("retrieve", lambda: engine.progressive_retrieve("memu doctor check"), problems)
    if result is not None:
        print(
            f"{'retrieve':<10}ok ({result['mode']}, {len(result['files'])} file(s) for a test query; store "
            f"{'empty' if not files else 'has files'})"
        )
    engine.close()
    if problems:
        print(f"{len(problems)} problem(s) found", file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


def run_db(action: str) -> None:
    """``memu db upgrade|current`` for the configured store."""
    from pathlib import Path

    from memu_core.runtime import store_class_for
    from memu_core.settings import load_settings, redact_dsn

    url = str(load_settings().db)
    cls = store_class_for(url)
    if "://" not in url:
        url = str(Path(url).expanduser())
    if action == "upgrade":
        revision = cls.upgrade_schema(url)
        print(f"{redact_dsn(url)}: schema at {revision or 'n/a (this store has no migrations)'}")
    else:
        revision = cls.schema_revision(url)
        print(revision or "none (schema not created yet)")
