"""Serving a team (ADR 0027): cached keys, reused answers, bounded queues, metrics, slow and
vanishing clients. Real SQLite stores and the real app on 127.0.0.1 sockets throughout."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from memu_server import app as app_module
from memu_server.app import create_app
from memu_server.keys import KeyStore
from memu_server.serving import ServingOptions
from memu_server.testing import serve_in_thread

from memu_core._engine.engine import LocalEngine
from memu_core._stores.sqlite import SqliteStore
from memu_core.testing.embedders import HashingEmbedder

SEARCH = "/api/v4/memory/search"


def _file(name: str, content: str) -> dict[str, str]:
    return {"name": name, "track": "memory", "description": name, "content": content}


def _client(url: str, key: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=url, headers=headers, trust_env=False, timeout=30)


class CountingKeys(KeyStore):
    """The real key database, counting how often a key is looked up in it."""

    lookups = 0

    def authenticate(self, key: str) -> Any:
        CountingKeys.lookups += 1
        return super().authenticate(key)


def test_keys_are_checked_from_a_cache_and_a_revocation_elsewhere_is_seen_within_a_second(
    engine: LocalEngine, tmp_path: Path
) -> None:
    path = tmp_path / "keys" / "keys.sqlite3"
    keys = CountingKeys(path)
    alice, info = keys.create("alice")
    CountingKeys.lookups = 0
    with serve_in_thread(create_app(engine, keys=keys)) as url, _client(url, alice) as c:
        for _ in range(50):
            assert c.get("/api/v4/memory/whoami").status_code == 200
            assert c.post(SEARCH, json={"query": "tea"}).status_code == 200
        assert CountingKeys.lookups <= 3  # 50 requests in well under a second: one or two reads
        other = KeyStore(path)  # `memu-server keys revoke` runs in another process
        other.revoke(info.id)
        revoked = time.monotonic()
        # A repeated search (answered before the framework once seen) is refused as soon, too.
        while c.post(SEARCH, json={"query": "tea"}).status_code == 200:
            assert time.monotonic() - revoked < 1.5, "a revoked key was still accepted after 1.5 s"
            time.sleep(0.02)
        assert c.get("/api/v4/memory/whoami").status_code == 401
        other.close()
    keys.close()


def _parse_metrics(text: str) -> dict[str, Any]:
    from prometheus_client.parser import text_string_to_metric_families

    return {family.name: family for family in text_string_to_metric_families(text)}


def test_metrics_parse_as_prometheus_text_and_count_each_route(served: dict[str, Any]) -> None:
    with _client(served["url"], served["alice"]) as c:
        tea = {"recall_files": [_file("tea", "Alice drinks green tea.")]}
        assert c.post("/api/v4/memory", json=tea).status_code == 200
        for _ in range(3):
            assert c.post(SEARCH, json={"query": "green tea"}).status_code == 200
        assert c.post(SEARCH, json={"query": "x", "user_id": "bob"}).status_code == 403
        r = httpx.get(served["url"] + "/metrics", trust_env=False)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain; version=0.0.4")
    families = _parse_metrics(r.text)
    requests = {
        (s.labels["route"], s.labels["method"], s.labels["status"]): s.value
        for s in families["memu_server_requests"].samples
    }
    assert requests[(SEARCH, "POST", "200")] == 3 and requests[(SEARCH, "POST", "403")] == 1
    assert requests[("/api/v4/memory", "POST", "200")] == 1
    latency = {s.name: s for s in families["memu_server_request_seconds"].samples if s.labels["route"] == SEARCH}
    assert latency["memu_server_request_seconds_count"].value == 4
    assert families["memu_server_commits"].samples[0].value == 1
    assert families["memu_server_in_flight_requests"].samples[0].value == 1  # the scrape itself
    hits = families["memu_server_answer_cache_hits"].samples[0].value
    assert hits == 2  # the first search ran in the store, the next two were answered from memory
    assert families["memu_server_store_bytes"].samples[0].value > 0
    assert "green tea" not in r.text and "alice" not in r.text  # counts only, never content or scope


def test_an_answer_is_reused_until_a_write_to_its_scope_or_by_another_process(
    served: dict[str, Any], tmp_path: Path
) -> None:
    engine: LocalEngine = served["engine"]
    with _client(served["url"], served["alice"]) as alice, _client(served["url"], served["bob_cli"]) as bob:
        alice.post("/api/v4/memory", json={"recall_files": [_file("tea", "Alice drinks green tea.")]})
        first = alice.post(SEARCH, json={"query": "what does alice drink"}).json()
        assert [f["name"] for f in first["files"]] == ["tea"]
        # Another scope's commit through this server keeps alice's answer...
        bob.post("/api/v4/memory", json={"recall_files": [_file("beer", "Bob drinks beer.")]})
        metrics = _parse_metrics(httpx.get(served["url"] + "/metrics", trust_env=False).text)
        before = metrics["memu_server_answer_cache_hits"].samples[0].value
        assert alice.post(SEARCH, json={"query": "what does alice drink"}).json() == first
        metrics = _parse_metrics(httpx.get(served["url"] + "/metrics", trust_env=False).text)
        assert metrics["memu_server_answer_cache_hits"].samples[0].value == before + 1
        # ...a commit to her own scope is found by her very next search (read your writes)...
        alice.post("/api/v4/memory", json={"recall_files": [_file("juice", "Alice drinks orange juice too.")]})
        names = {f["name"] for f in alice.post(SEARCH, json={"query": "what does alice drink"}).json()["files"]}
        assert names == {"tea", "juice"}
        # ...and a write by another process (here: straight to the store file) within the poll.
        other = LocalEngine(SqliteStore.open(engine.store.path), embedder=HashingEmbedder())  # type: ignore[attr-defined]
        other.forget("juice", user={"user_id": "alice", "agent_id": "default"})
        other.close()
        deadline = time.monotonic() + 2
        ask = {"query": "what does alice drink"}
        while "juice" in {f["name"] for f in alice.post(SEARCH, json=ask).json()["files"]}:
            assert time.monotonic() < deadline, "a write by another process was not seen within 2 s"
            time.sleep(0.05)


def _slow_engine(tmp_path: Path, pause: float) -> LocalEngine:
    """A real engine whose searches take at least ``pause`` seconds (a busy store)."""

    class Slow(LocalEngine):
        def progressive_retrieve(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            time.sleep(pause)
            return super().progressive_retrieve(*args, **kwargs)

    engine = Slow(SqliteStore.open(str(tmp_path / "slow.sqlite3")), embedder=HashingEmbedder())
    engine.commit_results(recall_files=[_file("tea", "Alice drinks green tea.")])
    return engine


async def _raw_post(host: str, port: int, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 POST on its own connection (``Connection: close``): status, headers, body."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()
    raw = await reader.read()
    writer.close()
    head, _, payload = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, payload


async def _burst(url: str, count: int) -> list[tuple[int, dict[str, str], bytes]]:
    host, port = url.removeprefix("http://").split(":")
    return await asyncio.gather(*(_raw_post(host, int(port), SEARCH, b'{"query": "tea %d"}' % i) for i in range(count)))


def test_a_burst_of_a_thousand_gets_answers_or_quick_503s_with_retry_after_then_service_resumes(
    tmp_path: Path,
) -> None:
    engine = _slow_engine(tmp_path, 0.02)
    options = ServingOptions(threads=2, max_queue=32, max_wait=1.0)
    try:
        with serve_in_thread(create_app(engine, keys=None, options=options)) as url:
            started = time.monotonic()
            answers = asyncio.run(_burst(url, 1000))
            took = time.monotonic() - started
            statuses = [status for status, _, _ in answers]
            assert set(statuses) <= {200, 503}, sorted(set(statuses))
            assert statuses.count(200) >= 1 and statuses.count(503) >= 500
            for status, headers, payload in answers:
                if status == 503:
                    assert headers["retry-after"] == "1" and json.loads(payload)["details"][0]["code"] == "BUSY"
                else:
                    assert json.loads(payload)["files"][0]["name"] == "tea"
            assert took < 30  # every request answered in a bounded time, none hung
            with _client(url, None) as c:  # and the server serves normally right after
                assert c.post(SEARCH, json={"query": "green tea"}).status_code == 200
    finally:
        engine.close()


def test_a_slow_client_holds_only_its_own_connection_and_its_body_times_out(
    served: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "BODY_SECONDS", 1.0)
    host, port = served["url"].removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as slow:
        slow.sendall(
            b"POST /api/v4/memory HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {served['alice']}\r\nContent-Length: 500\r\n\r\n".encode()
            + b'{"recall_files": ['
        )
        with _client(served["url"], served["alice"]) as c:  # everyone else is served meanwhile
            for _ in range(5):
                started = time.monotonic()
                assert c.get("/api/v4/memory").status_code == 200
                assert time.monotonic() - started < 1.0
        slow.settimeout(10)
        answer = slow.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408") and b"REQUEST_TIMEOUT" in answer
    assert served["engine"].list_all_recall_files({"user_id": "alice"})["recall_files"] == []


def test_a_client_that_vanishes_mid_request_leaves_nothing_half_done(served: dict[str, Any]) -> None:
    host, port = served["url"].removeprefix("http://").split(":")
    body = b'{"recall_files": [{"name": "half", "content": "never complete"}]}'
    with socket.create_connection((host, int(port))) as gone:
        gone.sendall(
            b"POST /api/v4/memory HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {served['alice']}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body[:20]
        )
    # A whole commit whose client leaves before the answer still lands, once; its retry is a no-op.
    whole = b'{"recall_files": [{"name": "whole", "content": "sent in full"}]}'
    with socket.create_connection((host, int(port))) as leaves:
        leaves.sendall(
            b"POST /api/v4/memory HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {served['alice']}\r\nContent-Length: {len(whole)}\r\n\r\n".encode()
            + whole
        )
    with _client(served["url"], served["alice"]) as c:
        deadline = time.monotonic() + 10
        while not c.get("/api/v4/memory").json()["recall_files"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        retried = c.post("/api/v4/memory", json={"recall_files": [{"name": "whole", "content": "sent in full"}]})
        assert retried.status_code == 200 and retried.json()["stats"]["files_written"] == 0
        files = c.get("/api/v4/memory").json()["recall_files"]
    assert [(f["name"], f["content"]) for f in files] == [("whole", "sent in full")]


def test_identical_searches_in_flight_run_once(tmp_path: Path) -> None:
    engine = _slow_engine(tmp_path, 0.3)
    calls = 0
    original = engine.progressive_retrieve

    def counted(*args: Any, **kwargs: Any) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        return original(*args, **kwargs)

    engine.progressive_retrieve = counted  # type: ignore[method-assign]
    try:
        with serve_in_thread(create_app(engine, keys=None)) as url:
            results: list[int] = []

            def one() -> None:
                with _client(url, None) as c:
                    results.append(c.post(SEARCH, json={"query": "green tea"}).status_code)

            threads = [threading.Thread(target=one) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert results == [200] * 8 and calls == 1
    finally:
        engine.close()


def test_a_slow_commit_to_another_scope_keeps_the_answers_while_the_poller_watches(tmp_path: Path) -> None:
    class SlowCommit(LocalEngine):
        def commit_results(self, **kwargs: Any) -> dict[str, Any]:
            result = super().commit_results(**kwargs)
            time.sleep(0.5)  # written, not yet answered: the poller sees the move first
            return result

    engine = SlowCommit(SqliteStore.open(str(tmp_path / "s.sqlite3")), embedder=HashingEmbedder())
    engine.commit_results(recall_files=[_file("tea", "Alice drinks green tea.")], user={"user_id": "alice"})
    try:
        with serve_in_thread(create_app(engine, keys=None)) as url, _client(url, None) as c:
            ask = {"query": "green tea", "user_id": "alice"}
            first = c.post(SEARCH, json=ask).json()
            c.post("/api/v4/memory", json={"user": {"user_id": "bob"}, "recall_files": [_file("beer", "Bob: beer.")]})
            hits = _parse_metrics(c.get("/metrics").text)["memu_server_answer_cache_hits"].samples[0].value
            assert c.post(SEARCH, json=ask).json() == first
            after = _parse_metrics(c.get("/metrics").text)["memu_server_answer_cache_hits"].samples[0].value
            assert after == hits + 1
    finally:
        engine.close()


def test_the_listening_socket_sends_without_delay() -> None:
    # Without TCP_NODELAY an answer written as headers then body waits for the client's delayed
    # ACK: about 40 ms per request on a keep-alive connection under the asyncio loop.
    from memu_server.runner import bind_tcp

    sock = bind_tcp("127.0.0.1", 0)
    try:
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        sock.close()
