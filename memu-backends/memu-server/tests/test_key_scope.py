"""A scoped key acts as its scope when a request names none, and tells its scope (``whoami``).

Two machines that share memory through one key bound to ``alice`` must work without each
setting ``MEMU_USER_ID=alice``: memU's clients send ``default`` for a scope nobody named.
"""

from __future__ import annotations

from typing import Any

import httpx

PROFILE = {"name": "profile", "track": "memory", "description": "who", "content": "- drinks green tea"}


def _client(served: dict[str, Any], key: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=served["url"], headers=headers, trust_env=False, timeout=30)


def test_a_key_bound_to_alice_acts_as_alice_when_the_request_names_no_user(served: dict[str, Any]) -> None:
    with _client(served, served["alice"]) as c:
        # No user at all, and memU's client's spelling of "none named": "default".
        r = c.post("/api/v4/memory", json={"recall_files": [PROFILE]})
        assert r.status_code == 200, r.text
        named_default = c.get("/api/v4/memory", params={"user_id": "default", "agent_id": "default"})
        assert [f["name"] for f in named_default.json()["recall_files"]] == ["profile"]
        hits = c.post("/api/v4/memory/search", json={"query": "green tea"}).json()
        assert hits["segments"]
        gone = c.post("/api/v4/memory/forget", json={"name": "profile"}).json()
        assert [f["name"] for f in gone["forgotten"]] == ["profile"]
    engine = served["engine"]
    assert engine.list_all_recall_files({"user_id": "default"})["recall_files"] == []


def test_the_filled_scope_is_the_keys_own_and_another_scope_is_still_refused(served: dict[str, Any]) -> None:
    with _client(served, served["alice"]) as c:
        c.post("/api/v4/memory", json={"recall_files": [PROFILE]}).raise_for_status()
        assert c.post("/api/v4/memory/search", json={"query": "tea", "user_id": "bob"}).status_code == 403
    stored = served["engine"].list_all_recall_files({"user_id": "alice", "agent_id": "default"})
    assert [f["name"] for f in stored["recall_files"]] == ["profile"]
    with _client(served, served["bob_cli"]) as c:  # bound to bob and agent cli: both are filled
        c.post("/api/v4/memory", json={"user": {"user_id": "default"}, "recall_files": [PROFILE]}).raise_for_status()
        refused = c.post("/api/v4/memory/search", json={"query": "tea", "user_id": "bob", "agent_id": "web"})
        assert refused.status_code == 403 and refused.json()["details"][0]["code"] == "FORBIDDEN_SCOPE"
    stored = served["engine"].list_all_recall_files({"user_id": "bob", "agent_id": "cli"})
    assert [f["name"] for f in stored["recall_files"]] == ["profile"]


def test_whoami_tells_the_keys_scope_and_needs_a_key(served: dict[str, Any]) -> None:
    with _client(served, served["alice"]) as c:
        r = c.get("/api/v4/memory/whoami")
        assert r.status_code == 200, r.text
        assert r.json() == {"user_id": "alice", "agent_id": None}
    with _client(served, served["bob_cli"]) as c:
        assert c.get("/api/v4/memory/whoami").json() == {"user_id": "bob", "agent_id": "cli"}
    with _client(served, None) as c:
        assert c.get("/api/v4/memory/whoami").status_code == 401
    served["keys"].revoke(served["alice"])
    with _client(served, served["alice"]) as c:
        assert c.get("/api/v4/memory/whoami").status_code == 401
