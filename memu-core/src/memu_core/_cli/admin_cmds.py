"""Bodies of ``memu plugins`` and ``db`` (``doctor`` is :mod:`memu_core._cli.doctor`)."""

from __future__ import annotations

from memu_core._cli.output import print_json


def run_plugins(as_json: bool) -> None:
    """List every plugin that loaded or failed, with its distribution, version and hooks."""
    from memu_core._plugins.manager import get_plugins

    plugins = get_plugins().load()
    plugins.note_undeclared_names()
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
        print_json({"plugins": [r.as_dict() for r in plugins.report], "registered": registered})
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


def run_db(action: str, as_json: bool = False) -> None:
    """``memu db upgrade|current [--json]`` for the configured store."""
    from memu_core._compose import store_target
    from memu_core.settings import redact_dsn

    target = store_target()
    revision = target.cls.upgrade_schema(target.url) if action == "upgrade" else target.cls.schema_revision(target.url)
    if as_json:
        print_json({"store": redact_dsn(target.url), "kind": target.cls.name, "revision": revision})
    elif action == "upgrade":
        print(f"{redact_dsn(target.url)}: schema at {revision or 'n/a (this store has no migrations)'}")
    else:
        print(revision or "none (schema not created yet)")
