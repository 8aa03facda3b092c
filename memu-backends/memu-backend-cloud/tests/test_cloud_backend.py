"""CloudBackend against a real memu-server on 127.0.0.1: operations, scopes, keys, faults."""

from __future__ import annotations

from typing import Any

import pytest
from memu_backend_cloud.backend import CloudBackend, is_loopback
from memu_backend_cloud.errors import (
    CloudAuthenticationError,
    CloudAuthorizationError,
    CloudRateLimitError,
    CloudServiceError,
    CloudTransportError,
    CloudValidationError,
)
from memu_server.testing import free_port

from memu_core.errors import ConfigError, MemuError, UsageError

TEA = {
    "name": "profile",
    "track": "memory",
    "description": "who",
    "content": "- drinks green tea\n- lives in Berlin",
}


def _backend(
    server: dict[str, Any], user: str = "alice", agent: str | None = None, **kw: Any
) -> CloudBackend:
    key, _ = server["keys"].create(user, agent)
    return CloudBackend(api_key=key, base_url=server["base"], user_id=user, agent_id=agent or "default", **kw)


def test_three_operations_and_forget_round_trip(server: dict[str, Any]) -> None:
    cloud = _backend(server)
    try:
        committed = cloud.commit_results(
            recall_files=[TEA], resource=[{"path": "/w/notes.md", "description": "notes"}]
        )
        assert [f["name"] for f in committed["recall_files"]] == ["profile"]
        assert committed["resources"][0]["url"] == "/w/notes.md"
        hits = cloud.progressive_retrieve("green tea", top_k=2)
        assert hits["segments"] and "tea" in hits["segments"][0]["text"]
        assert hits["files"][0]["name"] == "profile"
        page = cloud.list_all_recall_files(limit=1)
        assert [f["name"] for f in page["recall_files"]] == ["profile"] and page["next_cursor"] is None
        assert cloud.forget("profile")["forgotten"][0]["name"] == "profile"
        assert cloud.list_all_recall_files()["recall_files"] == []
    finally:
        cloud.close()
    # It landed in exactly alice's default-agent scope on the server.
    assert server["engine"].list_all_recall_files({"user_id": "alice"})["recall_files"] == []


def test_scope_rules_are_checked_before_any_request(server: dict[str, Any]) -> None:
    cloud = _backend(server)
    with pytest.raises(UsageError, match="unsupported: user_id__in"):
        cloud.progressive_retrieve("tea", {"user_id__in": ["a"]})
    with pytest.raises(UsageError, match="track"):
        cloud.progressive_retrieve("tea", tracks=["skill"])
    with pytest.raises(UsageError, match="unsupported: team"):
        cloud.commit_results(recall_files=[TEA], user={"team": "x"})
    cloud.close()


def test_key_for_another_scope_gets_a_typed_403_with_the_server_message(server: dict[str, Any]) -> None:
    key, _ = server["keys"].create("alice")
    cloud = CloudBackend(api_key=key, base_url=server["base"], user_id="bob")
    with pytest.raises(CloudAuthorizationError) as info:
        cloud.progressive_retrieve("tea")
    assert info.value.status_code == 403 and info.value.code == "FORBIDDEN_SCOPE"
    assert "may not access user_id='bob'" in str(info.value)
    cloud.close()


def test_revoked_key_gets_a_typed_401_on_the_first_attempt(server: dict[str, Any]) -> None:
    key, info = server["keys"].create("alice")
    cloud = CloudBackend(api_key=key, base_url=server["base"], user_id="alice")
    cloud.progressive_retrieve("tea")
    server["keys"].revoke(info.id)
    with pytest.raises(
        CloudAuthenticationError, match=r"\(401\): unknown or revoked API key \[UNAUTHENTICATED\]"
    ):
        cloud.progressive_retrieve("tea")
    cloud.close()


def test_validation_error_carries_the_server_message(server: dict[str, Any]) -> None:
    cloud = _backend(server)
    with pytest.raises(CloudValidationError, match="malformed cursor") as info:
        cloud.list_all_recall_files(cursor="bm90LWEtY3Vyc29y")
    assert isinstance(info.value, MemuError) and info.value.status_code == 422
    cloud.close()


def test_injected_429_then_500_are_retried_honouring_retry_after(server: dict[str, Any]) -> None:
    server["faults"]._queues["POST /api/v4/memory/search"] = ["429:0", "500"]
    cloud = _backend(server)
    assert "segments" in cloud.progressive_retrieve("tea")
    assert server["faults"].next("POST", "/api/v4/memory/search") is None  # both faults were consumed
    cloud.close()


def test_persistent_429_and_500_become_typed_errors(server: dict[str, Any]) -> None:
    cloud = _backend(server)
    server["faults"]._queues["POST /api/v4/memory/search"] = ["429:0"] * 3
    with pytest.raises(CloudRateLimitError, match=r"\(429\): injected fault 429 \[INJECTED\]"):
        cloud.progressive_retrieve("tea")
    server["faults"]._queues["GET /api/v4/memory"] = ["503:0"] * 3
    with pytest.raises(CloudServiceError, match=r"\(503\)"):
        cloud.list_all_recall_files()
    cloud.close()


def test_unreachable_server_is_a_transport_error() -> None:
    cloud = CloudBackend(
        api_key="k", base_url=f"http://127.0.0.1:{free_port()}/api/v4/memory/", max_attempts=2
    )
    with pytest.raises(CloudTransportError, match="unreachable after 2 attempt"):
        cloud.progressive_retrieve("tea")
    cloud.close()


def test_configuration_errors_name_the_variable() -> None:
    with pytest.raises(ConfigError, match="MEMU_CLOUD_API_KEY"):
        CloudBackend(api_key="  ")
    with pytest.raises(ConfigError, match="MEMU_CLOUD_BASE_URL"):
        CloudBackend(api_key="k", base_url="ftp://x")


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("localhost", True),
        ("a.localhost", True),
        ("127.0.0.9", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost.evil.com", False),
        ("192.168.1.2", False),
        ("", False),
    ],
)
def test_loopback_detection(host: str, expected: bool) -> None:
    assert is_loopback(host) is expected
