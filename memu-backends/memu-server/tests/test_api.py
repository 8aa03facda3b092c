"""The v4 API over a real engine, served on 127.0.0.1: routes, scopes, keys, bounds, errors."""

from __future__ import annotations

from typing import Any

import httpx

PROFILE = {
    "name": "profile",
    "track": "memory",
    "description": "who",
    "content": "- drinks green tea\n- lives in Berlin",
}


def _client(served: dict[str, Any], key: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=served["url"], headers=headers, trust_env=False, timeout=30)


def test_commit_search_list_forget_round_trip(served: dict[str, Any]) -> None:
    with _client(served, served["alice"]) as c:
        r = c.post("/api/v4/memory", json={"user": {"user_id": "alice"}, "recall_files": [PROFILE]})
        assert r.status_code == 200, r.text
        assert [f["name"] for f in r.json()["recall_files"]] == ["profile"]
        hits = c.post("/api/v4/memory/search", json={"query": "green tea", "user_id": "alice", "top_k": 1}).json()
        assert len(hits["segments"]) == 1 and "tea" in hits["segments"][0]["text"]
        assert all("score" in item for item in hits["segments"] + hits["files"])
        page = c.get("/api/v4/memory", params={"user_id": "alice"}).json()
        assert [f["name"] for f in page["recall_files"]] == ["profile"] and page["next_cursor"] is None
        gone = c.post("/api/v4/memory/forget", json={"name": "profile", "user": {"user_id": "alice"}}).json()
        assert [f["name"] for f in gone["forgotten"]] == ["profile"]
        assert c.get("/api/v4/memory", params={"user_id": "alice"}).json()["recall_files"] == []


def test_recommit_is_idempotent(served: dict[str, Any]) -> None:
    with _client(served, served["alice"]) as c:
        body = {"user": {"user_id": "alice"}, "recall_files": [PROFILE]}
        first = c.post("/api/v4/memory", json=body).json()
        second = c.post("/api/v4/memory", json=body).json()
    assert first["stats"]["files_written"] == 1 and second["stats"]["files_written"] == 0
    assert first["recall_files"][0]["updated_at"] == second["recall_files"][0]["updated_at"]


def test_pages_follow_the_cursor_and_are_bounded(served: dict[str, Any]) -> None:
    files = [{"name": f"m{i:02d}", "content": f"- fact {i}"} for i in range(7)]
    with _client(served, served["alice"]) as c:
        c.post("/api/v4/memory", json={"user": {"user_id": "alice"}, "recall_files": files}).raise_for_status()
        names: list[str] = []
        cursor = None
        while True:
            params = {"user_id": "alice", "limit": "3", **({"cursor": cursor} if cursor else {})}
            page = c.get("/api/v4/memory", params=params).json()
            names += [f["name"] for f in page["recall_files"]]
            cursor = page["next_cursor"]
            if not cursor:
                break
        assert names == [f["name"] for f in files]
        assert c.get("/api/v4/memory", params={"user_id": "alice", "limit": "201"}).status_code == 422
        assert c.get("/api/v4/memory", params={"user_id": "alice", "limit": "0"}).status_code == 422
        bad = c.get("/api/v4/memory", params={"user_id": "alice", "cursor": "garbage!"})
        assert bad.status_code == 422 and "cursor" in bad.json()["message"]


def test_missing_scope_means_default_and_filters_are_exact(served: dict[str, Any], engine: Any) -> None:
    engine.commit_results(recall_files=[PROFILE], user={"user_id": "default"})
    key, _ = served["keys"].create("default")
    with _client(served, key) as c:
        assert [f["name"] for f in c.get("/api/v4/memory").json()["recall_files"]] == ["profile"]
        refused = c.post("/api/v4/memory/search", json={"query": "tea", "user_id__in": ["a"]})
        assert refused.status_code == 422
        assert refused.json()["details"][0]["code"] == "VALIDATION_ERROR"
        assert "user_id__in" in refused.json()["message"]
        assert c.get("/api/v4/memory", params={"track": "memory"}).status_code == 422


