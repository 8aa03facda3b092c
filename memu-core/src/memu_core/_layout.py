"""Where memu keeps its files: the one module that knows the ``~/.memu`` layout.

::

    ~/.memu/
      config.env            the settings every memu binary shares    ($MEMU_CONFIG_ENV)
      memu.sqlite3          the default store                        ($MEMU_DB)
      cache/instructions/   the last good served template of each name (and its .sig)
      cache/docs/<id>/      the last good served guides of host <id> (and their .sig)
      run/                  the warm server: memu.sock, serve.lock,  ($MEMU_RUN_DIR)
                            serve.json, serve.log, autostart-noted
      hosts/<id>/           each host's bridging working tree        (--base-dir; see Layout)
      events.jsonl          the telemetry spool, beside it events.dropped, events.errors and
                            events.*.sending                           ($MEMU_EVENTS_SPOOL)
      models/               local embedding models exported for ONNX Runtime ($MEMU_MODELS_DIR)
      <plugin>/             a plugin's own files (memu-server: server/keys.sqlite3)

Everything else asks here, so moving a file is one edit. Each answer is computed when asked:
``HOME`` and the overriding variables are read at that moment (tests and ``memu serve`` change
them). Stdlib only, and nothing beyond ``os``, ``stat`` and ``pathlib`` at import: the per-turn client
asks it where the socket is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memu_core._value import Frozen

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
AUTOSTART_NOTED_NAME = "autostart-noted"

TRACKS: tuple[str, ...] = ("memory", "skill")
"""The recall-file tracks the bridging run mirrors and the agent edits, one folder each."""


def home() -> Path:
    """``~/.memu`` (not created; :func:`ensure_private_dir` makes it, 0700)."""
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


class RunDirError(ValueError):
    """The run directory cannot be used safely. Its message is one line naming ``MEMU_RUN_DIR``
    and the fix; the warm server's callers raise it again as a ``UsageError`` (this module sits
    below :mod:`memu_core.errors`)."""


def ensure_run_dir() -> Path:
    """The run directory, private to the user: created 0700 when missing, tightened to 0700
    inside ``~/.memu``.

    A folder another user owns, or that other users may write into (they could plant a socket
    of their own), raises :class:`RunDirError`; a folder of this user's outside ``~/.memu`` is
    never chmod-ed (``MEMU_RUN_DIR`` may name a folder memu did not create).
    """
    path = run_dir()
    if os.name != "posix":
        path.mkdir(parents=True, exist_ok=True)
        return path
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return ensure_private_dir(path)
    fix = f"point {RUN_DIR_ENV} at a folder of your own that only you can write, or unset it to use {HOME_DIR}/run"
    if not stat.S_ISDIR(info.st_mode):
        raise RunDirError(f"{RUN_DIR_ENV} {path} is not a folder; {fix}")
    if info.st_uid != os.geteuid():
        raise RunDirError(f"{RUN_DIR_ENV} {path} belongs to another user (uid {info.st_uid}); {fix}")
    if within_home(path):
        return ensure_private_dir(path)
    if info.st_mode & 0o022:
        raise RunDirError(
            f"{RUN_DIR_ENV} {path} can be written by other users (mode {stat.S_IMODE(info.st_mode):o}); "
            f"run `chmod 700 {path}`, or {fix}"
        )
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


def serve_autostart_noted() -> Path:
    """Present once the user has been told that retrieve starts the warm server by itself."""
    return run_dir() / AUTOSTART_NOTED_NAME


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


# -- privacy: folders 0700, files 0600 ---------------------------------------------------------
PRIVATE_DIR = 0o700
"""The mode of every folder memu creates (``~/.memu`` and what is under it, a host's tree)."""
PRIVATE_FILE = 0o600
"""The mode of every file memu creates: they hold memories, transcripts and settings."""


def within_home(path: Path) -> bool:
    """Whether ``path`` is ``~/.memu`` or lies under it (compared without following links)."""
    root = os.path.abspath(home())
    here = os.path.abspath(path)
    return here == root or here.startswith(root.rstrip(os.sep) + os.sep)


def remove_tree(path: Path) -> None:
    """Remove the folder ``path`` and everything under it, ignoring errors, as
    ``shutil.rmtree(path, ignore_errors=True)`` does; a symbolic link is never followed.

    Without ``shutil``, whose import brings its compression modules: about 2.5 ms of every
    ``prepare``, which clears its staging folders each run (ADR 0026).
    """
    try:
        if os.path.islink(path):
            return  # as rmtree: a link to a folder is not a folder to empty
        with os.scandir(path) as found:
            entries = list(found)
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                remove_tree(Path(entry.path))
            else:
                os.unlink(entry.path)
        except OSError:
            continue
    try:
        os.rmdir(path)
    except OSError:
        return


def ensure_private_dir(path: Path) -> Path:
    """Make folder ``path`` exist, private to this user; return it.

    Folders it creates (``path`` and any missing parent) are 0700 whatever the umask. Existing
    folders are tightened to 0700 only inside ``~/.memu`` (from ``path`` up to ``~/.memu``) and
    only when this user owns them: a folder outside ``~/.memu`` that memu did not create (the
    one holding a user-chosen ``MEMU_DB``, say) is left as it is.
    """
    missing: list[Path] = []
    probe = Path(os.path.abspath(path))
    while not probe.is_dir() and probe.parent != probe:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue  # made by a process running alongside: checked below like any other
        if os.name == "posix":
            os.chmod(folder, PRIVATE_DIR)  # the umask may have taken bits the owner needs
    if os.name == "posix" and within_home(path):
        here = Path(os.path.abspath(path))
        top = Path(os.path.abspath(home()))
        while True:
            _tighten(here)
            if here == top or here.parent == here:
                break
            here = here.parent
    return path


def tighten_file(path: Path) -> bool:
    """Take group and other access off ``path`` when it lies inside ``~/.memu`` and this user
    owns it (a file elsewhere is the user's); ``True`` if its mode changed."""
    if os.name != "posix" or not within_home(path):
        return False
    return _tighten(path)


def private_opener(path: str, flags: int) -> int:
    """``open(..., opener=private_opener)``: a file the call creates is 0600."""
    return os.open(path, flags, PRIVATE_FILE)


def tighten_tree(root: Path) -> int:
    """Take group and other access off ``root`` and everything under it that this user owns
    (links are not followed); return how many paths changed. ``init`` runs it on ``~/.memu``."""
    if os.name != "posix" or not root.is_dir():
        return 0
    fixed = int(_tighten(root))
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            fixed += _tighten(Path(folder) / name)
    return fixed


def exposure(root: Path, limit: int = 20_000) -> tuple[list[tuple[Path, int]], list[tuple[Path, int]]]:
    """What keeps ``root`` (and what is under it, links not followed) from being private:
    ``(foreign, loose)``, the paths another user owns with their uid, and those group or others
    may access with their mode. At most ``limit`` entries are looked at (mirrors can be large)."""
    foreign: list[tuple[Path, int]] = []
    loose: list[tuple[Path, int]] = []
    if os.name != "posix":
        return foreign, loose
    me, seen = os.geteuid(), 0
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for entry in (folder, *(os.path.join(folder, f) for f in sorted(files))):
            seen += 1
            if seen > limit:
                return foreign, loose
            try:
                info = os.lstat(entry)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                continue
            if info.st_uid != me:
                foreign.append((Path(entry), info.st_uid))
            elif not stat.S_ISSOCK(info.st_mode) and info.st_mode & 0o077:
                loose.append((Path(entry), stat.S_IMODE(info.st_mode)))
    return foreign, loose


def _tighten(path: Path) -> bool:
    """Clear the group and other bits of ``path`` (the owner's stay: an executable wrapper keeps
    its ``x``) if this user owns it; links and sockets are left alone."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode) or stat.S_ISSOCK(info.st_mode) or info.st_uid != os.geteuid():
        return False
    mode = stat.S_IMODE(info.st_mode)
    if not mode & 0o077:
        return False
    try:
        os.chmod(path, mode & 0o700)
    except OSError:
        return False
    return True


MODELS_DIR_ENV = "MEMU_MODELS_DIR"
"""Names another folder for exported embedding models (process environment only)."""


def models_dir() -> Path:
    """``~/.memu/models`` (or ``$MEMU_MODELS_DIR``): embedding models exported once for ONNX
    Runtime, one folder each, shared by every process (not created)."""
    raw = os.environ.get(MODELS_DIR_ENV)
    return Path(os.path.expanduser(raw)) if raw else home() / "models"


def plugin_dir(name: str) -> Path:
    """``~/.memu/<name>``: where plugin ``name`` keeps files of its own (not created)."""
    if not name or name in (".", "..") or "/" in name or os.sep in name:
        raise ValueError(f"plugin folder name {name!r} must be one plain folder name")
    return home() / name


class Layout(Frozen):
    """Paths of one host's working tree. Nothing is created until a command writes."""

    # No __slots__: instances keep a __dict__, as the frozen dataclass's did.
    _fields = ("base", "host")
    base: Path
    host: str

    def __init__(self, base: Path, host: str) -> None:
        self._init(base, host)

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
    def mirror_stamp(self) -> Path:
        """The store's stamp and the baseline when the mirror last matched the store
        (:mod:`memu_core._bridge.mirrorstamp`): a steady ``prepare`` then skips the listing."""
        return self.base / ".mirror_stamp.json"

    @property
    def resource_log(self) -> Path:
        """Append-only list of files the sessions touched (written by the skill jobs)."""
        return self.base / ".resource.tmp"

    @property
    def resources(self) -> Path:
        """The verified resources the resource job describes."""
        return self.base / "resources.md"

    @property
    def backlog(self) -> Path:
        """How many changed sessions the last ``prepare`` left for later runs."""
        return self.base / ".backlog.json"

    @property
    def lock(self) -> Path:
        """Held while a ``prepare``/``commit`` works in the tree."""
        return self.base / ".lock"
