"""Bodies of ``memu commit``, ``retrieve``, ``list-files`` and ``forget``.

:func:`commit`, :func:`retrieve`, :func:`list_files` and :func:`forget` take the keyword
arguments their entries in :mod:`memu_core._cli.flags` declare, from typer or the fast path alike.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from memu_core import _events as events
from memu_core._cli import overrides
from memu_core._cli.output import print_json
from memu_core.errors import UsageError


def _where(user_id: str | None, agent_id: str | None) -> dict[str, str]:
    return {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id)) if v}


def commit(*, payload: str | None, from_dir: Path | None, as_json: bool, **local: str | None) -> None:
    """``memu commit PAYLOAD|--from-dir DIR [--json]`` (``local``: memU's ``--db``… overrides)."""
    overrides.apply(**local)
    run_commit(payload, from_dir, as_json)


def retrieve(
    *,
    query: str,
    top_k: int | None,
    track: list[str] | None,
    user_id: str | None,
    agent_id: str | None,
    as_json: bool = False,
    **local: str | None,
) -> None:
    """``memu retrieve QUERY ...``: the warm server's answer when one is up, else the engine here.

    ``as_json`` is memU's ``--json``: the output is JSON either way. ``local`` holds memU's
    ``--db``/``--provider``/``--embed-model``/``--base-url``/``--api-key`` overrides; with any
    of them the warm server answers only if its handshake shows the very same store and
    embedder, and none is started for them.
    """
    where = _where(user_id, agent_id)
    overridden = overrides.apply(**local)
    with events.step("memory_search") as properties:
        if query.strip():
            from memu_core._serve.client import warm_retrieve

            warm = warm_retrieve(query, where or None, top_k=top_k, tracks=track or None, autostart=not overridden)
            if warm is not None:
                properties.update(warm=True, result_count=events.result_count(warm))
                print_json(warm)
                return
        properties.update(warm=False, result_count=run_retrieve(query, top_k=top_k, tracks=track, where=where))


def list_files(*, as_json: bool, user_id: str | None, agent_id: str | None, **local: str | None) -> None:
    """``memu list-files [--json]`` (``local``: memU's ``--db``… overrides)."""
    overrides.apply(**local)
    run_list_files(as_json, _where(user_id, agent_id))


def forget(*, name: str, track: str, user_id: str | None, agent_id: str | None) -> None:
    """``memu forget NAME [--track T]``."""
    run_forget(name, track, _where(user_id, agent_id))


def _backend() -> Any:
    from memu_core._compose import open_backend

    return open_backend()


def read_payload(source: str) -> dict[str, Any]:
    """The commit payload from a JSON file (``~`` expanded) or ``-`` (stdin)."""
    if source == "-":
        label = "stdin"
        try:
            text = sys.stdin.buffer.read().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise UsageError(
                f"stdin is not UTF-8 ({exc.reason} at byte {exc.start}); pipe a UTF-8 JSON payload"
            ) from None
    else:
        path = Path(source).expanduser()
        if not path.is_file():
            raise UsageError(f"no such payload file: {path} (pass a JSON file, or - to read stdin)")
        text = path.read_text(encoding="utf-8-sig")
        label = str(path)
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{label} is not valid JSON ({exc.msg} at line {exc.lineno}); fix the payload") from None
    if not isinstance(payload, dict):
        raise UsageError(f"{label} must hold a JSON object with recall_files, resource and/or user")
    unknown = set(payload) - {"recall_files", "resource", "user"}
    if unknown:
        raise UsageError(f"{label} has unknown key(s) {', '.join(sorted(unknown))}; use recall_files, resource, user")
    return payload


def payload_from_dir(directory: Path) -> dict[str, Any]:
    """Recall files from every ``*.md`` under ``directory`` (frontmatter: name, description, track).

    Files are read exactly as a host's ``commit`` reads its mirror (:mod:`memu_core._markdown`),
    so a file stores the same either way. A file without a ``name`` uses its stem; without a
    ``track``, files under a ``skills`` folder are skills and the rest memory.
    """
    from memu_core._markdown import read
    from memu_core._mirror import from_markdown

    root = directory.expanduser()
    if not root.is_dir():
        raise UsageError(f"--from-dir {root} is not a directory")
    files = []
    for path in sorted(root.rglob("*.md")):
        doc = read(path)
        in_skills = "skills" in path.relative_to(root).parts[:-1]
        track = doc.meta.get("track") or ("skill" if in_skills else "memory")
        files.append(from_markdown(doc, track, path).as_commit())
    if not files:
        raise UsageError(f"--from-dir {root} holds no *.md files")
    return {"recall_files": files}


def run_commit(payload: str | None, from_dir: Path | None, as_json: bool) -> None:
    """``memu commit``: exactly one of PAYLOAD or --from-dir."""
    if (payload is None) == (from_dir is None):
        raise UsageError("commit needs exactly one of PAYLOAD (a JSON file or -) or --from-dir DIR")
    body = payload_from_dir(from_dir) if from_dir is not None else read_payload(payload or "-")
    with events.step("memory_commit") as properties:
        backend = _backend()
        try:
            result = backend.commit_results(
                recall_files=body.get("recall_files"), resource=body.get("resource"), user=body.get("user")
            )
        finally:
            backend.close()
        properties.update(recall_file_count=len(result["recall_files"]), resource_count=len(result["resources"]))
    if as_json:
        print_json(result)
        return
    files, resources = result["recall_files"], result["resources"]
    print(f"committed {len(files)} recall file(s) and {len(resources)} resource(s)")
    stats = result.get("stats")
    if stats:
        print(f"  ({stats['files_written']} written, {stats['texts_embedded']} text(s) embedded)")
    for item in files:
        print(f"  - {item['track']}/{item['name']}")


def run_retrieve(query: str, *, top_k: int | None, tracks: list[str] | None, where: dict[str, str]) -> int:
    """``memu retrieve``: JSON on stdout; returns how many items it held."""
    backend = _backend()
    try:
        result = backend.progressive_retrieve(query, where or None, top_k=top_k, tracks=tracks or None)
    finally:
        backend.close()
    print_json(result)
    return events.result_count(result)


def run_list_files(as_json: bool, where: dict[str, str]) -> None:
    """``memu list-files``: every file, following the cursor."""
    backend = _backend()
    try:
        files: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = backend.list_all_recall_files(where or None, cursor=cursor, limit=200)
            files.extend(page["recall_files"])
            cursor = page["next_cursor"]
            if not cursor:
                break
    finally:
        backend.close()
    if as_json:
        print_json({"recall_files": files})
        return
    print(f"{len(files)} recall file(s)")
    for item in files:
        print(f"  - {item['track']}/{item['name']}: {item.get('description') or ''}")


def run_forget(name: str, track: str, where: dict[str, str]) -> None:
    """``memu forget``: delete one file; exit 1 when it does not exist."""
    backend = _backend()
    try:
        result = backend.forget(name, track=track, user=where or None)
    finally:
        backend.close()
    if not result["forgotten"]:
        from memu_core.errors import MemuError

        raise MemuError(f"no {track} file named {name!r} in this scope; `memu list-files` shows what exists")
    print(f"forgot {track}/{name}")
