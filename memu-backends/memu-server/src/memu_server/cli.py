"""The ``memu-server`` console script: ``serve`` and ``keys create|list|revoke``."""

# No ``from __future__ import annotations``: typer reads the annotations at definition time.

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Optional

import typer

from memu_core.cli import Binary, new_app, run, sub_app

app = new_app(
    "memu-server",
    "memU's v4 memory API over your own memu store: share memory between machines.",
    distribution="memu-server",
)
keys_app = sub_app("API keys: each is bound to one user (and optionally one agent).")
app.add_typer(keys_app, name="keys")
events_app = sub_app("Telemetry events memu clients sent to this server (memU's ingest route).")
app.add_typer(events_app, name="events")

KeysOpt = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--keys", help="Key database (default $MEMU_SERVER_KEYS or ~/.memu/server/keys.sqlite3)."),
]


def _keys(path: Path | None):  # type: ignore[no-untyped-def]
    from memu_server.keys import KeyStore, default_keys_path

    return KeyStore(path.expanduser() if path else default_keys_path())


def _events(path: Path | None):  # type: ignore[no-untyped-def]
    # The events table lives in the server's own database, beside the keys.
    from memu_server.events import EventLog
    from memu_server.keys import default_keys_path

    return EventLog(path.expanduser() if path else default_keys_path())


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="TCP address (use 0.0.0.0 for other devices).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port; every request needs an API key.")] = 8765,
    socket_path: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--socket", help="Also listen on this Unix socket (0600, no key needed)."),
    ] = None,
    no_tcp: Annotated[bool, typer.Option("--no-tcp", help="Only the Unix socket.")] = False,
    keys: KeysOpt = None,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn log level.")] = "warning",
    templates: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--templates", help="Also publish this folder's templates at /templates/ (no key needed)."),
    ] = None,
    threads: Annotated[
        int, typer.Option("--threads", min=1, max=256, help="Worker threads for store calls (searches, commits).")
    ] = 4,
    max_queue: Annotated[
        int, typer.Option("--max-queue", min=0, help="Requests waiting for a worker before new ones get 503.")
    ] = 256,
    max_wait: Annotated[
        float, typer.Option("--max-wait", min=0.01, help="Seconds a request waits for a worker before its 503.")
    ] = 5.0,
    answers: Annotated[
        int, typer.Option("--answers", min=0, help="Search answers kept until a write changes them (0: none).")
    ] = 4096,
    drain: Annotated[
        int, typer.Option("--drain", min=1, help="Seconds requests in flight get to finish after SIGTERM.")
    ] = 30,
) -> None:
    """Serve the v4 memory API over the store MEMU_DB names."""
    from memu_core.errors import UsageError
    from memu_core.serving import bind_private_socket, serving_backend
    from memu_server.app import create_app
    from memu_server.runner import bind_tcp
    from memu_server.runner import serve as run
    from memu_server.serving import Serving, ServingOptions

    if no_tcp and socket_path is None:
        raise UsageError("--no-tcp needs --socket PATH: otherwise there is nothing to listen on")
    published = None
    if templates is not None:
        from memu_server import templates as publishing

        published = publishing.check_folder(templates)
    # Bind before the store is opened: a bad --port or --host fails in one line and touches nothing.
    tcp = None if no_tcp else bind_tcp(host, port)
    listeners = []
    backend = serving_backend()
    shared = Serving(backend, ServingOptions(threads=threads, max_queue=max_queue, max_wait=max_wait, answers=answers))
    received = _events(keys)
    if tcp is not None:
        store = _keys(keys)
        if not store.list():
            print(
                "warning: no API keys yet; create one with `memu-server keys create --user-id U`",
                file=sys.stderr,
            )
        listeners.append((create_app(backend, keys=store, events=received, serving=shared), tcp))
        address, bound_port = tcp.getsockname()[:2]
        shown = f"[{address}]" if ":" in address else address  # an IPv6 address in a URL
        print(
            f"memu-server: http://{shown}:{bound_port}/api/v4/memory (API key required)",
            file=sys.stderr,
            flush=True,
        )
    ours = None
    if socket_path is not None:
        path = socket_path.expanduser()
        listeners.append((create_app(backend, keys=None, events=received, serving=shared), bind_private_socket(path)))
        ours = _identity(path)
        print(f"memu-server: unix socket {path} (this user only)", file=sys.stderr, flush=True)
    if published is not None:
        for served_app, _listener in listeners:
            publishing.mount(served_app, published)
        print(f"memu-server: templates from {published} at /templates/", file=sys.stderr, flush=True)

    def draining() -> None:
        shared.draining = True

    try:
        run(listeners, log_level=log_level, drain=drain, on_stop=draining)
    finally:
        shared.close()  # the store calls still running finish first: a commit in flight lands
        backend.close()
        if socket_path is not None and ours is not None:
            _remove_if_ours(socket_path.expanduser(), ours)


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``, or ``None`` when there is none."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _remove_if_ours(path: Path, ours: tuple[int, int]) -> None:
    """Remove the socket this server bound, and nothing else: whatever replaced it stays."""
    if _identity(path) == ours:
        path.unlink(missing_ok=True)


@keys_app.command("create")
def keys_create(
    user_id: Annotated[str, typer.Option("--user-id", help="The user whose memory this key may read and write.")],
    agent_id: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--agent-id", help="Only this agent's memory (default: all of the user's agents)."),
    ] = None,
    label: Annotated[str, typer.Option("--label", help="A note to recognise the key by.")] = "",
    keys: KeysOpt = None,
) -> None:
    """Mint a key; it is printed once, as the last word of the last line."""
    store = _keys(keys)
    key, info = store.create(user_id, agent_id, label)
    scope = f"user_id={info.user_id}" + (f" agent_id={info.agent_id}" if info.agent_id else " (all agents)")
    print(f"created key {info.id} for {scope}; it is shown only now, store it safely")
    print(f"key: {key}")


@keys_app.command("list")
def keys_list(keys: KeysOpt = None) -> None:
    """Every key's id, scope and state (never the key)."""
    rows = _keys(keys).list()
    if not rows:
        print("no API keys; create one with `memu-server keys create --user-id U`")
        return
    for row in rows:
        state = f"revoked {row.revoked_at}" if row.revoked_at else "active"
        agent = row.agent_id or "*"
        print(
            f"{row.id}  user_id={row.user_id}  agent_id={agent}  created {row.created_at}  {state}  "
            f"{row.label}".rstrip()
        )


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (from `keys list`) or the key.")],
    keys: KeysOpt = None,
) -> None:
    """Revoke a key: its next request gets 401."""
    info = _keys(keys).revoke(key_id)
    print(f"revoked key {info.id} (user_id={info.user_id})")


@events_app.command("stats")
def events_stats(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, as the stats route answers.")] = False,
    keys: KeysOpt = None,
) -> None:
    """Events received, counted per day and event name (newest day first)."""
    import json

    rows = _events(keys).stats()
    if as_json:
        print(json.dumps({"days": rows}, indent=2))
        return
    if not rows:
        print("no events received yet")
        return
    width = max(len(r["event_name"]) for r in rows)
    for r in rows:
        print(f"{r['day']}  {r['event_name']:<{width}}  {r['count']}")


SERVER = Binary("memu-server", lambda _args: app, distribution="memu-server")
"""The ``memu-server`` binary as memu's CLI shell runs it."""


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run ``memu-server`` with ``argv`` and return its exit code (handled errors are one line)."""
    return run(SERVER, argv)


def main() -> None:
    """``memu-server`` entry point."""
    sys.exit(run_cli())


if __name__ == "__main__":
    main()
