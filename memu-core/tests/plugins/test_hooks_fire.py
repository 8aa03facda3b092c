"""Every hook memu-core declares fires on the real command path.

One test per hookspec, named ``test_<hook name>`` (``test_every_hook_has_a_firing_test`` holds
the list to the specs): each registers a plugin in process, runs real commands through the
console-script entry functions (``memu`` and a host binary's ``run_host``) in an isolated home,
and shows the plugin was asked and used.
"""

from __future__ import annotations

import inspect
import json
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
import typer

from memu_core import hookimpl, hookspecs
from memu_core._cli.main import main as memu_main
from memu_core._plugins.manager import get_plugins
from memu_core._plugins.reference import hook_names
from memu_core._stores.memory import InMemoryStore
from memu_core.host import HostSpec, RecordKind, TranscriptSource, run_host
from memu_core.interfaces import AgenticMemoryBackend, EventSink, TemplateResolver
from memu_core.testing.embedders import HashingEmbedder
from memu_core.types import Event

REPO = Path(__file__).resolve().parents[3]
FACT = "The release train leaves every Tuesday at 09:30 from the main branch."


def memu(*args: str) -> int:
    """Run the ``memu`` console script's entry function; its exit code."""
    try:
        memu_main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def host(binary: str | HostSpec, *args: str) -> int:
    """Run a host binary's entry function (what its console script calls); its exit code."""
    return run_host(binary, list(args))


def register(**hooks: Any) -> None:
    """Register one in-process plugin implementing ``hooks`` on the process plugin manager."""
    get_plugins().register(types.SimpleNamespace(**{name: hookimpl(fn) for name, fn in hooks.items()}))


class DemoSource(TranscriptSource):
    """``{"role": ..., "text": ...}`` per line."""

    name: ClassVar[str] = "demo"

    def default_root(self) -> Path:
        return Path.home() / ".demo"

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        return RecordKind.MESSAGE if obj.get("role") in ("user", "assistant") else RecordKind.OTHER


DEMO = HostSpec(id="demo", display="Demo", source=f"{__name__}:DemoSource", package="memu_host_codex")


