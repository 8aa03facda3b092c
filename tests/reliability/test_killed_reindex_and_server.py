"""``memu reindex`` killed mid-way, and ``memu-server`` killed while a client's ``memu commit`` is
in flight.

reindex: each cycle switches the store to another embedding model (served over real HTTP by the
test embedding server, slowed so the work takes a while) and kills the CLI at a random moment.
The store then passes its integrity checks and is wholly in one space, old or new: its live
fingerprint is one of the two and every row has a vector in it. Running reindex again finishes
the switch.

memu-server: a real server process over a SQLite store; a client in cloud mode commits a large
payload with ``memu commit``; the server is killed with SIGKILL at a random moment, restarted on
the same port, and the client commits again. Each file is then at the new version exactly once
(a commit applied before the kill and again after it is the same content, not a new revision),
and the server's store passes its integrity checks after every kill.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest
import reliability_kit as kit

pytest.importorskip("memu_embed_litellm")
pytest.importorskip("memu_server")
pytest.importorskip("memu_backend_cloud")

from memu_core.testing.embedding_server import EmbeddingServer


def _fingerprint_state(db: Path) -> tuple[str | None, int]:
    """The live fingerprint key and how many segments and resources lack a vector in it."""
    from memu_core._stores.sqlite import SqliteStore

    store = SqliteStore.open(str(db))
    try:
        live = store.fingerprint()
        missing = len(store.texts_to_embed(live, 1_000_000)) if live else -1
    finally:
        store.close()
    return (f"{live.model}" if live else None), missing


def test_killed_reindex_keeps_one_space(tmp_path: Path) -> None:
    cycles = kit.count(bounded=1, soak=50)
    home = tmp_path / "home"
    home.mkdir()
    db = tmp_path / "store.sqlite3"
    memu = kit.binary("memu")
    random = kit.rng("reindex")
    files = [
        {
            "name": f"doc-{f:03d}",
            "track": "memory",
            "description": f"doc {f}",
            "content": "\n".join(f"- service {f} listens on port {1000 + i} for topic {i % 7}" for i in range(6)),
        }
        for f in range(20)
    ]
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"recall_files": files}), encoding="utf-8")
    with EmbeddingServer(dimension=16) as server, kit.tally("killed_reindex") as t:
        server.latency = 0.02

        def env(model: str) -> dict[str, str]:
            return kit.cli_env(
                home,
                MEMU_DB=str(db),
                MEMU_EMBED_PROVIDER="openai-compatible",
                MEMU_BASE_URL=server.base_url,
                MEMU_EMBED_MODEL=model,
                MEMU_EMBED_BATCH_SIZE="8",
                MEMU_EMBED_CONCURRENCY="1",
            )

        first = kit.run([memu, "commit", str(payload)], env("space-0"), tmp_path)
        assert first.returncode == 0, first.describe()
        assert _fingerprint_state(db) == ("space-0", 0)
        timing = kit.run([memu, "reindex"], env("space-1"), tmp_path)
        assert timing.returncode == 0, timing.describe()
        assert _fingerprint_state(db) == ("space-1", 0)
        window = timing.seconds * 1.2
        for n in range(2, cycles + 2):
            old, new = f"space-{n - 1}", f"space-{n}"
            outcome = kit.run_and_kill([memu, "reindex"], env(new), tmp_path, random.uniform(0.0, window))
            t.note(outcome)
            where = f"cycle {n} ({'killed' if outcome.killed else f'exit {outcome.returncode}'})"
            for problem in kit.integrity_problems(db):
                t.fail(f"{where}: {problem}")
            live, missing = _fingerprint_state(db)
            if live not in (old, new) or missing != 0:
                t.fail(f"{where}: live space {live} (expected {old} or {new}) with {missing} rows lacking a vector")
            again = kit.run([memu, "reindex"], env(new), tmp_path)
            if again.returncode != 0:
                t.fail(f"{where}: the next reindex failed: {again.describe()}")
            elif _fingerprint_state(db) != (new, 0):
                t.fail(f"{where}: the next reindex left {_fingerprint_state(db)}")
        t.verdict()
        assert t.killed > 0 or not kit.SOAK, "no reindex was killed mid-way"


def _server_files(db: Path) -> dict[str, tuple[str, int]]:
    if not db.exists():
        return {}
    conn = sqlite3.connect(str(db), timeout=30)
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'files'").fetchone():
            return {}
        rows = conn.execute("SELECT name, content, revision FROM files WHERE user_id = 'alice'")
        return {n: (c, r) for n, c, r in rows}
    finally:
        conn.close()


def test_server_killed_mid_commit_then_recommitted(tmp_path: Path) -> None:
    from memu_server.keys import KeyStore
    from memu_server.testing import child_env, free_port, start_process

    cycles = kit.count(bounded=1, soak=50)
    random = kit.rng("server")
    db = tmp_path / "server.sqlite3"
    keys_db = tmp_path / "keys.sqlite3"
    ks = KeyStore(keys_db)
    key, _ = ks.create("alice")
    ks.close()
    port = free_port()
    server_env = child_env(str(tmp_path), MEMU_DB=str(db), MEMU_SERVER_KEYS=str(keys_db))
    server_env.pop("MEMU_SERVER_TEST_FAULTS", None)
    client_home = tmp_path / "client"
    client_home.mkdir()
    client_env = kit.cli_env(
        client_home,
        MEMU_MEMORY_MODE="cloud",
        MEMU_CLOUD_API_KEY=key,
        MEMU_CLOUD_BASE_URL=f"http://127.0.0.1:{port}/api/v4/memory/",
    )
    memu = kit.binary("memu")
    nfiles = 200
    payload = tmp_path / "payload.json"

    def write(gen: int) -> None:
        files = [
            {
                "name": f"n{f:03d}",
                "track": "memory",
                "description": f"note {f}",
                "content": "\n".join(f"- item {i} of note {f} gen{gen}" for i in range(10)),
            }
            for f in range(nfiles)
        ]
        payload.write_text(json.dumps({"recall_files": files}), encoding="utf-8")

    server = start_process(port, server_env)
    with kit.tally("killed_server_commit") as t:
        try:
            write(0)
            first = kit.run([memu, "commit", str(payload)], client_env, tmp_path)
            assert first.returncode == 0, first.describe()
            window = first.seconds * 1.2
            for gen in range(1, cycles + 1):
                write(gen)
                client = subprocess.Popen(
                    [memu, "commit", str(payload)],
                    env=client_env,
                    cwd=tmp_path,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                try:
                    client.wait(random.uniform(0.0, window))
                    mid = False
                except subprocess.TimeoutExpired:
                    mid = True
                os.kill(server.pid, signal.SIGKILL)
                server.wait(30)
                t.attempts += 1
                t.killed += mid
                server = start_process(port, server_env)
                out, err = client.communicate(timeout=kit.RUN_TIMEOUT)
                first_try = kit.Outcome([memu, "commit"], client.returncode, out, err, False, 0.0)
                where = f"cycle {gen} ({'mid-commit' if mid else 'after the commit'})"
                if not first_try.explicit():
                    t.fail(f"{where}: the client's commit ended without an explicit answer: {first_try.describe()}")
                for problem in kit.integrity_problems(db):
                    t.fail(f"{where}: {problem}")
                stored = _server_files(db)
                gens = {g for c, _ in stored.values() for g in re.findall(r"gen(\d+)", c)}
                for name, (content, _) in stored.items():
                    if len(set(re.findall(r"gen(\d+)", content))) != 1:
                        t.fail(f"{where}: {name} mixes generations")
                if not gens <= {str(gen - 1), str(gen)}:
                    t.fail(f"{where}: generations {sorted(gens)} in the store")
                again = kit.run([memu, "commit", str(payload)], client_env, tmp_path)
                if again.returncode != 0:
                    t.fail(f"{where}: the re-commit failed: {again.describe()}")
                    continue
                stored = _server_files(db)
                wrong = [n for n, (c, r) in stored.items() if f"gen{gen}" not in c or r != gen + 1]
                if len(stored) != nfiles or wrong:
                    t.fail(f"{where}: after the re-commit {len(wrong)} file(s) not at gen {gen} revision {gen + 1}")
        finally:
            server.send_signal(signal.SIGKILL)
            server.wait(30)
            if server.stderr:
                server.stderr.close()
        t.verdict()
