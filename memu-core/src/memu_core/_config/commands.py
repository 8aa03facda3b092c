"""The ``init`` and ``config`` verbs every memu binary carries.

Two guards protect the store a machine already writes to. The *flip guard* refuses to switch
between local and cloud memory when the current backend has something to lose; the *identity
guard* refuses to change ``MEMU_DB``, ``MEMU_EMBED_PROVIDER`` or ``MEMU_EMBED_MODEL`` once set,
because vectors written under one identity are invisible under another. Both read the config
file only, never the process environment: a key exported in one shell must not decide what a
shared file may become. ``--force`` skips both; ``init`` never refuses.

A refusal *returns* :data:`REFUSED` rather than raising, so it is an answer, not an error event.
Output rows are ``f"{label:<10}{value}"``; secrets are only ever shown as ``set``/``unset``.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from memu_core import _layout
from memu_core._config import dotenv, resolve
from memu_core._config.defaults import DEFAULT_CLOUD_BASE_URL
from memu_core._config.dsn import normalise_db, redact_dsn
from memu_core._layout import DEFAULT_DB, HOME_DIR
from memu_core.errors import MemuError, UsageError

if TYPE_CHECKING:
    import typer

REFUSED = 2
"""Exit code of a guard refusal or of ``config`` without ``--local``/``--cloud``."""

MODE = "MEMU_MEMORY_MODE"
DB = "MEMU_DB"
EMBED_PROVIDER = "MEMU_EMBED_PROVIDER"
LLM_PROVIDER = "MEMU_LLM_PROVIDER"
EMBED_MODEL = "MEMU_EMBED_MODEL"
API_KEY = "MEMU_API_KEY"
BASE_URL = "MEMU_BASE_URL"
CLOUD_API_KEY = "MEMU_CLOUD_API_KEY"
CLOUD_BASE_URL = "MEMU_CLOUD_BASE_URL"
CLIENT_ID = "MEMU_CLIENT_ID"
TELEMETRY = "MEMU_TELEMETRY"
USER_ID = "MEMU_USER_ID"
AGENT_ID = "MEMU_AGENT_ID"

IDENTITY_KEYS = (DB, EMBED_PROVIDER, EMBED_MODEL)
"""Keys whose change strands existing vectors; everything else is a freely repairable connection."""

LOCAL_FLAGS = {
    "db": DB,
    "embed_provider": EMBED_PROVIDER,
    "embed_model": EMBED_MODEL,
    "embed_api_key": API_KEY,
    "embed_base_url": BASE_URL,
}
"""``config --local`` flag (option name without dashes, ``_`` for ``-``) → the key it writes."""

CLOUD_FLAGS = {"cloud_api_key": CLOUD_API_KEY, "cloud_base_url": CLOUD_BASE_URL}
"""``config --cloud`` flag → the key it writes."""

# Variables `config show` compares against the process environment to warn about shadowing.
_SHADOWABLE = (MODE, DB, CLOUD_API_KEY, CLOUD_BASE_URL, EMBED_PROVIDER, EMBED_MODEL, API_KEY, BASE_URL, TELEMETRY)

TELEMETRY_SWITCH = {"on": "1", "off": "0", "1": "1", "0": "0", "true": "1", "false": "0", "yes": "1", "no": "0"}
"""``config --telemetry`` value → what is written to ``MEMU_TELEMETRY``."""


def row(label: str, value: str) -> str:
    """One output row: the label padded to 10 columns, then the value."""
    return f"{label:<10}{value}"


def short_id(client_id: str) -> str:
    """The first four characters of an id, with an ellipsis when it is longer."""
    return client_id if len(client_id) <= 4 else client_id[:4] + "…"


def declared_mode(values: Mapping[str, str]) -> str:
    """The file's mode if it is a valid one (``local``/``cloud``), else ``""``."""
    mode = values.get(MODE, "").strip().lower()
    return mode if mode in ("local", "cloud") else ""


def effective_mode(values: Mapping[str, str]) -> str:
    """The mode the file puts the machine in: a file without a valid mode is local."""
    return declared_mode(values) or "local"


def protection(values: Mapping[str, str]) -> str | None:
    """What the file's current backend has to lose by a mode switch, or None.

    Declarations only: the store itself is never opened, so the guard is cheap and offline.
    """
    if effective_mode(values) == "cloud":
        return (
            "this machine already stores a memU Cloud key (MEMU_CLOUD_API_KEY)" if values.get(CLOUD_API_KEY) else None
        )
    return "this machine already has a local store configured (MEMU_DB)" if values.get(DB) else None


