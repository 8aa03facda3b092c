"""``memu import --from-memu`` on a store written by the real memU 0.10 (issue 19).

The test installs ``memu-cli==0.10.0`` into a venv of its own (once per test session), lets
memU's own ``memu commit`` and ``memu-codex prepare``/``commit`` write a store and a Codex
cursor against the OpenAI-compatible embedding server on 127.0.0.1, then migrates into memu:
every file, skill and resource arrives intact and is embedded again under memu's embedder, the
session memU mined is not mined again, and a store of another schema is refused in one line.
Without a package index the install cannot happen and the module is skipped; in CI
(``MEMU_REQUIRE_ALL_TEST_DEPS=1``) that is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core.testing.embedding_server import EmbeddingServer

MEMU_CLI = "memu-cli==0.10.0"
BIN = Path(sys.executable).parent
SESSION = "2026/08/20/rollout-2026-08-20T10-00-00-0198aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl"
FILES = [
    {"name": "billing deploy", "track": "memory", "description": "how billing ships", "content": "- make deploy"},
    {"name": "Café ☕ notes", "track": "memory", "description": "ünïcode: kept", "content": "- 東京 office\n- ✓ done"},
    {"name": "release", "track": "skill", "description": "cut a release", "content": "1. bump\n2. tag\n3. push"},
]
RESOURCE = {"path": "/src/billing/Makefile", "description": "billing build and deploy targets"}


def _turn(ts: str, role: str, text: str) -> str:
    kind = "input_text" if role == "user" else "output_text"
    payload = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
    return json.dumps({"timestamp": ts, "type": "response_item", "payload": payload}) + "\n"


@pytest.fixture(scope="session")
def memu010(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a venv holding memU 0.10 from the package index.

    The venv sees this environment's packages through a ``.pth`` file, so pip fetches only what
    memU needs beyond them (memu-cli, sqlmodel, pendulum): seconds, not a minute. memU has no
    ``memu_core`` in its way: its package is ``memu``, which memu does not ship.
    """
    import sysconfig

    venv = tmp_path_factory.mktemp("memu-cli-0.10") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = Path(subprocess.check_output([str(venv / "bin" / "python"), "-c", _PURELIB], text=True).strip())
    (site / "_memu_test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    done = subprocess.run(
        [*pip, "install", "-q", "--disable-pip-version-check", MEMU_CLI],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        why = f"cannot install {MEMU_CLI} from the package index: {done.stderr.strip()[-400:]}"
        if os.environ.get("MEMU_REQUIRE_ALL_TEST_DEPS"):
            pytest.fail(why)
        pytest.skip(why)
    return venv / "bin"


_PURELIB = "import sysconfig; print(sysconfig.get_paths()['purelib'])"


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer() as srv:
        yield srv


def _clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update(HOME=str(home), USERPROFILE=str(home), HF_HUB_OFFLINE="1", PYTHONIOENCODING="utf-8")
    return env


@pytest.fixture(scope="module")
def memu_store(memu010: Path, server: EmbeddingServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A store, a Codex session and its cursor, all written by memU 0.10 itself."""
    root = tmp_path_factory.mktemp("memU")
    home = root / "home"
    sessions = root / "codex-sessions"
    (sessions / SESSION).parent.mkdir(parents=True)
    (sessions / SESSION).write_text(
        _turn("2026-08-20T10:00:00Z", "user", "how do we deploy billing?")
        + _turn("2026-08-20T10:00:05Z", "assistant", "Run make deploy from the billing folder."),
        encoding="utf-8",
    )
    env = _clean_env(home)
    env.update(
        MEMU_DB=str(root / "memU.sqlite3"),
        MEMU_EMBED_PROVIDER="openai",
        MEMU_BASE_URL=server.base_url,
        MEMU_API_KEY="test-key",
        MEMU_EMBED_MODEL="hash-model",
    )
    payload = root / "payload.json"
    payload.write_text(json.dumps({"recall_files": FILES, "resource": [RESOURCE]}), encoding="utf-8")

    def memu_0_10(*args: str) -> str:
        done = subprocess.run(
            [str(memu010 / args[0]), *args[1:]], env=env, capture_output=True, text=True, timeout=300, cwd=root
        )
        assert done.returncode == 0, f"memU {args}: {done.stdout}{done.stderr}"
        return done.stdout

    assert "committed 3 recall file(s) and 1 resource(s)" in memu_0_10("memu", "commit", str(payload))
    assert "prepared 1 session(s)" in memu_0_10("memu-codex", "prepare", "--session-dir", str(sessions))
    memu_0_10("memu-codex", "commit")  # the agent changed nothing: memU promotes its cursor
    assert (home / ".memu" / "hosts" / "codex" / ".session_manifest.codex.json").is_file()
    return {"db": root / "memU.sqlite3", "home": home / ".memu", "sessions": sessions}


@pytest.fixture
def memu_env(memu_home: Path, server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    """memu in this process, in a home of its own, embedding through the same local server."""
    pytest.importorskip("memu_embed_litellm")
    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "openai-compatible")
    monkeypatch.setenv("MEMU_BASE_URL", server.base_url)
    monkeypatch.setenv("MEMU_EMBED_MODEL", "hash-model")
    return memu_home


def _import(store: dict[str, Path], capsys: pytest.CaptureFixture[str], *, as_json: bool = False) -> str:
    from memu_core._cli.import_cmd import run_import

    capsys.readouterr()
    run_import(None, from_memu=store["db"], memu_home=store["home"], prune=False, where={}, as_json=as_json)
    return capsys.readouterr().out


def test_a_memu_0_10_store_arrives_intact_and_its_sessions_are_not_mined_again(
    memu_store: dict[str, Path], server: EmbeddingServer, memu_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memu_core._compose import open_backend
    from memu_core.host import run_host

    codex = pytest.importorskip("memu_host_codex.spec")
    before = server.texts_received
    report = json.loads(_import(memu_store, capsys, as_json=True))
    assert (report["imported"], report["written"], report["resources"]) == (3, 3, 1)
    # Embedded again here, under memu's configured embedder (memU's vectors are not carried over).
    assert report["texts_embedded"] > 0 and server.texts_received > before
    assert "cursor codex: 1 session(s) brought over from memU, 0 already known" in report["notes"]

    backend = open_backend()
    try:
        listed = backend.list_all_recall_files(limit=50)["recall_files"]
        found = backend.progressive_retrieve("billing build and deploy targets")
    finally:
        backend.close()
    got = sorted((f["track"], f["name"], f["description"], f["content"]) for f in listed)
    assert got == sorted((f["track"], f["name"], f["description"], f["content"]) for f in FILES)
    assert [r["url"] for r in found["resources"]] == [RESOURCE["path"]]

    again = _import(memu_store, capsys)
    assert "3 recall file(s): 0 written, 3 unchanged" in again
    assert "cursor codex: 0 session(s) brought over from memU, 1 already known" in again

    # memU mined the session already: memu's bridge starts after memU's cursor.
    sessions = str(memu_store["sessions"])
    assert run_host(codex.SPEC, ["prepare", "--session-dir", sessions]) == 0
    assert "prepared 0 session(s)" in capsys.readouterr().out
    with open(memu_store["sessions"] / SESSION, "a", encoding="utf-8") as fh:
        fh.write(_turn("2026-08-20T10:01:00Z", "user", "and how do we roll billing back?"))
    assert run_host(codex.SPEC, ["prepare", "--session-dir", sessions, "--abandon-unfinished"]) == 0
    assert "prepared 1 session(s)" in capsys.readouterr().out
    staged = [p.read_text(encoding="utf-8") for p in (memu_env / ".memu/hosts/codex/sessions").glob("*.jsonl")]
    assert staged and all("roll billing back" in s and "deploy billing?" not in s for s in staged)


def test_a_store_of_another_schema_is_refused_in_one_line(
    memu_store: dict[str, Path], memu_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memu_core._cli.from_memu import read_store
    from memu_core._cli.memory_cmds import run_commit
    from memu_core.errors import UsageError

    changed = tmp_path / "memU-next.sqlite3"
    shutil.copy(memu_store["db"], changed)
    conn = sqlite3.connect(changed)
    with conn:
        conn.execute("ALTER TABLE memu_recall_files ADD COLUMN summary TEXT")
    conn.close()
    with pytest.raises(UsageError) as refused:
        read_store(str(changed))
    message = str(refused.value)
    assert "\n" not in message and "table memu_recall_files has unknown column(s) summary" in message
    assert "memU 0.10" in message and "nothing was imported" in message
    # A memu store is not a memU one, and is named as such.
    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "none")
    run_commit(None, Path(__file__).parents[1] / "examples", as_json=True)
    with pytest.raises(UsageError, match="is a memu store, not a memU one"):
        read_store(str(memu_env / ".memu" / "memu.sqlite3"))
