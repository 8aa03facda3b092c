"""Registration: the entry point, the hook, and a light import."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from memu_backend_postgres import PostgresStore, plugin


def test_entry_point_in_the_memu_group() -> None:
    found = {ep.name: ep.value for ep in entry_points(group="memu")}
    assert found.get("memu-backend-postgres") == "memu_backend_postgres.plugin"


def test_hook_registers_the_store_class() -> None:
    assert plugin.memu_register_stores() == [PostgresStore]
    assert PostgresStore.name == "postgres"
    assert set(PostgresStore.url_schemes) == {"postgres://", "postgresql://", "postgresql+psycopg://"}


def test_plugin_import_loads_no_heavy_library() -> None:
    code = (
        "import sys, memu_backend_postgres.plugin, memu_backend_postgres\n"
        "heavy = ('sqlalchemy', 'alembic', 'psycopg', 'pgvector', 'numpy')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_store_is_picked_for_every_postgres_scheme() -> None:
    from memu_core._compose import store_class_for

    for url in ("postgres://u:p@h/db", "postgresql://u:p@h/db", "postgresql+psycopg://u:p@h/db"):
        assert store_class_for(url) is PostgresStore
