"""Where memu keeps its files: the one module that knows the ``~/.memu`` layout.

::

    ~/.memu/
      config.env            the settings every memu binary shares    ($MEMU_CONFIG_ENV)
      memu.sqlite3          the default store                        ($MEMU_DB)
      cache/instructions/   the last good served template of each name (and its .sig)
      cache/docs/<id>/      the last good served guides of host <id> (and their .sig)
      run/                  the warm server: memu.sock, serve.lock,  ($MEMU_RUN_DIR)
                            serve.json, serve.log
      hosts/<id>/           each host's bridging working tree        (--base-dir; see Layout)
      events.jsonl          the telemetry spool, beside it events.dropped, events.errors and
                            events.*.sending                           ($MEMU_EVENTS_SPOOL)
      <plugin>/             a plugin's own files (memu-server: server/keys.sqlite3)

Everything else asks here, so moving a file is one edit. Each answer is computed when asked:
``HOME`` and the overriding variables are read at that moment (tests and ``memu serve`` change
them). Stdlib only, and nothing beyond ``os`` and ``pathlib`` at import: the per-turn client
asks it where the socket is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

HOME_DIR = "~/.memu"
"""memu's folder, as shown to people (``~`` expanded when used)."""

DEFAULT_DB = f"{HOME_DIR}/memu.sqlite3"
"""The embedded store every host shares when ``MEMU_DB`` is not set, as shown to people."""

CONFIG_ENV_VAR = "MEMU_CONFIG_ENV"
"""Names another config file. Read from the process environment only: reading it from the file
it names would be circular."""

RUN_DIR_ENV = "MEMU_RUN_DIR"
"""Names another run directory (process environment only; tests and unusual layouts use it)."""

SOCKET_NAME = "memu.sock"
LOCK_NAME = "serve.lock"
PID_NAME = "serve.json"
LOG_NAME = "serve.log"

TRACKS: tuple[str, ...] = ("memory", "skill")
"""The recall-file tracks the bridging run mirrors and the agent edits, one folder each."""


def home() -> Path:
    """``~/.memu`` (not created)."""
    return Path(os.path.expanduser(HOME_DIR))


def config_file() -> Path:
    """The config file: ``$MEMU_CONFIG_ENV`` if set and non-empty, else ``~/.memu/config.env``."""
    raw = os.environ.get(CONFIG_ENV_VAR)
    return Path(os.path.expanduser(raw)) if raw else home() / "config.env"


def default_db() -> Path:
    """The default store's file, ``~/.memu/memu.sqlite3``."""
    return Path(os.path.expanduser(DEFAULT_DB))


def instruction_cache(name: str) -> Path:
    """The last good copy of template ``name`` fetched from a template server."""
    return home() / "cache" / "instructions" / f"{name}.txt"


def docs_cache(host_id: str, filename: str) -> Path:
    """The last good copy of host ``host_id``'s guide ``filename`` fetched from a docs server."""
    return home() / "cache" / "docs" / host_id / filename


# -- the warm server ---------------------------------------------------------------------------
def run_dir() -> Path:
    """The warm server's directory (mode 0700; not created here, see :func:`ensure_run_dir`)."""
    raw = os.environ.get(RUN_DIR_ENV)
    return Path(os.path.expanduser(raw)) if raw else home() / "run"


def ensure_run_dir() -> Path:
    """Create the run directory private to the user (0700), tightening it if it exists."""
    path = run_dir()
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if os.name == "posix" and (path.stat().st_mode & 0o777) != 0o700:
        os.chmod(path, 0o700)
    return path


def serve_socket() -> Path:
    """The warm server's Unix socket (0600)."""
    return run_dir() / SOCKET_NAME


def serve_lock() -> Path:
    """The file the one live server of this run directory holds an ``flock`` on."""
    return run_dir() / LOCK_NAME


def serve_pidfile() -> Path:
    """JSON with the live server's pid, version and configuration fingerprint."""
    return run_dir() / PID_NAME


