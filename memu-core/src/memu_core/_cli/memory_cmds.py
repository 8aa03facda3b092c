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
from memu_core._retrieve_output import budget, fit
from memu_core.errors import UsageError


def _where(user_id: str | None, agent_id: str | None) -> dict[str, str]:
    return {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id)) if v}


def commit(
    *, payload: str | None, from_dir: Path | None, as_json: bool, prune: bool = False, **local: str | None
) -> None:
    """``memu commit PAYLOAD|--from-dir DIR [--prune] [--json]`` (``local``: memU's ``--db``… overrides).

    The texts are embedded by the warm server when one answers for this configuration (and one
    is started for next time, unless overrides make this call unusual); else here."""
    from memu_core._serve.embedding import route_through_warm_server

    with route_through_warm_server(autostart=not overrides.apply(**local)):
        if from_dir is None:
            run_commit(payload, from_dir, as_json, prune=prune)
            return
        from memu_core._cli.progress import Progress, watch_embedding

        # A folder may hold thousands of files: the embedding is watched (a bar, or count lines
        # when piped) and the model load is announced; a quick commit shows nothing extra.
        with Progress("commit", unit="texts") as progress, watch_embedding(progress):
            run_commit(payload, from_dir, as_json, prune=prune)


def retrieve(
    *,
    query: str,
    top_k: int | None,
    track: list[str] | None,
    user_id: str | None,
    agent_id: str | None,
    as_json: bool = False,
    output_format: str = "json",
    max_bytes: int | None = None,
    **local: str | None,
) -> None:
    """``memu retrieve QUERY ...``: the warm server's answer when one is up, else the engine here.

    ``as_json`` is memU's ``--json``: the output is JSON either way. ``local`` holds memU's
    ``--db``/``--provider``/``--embed-model``/``--base-url``/``--api-key`` overrides; with any
    of them the warm server answers only if its handshake shows the very same store and
    embedder, and none is started for them.
    """
    text = _text_format(output_format, as_json)
    where = _where(user_id, agent_id)
    overridden = overrides.apply(**local)
    with events.step("memory_search") as properties:
        if query.strip():
            from memu_core._serve.client import warm_retrieve

            warm = warm_retrieve(query, where or None, top_k=top_k, tracks=track or None, autostart=not overridden)
            if warm is not None:
                properties.update(warm=True, result_count=events.result_count(warm))
                _print_retrieved(warm, max_bytes, text)
                return
        properties.update(
            warm=False,
            result_count=run_retrieve(query, top_k=top_k, tracks=track, where=where, max_bytes=max_bytes, text=text),
        )


def _text_format(output_format: str, as_json: bool) -> bool:
    """Whether ``--format`` asks for the readable list; ``--json`` with ``--format text`` contradicts."""
    if output_format not in ("json", "text"):
        raise UsageError(f"--format {output_format!r} is not known; use --format json (the default) or --format text")
    if output_format == "text" and as_json:
        raise UsageError("--json and --format text contradict each other; pass one of them")
    return output_format == "text"


def _print_retrieved(result: dict[str, Any], max_bytes: int | None, text: bool) -> None:
    if text:
        from memu_core._cli.retrieve_text import print_text

        print_text(result)
        return
    print_json(fit(result, budget(max_bytes)))


def list_files(*, as_json: bool, user_id: str | None, agent_id: str | None, **local: str | None) -> None:
    """``memu list-files [--json]`` (``local``: memU's ``--db``… overrides)."""
    overrides.apply(**local)
    run_list_files(as_json, _where(user_id, agent_id))


def forget(*, name: str, track: str, user_id: str | None, agent_id: str | None, as_json: bool = False) -> None:
    """``memu forget NAME [--track T] [--json]``."""
    run_forget(name, track, _where(user_id, agent_id), as_json)


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
    """Recall files from every ``*.md`` under ``directory``, or each bad file named on stderr and a
    ``UsageError``: ``--prune`` needs the whole folder or nothing."""
    from memu_core._cli.from_dir import read_folder

    folder = read_folder(directory)
    _refuse_empty(folder, directory)
    for line in folder.problems:
        print(f"not committed: {line}", file=sys.stderr)
    if folder.problems:
        raise UsageError(
            f"{len(folder.problems)} file(s) in {directory} cannot be committed (listed above) and --prune needs "
            "every file; fix them, or commit without --prune to store the rest (nothing was written)"
        )
    return {"recall_files": folder.files}


def _refuse_empty(folder: Any, directory: Path) -> None:
    if not folder.seen:
        raise UsageError(f"--from-dir {directory.expanduser()} holds no *.md files")


