"""Publish a team's templates: ``memu-server serve --templates DIR`` serves DIR read-only.

The folder's layout is the one memu clients ask for (docs/templates.md)::

    DIR/instructions/<name>.txt (+ .sig)    MEMU_TEMPLATE_BASE_URL=<server>/templates/instructions
    DIR/docs/<host>/<FILE>.md   (+ .sig)    MEMU_DOCS_BASE_URL=<server>/templates/docs

The route needs no API key: memu fetches templates before it has one (``docs install`` runs
first), and templates are prompts, not memory. Sign them (``memu templates sign``) when the
network between the server and its clients is not trusted. Only ``.txt``, ``.md`` and ``.sig``
files inside DIR are served; anything else, including a path that leaves DIR, is a 404.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

ROUTE = "/templates"
SERVED_SUFFIXES = (".txt", ".md", ".sig")
MAX_BYTES = 64 * 1024
"""memu refuses larger templates, so the server does not send them."""


def find(folder: Path, relative: str) -> Path | None:
    """The file ``relative`` names inside ``folder``, or ``None`` when it must not be served."""
    if not relative or "\\" in relative or relative.startswith("/"):
        return None
    root = folder.resolve()
    target = (root / relative).resolve()
    if not target.is_relative_to(root) or target.suffix not in SERVED_SUFFIXES or not target.is_file():
        return None
    return target


def mount(app: FastAPI, folder: Path) -> None:
    """Serve ``folder`` under ``/templates/`` on the FastAPI ``app``."""
    from fastapi import Response
    from fastapi.responses import PlainTextResponse

    root = folder.expanduser()

    @app.get(ROUTE + "/{relative:path}", include_in_schema=False)
    def template_file(relative: str) -> Response:
        path = find(root, relative)
        if path is None:
            return PlainTextResponse("not published\n", status_code=404)
        data = path.read_bytes()
        if len(data) > MAX_BYTES:
            return PlainTextResponse("too large to publish\n", status_code=404)
        # Clients keep their own last good copy; a proxy must not serve a stale one instead.
        return Response(data, media_type="text/plain; charset=utf-8", headers={"Cache-Control": "no-cache"})


def check_folder(folder: Path) -> Path:
    """``folder`` expanded, or a one-line usage error when it is not a folder."""
    from memu_core.errors import UsageError

    path = folder.expanduser()
    if not path.is_dir():
        raise UsageError(f"--templates {folder}: not a folder; pass the folder holding instructions/ and docs/")
    return path


__all__ = ["ROUTE", "check_folder", "find", "mount"]
