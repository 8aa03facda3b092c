"""Bodies of ``memu plugins install|uninstall|available``: pip run by memu's own interpreter, and
what the plugins registered before and after.

These commands repair an install, so this process never imports a plugin: pip runs in a child
process, and what the plugins register is read by another child (:func:`snapshot`), where a
broken plugin is a load error in the answer instead of a crash here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any, TextIO

from memu_core.errors import MemuError, UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from memu_core._plugins.registry import Registry

SNAPSHOT_TIMEOUT = 300.0
"""Seconds the child that loads every plugin may take (a plugin may import a large SDK)."""

KINDS = ("stores", "embedders", "backends", "hosts", "event sinks", "template resolvers")
_SNAPSHOT_CODE = "from memu_core._cli.plugins_cmds import print_snapshot; print_snapshot()"


def snapshot() -> dict[str, Any]:
    """Every plugin (name → distribution, version, hooks, error) and what each kind of registry
    holds (name → distribution), with every plugin loaded. Runs in the child process."""
    from memu_core._plugins.manager import get_plugins

    plugins = get_plugins().load()
    registries: tuple[Callable[[], Registry[Any]], ...] = (
        plugins.stores,
        plugins.embedders,
        plugins.backends,
        plugins.hosts,
        plugins.event_sinks,
        plugins.template_resolvers,
    )
    registered: dict[str, dict[str, str]] = {}
    for kind, registry_of in zip(KINDS, registries, strict=True):
        try:
            registry = registry_of()
            registered[kind] = {name: registry.distribution(name) for name in registry}
        except Exception as exc:  # a duplicate name: reported, as `memu plugins` does
            registered[kind] = {f"error: {exc}": ""}
    return {
        "plugins": {
            record.name: {
                "distribution": record.distribution,
                "version": record.version,
                "hooks": list(record.hooks),
                "error": record.error,
            }
            for record in plugins.report
        },
        "registered": registered,
    }


def print_snapshot() -> None:
    sys.stdout.write(json.dumps(snapshot()) + "\n")


def _snapshot_in_child() -> tuple[dict[str, Any] | None, str]:
    """:func:`snapshot` from a fresh interpreter; ``(None, why)`` when that child fails."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _SNAPSHOT_CODE],
            capture_output=True,
            text=True,
            timeout=SNAPSHOT_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"loading the plugins failed: {exc}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return None, f"loading the plugins failed: {last}"
    try:
        return json.loads(done.stdout.strip().splitlines()[-1]), ""
    except (ValueError, IndexError):
        return None, "loading the plugins printed no answer"


def changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What differs between two snapshots: plugins added, removed and newly failing, and the
    names each kind gained or lost."""
    old, new = before["plugins"], after["plugins"]
    added = {name: new[name] for name in new if name not in old or old[name]["version"] != new[name]["version"]}
    removed = {name: old[name] for name in old if name not in new}
    failing = {
        name: record["error"]
        for name, record in new.items()
        if record["error"] and (name not in old or old[name]["error"] != record["error"])
    }
    gained: dict[str, list[str]] = {}
    lost: dict[str, list[str]] = {}
    for kind in KINDS:
        was = before["registered"].get(kind, {})
        now = after["registered"].get(kind, {})
        if plus := sorted(set(now) - set(was)):
            gained[kind] = plus
        if minus := sorted(set(was) - set(now)):
            lost[kind] = minus
    return {"added": added, "removed": removed, "load_errors": failing, "registered": gained, "unregistered": lost}


def _pip(args: list[str]) -> None:
    """``python -m pip ARGS`` with memu's interpreter, its output on stderr (stdout is the report)."""
    try:
        code = subprocess.run([sys.executable, "-m", "pip", *args], stdout=sys.stderr).returncode
    except OSError as exc:
        raise MemuError(f"could not run pip with {sys.executable}: {exc}") from exc
    if code != 0:
        if code == 1 and _has_no_pip():
            raise MemuError(f"{sys.executable} has no pip: run `{sys.executable} -m ensurepip` and try again")
        raise MemuError(f"pip {args[0]} failed (exit code {code}); pip's output is above")