def test_key_for_scope_a_gets_403_on_scope_b(served: dict[str, Any]) -> None:
    with _client(served, served["alice"]) as c:
        assert c.post("/api/v4/memory/search", json={"query": "tea", "user_id": "bob"}).status_code == 403
        assert c.get("/api/v4/memory", params={"user_id": "bob"}).status_code == 403
        r = c.post("/api/v4/memory", json={"user": {"user_id": "bob"}, "recall_files": [PROFILE]})
        assert r.status_code == 403 and r.json()["details"][0]["code"] == "FORBIDDEN_SCOPE"
        assert c.post("/api/v4/memory/forget", json={"name": "x", "user": {"user_id": "bob"}}).status_code == 403
        # naming another user's agent is refused too (a missing scope acts as alice: test_key_scope)
        assert c.post("/api/v4/memory/search", json={"query": "tea", "user_id": "carol"}).status_code == 403
    with _client(served, served["bob_cli"]) as c:
        ok = c.post("/api/v4/memory/search", json={"query": "tea", "user_id": "bob", "agent_id": "cli"})
        assert ok.status_code == 200
        other_agent = c.post("/api/v4/memory/search", json={"query": "tea", "user_id": "bob", "agent_id": "web"})
        assert other_agent.status_code == 403
    assert served["engine"].list_all_recall_files({"user_id": "bob"})["recall_files"] == []


def test_missing_unknown_and_revoked_keys_get_401(served: dict[str, Any]) -> None:
    body = {"query": "tea", "user_id": "alice"}
    with _client(served, None) as c:
        r = c.post("/api/v4/memory/search", json=body)
        assert r.status_code == 401 and r.json()["details"][0]["code"] == "UNAUTHENTICATED"
    with _client(served, "msk_00000000_nope") as c:
        assert c.post("/api/v4/memory/search", json=body).status_code == 401
    served["keys"].revoke(served["alice"])
    with _client(served, served["alice"]) as c:
        assert c.post("/api/v4/memory/search", json=body).status_code == 401


def test_slashed_collection_is_404_and_bodies_are_bounded(served: dict[str, Any]) -> None:
    with _client(served, served["alice"]) as c:
        assert c.get("/api/v4/memory/", params={"user_id": "alice"}).status_code == 404
        huge = {
            "user": {"user_id": "alice"},
            "recall_files": [{"name": "big", "content": "x" * (5 * 1024 * 1024)}],
        }
        r = c.post("/api/v4/memory", json=huge)
        assert r.status_code == 413 and r.json()["details"][0]["code"] == "TOO_LARGE"
        empty = c.post("/api/v4/memory/search", json={"query": "", "user_id": "alice"})
        assert empty.status_code == 422 and empty.json()["message"].startswith("query")
        assert c.post("/api/v4/memory/search", json={"query": "x", "user_id": "alice", "top_k": 0}).status_code == 422


def test_openapi_schema_documents_every_route(served: dict[str, Any]) -> None:
    schema = httpx.get(served["url"] + "/openapi.json", trust_env=False).json()
    paths = schema["paths"]
    assert set(paths) >= {"/api/v4/memory", "/api/v4/memory/search", "/api/v4/memory/forget"}
    assert "HTTPBearer" in schema["components"]["securitySchemes"]


def test_socket_face_needs_no_key(engine: Any) -> None:
    import os
    import shutil
    import stat
    import tempfile
    from pathlib import Path

    from memu_server.app import create_app
    from memu_server.testing import serve_in_thread

    from memu_core.serving import bind_private_socket

    root = Path(tempfile.mkdtemp(prefix="mus", dir="/tmp"))  # short: socket paths are capped
    path = root / "s.sock"
    try:
        sock = bind_private_socket(path)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        transport = httpx.HTTPTransport(uds=str(path))
        with (
            serve_in_thread(create_app(engine, keys=None), sock),
            httpx.Client(transport=transport, base_url="http://memu") as c,
        ):
            assert c.post("/api/v4/memory/search", json={"query": "tea"}).status_code == 200
            schemes = c.get("/openapi.json").json().get("components", {}).get("securitySchemes", {})
            assert "HTTPBearer" not in schemes
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_non_blank_pattern_is_pythons_notion_of_blank() -> None:
    # The published schema and pydantic must agree on every character (ECMA-262 and Rust's
    # regex disagree about what ``\s`` covers, e.g. U+0085), and both must match str.strip.
    import re

    import pydantic
    import pytest
    from memu_server.models import NON_BLANK, SearchBody

    pattern = re.compile(NON_BLANK)
    assert all((pattern.search(chr(c)) is None) == chr(c).isspace() for c in range(0x110000))
    for blank in ("\x85", "\u3000", " \t\x1f"):
        with pytest.raises(pydantic.ValidationError):
            SearchBody(query=blank)
    assert SearchBody(query="\x85a").query == "\x85a"
