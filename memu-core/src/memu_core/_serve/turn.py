"""The per-turn ``retrieve`` answered by a warm server with the least possible Python.

``memu-<host> retrieve QUERY`` and ``memu retrieve QUERY`` run as fresh processes on every agent
turn. When a warm server answers, all such a process has to do is find the socket, send the
query with the handshake, and copy the server's printed answer to stdout: the server shapes the
answer for the agent, fits it to the byte budget and renders it (``answer`` in the request,
:func:`memu_core._serve.server._printed`). This module does exactly that and imports only what
the interpreter has already loaded or what is written in C (``os``, ``sys``, ``_socket``,
``_json``, ``zlib``): no ``re``, ``enum``, ``typing``, ``pathlib``, ``json``, ``socket``, no
settings, no plugins, no host package beyond its id.

It answers only when it is sure it would print what the full command prints; whenever it is not
(another flag, ``-v``, a config file naming ``MEMU_DB`` or setting ``MEMU_TELEMETRY`` in a form
other than the plain one, no server, a refusal, an older server) it returns ``None`` and the
caller runs the full command, which retries the socket, starts a server and answers in process
as before. With telemetry on (ADR 0022) it records the turn's one ``memory_search_succeeded``
itself: the decision, the client id, the spool and the session id come from this process's
environment and config file, the result count, the installed sinks and the host's session variable
from the server, and the envelope and the spool append from :mod:`memu_core._eventline`, which
:mod:`memu_core.events` and the spool sink use too. The handshake values are computed
here and the full client's :mod:`.stamp` uses the same functions, so the two cannot disagree.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

HOME_DIR = "~/.memu"
CONFIG_ENV_VAR = "MEMU_CONFIG_ENV"
RUN_DIR_ENV = "MEMU_RUN_DIR"
SOCKET_NAME = "memu.sock"
VERSION_HEADER = "X-Memu-Version"
CONFIG_HEADER = "X-Memu-Config"
ANSWER_HEADER = "x-memu-answer"
MAX_BYTES_FLAG = "--max-bytes"
MAX_BYTES_ENV = "MEMU_RETRIEVE_MAX_BYTES"
DEFAULT_MAX_BYTES = 6000
"""Mirrors :data:`memu_core._retrieve_output.DEFAULT_MAX_BYTES` (a test holds them equal)."""
IGNORED_VARIABLES = frozenset(
    {
        "MEMU_SERVE_AUTOSTART",
        "MEMU_SERVE_IDLE",
        "MEMU_DEBUG",
        "MEMU_TELEMETRY",
        "MEMU_EVENTS_BASE_URL",
        "MEMU_EVENTS_SPOOL",
        "MEMU_CLIENT_ID",
        "MEMU_DB",
        MAX_BYTES_ENV,
    }
)
"""``MEMU_*`` knobs that change how a process runs, not what the server answers: a client that
sets them differently must not force a restart (the events' switches, endpoint, spool and id are
the client's: the server records no event of a turn, it only reports the facts the client records
it with). ``MEMU_DB`` enters the fingerprint resolved."""
CONNECT_TIMEOUT = 0.5
READ_TIMEOUT = 10.0
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_TRUE = ("1", "true", "yes", "on")

SPOOL_ENV = "MEMU_EVENTS_SPOOL"
SPOOL_PLUGIN = "memu-telemetry"
"""The one sink plugin whose spool this client writes; with any other sink installed the full
command records the turn, so every sink hears it."""
SEARCH_EVENT = "memory_search_succeeded"

_version_cache: str | None = None
_bare_version: str | None = None


def memu_home() -> str:
    """``~/.memu``, expanded now (``HOME`` may change between calls)."""
    return os.path.expanduser(HOME_DIR)


def config_path() -> str:
    """The config file: ``$MEMU_CONFIG_ENV`` if set and non-empty, else ``~/.memu/config.env``."""
    raw = os.environ.get(CONFIG_ENV_VAR)
    return os.path.expanduser(raw) if raw else os.path.join(memu_home(), "config.env")


def socket_path() -> str:
    """The warm server's socket: ``$MEMU_RUN_DIR/memu.sock`` or ``~/.memu/run/memu.sock``."""
    raw = os.environ.get(RUN_DIR_ENV)
    return os.path.join(os.path.expanduser(raw) if raw else os.path.join(memu_home(), "run"), SOCKET_NAME)