def _has_no_pip() -> bool:
    import importlib.util

    return importlib.util.find_spec("pip") is None


def _report(verb: str, diff: dict[str, Any], why: str, out: TextIO) -> None:
    if why:
        out.write(f"{verb}; {why}: run `memu plugins` to see what is registered\n")
        return
    for name, record in sorted(diff["added"].items()):
        hooks = ", ".join(record["hooks"]) or "none"
        out.write(f"added plugin {name} ({record['distribution']} {record['version']}), hooks: {hooks}\n")
    for name, record in sorted(diff["removed"].items()):
        out.write(f"removed plugin {name} ({record['distribution']} {record['version']})\n")
    for kind, names in diff["registered"].items():
        out.write(f"{kind}: + {', '.join(names)}\n")
    for kind, names in diff["unregistered"].items():
        out.write(f"{kind}: - {', '.join(names)}\n")
    for name, error in sorted(diff["load_errors"].items()):
        out.write(f"LOAD ERROR {name}: {error}\n")
    if not any(diff[key] for key in ("added", "removed", "registered", "unregistered", "load_errors")):
        out.write(f"{verb}; no memu plugin changed (no entry point in the group `memu` came or went)\n")


def _run(verb: str, pip_args: list[str], as_json: bool) -> int:
    before, why = _snapshot_in_child()
    _pip(pip_args)
    after, why_after = _snapshot_in_child() if before is not None else (None, why)
    diff = changes(before, after) if before is not None and after is not None else {}
    why = why or why_after
    if as_json:
        from memu_core._cli.output import print_json

        print_json({"ok": True, "pip": pip_args, "error": why or None, **diff})
    else:
        _report(verb, diff, why, sys.stdout)
    return 1 if diff.get("load_errors") else 0


def run_install(specs: list[str], *, upgrade: bool, editable: bool, as_json: bool) -> int:
    """``memu plugins install SPEC...``: a distribution name (with extras or a version), a path
    to a project, or a wheel, installed into memu's environment; prints what registered."""
    if not specs:
        raise UsageError("name a distribution, a project folder or a wheel to install")
    if editable and len(specs) != 1:
        raise UsageError("--editable takes one project folder")
    args = ["install", *(["--upgrade"] if upgrade else []), *(["--editable"] if editable else []), *specs]
    return _run("installed", args, as_json)


def run_uninstall(names: list[str], *, as_json: bool) -> int:
    """``memu plugins uninstall NAME...``: pip uninstalls each distribution; prints what left."""
    if not names:
        raise UsageError("name a distribution to uninstall")
    if any(name.lower().replace("_", "-") == "memu-core" for name in names):
        raise UsageError("memu-core is memu itself: remove it with pip, not with memu")
    return _run("uninstalled", ["uninstall", "--yes", *names], as_json)


def installed_version(distribution: str) -> str | None:
    """The version of ``distribution`` installed here (its metadata only; no code runs)."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def run_available(as_json: bool) -> None:
    """``memu plugins available``: the catalogue of memu distributions, each marked installed
    (with its version) or not, with the line that installs it."""
    from memu_core._plugins.catalogue import CATALOGUE

    rows: list[dict[str, Any]] = [
        {
            "distribution": entry.distribution,
            "installed": installed_version(entry.distribution),
            "summary": entry.summary,
            "registers": list(entry.registers),
            "install": f"memu plugins install {entry.distribution}{entry.extras}",
        }
        for entry in CATALOGUE
    ]
    if as_json:
        from memu_core._cli.output import print_json

        print_json({"available": rows})
        return
    width = max(len(row["distribution"]) for row in rows)
    for row in rows:
        mark = f"installed {row['installed']}" if row["installed"] else "-"
        out = f"{row['distribution']:<{width}}  {mark:<16}  {row['summary']}  [{', '.join(row['registers'])}]"
        sys.stdout.write(out + "\n")