def flip_refusal(values: Mapping[str, str], target: str) -> str | None:
    """The reason to refuse switching to ``target`` (the protection text), or None if allowed."""
    if effective_mode(values) == target:
        return None
    return protection(values)


def _identity(key: str, value: str) -> str:
    """Compare identities, not spellings: ``~/x`` and ``/home/u/x`` are one store."""
    value = value.strip()
    if key == DB:
        return normalise_db(value)
    if key == EMBED_PROVIDER:
        return value.lower()
    return value


def identity_conflict(values: Mapping[str, str], updates: Mapping[str, str]) -> tuple[str, str, str] | None:
    """The first identity key that ``updates`` would change, as ``(key, old, new)``, or None.

    Setting a key the file does not have yet is not a change. The provider falls back to the
    legacy ``MEMU_LLM_PROVIDER``, since that is the one the store was written with.
    """
    for key in IDENTITY_KEYS:
        if key not in updates:
            continue
        current = values.get(key, "")
        if key == EMBED_PROVIDER and not current:
            current = values.get(LLM_PROVIDER, "")
        if current and _identity(key, current) != _identity(key, updates[key]):
            return key, current, updates[key]
    return None


def _client_id(values: Mapping[str, str], updates: dict[str, str]) -> tuple[str, bool]:
    """Reuse the file's client id, or mint one into ``updates``; return ``(id, minted)``."""
    existing = values.get(CLIENT_ID, "").strip()
    if existing:
        return existing, False
    minted = str(uuid.uuid4())
    updates[CLIENT_ID] = minted
    return minted, True


def _write(path: Path, updates: Mapping[str, str]) -> str:
    """Write ``updates``, drop the resolver cache, and return the ``config`` row."""
    try:
        written, _ = dotenv.write_values(path, updates)
    except OSError as exc:
        raise MemuError(
            f"{path}: cannot be written ({exc.strerror or exc}); make sure you own {path.parent} "
            "and the disk is not full, or point MEMU_CONFIG_ENV at a writable file"
        ) from None
    resolve.reload()
    return row("config", f"{written} ({dotenv.permission_note()})")


def _emit(stream: TextIO, lines: list[str]) -> None:
    for line in lines:
        print(line, file=stream)


def run_init(
    binary: str,
    cloud_api_key: str | None,
    out: TextIO,
    err: TextIO,
    *,
    after_write: Callable[[], None] | None = None,
) -> int:
    """``<binary> init [--cloud-api-key KEY]``: record a mode and a client id; never refuses.

    Without a key a declared mode is kept (a re-install never demotes cloud); with one the
    machine goes to cloud mode and a local store, if configured, is reported as no longer read.
    Whatever of ``~/.memu`` other users could reach (made by an older memu, or by hand) is made
    owner-only, and the ``privacy`` row says how many paths that took.
    ``after_write`` runs once the file is written (the host CLI records its install event there,
    so the event carries the client id just printed). Returns 0.
    """
    path = resolve.config_path()
    values, _ = dotenv.read_file(path)
    updates: dict[str, str] = {}
    rows: list[str] = []
    orphaned: str | None = None
    key = _clean_key(cloud_api_key)
    if key is None:
        declared = declared_mode(values)
        if declared:
            rows.append(row("mode", f"{declared} (kept)"))
        else:
            updates[MODE] = "local"
            if values.get(DB):
                rows.append(row("mode", "local (recorded; the configured store stays as it is)"))
            else:
                rows.append(row("mode", f"local (default store {DEFAULT_DB})"))
    else:
        if effective_mode(values) != "cloud":
            orphaned = protection(values)
        stored = values.get(CLOUD_API_KEY, "")
        updates[MODE] = "cloud"
        updates[CLOUD_API_KEY] = key
        rows.append(row("mode", "cloud (from --cloud-api-key)"))
        if orphaned:
            rows.append(row("switched", "the local store (MEMU_DB) is no longer read"))
        if stored and stored != key:
            rows.append(row("key", "replaced — the memU Cloud key stored before is gone"))
        else:
            rows.append(row("key", "set"))
    client, minted = _client_id(values, updates)
    rows.append(row("client", short_id(client) + (" (generated)" if minted else "")))
    fixed = _layout.tighten_tree(_layout.home())  # before the write, which tightens ~/.memu itself
    rows.append(_write(path, updates))
    if fixed:
        rows.append(row("privacy", f"{fixed} path(s) under {HOME_DIR} were open to other users; now owner-only"))
    _emit(out, rows)
    if orphaned:
        out.flush()  # keep stdout rows before the stderr warning when both go to one terminal
        _emit(
            err,
            [
                "warning: this machine was in local mode with a store configured. Nothing was deleted, "
                "but what is stored there is not visible to cloud memory, and new memories now go to "
                "the cloud account of this key.",
                f"To go back: `{binary} config --local --force`",
            ],
        )
        err.flush()
    if after_write is not None:
        # The file is written and the rows printed; an install event that fails to record must
        # not turn a successful init into a failure (telemetry fails open).
        with contextlib.suppress(Exception):
            after_write()
    print(f"ready — {_init_next_step(binary)}", file=out)
    return 0


