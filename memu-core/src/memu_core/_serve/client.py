"""The per-turn client of the warm server. Stdlib only, and only the cheap parts of it.

:func:`warm_call` returns the server's JSON answer, or ``None`` whenever the caller should do
the work in process instead: no server, a stale or differently configured server, a timeout, an
error status. It never raises for a missing or broken server; the turn must still be answered.
:func:`ensure_started` launches a background server when ``MEMU_SERVE_AUTOSTART`` allows,
without waiting for it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from typing import Any

from memu_core import _layout
from memu_core._serve import stamp, wire

CONNECT_TIMEOUT = 0.5
READ_TIMEOUT = 10.0
"""A warm retrieve answers in milliseconds; this only bounds a wedged server."""


class Unavailable(Exception):
    """No server is listening (no socket, or a dead one's socket file): a start may help."""


class Refused(Exception):
    """A server answered but not with a result (stale, other configuration, error status)."""

    def __init__(self, status: int, body: Any) -> None:
        message = body.get("message") if isinstance(body, dict) else None
        super().__init__(f"memu serve answered {status}: {message or body!r}")
        self.status = status
        self.body = body


def request(
    method: str,
    target: str,
    body: Any | None = None,
    *,
    timeout: float = READ_TIMEOUT,
    handshake: bool = True,
) -> Any:
    """One request to the warm server; the decoded JSON of a 2xx answer.

    Raises :class:`Unavailable` when nobody listens, :class:`Refused` on any other status, and
    ``OSError`` on timeouts or broken connections.
    """
    path = _layout.serve_socket()
    headers = (
        {stamp.VERSION_HEADER: stamp.memu_version(), stamp.CONFIG_HEADER: stamp.config_fingerprint()}
        if handshake
        else {}
    )
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise Unavailable(str(exc)) from exc
        sock.settimeout(timeout)
        sock.sendall(wire.build_request(method, target, body, headers))
        status, _headers, raw = wire.read_response(sock)
    finally:
        sock.close()
    try:
        decoded = json.loads(raw) if raw else None
    except ValueError as exc:
        raise wire.WireError("memu serve sent invalid JSON") from exc
    if not 200 <= status < 300:
        raise Refused(status, decoded)
    return decoded


def autostart_allowed() -> bool:
    """``MEMU_SERVE_AUTOSTART`` (process env > config file), default on."""
    from memu_core._config import resolve

    value = resolve.lookup("MEMU_SERVE_AUTOSTART", "1") or "1"
    return value.strip().lower() not in ("0", "false", "no", "off")


def server_starting_or_running() -> bool:
    """Whether some process holds the run directory's lock (a server is up or coming up)."""
    import fcntl

    try:
        fd = os.open(_layout.serve_lock(), os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops our flock too, if we got it
    return False


def spawn() -> int:
    """Launch ``python -m memu_core._serve --background`` detached; return its pid."""
    import subprocess

    _layout.ensure_run_dir()
    log = open(_layout.serve_log(), "ab", opener=_layout.private_opener)  # noqa: SIM115 - handed to the child, closed below
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memu_core._serve", "--background"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,  # survives the hook's process group being killed
            close_fds=True,
        )
    finally:
        log.close()
    return proc.pid


def ensure_started() -> bool:
    """Start a background server if allowed and none is up or starting; ``True`` if one was launched."""
    try:
        if not autostart_allowed() or server_starting_or_running():
            return False
        spawn()
    except Exception:  # starting is a best effort: this turn is answered in process anyway
        return False
    _note_first_start()
    return True


AUTOSTART_NOTE = (
    "memu: started the warm server `memu serve` in the background (it keeps the store and model loaded "
    "and exits after MEMU_SERVE_IDLE seconds idle, 30 min by default); stop it with `memu serve --stop`, "
    "turn this off with MEMU_SERVE_AUTOSTART=0"
)
"""The one line the first autostart prints on stderr (once per run directory, never again)."""


def _note_first_start() -> None:
    marker = _layout.serve_autostart_noted()
    try:
        with open(marker, "x", encoding="utf-8"):  # exclusive: two racing turns print it once
            pass
    except OSError:  # already told (or cannot record it: then stay quiet rather than repeat)
        return
    print(AUTOSTART_NOTE, file=sys.stderr, flush=True)


def warm_call(method: str, target: str, body: Any | None = None, *, autostart: bool = True) -> Any | None:
    """The server's answer, or ``None`` to work in process (launching a server when none is up)."""
    try:
        return request(method, target, body)
    except Unavailable:
        if autostart:
            ensure_started()
        return None
    except (Refused, OSError, ValueError):
        return None


def warm_retrieve(
    query: str,
    where: dict[str, Any] | None = None,
    *,
    top_k: int | None = None,
    tracks: list[str] | None = None,
    autostart: bool = True,
) -> dict[str, Any] | None:
    """``progressive_retrieve`` answered by the warm server, or ``None`` (see :func:`warm_call`)."""
    body = {"query": query, "where": where or None, "top_k": top_k, "tracks": tracks or None}
    result = warm_call("POST", "/_memu/retrieve", body, autostart=autostart)
    return result if isinstance(result, dict) else None


def status() -> dict[str, Any] | None:
    """The running server's status, or ``None`` when none answers."""
    try:
        result = request("GET", "/_memu/status", handshake=False, timeout=2.0)
    except (Unavailable, Refused, OSError, ValueError):
        return None
    return result if isinstance(result, dict) else None


def stop(timeout: float = 10.0) -> int | None:
    """Ask the running server to stop and wait until its lock is free; its pid, or ``None``
    when no server was running."""
    import signal
    import time

    if not server_starting_or_running():
        return None
    pid = _pid_from_file()
    try:
        answer = request("POST", "/_memu/shutdown", {}, handshake=False, timeout=timeout)
    except (Unavailable, Refused, OSError, ValueError):
        answer = None  # still starting, or wedged: signal it instead
    if isinstance(answer, dict) and isinstance(answer.get("pid"), int):
        pid = answer["pid"]
    elif pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while server_starting_or_running() and time.monotonic() < deadline:
        time.sleep(0.05)
    return pid


def _pid_from_file() -> int | None:
    try:
        info = json.loads(_layout.serve_pidfile().read_text(encoding="utf-8"))
        return int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
