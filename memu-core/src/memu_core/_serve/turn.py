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
(another flag, ``-v``, a config file naming ``MEMU_DB`` or turning ``MEMU_TELEMETRY`` on, no server, a
refusal, an older server) it returns ``None`` and the caller runs the full command, which retries
the socket, starts a server and answers in process as before. The handshake values are computed
here and the full client's :mod:`.stamp` uses the same functions, so the two cannot disagree.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

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
the client's: the server records no event of a turn). ``MEMU_DB`` enters the fingerprint resolved."""
CONNECT_TIMEOUT = 0.5
READ_TIMEOUT = 10.0
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_TRUE = ("1", "true", "yes", "on")

_version_cache: str | None = None


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
    global _version_cache
    if _version_cache is not None:
        return _version_cache
    found = "0+unknown"
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
                break
        else:
            continue
        break
    _version_cache = found
    return found


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


def _handshake() -> tuple[str, str] | None:
    """``(version, config fingerprint)``, or ``None`` when the config file needs the full
    resolver (it names ``MEMU_DB``, or may switch telemetry on, which the full path records; a
    plain ``MEMU_TELEMETRY=0`` is read here)."""
    env = os.environ
    path = config_path()
    content = read_config(path)
    switch = env.get("MEMU_TELEMETRY")
    if switch is None and b"MEMU_TELEMETRY" in content and not declared_off(content):
        return None
    if (switch or "").strip().lower() in _TRUE and env.get("DO_NOT_TRACK", "").strip().lower() not in _TRUE:
        return None  # telemetry on: the full command emits the turn's event
    db = env.get("MEMU_DB") or ""
    if not db.strip() and b"MEMU_DB" in content:
        return None
    if MAX_BYTES_ENV not in env and MAX_BYTES_ENV.encode() in content:
        return None
    store = plain_store(db)
    if store is None:
        return None
    return memu_version(), fingerprint(path, content, store, env)


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
    import _json
    import _socket

    shake = _handshake()
    if shake is None:
        return None
    quote = _json.encode_basestring
    where = "null" if answer.get("mirror") is None else quote(str(answer["mirror"]))
    body = (
        f'{{"query": {quote(query)}, "answer": {{"form": {quote(str(answer["form"]))}, '
        f'"mirror": {where}, "max_bytes": {int(str(answer["max_bytes"]))}}}}}'
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
    raw = b"".join(chunks)
    top, sep, text = raw.partition(b"\r\n\r\n")
    lines = top.split(b"\r\n")
    status = lines[0].split(b" ", 2)
    if not sep or len(status) < 2 or status[1] != b"200":
        return None
    if not any(line.lower().startswith(ANSWER_HEADER.encode() + b":") for line in lines[1:]):
        return None  # a server from before printed answers: let the full command shape it
    return text


def answer(args: Sequence[str], *, verbs: tuple[str, ...], form: str, mirror: str | None) -> int | None:
    """Print the warm server's answer for ``args`` and return 0, or ``None`` to run the full command."""
    parsed = parse(args, verbs)
    if parsed is None:
        return None
    text = request(parsed[0], {"form": form, "mirror": mirror, "max_bytes": parsed[1]})
    if text is None:
        return None
    out = sys.stdout.buffer
    try:
        out.write(text + b"\n")
        out.flush()
    except BrokenPipeError:  # the reader went away (``| head``): as the shell treats it
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0


def host_answer(host_id: str, args: Sequence[str]) -> int | None:
    """``memu-<host_id> retrieve QUERY``: shaped for the agent over the host's working tree."""
    return answer(args, verbs=("retrieve",), form="agent", mirror=os.path.join(memu_home(), "hosts", host_id))


def memu_answer(args: Sequence[str]) -> int | None:
    """``memu retrieve|search QUERY``: the engine's own answer, within the byte budget."""
    return answer(args, verbs=("retrieve", "search"), form="raw", mirror=None)