def _init_next_step(binary: str) -> str:
    # The core `memu` binary has no guides; the host binaries carry them.
    if binary == "memu":
        return "verify with `memu doctor`, then connect an agent with `memu-<host> docs install`"
    return f"continue with `{binary} docs install`"


def _clean_key(value: str | None) -> str | None:
    """None when no key was passed; a passed key is trimmed and must not be blank."""
    if value is None or value == "":
        return None
    key = value.strip()
    if not key:
        raise UsageError("--cloud-api-key is blank; pass the key itself, or leave the flag out")
    return key


def run_config(
    binary: str,
    target: str | None,
    values: Mapping[str, str],
    force: bool,
    out: TextIO,
    err: TextIO,
    *,
    telemetry: str | None = None,
) -> int:
    """``<binary> config (--local|--cloud) [flags] [--force] [--telemetry on|off]``: guarded
    update of config.env.

    ``values`` maps flag names (keys of :data:`LOCAL_FLAGS` and :data:`CLOUD_FLAGS`) to their
    values; an empty value means the flag was not passed, and the other mode's flags are ignored.
    ``telemetry`` (``on``/``off``) writes ``MEMU_TELEMETRY``; alone, without a target, it is all
    that is written (no guard: the switch strands nothing).
    Returns 0, or :data:`REFUSED` after a one-line reason and a next step on ``err``.
    """
    switch = _telemetry_value(telemetry)
    if target is None and switch is not None:
        return _run_telemetry_only(switch, out)
    if target is None:
        _emit(
            err,
            [
                "error: `config` needs --local or --cloud to know which backend to write "
                "(or --telemetry on|off alone).",
                f"To read the configuration without changing it: `{binary} config show`",
            ],
        )
        return REFUSED
    if target not in ("local", "cloud"):
        raise UsageError(f"config target {target!r} is invalid; use --local or --cloud")
    unknown = sorted(set(values) - set(LOCAL_FLAGS) - set(CLOUD_FLAGS))
    if unknown:
        raise UsageError(f"config: unknown option(s) {', '.join(unknown)}; see `{binary} config --help`")

    path = resolve.config_path()
    current, _ = dotenv.read_file(path)
    if not force:
        reason = flip_refusal(current, target)
        if reason:
            _emit(
                err,
                [
                    f"error: {reason}, so switching it to {target} memory is refused: record and "
                    "retrieval must use one backend, or retrieval quietly finds nothing.",
                    f"To switch anyway, re-run with --force (`{binary} config --{target} … --force`).",
                ],
            )
            return REFUSED

    updates = {MODE: target}
    flags = LOCAL_FLAGS if target == "local" else CLOUD_FLAGS
    for flag, key in flags.items():
        value = values.get(flag, "").strip()
        if value:
            updates[key] = value
    if updates.get(CLOUD_BASE_URL) == DEFAULT_CLOUD_BASE_URL and not current.get(CLOUD_BASE_URL):
        # The default needs no line; but over another stored URL it is written, to take effect.
        del updates[CLOUD_BASE_URL]

    if not force:
        conflict = identity_conflict(current, updates)
        if conflict:
            key, old, new = conflict
            if key == DB:
                old, new = redact_dsn(old), redact_dsn(new)
                fix = "Re-run with --force only if the store is really being replaced."
            else:
                fix = "To move to another embedding model, re-run with --force, then run `memu reindex`."
            _emit(
                err,
                [
                    f"error: {key} is already {old!r} on this machine (asked: {new!r}); changing it "
                    "strands every vector written under it — retrieval keeps working and finds nothing.",
                    f"Repair connections (keys, URLs) freely, never the identity. {fix}",
                ],
            )
            return REFUSED

    client, minted = _client_id(current, updates)
    rows = [row("mode", target + (" (forced)" if force else ""))]
    if target == "local":
        store = updates.get(DB) or current.get(DB)
        rows.append(row("store", redact_dsn(store) if store else f"{DEFAULT_DB} (default)"))
    else:
        new_key, stored = updates.get(CLOUD_API_KEY, ""), current.get(CLOUD_API_KEY, "")
        if new_key and stored and new_key != stored:
            rows.append(row("key", "replaced — the memU Cloud key stored before is gone"))
        elif new_key or stored:
            rows.append(row("key", "set"))
        else:
            rows.append(row("key", f"unset — cloud memory needs one; `{binary} doctor` fails until it is set"))
        scope = _record_key_scope(current, updates)
        if scope:
            rows.append(scope)
    if minted:
        rows.append(row("client", short_id(client) + " (generated)"))
    if switch is not None:
        updates[TELEMETRY] = switch
    rows.append(_write(path, updates))
    if switch is not None:
        rows.extend(_telemetry_rows(switch == "1"))
    rows.append(f"ready — verify with `{binary} doctor`")
    _emit(out, rows)
    return 0


