"""API keys: hashed at rest, bound to a scope, revocable; the CLI prints a new key once, last."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from memu_server.keys import KeyStore, hash_key

from memu_core.errors import UsageError


def test_keys_are_stored_hashed_and_private(tmp_path: Path) -> None:
    path = tmp_path / "k" / "keys.sqlite3"
    store = KeyStore(path)
    key, info = store.create("alice", "cli", label="laptop")
    store.close()
    raw = b"".join(p.read_bytes() for p in path.parent.iterdir() if p.is_file())
    assert key.encode() not in raw
    assert (
        hash_key(key).encode() in raw
        or hash_key(key) in KeyStore(path)._conn.execute("SELECT key_hash FROM api_keys").fetchone()
    )
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert info.user_id == "alice" and info.agent_id == "cli"


def test_authenticate_and_revoke(keys: KeyStore) -> None:
    key, info = keys.create("alice")
    assert keys.authenticate(key) is not None
    assert keys.authenticate(key + "x") is None
    assert keys.authenticate("not-a-key") is None
    keys.revoke(info.id)
    assert keys.authenticate(key) is None
    listed = {row.id: row for row in keys.list()}
    assert listed[info.id].revoked_at is not None


def test_revoke_by_whole_key_and_unknown_id(keys: KeyStore) -> None:
    key, info = keys.create("alice")
    assert keys.revoke(key).id == info.id
    with pytest.raises(UsageError, match="keys list"):
        keys.revoke("deadbeef")


def test_create_refuses_empty_user(keys: KeyStore) -> None:
    with pytest.raises(UsageError, match="--user-id"):
        keys.create("  ")


def test_cli_create_list_revoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memu_server.cli import run_cli

    db = str(tmp_path / "keys.sqlite3")
    assert run_cli(["keys", "create", "--user-id", "u1", "--agent-id", "a1", "--keys", db]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    key = out[-1].split()[-1]
    assert key.startswith("msk_")
    store = KeyStore(Path(db))
    assert store.authenticate(key) is not None
    assert run_cli(["keys", "list", "--keys", db]) == 0
    listing = capsys.readouterr().out
    assert "user_id=u1" in listing and "agent_id=a1" in listing and key not in listing
    key_id = listing.split()[0]
    assert run_cli(["keys", "revoke", key_id, "--keys", db]) == 0
    assert store.authenticate(key) is None
    assert run_cli(["keys", "revoke", "nope", "--keys", db]) == 2
