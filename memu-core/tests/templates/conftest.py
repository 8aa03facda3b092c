"""A real static HTTP server on 127.0.0.1 publishing a folder, as a team's template server would.

``Publisher.put`` writes a file into the served folder (optionally signed); ``fail_with`` makes
every answer that status code; ``stop`` closes the port so the next request is refused.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from memu_core._bridge import template_fetch


class _Handler(SimpleHTTPRequestHandler):
    def do_GET(self) -> None:
        status = getattr(self.server, "fail_with", None)
        if status:
            self.send_error(status)
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass


@dataclass
class Publisher:
    """The served folder and its server."""

    root: Path
    server: ThreadingHTTPServer
    requests: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def put(self, relative: str, text: str | bytes, *, private_key: str | None = None) -> Path:
        """Publish ``text`` at ``relative``; with ``private_key`` also ``<relative>.sig``."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode() if isinstance(text, str) else text
        path.write_bytes(data)
        if private_key is not None:
            from memu_core._bridge import template_sign

            path.with_name(path.name + ".sig").write_text(template_sign.sign(data, private_key) + "\n")
        return path

    def fail_with(self, status: int | None) -> None:
        """Answer every request with ``status`` (``None``: serve files again)."""
        self.server.fail_with = status  # type: ignore[attr-defined]

    def stop(self) -> None:
        """Close the port: the next request is refused."""
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def publisher(tmp_path: Path) -> Iterator[Publisher]:
    """A template server on 127.0.0.1 serving ``tmp_path / "published"``."""
    root = tmp_path / "published"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    pub = Publisher(root, server)
    yield pub
    if thread.is_alive():
        pub.stop()


@pytest.fixture(autouse=True)
def fresh_notes() -> Iterator[None]:
    """Each test starts with no notes said and no server remembered as unreachable."""
    template_fetch.forget()
    yield
    template_fetch.forget()


def job(name: str, version: str | None, marker: str = "SERVED") -> str:
    """A valid job template text for ``name`` (a header when ``version`` is given)."""
    from memu_core._bridge.template_text import PLACEHOLDERS, header

    body = f"{marker} {name}: " + " ".join("{" + k + "}" for k in PLACEHOLDERS[name]) + "\n"
    return (header(name, version) + "\n" if version else "") + body


def keypair() -> tuple[str, str]:
    """A fresh ed25519 key pair (private, public), made at test time."""
    from memu_core._bridge import template_sign

    return template_sign.keygen()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
