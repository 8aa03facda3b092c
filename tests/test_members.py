"""Every member distribution is installed, loads through its entry point and registers what it
should, and `memu plugins` reports no load error on a complete install."""

from __future__ import annotations

from importlib import metadata

import pytest

from memu_core._plugins.manager import Plugins

MEMBERS = {
    "memu-embed-local": {"memu_register_embedders"},
    "memu-embed-litellm": {"memu_register_embedders"},
    "memu-backend-postgres": {"memu_register_stores"},
}


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins(environ={}).load()


def test_no_member_fails_to_load(plugins: Plugins) -> None:
    assert [(r.name, r.error) for r in plugins.report if r.error] == []


@pytest.mark.parametrize(("dist", "hooks"), sorted(MEMBERS.items()))
def test_member_registers_its_hooks(plugins: Plugins, dist: str, hooks: set[str]) -> None:
    metadata.version(dist)  # installed
    (record,) = [r for r in plugins.report if r.distribution == dist]
    assert hooks <= set(record.hooks)


def test_registries_hold_the_members_implementations(plugins: Plugins) -> None:
    assert {"local", "litellm"} <= set(plugins.embedders())
    assert plugins.embedders().distribution("local") == "memu-embed-local"
    assert {"sqlite", "memory", "postgres"} <= set(plugins.stores())
    assert plugins.stores().distribution("postgres") == "memu-backend-postgres"
