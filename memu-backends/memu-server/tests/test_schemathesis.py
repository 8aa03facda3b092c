"""Property-based API testing: schemathesis generates requests from the served OpenAPI schema and
checks every answer against it (no 5xx, documented status codes, documented content)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("schemathesis", reason="pip install 'memu-server[test]'")

import schemathesis
from hypothesis import HealthCheck, given, settings
from memu_server.app import create_app
from memu_server.keys import KeyStore
from memu_server.testing import serve_in_thread
from schemathesis.checks import positive_data_acceptance

from memu_core._engine.engine import LocalEngine


@pytest.fixture(params=["socket-face", "keyed"])
def api(request: pytest.FixtureRequest, engine: LocalEngine, keys: KeyStore) -> Any:
    engine.commit_results(recall_files=[{"name": "profile", "content": "- drinks green tea"}])
    # The socket face (no keys) lets every generated scope reach the engine; the keyed face is
    # driven with a real key, so generated scopes other than its own must be 403, never 5xx.
    keyed = request.param == "keyed"
    with serve_in_thread(create_app(engine, keys=keys if keyed else None)) as url:
        headers = {"Authorization": f"Bearer {keys.create('default')[0]}"} if keyed else None
        yield schemathesis.openapi.from_url(url + "/openapi.json"), url, headers


def test_api_conforms_to_its_schema(api: Any) -> None:
    # schemathesis' pytest loader does not run under this pytest version, so each operation's
    # hypothesis strategy is driven directly; the checks are the same.
    schema, base_url, headers = api
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} >= {
        "/api/v4/memory",
        "/api/v4/memory/search",
        "/api/v4/memory/forget",
    }
    for operation in operations:
        # With a key, valid-looking bodies for another user's scope are rightly refused (403); a
        # cursor is an opaque token, so a schema-valid one the server never issued is a 422.
        excluded = [positive_data_acceptance] if headers or operation.method.upper() == "GET" else None
        _fuzz(operation, base_url, headers, excluded)


def _fuzz(operation: Any, base_url: str, headers: Any, excluded: Any) -> None:
    @given(case=operation.as_strategy())
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def check(case: Any) -> None:
        case.call_and_validate(base_url=base_url, headers=headers, excluded_checks=excluded)

    check()