def demo_sessions(home: Path) -> str:
    """One demo session under ``home``; returns its folder for ``--session-dir``."""
    folder = home / "demo-sessions"
    folder.mkdir()
    lines = [{"role": "user", "text": FACT}, {"role": "assistant", "text": "Noted."}]
    (folder / "s1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(folder)


def codex_sessions(home: Path) -> None:
    """One Codex rollout where ``memu-codex`` looks by default."""
    path = home / ".codex" / "sessions" / "2026" / "08" / "20" / "rollout-2026-08-20T10-00-00-0198aaaa.jsonl"
    path.parent.mkdir(parents=True)
    records = [
        {"type": "session_meta", "payload": {"id": "0198aaaa", "cwd": "/w"}},
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": FACT}]},
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_every_hook_has_a_firing_test() -> None:
    specs = {name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("memu_")}
    assert specs == set(hook_names())
    tests = {name.removeprefix("test_") for name, fn in globals().items() if callable(fn) and name.startswith("test_")}
    assert specs <= tests, f"hooks without a firing test here: {sorted(specs - tests)}"


def test_memu_register_stores(
    memu_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    opened: list[str] = []

    class FakeStore(InMemoryStore):
        name: ClassVar[str] = "fake"
        url_schemes: ClassVar[tuple[str, ...]] = ("fake://",)
        shared: ClassVar[dict[str, InMemoryStore]] = {}

        @classmethod
        def open(cls, url: str = "fake://") -> InMemoryStore:
            opened.append(url)
            return cls.shared.setdefault(url, InMemoryStore())

    register(memu_register_stores=lambda: [FakeStore])
    monkeypatch.setenv("MEMU_DB", "fake://team")
    assert memu("commit", "--from-dir", str(REPO / "examples")) == 0
    capsys.readouterr()
    assert memu("retrieve", "how do we cut a release") == 0
    assert json.loads(capsys.readouterr().out)["files"][0]["name"] == "release-checklist"
    assert opened == ["fake://team", "fake://team"]


def test_memu_register_embedders(
    memu_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[HashingEmbedder] = []

    class Counted(HashingEmbedder):
        name: ClassVar[str] = "counted"

        @classmethod
        def from_settings(cls, settings: Any) -> HashingEmbedder:
            built.append(cls())
            return built[-1]

    register(memu_register_embedders=lambda: [Counted])
    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "counted")
    assert memu("commit", "--from-dir", str(REPO / "examples")) == 0
    capsys.readouterr()
    assert memu("retrieve", "how do we cut a release") == 0
    assert json.loads(capsys.readouterr().out)["mode"] == "hybrid"
    assert [e.calls for e in built] == [1, 1]  # one batch at commit, the query at retrieve


def test_memu_register_backends(
    memu_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[str] = []

    class Canned(AgenticMemoryBackend):
        name: ClassVar[str] = "cloud"

        @classmethod
        def from_settings(cls, settings: Any) -> Canned:
            return cls()

        def list_all_recall_files(self, where: Any = None, *, cursor: Any = None, limit: int = 100) -> dict[str, Any]:
            return {"recall_files": [], "next_cursor": None}

        def progressive_retrieve(self, query: str, where: Any = None, **options: Any) -> dict[str, Any]:
            asked.append(query)
            return {"segments": [], "files": [{"name": "canned"}], "resources": []}

        def commit_results(self, **payload: Any) -> dict[str, Any]:
            return {"recall_files": [], "resources": []}

        def forget(self, name: str, *, track: str = "memory", user: Any = None) -> dict[str, Any]:
            return {"forgotten": []}

    register(memu_register_backends=lambda: [Canned])
    # This plugin provides the cloud backend; the installed one would be a duplicate name.
    monkeypatch.setenv("MEMU_DISABLE_PLUGINS", "memu-backend-cloud")
    monkeypatch.setenv("MEMU_MEMORY_MODE", "cloud")
    monkeypatch.setenv("MEMU_CLOUD_API_KEY", "k-test")
    assert memu("retrieve", "anything") == 0
    assert json.loads(capsys.readouterr().out)["files"] == [{"name": "canned"}]
    assert asked == ["anything"]


def test_memu_register_hosts(memu_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    register(memu_register_hosts=lambda: [DEMO])
    assert host("demo", "prepare", "--session-dir", demo_sessions(memu_home)) == 0
    assert "prepared 1 session(s) -> 3 job(s)" in capsys.readouterr().out
    assert (memu_home / ".memu" / "hosts" / "demo" / "jobs" / "1.txt").is_file()
    assert host("no-such-host", "retrieve", "x") == 2
    assert "no host named 'no-such-host' is installed" in capsys.readouterr().err


def test_memu_register_event_sinks(memu_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    received: list[Event] = []

    class Recorder(EventSink):
        name: ClassVar[str] = "recorder"

        def emit(self, event: Event) -> None:
            received.append(event)

    class Broken(EventSink):
        name: ClassVar[str] = "broken"

        def emit(self, event: Event) -> None:
            raise RuntimeError("a sink that raises must not stop the command or the others")

    register(memu_register_event_sinks=lambda: [Broken, Recorder])
    codex_sessions(memu_home)
    steps: list[tuple[Sequence[str], str, str]] = [
        (("memu", "commit", "--from-dir", str(REPO / "examples")), "memory_commit_succeeded", ""),
        (("memu", "retrieve", "release checklist"), "memory_search_succeeded", ""),
        (("codex", "init"), "cli_install_started", "codex"),
        (("codex", "docs", "install"), "install_guide_opened", "codex"),
        (("codex", "prepare"), "memory_update_started", "codex"),
        (("codex", "commit"), "memory_update_succeeded", "codex"),  # after memory_commit_succeeded
        (("codex", "retrieve", "release train"), "memory_search_succeeded", "codex"),
        (("memu", "retrieve", "  "), "memory_search_failed", ""),
    ]
    for (binary, *args), name, host_id in steps:
        code = memu(*args) if binary == "memu" else host(binary, *args)
        assert code == (2 if name.endswith("_failed") else 0), (args, capsys.readouterr().err)
        assert (received[-1].name, received[-1].host) == (name, host_id)
        assert received[-1].occurred_at.tzinfo is not None
    assert {e.name for e in received} <= set(hookspecs.EVENTS)  # the documented table is complete
    by_name = {e.name: e.properties for e in received}
    assert set(by_name["memory_list_succeeded"]) == {"result_count", "latency_ms"}
    assert set(by_name["memory_search_failed"]) <= {"result_count", "latency_ms"}  # the allow-list, no message
    assert all(isinstance(p.get("latency_ms"), int) for p in by_name.values() if "latency_ms" in p)
    assert received[1].properties["result_count"] >= 1  # type: ignore[operator]


def test_memu_register_template_resolvers(memu_home: Path) -> None:
    class Custom(TemplateResolver):
        name: ClassVar[str] = "custom"
        priority: ClassVar[int] = 10

        def resolve(self, name: str) -> str | None:
            if name == "memory-job":  # at memu's own version: the lower priority number wins the tie
                header = "<!-- memu-template memory-job v1 -->\n"
                return header + "CUSTOM memory job: read {input_path}, write into {track_dir}\n"
            if name == "skill-job":
                return "an answer missing its placeholders is skipped {nope}"
            return None

    register(memu_register_template_resolvers=lambda: [Custom], memu_register_hosts=lambda: [DEMO])
    assert host("demo", "prepare", "--session-dir", demo_sessions(memu_home)) == 0
    jobs = memu_home / ".memu" / "hosts" / "demo" / "jobs"
    assert (jobs / "1.txt").read_text().startswith("CUSTOM memory job: read ")
    assert "CUSTOM" not in (jobs / "2.txt").read_text()  # the embedded skill job answered


def test_memu_register_commands(memu_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def memu_register_commands(app: typer.Typer) -> None:
        @app.command("hello")
        def hello() -> None:
            """Say hello."""
            print("hello from a plugin")

    register(memu_register_commands=memu_register_commands)
    assert memu("hello") == 0
    assert capsys.readouterr().out == "hello from a plugin\n"
    # The built-in commands arrive through the same hook, from memu-core's own plugin.
    assert memu("--help") == 0
    help_text = capsys.readouterr().out
    assert "commit" in help_text and "hello" in help_text
    record = next(r for r in get_plugins().report if r.name == "memu_core._cli.plugin")
    assert record.builtin and "memu_register_commands" in record.hooks


def test_memu_register_host_commands(memu_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def memu_register_host_commands(spec: HostSpec, app: typer.Typer) -> None:
        @app.command("wave")
        def wave() -> None:
            """Wave."""
            print(f"wave from {spec.binary}")

    register(memu_register_host_commands=memu_register_host_commands)
    assert host("codex", "wave") == 0
    assert capsys.readouterr().out == "wave from memu-codex\n"
    # A host's extras come the same way: the Claude Code plugin adds ``cowork``.
    assert host("claude-code", "cowork", "--help") == 0
    assert "Cowork" in capsys.readouterr().out
    assert "memu_host_claude_code" in sys.modules
