"""Schema migrations: empty → head, head is idempotent, concurrent first opens, the CLI verbs."""

from __future__ import annotations

import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from memu_backend_postgres import PostgresStore, current, upgrade
from memu_backend_postgres._schema import HEAD_REVISION

from memu_core.errors import StoreError


def _tables(url: str) -> set[str]:
    import sqlalchemy as sa
    from memu_backend_postgres._url import normalise_url

    engine = sa.create_engine(normalise_url(url))
    try:
        with engine.connect() as conn:
            return set(sa.inspect(conn).get_table_names())
    finally:
        engine.dispose()


def test_head_constant_matches_the_shipped_revisions() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(Path(upgrade.__code__.co_filename).with_name("migrations")))
    assert ScriptDirectory.from_config(config).get_heads() == [HEAD_REVISION]


def test_empty_database_to_head_then_idempotent(new_database: Callable[[], str]) -> None:
    url = new_database()
    assert current(url) is None
    assert upgrade(url) == HEAD_REVISION
    assert current(url) == HEAD_REVISION
    tables = _tables(url)
    assert {"memu_files", "memu_segments", "memu_resources", "memu_meta", "memu_terms"} <= tables
    assert upgrade(url) == HEAD_REVISION  # again: nothing to do, nothing breaks
    assert _tables(url) == tables
    store = PostgresStore.open(url)
    assert store.generation() == 0
    store.close()


def test_cli_hooks_are_the_same_functions(new_database: Callable[[], str]) -> None:
    url = new_database()
    assert PostgresStore.schema_revision(url) is None
    assert PostgresStore.upgrade_schema(url) == HEAD_REVISION
    assert PostgresStore.schema_revision(url) == HEAD_REVISION


def test_concurrent_first_opens_migrate_once(new_database: Callable[[], str]) -> None:
    url = new_database()
    code = (
        "import sys\nfrom memu_backend_postgres import PostgresStore\n"
        "s = PostgresStore.open(sys.argv[1]); s.generation(); s.close()\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, url], stderr=subprocess.PIPE) for _ in range(4)]
    errors = [p.communicate(timeout=120)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    assert current(url) == HEAD_REVISION


def test_every_accepted_scheme_opens(new_store_url: Callable[[], str]) -> None:
    url = new_store_url()
    rest = url.split("://", 1)[1]
    for scheme in ("postgres://", "postgresql://", "postgresql+psycopg://"):
        store = PostgresStore.open(scheme + rest)
        assert store.fingerprint() is None
        store.close()


def test_errors_never_show_the_password(pg_server_dsn: str) -> None:
    from sqlalchemy.engine import make_url

    secret = "s3cr3t-Pa55"
    url = make_url(pg_server_dsn).set(password=secret, database="no_such_memu_db")
    rendered = url.render_as_string(hide_password=False)
    assert secret in rendered
    with pytest.raises(StoreError) as caught:
        PostgresStore.open(rendered)
    message = str(caught.value)
    assert secret not in message and "no_such_memu_db" in message and "***" in message
    with pytest.raises(StoreError) as again:
        current(rendered)
    assert secret not in str(again.value)
    # Nor does the traceback `memu -v` would print (the driver's exception is not chained).
    assert secret not in "".join(traceback.format_exception(caught.value))
