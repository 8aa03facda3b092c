"""The plain value classes of :mod:`memu_core._value` behave as the dataclasses they replaced:
the same ``repr``, equality, hash, frozen fields, pickling and copying."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import pytest

from memu_core._bridge.pipeline import PrepareReport
from memu_core._bridge.run import RunMarker
from memu_core._layout import Layout
from memu_core._mirror import RecallDoc
from memu_core._value import Frozen, Value


@dataclasses.dataclass(frozen=True)
class _FrozenTwin:
    run: str
    started_at: float
    pid: int
    jobs: int
    owner: str = ""
    replaced: tuple[str, ...] = ()


@dataclasses.dataclass
class _MutableTwin:
    sessions: int = 0
    notes: list[str] = dataclasses.field(default_factory=list)


class _Mutable(Value):
    __slots__ = ("notes", "sessions")
    _fields = ("sessions", "notes")

    def __init__(self, sessions: int = 0, notes: list[str] | None = None) -> None:
        self.sessions = sessions
        self.notes: list[str] = [] if notes is None else notes


def test_a_frozen_value_reads_shows_compares_and_hashes_as_its_dataclass_did() -> None:
    marker = RunMarker("r1", 1.5, 42, 3, "me", ("old",))
    twin = _FrozenTwin("r1", 1.5, 42, 3, "me", ("old",))
    assert repr(marker) == repr(twin).replace("_FrozenTwin", "RunMarker")
    assert marker == RunMarker("r1", 1.5, 42, 3, "me", ("old",))
    assert marker != RunMarker("r1", 1.5, 42, 4, "me", ("old",))
    assert marker != twin  # another class never compares equal, as between dataclasses
    assert hash(marker) == hash(RunMarker("r1", 1.5, 42, 3, "me", ("old",)))
    assert marker.as_dict() == dataclasses.asdict(twin)
    with pytest.raises(dataclasses.FrozenInstanceError):
        marker.jobs = 4
    with pytest.raises(dataclasses.FrozenInstanceError):
        del marker.owner
    assert RunMarker("r", 0.0, 1, 0) == RunMarker("r", 0.0, 1, 0, "", ())


def test_a_frozen_value_survives_pickle_and_copy() -> None:
    for value in (RunMarker("r1", 1.5, 42, 3), RecallDoc("memory", "a", "b", "c"), Layout(Path("/x"), "h")):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.copy(value) == value
        assert copy.deepcopy(value) == value
    assert Layout(Path("/x"), "h").jobs == Path("/x") / "jobs"
    assert isinstance(Layout(Path("/x"), "h"), Frozen)


def test_a_mutable_value_is_unhashable_and_compares_by_fields() -> None:
    value, twin = _Mutable(2, ["n"]), _MutableTwin(2, ["n"])
    assert repr(value) == repr(twin).replace("_MutableTwin", "_Mutable")
    assert value == _Mutable(2, ["n"]) and value != _Mutable(2, [])
    with pytest.raises(TypeError):
        hash(value)
    value.sessions = 3
    assert value.as_dict() == {"sessions": 3, "notes": ["n"]}
    assert _Mutable().notes is not _Mutable().notes  # a fresh list each, as default_factory gives
    assert pickle.loads(pickle.dumps(value)) == value


def test_prepare_report_lists_its_fields_in_the_order_the_json_report_prints_them() -> None:
    assert list(PrepareReport().as_dict()) == [
        "sessions",
        "jobs",
        "remaining",
        "redacted",
        "corrupt",
        "unreadable",
        "kept_edits",
        "skipped_names",
        "skipped_self",
        "run",
        "notes",
        "warnings",
    ]
