"""The pydantic-free reading of the read-path settings agrees with the full Settings model."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memu_core._config import resolve
from memu_core._config.light import LightSettings, light_settings
from memu_core.settings import load_settings

CASES = [
    ({}, ""),
    ({"MEMU_DB": "~/x/memu.sqlite3", "MEMU_EMBED_PROVIDER": "none"}, ""),
    ({"MEMU_USER_ID": "alice"}, "MEMU_DB=/srv/memu.sqlite3\nMEMU_AGENT_ID=codex\n"),
    ({"MEMU_EMBED_PROVIDER": ""}, "MEMU_EMBED_PROVIDER=openai\nMEMU_EMBED_MODEL=text-embedding-3-small\n"),
    ({"MEMU_DB": "postgresql://u:pw@h/db"}, "export MEMU_LLM_PROVIDER='jina'\n"),
    ({"MEMU_MEMORY_MODE": "LOCAL"}, "MEMU_DB=sqlite:///tmp/a.db\n"),
    ({"MEMU_HISTORY_KEEP": "5"}, "MEMU_HISTORY_KEEP=0\n"),
    ({}, "MEMU_HISTORY_KEEP=0\n"),
]


@pytest.mark.parametrize(("env", "file_text"), CASES)
def test_light_and_full_readings_agree(
    memu_home: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], file_text: str
) -> None:
    monkeypatch.delenv("MEMU_EMBED_PROVIDER", raising=False)
    config = memu_home / ".memu" / "config.env"
    config.parent.mkdir()
    config.write_text(file_text)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    resolve.reload()
    light = light_settings()
    full = load_settings()
    assert light is not None
    for field in LightSettings._fields:
        assert getattr(light, field) == getattr(full, field), field


def test_cloud_mode_needs_the_full_settings(memu_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMU_MEMORY_MODE", "cloud")
    assert light_settings() is None


def test_a_lexical_retrieve_never_imports_pydantic_settings(memu_home: Path, tmp_path: Path) -> None:
    import subprocess

    code = (
        "import sys\nfrom memu_core._compose import open_backend\n"
        "b = open_backend(); b.commit_results(recall_files=[{'name': 'n', 'content': '- alpha beta'}])\n"
        "assert b.progressive_retrieve('alpha')['files']\n"
        "heavy = ('pydantic_settings', 'sqlalchemy', 'alembic', 'torch', 'litellm')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    env = {
        "HOME": str(memu_home),
        "MEMU_EMBED_PROVIDER": "none",
        "MEMU_DB": str(tmp_path / "s.sqlite3"),
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    # the first open creates the schema with alembic; a second process must not need it
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
