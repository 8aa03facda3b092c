"""A host plugin written against ``memu_core.host`` alone passes the source contract and runs a
whole bridging cycle, in a project of its own outside this repository."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

HOST = textwrap.dedent(
    '''
    """A third-party host: one JSONL file per session, ``{"who": ..., "said": ...}`` per line."""

    from pathlib import Path
    from typing import Any

    from memu_core.host import HostSpec, RecordKind, TranscriptSource, run_host


    class ChatSource(TranscriptSource):
        name = "chat"

        def default_root(self) -> Path:
            return Path.home() / ".chat" / "logs"

        def classify_record(self, obj: dict[str, Any]) -> RecordKind:
            return RecordKind.MESSAGE if obj.get("who") in ("me", "bot") else RecordKind.OTHER


    SPEC = HostSpec(
        id="chat", display="Chat", source="chathost:ChatSource", package="chathost",
        session_dir="~/.chat/logs",
    )


    def main() -> int:
        return run_host(SPEC)
    '''
)

TESTS = textwrap.dedent(
    '''
    import json
    import os
    from pathlib import Path

    from chathost import SPEC, ChatSource

    from memu_core.testing.rehearse import run_cycle
    from memu_core.testing.source_contract import SourceContract, SourceFixture


    def _writer(root):
        clock = [1_700_000_000]

        def add(session, texts):
            path = root / f"{session}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as fh:
                for text in texts:
                    fh.write(json.dumps({"who": "me", "said": text}) + "\\n")
            clock[0] += 10
            os.utime(path, (clock[0], clock[0]))

        return add


    class TestChatContract(SourceContract):
        def make(self, tmp_path):
            return SourceFixture(ChatSource(tmp_path / "logs"), _writer(tmp_path / "logs"))


    def test_a_whole_cycle(memu_home):
        _writer(memu_home / ".chat" / "logs")("s1", ["we release on fridays after the smoke test"])
        cycle = run_cycle(
            SPEC,
            memory=("release-day", "when we release", "Releases go out on Fridays after the smoke test."),
            skill=("cut-release", "how to cut a release", "Run the smoke test, then tag."),
            query="release friday",
        )
        assert "prepared 1 session(s)" in cycle.prepare_out
        assert [r["said"] for r in cycle.conversation] == ["we release on fridays after the smoke test"]
        assert {"release-day", "cut-release"} <= {f["name"] for f in cycle.retrieved["files"]}
    '''
)


def test_a_host_built_on_memu_core_host_alone(tmp_path: Path) -> None:
    project = tmp_path / "chat-host"
    (project / "chathost").mkdir(parents=True)
    (project / "chathost" / "__init__.py").write_text(HOST, encoding="utf-8")
    (project / "tests").mkdir()
    (project / "tests" / "test_chat.py").write_text(TESTS, encoding="utf-8")
    (project / "conftest.py").write_text('pytest_plugins = ["memu_core.testing.plugin"]\n', encoding="utf-8")
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\npythonpath = ['.']\n", encoding="utf-8")

    imported = {
        node.module
        for node in ast.walk(ast.parse(HOST))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memu_core")
    }
    assert imported == {"memu_core.host"}

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMU_", "PYTEST_")) and k != "PYTHONPATH"}
    env["HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    # Every check of the source contract ran (and the cycle test beside them), none skipped.
    from memu_core.testing.source_contract import SourceContract

    checks = sum(name.startswith("test_") for name in dir(SourceContract))
    assert f"{checks + 1} passed" in done.stdout, done.stdout[-2000:]
