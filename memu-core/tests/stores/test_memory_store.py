"""The ``memory`` store against the shared store contract."""

from __future__ import annotations

from pathlib import Path

from memu_core._stores.memory import InMemoryStore
from memu_core.interfaces import MemoryStore
from memu_core.testing.store_contract import StoreContract


class TestInMemoryStore(StoreContract):
    def make_store(self, tmp_path: Path) -> MemoryStore:
        return InMemoryStore.open(":memory:")


def test_each_open_is_a_new_empty_store() -> None:
    from memu_core.testing.store_contract import file_write
    from memu_core.types import ChangeSet

    first = InMemoryStore.open(":memory:")
    first.apply(ChangeSet(files=[file_write("f", ["x"])]))
    assert InMemoryStore.open("inmemory").list_files({}, None, 5) == ([], None)