def _telemetry_value(value: str | None) -> str | None:
    """``--telemetry``'s value as written (``1``/``0``); None when the flag was not passed."""
    if value is None or value == "":
        return None
    written = TELEMETRY_SWITCH.get(value.strip().lower())
    if written is None:
        raise UsageError(f"--telemetry {value!r} is invalid; use --telemetry on or --telemetry off")
    return written


def _run_telemetry_only(switch: str, out: TextIO) -> int:
    """``config --telemetry on|off`` alone: write the switch, keep mode and everything else."""
    rows = [_write(resolve.config_path(), {TELEMETRY: switch}), *_telemetry_rows(switch == "1")]
    _emit(out, rows)
    return 0


def _telemetry_rows(on: bool) -> list[str]:
    """The ``telemetry`` row once the switch is written, and a note when this shell overrides it."""
    from memu_core._config import telemetry as switches

    spool = _layout.events_spool()
    if on:
        sent = (
            "flushes send them to MEMU_EVENTS_BASE_URL"
            if switches.endpoint()
            else "nothing leaves this machine until MEMU_EVENTS_BASE_URL names an endpoint"
        )
        rows = [row("telemetry", f"on — counts and durations go to {spool}; {sent}")]
    else:
        rows = [row("telemetry", "off — nothing is recorded or sent")]
        left = _spooled_events(spool)
        if left:
            rows.append(
                f"note: {left} event(s) recorded earlier are still in {spool}; `memu events clear` deletes them"
            )
    if switches.telemetry_on() != on:
        dnt = os.environ.get(switches.DO_NOT_TRACK_ENV, "").strip()
        blocked = on and dnt.lower() in switches.TRUE
        cause = f"DO_NOT_TRACK={dnt}" if blocked else f"{TELEMETRY}={os.environ.get(TELEMETRY, '')}"
        rows.append(f"note: {cause} in this environment wins: telemetry stays {'off' if on else 'on'} in this shell")
    return rows


def _spooled_events(spool: Path) -> int:
    """How many events the spool holds (its non-blank lines); 0 when there is none."""
    try:
        with spool.open("rb") as handle:
            return sum(1 for line in handle if line.strip())
    except OSError:
        return 0


