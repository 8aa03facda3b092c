"""``memu ui``'s page under ``/ui`` on memu-server: signed in by an API key, held to its scope."""

from __future__ import annotations

import re
from typing import Any

import httpx

ALICE = {"name": "tea", "track": "memory", "description": "drinks", "content": "Alice drinks green tea."}
BOB = {"name": "coffee", "track": "memory", "description": "drinks", "content": "Bob drinks black coffee."}


def _browser(served: dict[str, Any]) -> httpx.Client:
    return httpx.Client(base_url=served["url"], trust_env=False, timeout=30, follow_redirects=False)


def _seed(served: dict[str, Any]) -> None:
    engine = served["engine"]
    engine.commit_results(recall_files=[ALICE], user={"user_id": "alice"})
    engine.commit_results(recall_files=[BOB], user={"user_id": "bob", "agent_id": "cli"})


def test_without_a_key_or_with_a_revoked_one_the_page_is_refused(served: dict[str, Any]) -> None:
    with _browser(served) as b:
        r = b.get("/ui/")
        assert r.status_code == 403 and "needs the link with its token" in r.text
        assert b.get("/ui/", params={"token": "not-a-key"}).status_code == 403
        [info] = [k for k in served["keys"].list() if k.user_id == "alice"]
        served["keys"].revoke(info.id)
        assert b.get("/ui/", params={"token": served["alice"]}).status_code == 403


def test_a_key_opens_the_page_in_its_own_scope_only(served: dict[str, Any]) -> None:
    _seed(served)
    with _browser(served) as b:
        r = b.get("/ui/", params={"token": served["alice"]})
        assert r.status_code == 303 and r.headers["location"] == "/ui/"
        assert "Path=/ui" in r.headers["set-cookie"] and "SameSite=Strict" in r.headers["set-cookie"]
        page = b.get("/ui/").text
        assert "tea" in page and "coffee" not in page and "alice (key" in page
        hits = b.get("/ui/search", params={"q": "drinks coffee tea", "mode": "lexical"}).text
        assert "Alice <mark>drinks</mark> green <mark>tea</mark>." in hits and "Bob" not in hits
        # Bob's file by its address: refused, not shown.
        other = b.get("/ui/file", params={"track": "memory", "name": "coffee", "user": "bob", "agent": "cli"})
        assert other.status_code == 400 and "another scope" in other.text

        page = b.get("/ui/file", params={"track": "memory", "name": "tea", "user": "alice", "agent": "default"}).text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf
        fields = {"track": "memory", "name": "tea", "user": "alice", "agent": "default", "csrf": csrf.group(1)}
        foreign = b.post("/ui/forget", data=fields, headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403 and "another site" in foreign.text
        done = b.post("/ui/forget", data=fields, headers={"Origin": served["url"]})
        assert done.status_code == 303 and done.headers["location"].startswith("/ui/file?")
    assert served["engine"].list_all_recall_files({"user_id": "alice"})["recall_files"] == []
    assert [f["name"] for f in served["engine"].list_all_recall_files({"user_id": "bob"})["recall_files"]] == ["coffee"]