def run_commit(payload: str | None, from_dir: Path | None, as_json: bool, *, prune: bool = False) -> None:
    """``memu commit``: exactly one of PAYLOAD or --from-dir.

    From a folder, a file that cannot be read, parsed or named is named on stderr and the rest
    still commit; the command then exits 2. With ``--prune`` nothing is written unless every
    file is good, and afterwards the store's files of the scope, on each track the folder has
    files for, are exactly the folder's.
    """
    from memu_core.names import check_recall_files

    if (payload is None) == (from_dir is None):
        raise UsageError("commit needs exactly one of PAYLOAD (a JSON file or -) or --from-dir DIR")
    if prune and from_dir is None:
        raise UsageError("--prune goes with --from-dir: it makes the store match that folder")
    problems: list[str] = []
    if from_dir is not None:
        if prune:
            body = payload_from_dir(from_dir)
        else:
            from memu_core._cli.from_dir import read_folder

            folder = read_folder(from_dir)
            _refuse_empty(folder, from_dir)
            problems, body = folder.problems, {"recall_files": folder.files}
            for line in problems:
                print(f"not committed: {line}", file=sys.stderr)
    else:
        body = read_payload(payload or "-")
        # The same rules at every door, before a remote backend sees the payload.
        check_recall_files(body.get("recall_files"))
    forgotten: list[dict[str, Any]] = []
    result: dict[str, Any] = {"recall_files": [], "resources": []}
    if from_dir is None or body["recall_files"]:
        with events.step("memory_commit") as properties:
            backend = _backend()
            try:
                result = backend.commit_results(
                    recall_files=body.get("recall_files"), resource=body.get("resource"), user=body.get("user")
                )
                if prune:
                    forgotten = _prune(backend, body["recall_files"], result["recall_files"])
            finally:
                backend.close()
            properties.update(recall_file_count=len(result["recall_files"]), resource_count=len(result["resources"]))
    _print_commit(result, forgotten, as_json)
    if problems:
        # Exit 2, as a host's commit refuses the same file: the input needs fixing.
        raise UsageError(
            f"{len(problems)} file(s) in {from_dir} were not committed (listed above; the rest were); "
            "fix them and commit again"
        )


def _prune(backend: Any, sent: list[dict[str, str]], stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Forget the scope's files on the folder's tracks that the folder no longer holds."""
    if not stored:
        return []
    scope = {key: stored[0][key] for key in ("user_id", "agent_id") if stored[0].get(key)}
    keep = {(item["track"], item["name"]) for item in sent}
    tracks = {track for track, _ in keep}
    listed: list[dict[str, Any]] = []
    cursor = None
    while True:  # list everything first: forgetting while paging would shift the cursor
        page = backend.list_all_recall_files(scope or None, cursor=cursor, limit=200)
        listed.extend(page["recall_files"])
        cursor = page.get("next_cursor")
        if not cursor:
            break
    gone: list[dict[str, Any]] = []
    for item in listed:
        if item["track"] in tracks and (item["track"], item["name"]) not in keep:
            gone.extend(backend.forget(item["name"], track=item["track"], user=scope or None)["forgotten"])
    return gone


def _print_commit(result: dict[str, Any], forgotten: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        print_json({**result, "forgotten": forgotten} if forgotten else result)
        return
    files, resources = result["recall_files"], result["resources"]
    print(f"committed {len(files)} recall file(s) and {len(resources)} resource(s)")
    stats = result.get("stats")
    if stats:
        print(f"  ({stats['files_written']} written, {stats['texts_embedded']} text(s) embedded)")
    for item in files:
        print(f"  - {item['track']}/{item['name']}")
    if forgotten:
        print(f"pruned {len(forgotten)} recall file(s) the folder no longer holds")
        for item in forgotten:
            print(f"  - {item['track']}/{item['name']}")


def run_retrieve(
    query: str,
    *,
    top_k: int | None,
    tracks: list[str] | None,
    where: dict[str, str],
    max_bytes: int | None = None,
    text: bool = False,
) -> int:
    """``memu retrieve``: JSON on stdout, within the byte budget (or the readable list with
    ``text``); returns how many items it held."""
    backend = _backend()
    try:
        result = backend.progressive_retrieve(query, where or None, top_k=top_k, tracks=tracks or None)
    finally:
        backend.close()
    _print_retrieved(result, max_bytes, text)
    return events.result_count(result)


def run_list_files(as_json: bool, where: dict[str, str]) -> None:
    """``memu list-files``: every file, following the cursor."""
    files: list[dict[str, Any]] = []
    # memU records the listing (the whole paginated sweep, a partial count on failure); never flushes.
    with events.step("memory_list") as properties:
        backend = _backend()
        try:
            cursor = None
            while True:
                page = backend.list_all_recall_files(where or None, cursor=cursor, limit=200)
                files.extend(page["recall_files"])
                properties["result_count"] = len(files)
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


def run_forget(name: str, track: str, where: dict[str, str], as_json: bool = False) -> None:
    """``memu forget``: delete one file; exit 1 when it does not exist."""
    backend = _backend()
    try:
        result = backend.forget(name, track=track, user=where or None)
    finally:
        backend.close()
    if not result["forgotten"]:
        from memu_core.errors import MemuError

        raise MemuError(f"no {track} file named {name!r} in this scope; `memu list-files` shows what exists")
    if as_json:
        print_json(result)
        return
    print(f"forgot {track}/{name}")