def _record_key_scope(current: Mapping[str, str], updates: dict[str, str]) -> str:
    """Ask the server which scope the cloud key is bound to and record it; the ``scope`` row.

    memu-server answers (``GET …/whoami``), and the scope goes to ``MEMU_USER_ID`` (and
    ``MEMU_AGENT_ID`` for an agent-bound key), so this machine's requests name the key's own
    scope. memU's hosted API has no such route: the scope stays as it was, and the row says why.
    """
    key = updates.get(CLOUD_API_KEY) or current.get(CLOUD_API_KEY, "")
    if not key.strip():
        return ""
    kept = f"{current.get(USER_ID) or 'default'} (kept)"
    base = updates.get(CLOUD_BASE_URL) or current.get(CLOUD_BASE_URL) or DEFAULT_CLOUD_BASE_URL
    if base.strip().rstrip("/") == DEFAULT_CLOUD_BASE_URL.rstrip("/"):
        return row("scope", f"{kept} — memU's hosted API does not report a key's scope")
    from memu_core._config import keyscope

    found = keyscope.ask(base, key, proxy=resolve.lookup("MEMU_HTTP_PROXY"))
    if found.note:
        return row("scope", f"{kept} — {found.note}")
    if found.user_id is None:
        return row("scope", f"{kept} — the key is not bound to a scope")
    updates[USER_ID] = found.user_id
    shown = f"user {found.user_id}"
    if found.agent_id is not None:
        updates[AGENT_ID] = found.agent_id
        shown += f", agent {found.agent_id}"
    return row("scope", f"{shown} (the key's, recorded)")


def run_config_show(binary: str, out: TextIO, err: TextIO) -> int:
    """``<binary> config show``: what the file says, secrets as set/unset. Writes nothing; returns 0."""
    path = resolve.config_path()
    if not path.exists():
        rows = [
            row("config", f"{path} (not created yet)"),
            row("mode", f"local (default; nothing configured — `{binary} init` records it)"),
        ]
        values: dict[str, str] = {}
        problems: list[dotenv.Problem] = []
    else:
        values, problems = dotenv.read_file(path)
        rows = [row("config", str(path))]
        raw_mode = values.get(MODE, "").strip()
        declared = declared_mode(values)
        if declared:
            rows.append(row("mode", declared))
        elif raw_mode:
            shown = raw_mode if len(raw_mode) <= 20 else raw_mode[:20] + "…"
            rows.append(row("mode", f"invalid ({shown!r}) — fix it with `{binary} config --local` or `--cloud`"))
        else:
            rows.append(row("mode", "local (not declared; a file without a mode is local)"))
        if effective_mode(values) == "cloud":
            rows.append(row("key", _set(values.get(CLOUD_API_KEY))))
            rows.append(row("endpoint", values.get(CLOUD_BASE_URL) or "default"))
        else:
            store = values.get(DB)
            rows.append(row("store", redact_dsn(store) if store else f"{DEFAULT_DB} (default)"))
            if values.get(EMBED_PROVIDER):
                provider = values[EMBED_PROVIDER]
            elif values.get(LLM_PROVIDER):
                provider = f"{values[LLM_PROVIDER]} (from legacy MEMU_LLM_PROVIDER)"
            else:
                provider = "auto (default)"
            rows.append(row("provider", provider))
            rows.append(row("model", values.get(EMBED_MODEL) or "provider default"))
            rows.append(row("embed key", _set(values.get(API_KEY))))
        client = values.get(CLIENT_ID)
        rows.append(row("client", short_id(client) if client else "unset"))
        rows.append(row("telemetry", _telemetry_shown(values.get(TELEMETRY))))
    shadowed = sorted(k for k in _SHADOWABLE if os.environ.get(k) and os.environ[k] != values.get(k, ""))
    if shadowed:
        rows.append(f"note: the environment overrides what this file says for {', '.join(shadowed)}")
    _emit(out, rows)
    for number, message in problems:
        print(f"warning: {path} line {number} skipped: {message}", file=err)
    return 0


def _telemetry_shown(value: str | None) -> str:
    """What the file's ``MEMU_TELEMETRY`` says (off unless it says on)."""
    text = (value or "").strip().lower()
    if text in ("1", "true", "yes", "on"):
        return "on"
    return "off" if value is not None else "off (default)"


def _set(value: str | None) -> str:
    return "set" if value else "unset"


def build_config_commands(app: typer.Typer, binary: str, *, after_init: Callable[[], None] | None = None) -> None:
    """Mount ``init`` and ``config`` on ``app``; ``binary`` names the command in next-step lines.

    ``after_init`` is passed to :func:`run_init` as ``after_write`` (a host records its
    install event there). A :class:`~memu_core.errors.MemuError` becomes one ``error:`` line and
    its exit code.
    """
    from memu_core._config import cli

    cli.mount(app, binary, after_init=after_init)
