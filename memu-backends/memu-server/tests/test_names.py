"""memu-server refuses a name or track that breaks memu's naming rules (issue 14): 422 naming
the name and the rule, nothing stored; forget still takes any name."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memu_core import names


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("nul\x00byte", "control character U+0000"),
        ("é" * 150, "300 bytes long in UTF-8"),
        ("a/b", "holds '/'"),
        ("..", "only dots"),
    ],
)
def test_a_bad_name_is_a_422_naming_it(served: dict[str, Any], name: str, rule: str) -> None:
    response = httpx.post(
        served["url"] + "/api/v4/memory",
        json={"user": {"user_id": "alice"}, "recall_files": [{"name": name, "content": "- x"}]},
        headers={"Authorization": f"Bearer {served['alice']}"},
    )
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["details"] == [{"code": "INVALID_NAME"}]
    assert rule in body["message"] and names.show(name) in body["message"]
    assert served["engine"].list_all_recall_files()["recall_files"] == []


def test_an_unknown_track_names_the_allowed_ones(served: dict[str, Any]) -> None:
    response = httpx.post(
        served["url"] + "/api/v4/memory",
        json={"user": {"user_id": "alice"}, "recall_files": [{"name": "n", "track": "notes", "content": "- x"}]},
        headers={"Authorization": f"Bearer {served['alice']}"},
    )
    assert response.status_code == 422
    assert response.json()["details"] == [{"code": "INVALID_TRACK"}]
    assert "use one of memory, skill" in response.json()["message"]