def serve_log() -> Path:
    """Where a background-started server writes its stderr."""
    return run_dir() / LOG_NAME


# -- bridging working trees --------------------------------------------------------------------
def hosts_root() -> Path:
    """``~/.memu/hosts``: every host's default working tree lives under it."""
    return home() / "hosts"


def host_tree(host_id: str) -> Path:
    """Host ``host_id``'s default working tree, ``~/.memu/hosts/<id>``."""
    return hosts_root() / host_id


def host_tree_shown(host_id: str) -> str:
    """:func:`host_tree` as shown to people (``~/.memu/hosts/<id>``, for help and guides)."""
    return f"{HOME_DIR}/hosts/{host_id}"


EVENTS_SPOOL_ENV = "MEMU_EVENTS_SPOOL"
"""Names another telemetry spool file; its companions sit beside it, named after its stem."""


def events_spool() -> Path:
    """The telemetry spool, ``~/.memu/events.jsonl`` (``$MEMU_EVENTS_SPOOL`` if set and non-empty)."""
    raw = os.environ.get(EVENTS_SPOOL_ENV, "").strip()
    return Path(os.path.expanduser(raw)) if raw else home() / "events.jsonl"


def events_companion(suffix: str) -> Path:
    """A file beside the spool sharing its stem: ``dropped`` (the drop counter), ``errors`` (the
    ``report error`` ledger); ``events.jsonl`` gives ``events.dropped``."""
    spool = events_spool()
    return spool.with_name(f"{spool.stem}.{suffix}")


def plugin_dir(name: str) -> Path:
    """``~/.memu/<name>``: where plugin ``name`` keeps files of its own (not created)."""
    if not name or name in (".", "..") or "/" in name or os.sep in name:
        raise ValueError(f"plugin folder name {name!r} must be one plain folder name")
    return home() / name


@dataclass(frozen=True)
class Layout:
    """Paths of one host's working tree. Nothing is created until a command writes."""

    base: Path
    host: str

    @classmethod
    def at(cls, base: str | Path, host: str) -> Layout:
        """A layout rooted at ``base`` (``~`` expanded, made absolute: job files quote it)."""
        return cls(Path(base).expanduser().absolute(), host)

    @property
    def sessions(self) -> Path:
        """This run's transcript slices: ``<i>.jsonl`` and ``<i>_full.jsonl``."""
        return self.base / "sessions"

    @property
    def jobs(self) -> Path:
        """This run's job files ``1.txt … (2N+1).txt``."""
        return self.base / "jobs"

    def track_dir(self, track: str) -> Path:
        """The mirror folder of one track."""
        return self.base / track

    @property
    def cursor(self) -> Path:
        """The promoted cursor (advanced only by a successful ``commit``)."""
        return self.base / f".session_manifest.{self.host}.json"

    @property
    def cursor_pending(self) -> Path:
        """The cursor ``prepare`` staged for this run's sessions."""
        return self.base / f".session_manifest.{self.host}.json.pending"

    @property
    def run_marker(self) -> Path:
        """Written by ``prepare``, removed by a successful ``commit``."""
        return self.base / f".bridging_run.{self.host}.json"

    @property
    def self_sessions(self) -> Path:
        """Ids of sessions that were bridging runs themselves (never mined)."""
        return self.base / f".self_sessions.{self.host}.json"

    @property
    def snapshot(self) -> Path:
        """What the mirror held as of the last mirror or commit (the baseline of the diff)."""
        return self.base / ".memory_manifest.json"

    @property
    def resource_log(self) -> Path:
        """Append-only list of files the sessions touched (written by the skill jobs)."""
        return self.base / ".resource.tmp"

    @property
    def resources(self) -> Path:
        """The verified resources the resource job describes."""
        return self.base / "resources.md"

    @property
    def lock(self) -> Path:
        """Held while a ``prepare``/``commit`` works in the tree."""
        return self.base / ".lock"