def memu_version() -> str:
    """``<version>+<install stamp>`` of the installed memu-core, without importlib.metadata.

    importlib.metadata costs ~100 ms on the per-turn path; the dist-info directory's name holds
    the version and its mtime changes with every (re)install, which is what "upgraded" means.
    """
    global _version_cache, _bare_version
    if _version_cache is not None:
        return _version_cache
    found = "0+unknown"
    _bare_version = None
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith("memu_core-") and name.endswith(".dist-info"):
                version = name[len("memu_core-") : -len(".dist-info")]
                try:
                    stamp = os.stat(os.path.join(entry, name)).st_mtime_ns
                except OSError:
                    stamp = 0
                found = f"{version}+{stamp}"
                _bare_version = version or None
                break
        else:
            continue
        break
    _version_cache = found
    return found


def client_version() -> str | None:
    """The envelope's ``client_version`` (as :func:`memu_core._version.version` reads it), or
    ``None`` when no dist-info folder names it (then the full command asks importlib.metadata)."""
    memu_version()
    return _bare_version


def read_config(path: str) -> bytes:
    """The config file's bytes; ``<missing>`` when it cannot be read (that too is a state)."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b"<missing>"


def fingerprint(path: str, content: bytes, store: str, env: Mapping[str, str]) -> str:
    """A short checksum of everything that decides what retrieval answers: the config file's name
    and bytes, the store in use and every other ``MEMU_*`` variable (except run-time knobs)."""
    import zlib

    parts = [path.encode(), content, f"db={store}".encode()]
    parts += [
        f"{key}={env[key]}".encode()
        for key in sorted(k for k in env if k.startswith("MEMU_") and k not in IGNORED_VARIABLES)
    ]
    data = b"\0".join(parts)
    # Change detection, not security: two zlib checksums (64 bits) cost nothing to import,
    # where hashlib loads OpenSSL (~20 ms on the per-turn path).
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"


def plain_store(value: str) -> str | None:
    """``MEMU_DB`` resolved as :func:`memu_core._config.dsn.normalise_db` does, for the forms
    that need no parsing (empty, a file path); ``None`` for anything else (a URL, ``:memory:``)."""
    text = value.strip()
    if not text:
        return os.path.expanduser(f"{HOME_DIR}/memu.sqlite3")
    if "://" in text or text.lower().startswith("sqlite:") or text.lower() in (":memory:", "inmemory"):
        return None
    return os.path.abspath(os.path.expanduser(text))


def declared_off(content: bytes) -> bool:
    """Whether every line of the config file naming ``MEMU_TELEMETRY`` is a plain
    ``MEMU_TELEMETRY=0`` (or ``false/no/off``), as ``config --telemetry off`` writes it; any
    other form (quotes, ``export``, a comment) is left to the full resolver."""
    found = False
    for line in content.splitlines():
        if b"MEMU_TELEMETRY" not in line:
            continue
        key, _, value = line.strip().partition(b"=")
        if key.strip() != b"MEMU_TELEMETRY" or value.strip().lower() not in (b"0", b"false", b"no", b"off"):
            return False
        found = True
    return found


_PLAIN = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/@+")


def plain_value(content: bytes, key: bytes) -> str | None:
    """The value the config file gives ``key`` when every line naming it is a plain
    ``KEY=value`` (as ``memu config`` writes it; the last one wins), ``""`` when none names it,
    ``None`` for any other form (quotes, ``export``, a comment), which the full resolver reads."""
    found = b""
    for line in content.splitlines():
        if key not in line:
            continue
        name, sep, value = line.strip().partition(b"=")
        value = value.strip()
        if name.strip() != key or not sep or not _PLAIN.issuperset(value):
            return None
        found = value
    return found.decode("ascii")


def _setting(env: Mapping[str, str], content: bytes, key: str) -> str | None:
    """``key`` as :func:`memu_core._config.resolve.lookup` resolves it (a non-empty process value,
    else the file's), or ``None`` when the file's form needs the full resolver."""
    value = env.get(key)
    return value if value else plain_value(content, key.encode())


def _recording(env: Mapping[str, str], content: bytes) -> dict[str, str] | bool | None:
    """Whether this turn records its event, as :mod:`memu_core._config.telemetry` decides from
    this process's environment and config file: ``False`` (off, the default, or opted out), the
    facts the envelope needs (on), or ``None`` when only the full command can tell (a config form
    not read here, no client id yet: the full command mints it, an unknown version)."""
    if env.get("DO_NOT_TRACK", "").strip().lower() in _TRUE:
        return False
    switch = env.get("MEMU_TELEMETRY")
    if switch is None:
        switch = plain_value(content, b"MEMU_TELEMETRY")
        if switch is None:
            return None
    if switch.strip().lower() not in _TRUE:
        return False
    client_id = _setting(env, content, "MEMU_CLIENT_ID")
    mode = _setting(env, content, "MEMU_MEMORY_MODE")
    version = client_version()
    if not client_id or not client_id.strip() or mode is None or version is None:
        return None
    return {"client_id": client_id.strip(), "mode": mode, "version": version}


def spool_files() -> tuple[str, str]:
    """The spool and its drop counter, as :func:`memu_core._layout.events_spool` and
    :func:`~memu_core._layout.events_companion` name them."""
    raw = os.environ.get(SPOOL_ENV, "").strip()
    spool = os.path.expanduser(raw) if raw else os.path.join(memu_home(), "events.jsonl")
    head, name = os.path.split(spool)
    dot = name.rfind(".")
    stem = name[:dot] if 0 < dot < len(name) - 1 else name
    return spool, os.path.join(head, f"{stem}.dropped")


def _handshake() -> tuple[str, str, dict[str, str] | bool] | None:
    """``(version, config fingerprint, recording)``, or ``None`` when the config file needs the
    full resolver (it names ``MEMU_DB`` or ``MEMU_TELEMETRY`` in a form not read here, telemetry
    is on and no client id exists yet)."""
    env = os.environ
    path = config_path()
    content = read_config(path)
    recording = _recording(env, content)
    if recording is None:
        return None
    db = env.get("MEMU_DB") or ""
    if not db.strip() and b"MEMU_DB" in content:
        return None
    if MAX_BYTES_ENV not in env and MAX_BYTES_ENV.encode() in content:
        return None
    store = plain_store(db)
    if store is None:
        return None
    return memu_version(), fingerprint(path, content, store, env), recording


def _budget() -> int | None:
    """The byte budget ``MEMU_RETRIEVE_MAX_BYTES`` sets (default :data:`DEFAULT_MAX_BYTES`)."""
    raw = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_BYTES
    return int(raw) if raw.isdigit() else None


def parse(args: Sequence[str], verbs: tuple[str, ...]) -> tuple[str, int] | None:
    """``(query, max_bytes)`` for ``VERB QUERY [--max-bytes N]``, else ``None``."""
    rest = list(args)
    if not rest or rest[0] not in verbs or os.environ.get("MEMU_DEBUG", "").strip() in ("1", "true", "yes", "on"):
        return None
    rest.pop(0)
    budget: int | None = None
    query: str | None = None
    while rest:
        arg = rest.pop(0)
        if arg == MAX_BYTES_FLAG and rest and budget is None and rest[0].isdigit():
            budget = int(rest.pop(0))
        elif arg.startswith(MAX_BYTES_FLAG + "=") and budget is None and arg[len(MAX_BYTES_FLAG) + 1 :].isdigit():
            budget = int(arg[len(MAX_BYTES_FLAG) + 1 :])
        elif arg.startswith("-") or query is not None:
            return None
        else:
            query = arg
    if query is None or not query.strip():
        return None
    if budget is None:
        budget = _budget()
    return None if budget is None else (query, budget)


def request(query: str, answer: dict[str, object]) -> bytes | None:
    """The server's printed answer to ``query``, or ``None`` (no server, refused, an older server)."""
    found = _exchange(query, answer)
    return None if found is None else found[0]


def _exchange(query: str, answer: dict[str, object]) -> tuple[bytes, Callable[[], None] | None] | None:
    """The printed answer and, with telemetry on, how to record the turn's event once printed."""
    import _json
    import _socket
    import time

    shake = _handshake()
    if shake is None:
        return None
    recording = shake[2]
    quote = _json.encode_basestring
    where = "null" if answer.get("mirror") is None else quote(str(answer["mirror"]))
    event = f', "event": {{"host": {quote(str(answer.get("host") or ""))}}}' if recording else ""
    body = (
        f'{{"query": {quote(query)}, "answer": {{"form": {quote(str(answer["form"]))}, '
        f'"mirror": {where}, "max_bytes": {int(str(answer["max_bytes"]))}{event}}}}}'
    )
    try:
        payload = body.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from the command line: the full path decides
        return None
    head = (
        f"POST /_memu/retrieve HTTP/1.0\r\nHost: memu\r\nAccept: application/json\r\n"
        f"{VERSION_HEADER}: {shake[0]}\r\n{CONFIG_HEADER}: {shake[1]}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    )
    started = time.monotonic()
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(socket_path())
        sock.settimeout(READ_TIMEOUT)
        sock.sendall(head.encode("ascii") + payload)
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                return None
    except OSError:
        return None
    finally:
        sock.close()
    latency = round((time.monotonic() - started) * 1000)
    raw = b"".join(chunks)
    top, sep, text = raw.partition(b"\r\n\r\n")
    lines = top.split(b"\r\n")
    status = lines[0].split(b" ", 2)
    if not sep or len(status) < 2 or status[1] != b"200":
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        key, _, value = line.decode("latin-1").partition(":")
        headers[key.strip().lower()] = value.strip()
    if ANSWER_HEADER not in headers:
        return None  # a server from before printed answers: let the full command shape it
    if not isinstance(recording, dict):
        return text, None
    facts = _record(recording, headers, str(answer.get("host") or ""), latency)
    return None if facts is None else (text, facts)


def _record(recording: dict[str, str], headers: dict[str, str], host: str, latency: int) -> Callable[[], None] | None:
    """How to spool this turn's event, or ``None`` when the full command must record it (a sink
    other than memu-telemetry's, a server that did not report the facts)."""
    count = headers.get("x-memu-result-count", "")
    sinks = headers.get("x-memu-sinks")
    if not count.isdigit() or sinks is None or "x-memu-session-env" not in headers:
        return None
    names = [name for name in sinks.split(",") if name]
    if not names:
        return lambda: None  # no sink installed: the full command would record nothing either
    if names != [SPOOL_PLUGIN]:
        return None
    session_env = headers["x-memu-session-env"]

    def spool() -> None:
        import time

        from memu_core import _eventline

        reported_by, properties = _eventline.allowed(SEARCH_EVENT, {"result_count": int(count), "latency_ms": latency})
        envelope = {
            "event_id": _eventline.uuid4(),
            "event_name": SEARCH_EVENT,
            "client_type": _eventline.CLIENT_TYPE,
            "client_instance_id": recording["client_id"],
            "occurred_at": _eventline.timestamp(time.time()),
            "context": _eventline.context(
                version=recording["version"],
                host=host,
                mode=recording["mode"],
                reported_by=reported_by,
                session=os.environ.get(session_env, "") if session_env else "",
            ),
            "properties": properties,
        }
        _eventline.append_line(*spool_files(), (_eventline.encode(envelope) + "\n").encode("utf-8"))

    return spool


def answer(args: Sequence[str], *, verbs: tuple[str, ...], form: str, mirror: str | None, host: str = "") -> int | None:
    """Print the warm server's answer for ``args`` and return 0, or ``None`` to run the full command."""
    parsed = parse(args, verbs)
    if parsed is None:
        return None
    found = _exchange(parsed[0], {"form": form, "mirror": mirror, "max_bytes": parsed[1], "host": host})
    if found is None:
        return None
    text, record = found
    out = sys.stdout.buffer
    try:
        out.write(text + b"\n")
        out.flush()
    except BrokenPipeError:  # the reader went away (``| head``): as the shell treats it
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    if record is not None:
        try:  # noqa: SIM105 (contextlib is not loaded on this path)
            record()
        except Exception:  # events are best effort by contract: never the turn's failure
            pass
    return 0


def host_answer(host_id: str, args: Sequence[str]) -> int | None:
    """``memu-<host_id> retrieve QUERY``: shaped for the agent over the host's working tree."""
    return answer(
        args, verbs=("retrieve",), form="agent", mirror=os.path.join(memu_home(), "hosts", host_id), host=host_id
    )


def memu_answer(args: Sequence[str]) -> int | None:
    """``memu retrieve|search QUERY``: the engine's own answer, within the byte budget."""
    return answer(args, verbs=("retrieve", "search"), form="raw", mirror=None)
