"""What the warm server answers: the same bytes as in-process retrieval, fresh after commits,
and a client that imports nothing heavy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memu_core._serve import client

from .conftest import start_server

HOST_MAIN = "import sys; from memu_host_claude_code.cli import main; sys.argv[0] = 'memu-claude-code'; main()"


def _host_retrieve(query: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", HOST_MAIN, "retrieve", query], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_host_retrieve_prints_the_same_json_warm_and_in_process(home: Path) -> None:
    cold = _host_retrieve("green tea deploy")
    proc = start_server()
    before = client.status()["requests"]  # type: ignore[index]
    warm = _host_retrieve("green tea deploy")
    assert client.status()["requests"] == before + 2  # type: ignore[index]  # our retrieve (+ this status)
    assert warm == cold and json.loads(warm)["segments"]
    client.stop()
    proc.wait(30)


def test_memu_retrieve_prints_the_same_json_warm_and_in_process(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memu_core._cli.main import fast
    from memu_core._cli.memory_cmds import run_retrieve

    args = ["retrieve", "tea", "--top-k", "3", "--track", "memory", "--user-id", "default"]
    run_retrieve("tea", top_k=3, tracks=["memory"], where={"user_id": "default"})
    cold = capsys.readouterr().out
    proc = start_server()
    before = client.status()["requests"]  # type: ignore[index]
    action = fast(args)
    assert action is not None
    action()
    assert capsys.readouterr().out == cold
    assert client.status()["requests"] == before + 2  # type: ignore[index]  # answered warm (+ this status)
    client.stop()
    proc.wait(30)


def test_warm_client_imports_nothing_heavy(home: Path) -> None:
    proc = start_server()
    probe = (
        "import sys; from memu_host_claude_code.cli import main\n"
        "sys.argv = ['memu-claude-code', 'retrieve', 'tea']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "heavy = ['typer', 'click', 'pydantic', 'sqlalchemy', 'alembic', 'litellm', 'torch',\n"
        "         'sentence_transformers', 'faiss', 'numpy', 'httpx', 'fastapi', 'http.client', 'ssl']\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]), file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json\n" + probe],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert json.loads(out.stderr.strip().splitlines()[-1]) == []
    assert json.loads(out.stdout)["segments"]
    client.stop()
    proc.wait(30)


def test_commits_are_visible_to_the_next_warm_retrieve(home: Path) -> None:
    proc = start_server()
    note = {"name": "editor", "track": "memory", "content": "- prefers helix over vim"}
    answer = client.request("POST", "/api/v4/memory", {"recall_files": [note]})
    assert [f["name"] for f in answer["recall_files"]] == ["editor"]
    warm = client.warm_retrieve("helix")
    assert warm is not None and warm["segments"][0]["text"] == "- prefers helix over vim"
    # A commit by another process straight into the store is seen too (the store's generation moves).
    from memu_core._compose import open_backend

    other = open_backend()
    other.commit_results(recall_files=[{"name": "pets", "content": "- has a cat called Miso"}])
    other.close()
    warm = client.warm_retrieve("cat Miso")
    assert warm is not None and warm["segments"][0]["text"] == "- has a cat called Miso"
    listed = client.request("GET", "/api/v4/memory?limit=200")
    assert {f["name"] for f in listed["recall_files"]} >= {"editor", "pets", "profile"}
    client.stop()
    proc.wait(30)


PLAIN = {
    "as_json": False,
    "output_format": "json",
    "max_bytes": None,
    **dict.fromkeys(("db", "provider", "embed_model", "base_url", "api_key")),
}
"""What memU's --json and local overrides parse to when absent."""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["tea"], {"query": "tea", "user_id": None, "agent_id": None, "top_k": None, "track": None, **PLAIN}),
        (
            ["tea", "--top-k=2", "--track", "skill", "--track", "memory", "--agent-id", "a"],
            {"query": "tea", "user_id": None, "agent_id": "a", "top_k": 2, "track": ["skill", "memory"], **PLAIN},
        ),
        (["--help"], None),
        (["tea", "--top-k"], None),
        (["tea", "--top-k", "x"], None),
        (["tea", "more"], None),
        (["tea", "--unknown"], None),
        (["tea", "--user-id", "u", "--user-id", "v"], None),
        ([], None),
    ],
)
def test_memu_retrieve_argument_parsing(args: list[str], expected: dict[str, object] | None) -> None:
    from memu_core._cli import flags

    assert flags.RETRIEVE.parse(args) == expected


def test_host_fast_path_declines_anything_but_one_query() -> None:
    from memu_core._cli import flags

    assert flags.HOST_RETRIEVE.parse([]) is None
    assert flags.HOST_RETRIEVE.parse(["--help"]) is None
    assert flags.HOST_RETRIEVE.parse(["a", "b"]) is None
    assert flags.HOST_RETRIEVE.parse(["a"]) == {"query": "a", "max_bytes": None}
