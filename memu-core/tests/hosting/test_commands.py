"""The fast path of a host binary's per-turn verbs recognises only their plain forms."""

from __future__ import annotations

import pytest

from memu_core._cli.host.commands import fast

from .conftest import TOY


@pytest.mark.parametrize(
    "args",
    [
        ["prepare"],
        ["prepare", "--base-dir", "/b", "--session-dir=/s", "--max-jobs", "3"],
        ["commit"],
        ["commit", "--base-dir=/b"],
        ["retrieve", "x"],
        ["retrieve", "  "],  # the body explains an empty query
    ],
)
def test_plain_forms_take_the_fast_path(args: list[str]) -> None:
    assert callable(fast(TOY, args))


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["retrieve"],
        ["retrieve", "x", "y"],
        ["retrieve", "--help"],
        ["prepare", "--help"],
        ["prepare", "--max-jobs", "many"],
        ["prepare", "--base-dir"],
        ["prepare", "--base-dir", "a", "--base-dir", "b"],
        ["commit", "--session-dir", "/s"],
        ["doctor"],
    ],
)
def test_anything_else_goes_to_typer(args: list[str]) -> None:
    assert fast(TOY, args) is None
