"""Helpers for tests that need a real memu-server: in a thread, or as a process to kill.

Used by memu-server's and memu-backend-cloud's tests. Nothing here mocks the server: it is the
real app on a real socket on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serve_in_thread(app: Any, sock: socket.socket | None = None) -> Iterator[str]:
    """Run ``app`` with uvicorn in a daemon thread; yield its base URL (``http://127.0.0.1:P``)."""
    import uvicorn

    from memu_server.runner import bind_tcp

    listener = sock or bind_tcp("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("memu-server did not start")
        time.sleep(0.02)
    name = listener.getsockname()
    try:
        yield f"http://127.0.0.1:{name[1]}" if isinstance(name, tuple) else str(name)
    finally:
        server.should_exit = True
        thread.join(15)
        listener.close()
        serving = getattr(getattr(app, "state", None), "serving", None)
        if serving is not None:
            serving.close()


def start_process(port: int, env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
    """``python -m memu_server serve --port PORT`` as a child process, returned once it answers."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memu_server", "serve", "--port", str(port), *extra],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wait_until_up(port, proc)
    return proc


def wait_until_up(port: int, proc: subprocess.Popen[bytes] | None = None, timeout: float = 60.0) -> None:
    """Poll ``/healthz`` until it answers (or the process died, or ``timeout`` passed)."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(f"memu-server exited with {proc.returncode}: {err}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1.0, trust_env=False).status_code == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"memu-server on port {port} did not come up")


def child_env(home: str, **extra: str) -> dict[str, str]:
    """The process environment with ``HOME`` replaced and every ``MEMU_*`` variable from ``extra`` only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update({"HOME": home, "HF_HUB_OFFLINE": "1", "MEMU_EMBED_PROVIDER": "none", "MEMU_SERVE_AUTOSTART": "0"})
    env.update(extra)
    return env
