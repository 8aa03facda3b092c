"""memu-telemetry end to end: real binaries in subprocesses, a real HTTP recorder on 127.0.0.1,
and the real memu-server receiving events."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
QUERY = "how do we cut a release"
HOSTS = ("claude-code", "codex", "cursor", "openclaw", "hermes", "workbuddy", "cola", "agent")


class Recorder:
    """An HTTP endpoint that records each POST body and answers from a script of statuses."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        self.script: list[tuple[int, dict[str, str]]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, extra = recorder.script.pop(0) if recorder.script else (202, {})
                if status < 300:
                    recorder.bodies.append(body)
                    recorder.headers.append(dict(self.headers))
                self.send_response(status)
                for key, value in extra.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/memu/analytics/events"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self) -> list[dict[str, object]]:
        return [json.loads(b) for b in self.bodies]

    def names(self) -> list[str]:
        return [str(e["event_name"]) for e in self.events()]


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    r = Recorder()
    yield r
    r.server.shutdown()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_") and k != "DO_NOT_TRACK"}
    e.update(HOME=str(tmp_path), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0")
    return e


def run(env: dict[str, str], binary: str, *args: str, code: int = 0, cwd: Path | None = None) -> str:
    done = subprocess.run([str(BIN / binary), *args], env=env, capture_output=True, text=True, timeout=120, cwd=cwd)
    assert done.returncode == code, (binary, args, done.stdout, done.stderr)
    return done.stdout + done.stderr


def codex_session(home: Path) -> Path:
    path = home / ".codex" / "sessions" / "2026" / "08" / "20" / "rollout-2026-08-20T10-00-00-0198aaaa.jsonl"
    path.parent.mkdir(parents=True)
    text = "We cut a release by tagging main and running the release-train script."
    records = [
        {"type": "session_meta", "payload": {"id": "0198aaaa", "cwd": "/w"}},
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def spool(home: Path) -> Path:
    return home / ".memu" / "events.jsonl"


def test_a_bridging_loop_sends_only_allowed_properties(tmp_path: Path, env: dict[str, str], recorder: Recorder) -> None:
    from memu_core.events import CATALOGUE

    env.update(MEMU_TELEMETRY="1", MEMU_EVENTS_BASE_URL=recorder.url, MEMU_BRIDGING_RUN="1")
    session = codex_session(tmp_path)
    run(env, "memu", "commit", "--from-dir", str(REPO / "examples"))
    run(env, "memu-codex", "init")
    run(env, "memu-codex", "docs", "install")
    run(env, "memu-codex", "prepare")
    mirror = tmp_path / ".memu" / "hosts" / "codex" / "memory" / "release-train-secret-notes.md"
    mirror.parent.mkdir(parents=True, exist_ok=True)
    mirror.write_text("---\nname: release-train-secret-notes\ndescription: how releases ship\n---\nTag main.\n")
    run(env, "memu-codex", "commit")
    out = run(env, "memu-codex", "retrieve", QUERY)
    assert "release" in out
    assert run(env, "memu-codex", "report", "install").strip() == "recorded"
    detail = f"prepare failed reading {session} with token sk-live-0123456789abcdefABCDEF"
    run(env, "memu-codex", "report", "error", "--stage", "remember", "--detail", detail)
    run(env, "memu-codex", "report", "error", "--stage", "remember", "--detail", detail)  # deduplicated
    bad = dict(env, MEMU_DB=str(tmp_path / "store-is-a-folder"))
    (tmp_path / "store-is-a-folder").mkdir()
    run(bad, "memu-codex", "retrieve", QUERY, code=1)  # spooled, not flushed: the turn stays light
    run(bad, "memu-codex", "prepare", code=1)
    run(env, "memu-codex", "report", "flush")

    names = recorder.names()
    for expected in (
        "memory_commit_succeeded",
        "cli_install_started",
        "install_guide_opened",
        "memory_update_started",
        "memory_list_succeeded",
        "memory_update_succeeded",
        "memory_search_succeeded",
        "cli_install_succeeded",
        "agent_error_reported",
        "memory_update_failed",
        "cli_error",
    ):
        assert expected in names, (expected, names)
    assert names.count("agent_error_reported") == 1
    for event in recorder.events():
        reported_by, allowed = CATALOGUE[str(event["event_name"])]
        assert set(event["properties"]) <= set(allowed), event  # type: ignore[arg-type]
        assert event["context"]["reported_by"] == reported_by  # type: ignore[index]
        assert str(event["occurred_at"]).endswith("Z") and len(str(event["occurred_at"])) == 24
    by_name = {e["event_name"]: e for e in recorder.events()}
    assert by_name["memory_search_succeeded"]["properties"]["result_count"] >= 1  # type: ignore[index]
    assert by_name["memory_update_succeeded"]["properties"]["recall_file_count"] == 1  # type: ignore[index]
    assert {e["properties"]["command"] for e in recorder.events() if e["event_name"] == "cli_error"} == {  # type: ignore[index]
        "retrieve",
        "prepare",
    }
    assert "memory_search_failed" in names
    assert all(h["User-Agent"].startswith("memu-cli/") for h in recorder.headers)
    sent = b"\n".join(recorder.bodies)
    for secret in (
        QUERY,
        "cut a release",
        "release-train-secret-notes",
        session.name,
        str(tmp_path),
        "sk-live",
        "store-is-a-folder",
    ):
        assert secret.encode() not in sent, secret
    assert not spool(tmp_path).exists() or not spool(tmp_path).read_text().strip()


def test_telemetry_off_writes_and_sends_nothing(tmp_path: Path, env: dict[str, str], recorder: Recorder) -> None:
    env.update(MEMU_EVENTS_BASE_URL=recorder.url)
    for switch in ({}, {"MEMU_TELEMETRY": "0"}, {"MEMU_TELEMETRY": "1", "DO_NOT_TRACK": "1"}):
        e = dict(env, **switch)
        run(e, "memu-codex", "init")
        run(e, "memu-codex", "docs", "install")
        run(e, "memu-codex", "retrieve", QUERY)
        assert run(e, "memu-codex", "report", "install").strip() == "reporting is off; nothing recorded"
        run(e, "memu-codex", "report", "flush")
    assert recorder.bodies == []
    assert not list((tmp_path / ".memu").glob("events*"))


def test_failures_keep_events_until_they_are_delivered(tmp_path: Path, env: dict[str, str], recorder: Recorder) -> None:
    env.update(MEMU_TELEMETRY="1", MEMU_EVENTS_BASE_URL="http://127.0.0.1:9/none")  # nothing listens on 9
    run(env, "memu-codex", "docs", "install")
    run(env, "memu-codex", "report", "install")
    assert len(list((tmp_path / ".memu").glob("events.*.sending"))) == 1  # kept after the failed POST
    env["MEMU_EVENTS_BASE_URL"] = recorder.url
    recorder.script = [(503, {}), (202, {})]
    run(env, "memu-codex", "report", "flush")
    assert recorder.names() == []  # the 503 stopped the flush; the event stays
    recorder.script = [(429, {"Retry-After": "3600"})]
    run(env, "memu-codex", "report", "flush")
    run(env, "memu-codex", "report", "flush")  # inside Retry-After: not even asked
    assert recorder.script == []
    (tmp_path / ".memu" / "events.retry_after").unlink()
    recorder.script = [(400, {})]  # a permanent refusal discards that one event
    out = run(env, "memu-codex", "report", "flush")
    assert "1 event(s) discarded" in out
    assert recorder.names() == ["cli_install_succeeded"]
    assert not list((tmp_path / ".memu").glob("events.*.sending"))


def test_a_truncated_line_and_a_full_spool_are_counted_as_dropped(
    tmp_path: Path, env: dict[str, str], recorder: Recorder
) -> None:
    from memu_telemetry.spool import MAX_SPOOL_BYTES

    env.update(MEMU_TELEMETRY="1")
    run(env, "memu-codex", "docs", "install")
    path = spool(tmp_path)
    with path.open("ab") as f:
        f.write(b'{"event_id": "cut-short-by-a-crash", "event_na')  # no newline: a torn write
    run(env, "memu-codex", "docs", "install")  # heals the line before appending its own
    lines = path.read_bytes().split(b"\n")
    assert json.loads(lines[-2])["event_name"] == "install_guide_opened"
    size = path.stat().st_size
    with path.open("ab") as f:
        f.write(b"\n" * (MAX_SPOOL_BYTES - size))
    run(env, "memu-codex", "docs", "install")
    run(env, "memu-codex", "docs", "install")
    assert path.stat().st_size == MAX_SPOOL_BYTES  # at the cap: nothing more is written
    assert (tmp_path / ".memu" / "events.dropped").read_text() == "2"
    env["MEMU_EVENTS_BASE_URL"] = recorder.url
    run(env, "memu-codex", "report", "flush")
    dropped = [e for e in recorder.events() if e["event_name"] == "cli_events_dropped"]
    assert dropped[0]["properties"] == {"dropped_count": 2}
    assert (tmp_path / ".memu" / "events.dropped").read_text() == "1"  # the torn line, found by that flush
    assert recorder.names().count("install_guide_opened") == 2


def test_a_full_disk_while_appending_is_counted(tmp_path: Path, env: dict[str, str]) -> None:
    env.update(MEMU_TELEMETRY="1")
    run(env, "memu-codex", "docs", "install")
    size = spool(tmp_path).stat().st_size
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({size + 10}, {size + 10}))\n"
        "from memu_core.host import run_host\n"
        "sys.exit(run_host('codex', ['docs', 'install']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".memu" / "events.dropped").read_text() == "1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_kill_during_a_flush_loses_nothing_and_memu_server_counts_each_event_once(
    tmp_path: Path, env: dict[str, str]
) -> None:
    keys = tmp_path / "server-keys.sqlite3"
    env.update(MEMU_SERVER_KEYS=str(keys), MEMU_DB=str(tmp_path / "server.sqlite3"))
    key = run(env, "memu-server", "keys", "create", "--user-id", "ops").split()[-1]
    port = _free_port()
    server = subprocess.Popen(
        [str(BIN / "memu-server"), "serve", "--port", str(port)], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        url = f"http://127.0.0.1:{port}/api/memu/analytics/events"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        client = dict(env, MEMU_TELEMETRY="1", MEMU_CLOUD_API_KEY=key)
        client.pop("MEMU_DB")
        for _ in range(30):
            run(client, "memu-codex", "docs", "uninstall")  # spooled (no endpoint yet)
        assert len(spool(tmp_path).read_text().splitlines()) == 30
        client["MEMU_EVENTS_BASE_URL"] = url
        flusher = subprocess.Popen([str(BIN / "memu-codex"), "report", "flush"], env=client, stdout=subprocess.PIPE)
        time.sleep(0.8)  # mid-flush: some events posted, the batch not yet settled
        flusher.send_signal(signal.SIGKILL)
        flusher.wait()
        run(client, "memu-codex", "report", "flush")
        assert not list((tmp_path / ".memu").glob("events.*.sending"))
        stats = json.loads(run(env, "memu-server", "events", "stats", "--json"))
        counts = {row["event_name"]: row["count"] for row in stats["days"]}
        assert counts == {"uninstall_guide_opened": 30}
        unauth = subprocess.run(
            ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", url, "-d", "{}"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert unauth.stdout == "401"
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.parametrize("host", HOSTS)
def test_report_verbs_work_on_every_host(host: str, tmp_path: Path, env: dict[str, str], recorder: Recorder) -> None:
    binary = f"memu-{host}"
    assert run(env, binary, "report", "install").strip() == "reporting is off; nothing recorded"
    env.update(MEMU_TELEMETRY="1", MEMU_EVENTS_BASE_URL=recorder.url)
    assert run(env, binary, "report", "uninstall").strip() == "recorded"
    assert run(env, binary, "report", "error", "--stage", "other").strip() == "recorded"
    assert "delivered 0 event(s)" in run(env, binary, "report", "flush")
    assert "is not a stage" in run(env, binary, "report", "error", "--stage", "nope", code=2)
    assert {"cli_uninstall_succeeded", "agent_error_reported"} <= set(recorder.names())
