"""``memu ui`` over plain HTTP: the token and origin refusals, and every write's answer.

A real page on 127.0.0.1 over a real SQLite store (lexical-only); requests are made with
``http.client`` so each header is exactly what the test says.
"""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from memu_core._compose import local_engine
from memu_core._engine.actor import acting_as
from memu_core._engine.engine import LocalEngine
from memu_core._ui.server import RunningUi, start

RELEASE = "Cut the release branch on Tuesday.\nDeploy to staging first, then production."


@pytest.fixture
def engine(memu_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalEngine]:
    monkeypatch.setenv("MEMU_DB", str(memu_home / "ui.sqlite3"))
    engine = local_engine()
    with acting_as("claude-code run 20261203T2200Z-a1"):
        engine.commit_results(
            recall_files=[
                {"name": "release", "description": "how we ship", "content": RELEASE},
                {"name": "garden", "description": "plants", "content": "Water the tomatoes every morning."},
            ]
        )
    yield engine
    engine.close()


@pytest.fixture
def ui(engine: LocalEngine) -> Iterator[RunningUi]:
    running = start(engine).start_background()
    yield running
    running.stop()


class Client:
    """A browser stand-in: keeps the session cookie, sends what the test says."""

    def __init__(self, running: RunningUi) -> None:
        parts = urlsplit(running.address)
        self.host, self.port = parts.hostname or "", parts.port or 0
        self.origin = running.address
        self.cookie = ""
        self.csrf = ""

    def request(
        self, method: str, path: str, body: dict[str, str] | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        sent = {"Cookie": self.cookie} if self.cookie else {}
        data = None
        if body is not None:
            data = urlencode(body)
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        sent.update(headers or {})
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        text = response.read().decode("utf-8")
        out = {k.lower(): v for k, v in response.getheaders()}
        conn.close()
        return response.status, out, text

    def sign_in(self, url: str) -> None:
        status, headers, _ = self.request("GET", url[len(self.origin) :])
        assert status == 303
        self.cookie = headers["set-cookie"].split(";", 1)[0]
        status, _, page = self.request("GET", "/search")
        self.csrf = _csrf(page) if 'name="csrf"' in page else ""

    def post(self, path: str, fields: dict[str, str], *, origin: str | None = "") -> tuple[int, dict[str, str], str]:
        headers = {"Origin": self.origin if origin == "" else origin} if origin is not None else {}
        return self.request("POST", path, {**fields, "csrf": self.csrf}, headers)


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, "no CSRF field on the page"
    return found.group(1)


@pytest.fixture
def client(ui: RunningUi) -> Client:
    c = Client(ui)
    c.sign_in(ui.url)
    status, _, page = c.request("GET", "/file?track=memory&name=release")
    assert status == 200
    c.csrf = _csrf(page)
    return c


def test_no_token_wrong_token_and_another_host_are_refused_with_the_fix(ui: RunningUi) -> None:
    anonymous = Client(ui)
    status, _, text = anonymous.request("GET", "/")
    assert status == 403 and "open the address `memu ui` printed" in text
    status, _, text = anonymous.request("GET", "/?token=not-the-token")
    assert status == 403 and "token is not valid" in text
    # A name that resolves to 127.0.0.1 (DNS rebinding) is not the page, even with the token.
    status, _, text = anonymous.request("GET", ui.url[len(ui.address) :], headers={"Host": "evil.example:80"})
    assert status == 403 and "answers only at" in text


def test_the_token_becomes_a_strict_httponly_cookie_and_leaves_the_address(ui: RunningUi) -> None:
    c = Client(ui)
    status, headers, _ = c.request("GET", ui.url[len(ui.address) :].replace("/?", "/search?q=deploy&"))
    assert status == 303
    assert headers["location"] == "/search?q=deploy"
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert "token" not in cookie
    c.cookie = cookie.split(";", 1)[0]
    status, headers, page = c.request("GET", "/search?q=deploy")
    assert status == 200 and "<mark>Deploy</mark>" in page
    assert "frame-ancestors 'none'" in headers["content-security-policy"]


def test_writes_need_the_csrf_token_and_the_page_own_origin(client: Client, engine: LocalEngine) -> None:
    fields = {"track": "memory", "name": "garden"}
    status, _, text = client.request("POST", "/forget", fields, {"Origin": client.origin})
    assert status == 403 and "CSRF token is missing" in text
    status, _, text = client.post("/forget", fields, origin="http://evil.example")
    assert status == 403 and "came from another site (http://evil.example)" in text
    status, _, text = client.post("/forget", fields, origin=None)
    assert status == 403 and "no Origin or Referer" in text
    # A Referer from the page itself is enough when a browser sends no Origin.
    status, _, _ = client.request(
        "POST", "/forget", {**fields, "csrf": client.csrf}, {"Referer": f"{client.origin}/file?name=garden"}
    )
    assert status == 303
    assert [f["name"] for f in engine.list_all_recall_files()["recall_files"]] == ["release"]


def test_edit_saves_refuses_bad_frontmatter_and_detects_a_concurrent_change(
    client: Client, engine: LocalEngine
) -> None:
    _, _, form = client.request("GET", "/edit?track=memory&name=release")
    base = re.search(r'name="base" value="([^"]+)"', form)
    assert base
    good = "---\nname: release\ndescription: how we ship now\n---\nCut the release branch on Wednesday.\n"
    status, headers, _ = client.post(
        "/edit", {"track": "memory", "name": "release", "base": base.group(1), "text": good}
    )
    assert status == 303 and headers["location"] == "/file?track=memory&name=release&done=saved"
    stored = engine.history("release", "memory")[0]
    assert stored.content.strip() == "Cut the release branch on Wednesday." and stored.actor == "memu ui"
    assert stored.description == "how we ship now"

    broken = "---\nname: release\ndescription: unclosed\nCut the branch.\n"
    status, _, page = client.post("/edit", {"track": "memory", "name": "release", "base": stored.hash, "text": broken})
    assert status == 400 and "Not saved:" in page and "Cut the branch." in page  # the text is kept
    # memu edit's rules, each refused in one line that names the file and the fix.
    for text, said in (
        (good.replace("name: release", "name: other"), "set it back to &#x27;release&#x27;"),
        (good.replace("name: release", "name: release\ntrack: skill"), "the track was changed"),
        (good.replace("name: release", "name: release\nowner: me"), "unknown frontmatter key(s) owner"),
        ("Cut the branch.\n", "the frontmatter block is gone"),
        ("---\nname: release\n---\n\n", "the body is empty"),
    ):
        status, _, page = client.post(
            "/edit", {"track": "memory", "name": "release", "base": stored.hash, "text": text}
        )
        assert status == 400 and "Not saved: memory/release: " in page and said in page, (text, page[-600:])
    assert engine.history("release", "memory")[0].hash == stored.hash  # nothing written

    # A bridging run writes the file while the page's form is open: the save is refused.
    with acting_as("codex run 20261203T2300Z-b2"):
        engine.commit_results(recall_files=[{"name": "release", "content": "Releases ship on Fridays."}])
    late = good.replace("Wednesday", "Thursday")
    status, _, page = client.post("/edit", {"track": "memory", "name": "release", "base": stored.hash, "text": late})
    assert status == 409 and "Not saved:" in page and "Thursday" in page
    assert engine.history("release", "memory")[0].content == "Releases ship on Fridays."


def test_forget_undo_and_restore(client: Client, engine: LocalEngine) -> None:
    fields = {"track": "memory", "name": "garden"}
    assert client.post("/forget", fields)[0] == 303
    status, _, page = client.request("GET", "/file?track=memory&name=garden&done=forgot")
    assert status == 200 and "Forgot memory/garden" in page and "Undo forget" in page
    assert client.post("/undo-forget", fields)[0] == 303
    assert engine.history("garden", "memory")[0].content == "Water the tomatoes every morning."

    engine.commit_results(recall_files=[{"name": "garden", "description": "plants", "content": "Water twice."}])
    status, _, page = client.request(
        "GET", "/diff?track=memory&name=garden&v=" + str(engine.history("garden")[0].version)
    )
    assert status == 200 and "+Water twice." in page and "-Water the tomatoes every morning." in page
    first = engine.history("garden", "memory")[-1].version
    assert client.post("/restore", {**fields, "v": str(first)})[0] == 303
    newest = engine.history("garden", "memory")[0]
    assert newest.content == "Water the tomatoes every morning." and newest.action == "restore"
    status, _, text = client.post("/restore", {**fields, "v": "999"})
    assert status == 400 and "no version 999" in text


def test_search_runs_and_events_pages(client: Client, memu_home: Path) -> None:
    status, _, page = client.request("GET", "/search?q=deploy+production&mode=lexical")
    assert status == 200
    assert "lexical rank 1" in page and "words matched: deploy, production" in page
    status, _, text = client.request("GET", "/search?q=x&mode=psychic")
    assert status == 400 and "use hybrid or lexical" in text

    status, _, page = client.request("GET", "/runs")
    assert status == 200 and "claude-code run 20261203T2200Z-a1" in page and "memory/release" in page

    spool = memu_home / ".memu" / "events.jsonl"
    spool.parent.mkdir(parents=True, exist_ok=True)
    event = {
        "event_name": "memory_commit_succeeded",
        "occurred_at": "2026-12-03T22:00:00.000Z",
        "properties": {"recall_file_count": 2},
    }
    spool.write_text(json.dumps(event) + "\nnot json\n", encoding="utf-8")
    status, _, page = client.request("GET", "/events")
    assert status == 200 and "memory_commit_succeeded" in page and "recall_file_count=2" in page


def test_a_name_in_the_address_is_text_never_markup(client: Client, engine: LocalEngine) -> None:
    engine.commit_results(recall_files=[{"name": "<script>x</script>", "content": "A line with <b>tags</b>."}])
    status, _, page = client.request("GET", "/?" + urlencode({"text": "script"}))
    assert status == 200 and "<script>x" not in page and "&lt;script&gt;x&lt;/script&gt;" in page


def test_the_listing_pages_through_every_file(
    client: Client, engine: LocalEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memu_core._ui import data

    engine.commit_results(recall_files=[{"name": f"note-{n}", "content": f"Note {n}."} for n in range(5)])
    monkeypatch.setattr(data, "LIST_PAGE", 3)
    seen: list[str] = []
    path = "/"
    for _ in range(5):
        status, _, page = client.request("GET", path)
        assert status == 200
        seen += re.findall(r'<a href="/file\?track=memory&amp;name=([^"&]+)">', page)
        onward = re.search(r'<a href="(/\?[^"]*after=[^"]+)">Next page</a>', page)
        if onward is None:
            break
        path = onward.group(1).replace("&amp;", "&")
    assert seen == ["garden", *(f"note-{n}" for n in range(5)), "release"]
    status, _, page = client.request("GET", "/?track=memory&text=note&after=" + "x" * 8)
    assert status == 400 and "malformed cursor" in page
