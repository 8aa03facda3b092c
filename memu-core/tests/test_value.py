"""The plain value classes of :mod:`memu_core._value` behave as the dataclasses they replaced:
the same ``repr``, equality, hash, frozen fields, pickling and copying; the public ones (the host
spec and the transcript types) also with the :mod:`dataclasses` functions."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from memu_core._bridge.pipeline import PrepareReport
from memu_core._bridge.run import RunMarker
from memu_core._layout import Layout
from memu_core._mirror import RecallDoc
from memu_core._value import DataclassAPI, Frozen, Value
from memu_core.host import HostSpec
from memu_core.types import KeptRead, Record, RecordKind, SelfSessions, SessionFile, TranscriptRead

if TYPE_CHECKING:
    import typer


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


# The five public classes as the frozen dataclasses they were: each value class must pass for its
# twin with the dataclasses API too (a host plugin may call it on them).


@dataclasses.dataclass(frozen=True, slots=True)
class _SessionFileTwin:
    path: Path
    mtime_ns: int
    size: int


@dataclasses.dataclass(frozen=True, slots=True)
class _TranscriptReadTwin:
    records: list[Record]
    cursor: dict[str, Any]
    corrupt: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class _KeptReadTwin:
    lines: list[str]
    messages: list[int]
    cursor: dict[str, Any]
    last_timestamp: str | None
    records: int
    corrupt: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class _SelfSessionsTwin:
    ids: frozenset[str] = frozenset()
    warnings: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class _HostSpecTwin:
    id: str
    display: str
    source: str
    package: str
    session_dir: str = ""
    instruction_path: str = ""
    skills_dir: str = ""
    session_id_env: str = ""
    base_dir: str = ""
    former_task_names: tuple[str, ...] = ()
    schedule_command: str = ""
    schedule_backend: str = ""
    extra_commands: Callable[[typer.Typer, HostSpec], None] | None = dataclasses.field(default=None, compare=False)


def _no_commands(app: object, spec: object) -> None:
    """A picklable ``extra_commands``."""


_RECORDS = [Record('{"a": 1}', RecordKind.MESSAGE, "t1"), Record("{}", RecordKind.TOOL)]
_CASES: list[tuple[type, type, tuple[Any, ...], dict[str, Any]]] = [
    (SessionFile, _SessionFileTwin, (Path("/s/a.jsonl"), 12, 34), {}),
    (SessionFile, _SessionFileTwin, (), {"size": 3, "path": Path("b"), "mtime_ns": 1}),
    (TranscriptRead, _TranscriptReadTwin, (_RECORDS, {"line": 2}), {}),
    (TranscriptRead, _TranscriptReadTwin, (), {"records": [], "cursor": {}, "corrupt": 4}),
    (KeptRead, _KeptReadTwin, (['{"a": 1}', "{}"], [0], {"line": 2}, "t1", 3), {}),
    (KeptRead, _KeptReadTwin, ([], [], {}, None, 0), {"corrupt": 1}),
    (SelfSessions, _SelfSessionsTwin, (), {}),
    (SelfSessions, _SelfSessionsTwin, (frozenset({"s1"}),), {"warnings": ("fix it",)}),
    (HostSpec, _HostSpecTwin, ("demo", "Demo", "m:S", "pkg"), {}),
    (
        HostSpec,
        _HostSpecTwin,
        ("demo", "Demo", "m:S", "pkg", "~/s", "~/I.md", "~/sk", "SID", "~/b", ("old",), "run {prompt}", "os"),
        {"extra_commands": _no_commands},
    ),
]


def _field_facts(fields: tuple[dataclasses.Field[Any], ...]) -> list[tuple[Any, ...]]:
    return [
        (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare, f.kw_only, f.metadata)
        for f in fields
    ]


@pytest.mark.parametrize(("cls", "twin_cls", "args", "kwargs"), _CASES)
def test_a_public_value_class_passes_for_the_dataclass_it_was(
    cls: type, twin_cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    value: Any = cls(*args, **kwargs)
    twin: Any = twin_cls(*args, **kwargs)
    names = [f.name for f in dataclasses.fields(twin_cls)]
    assert [getattr(value, n) for n in names] == [getattr(twin, n) for n in names]  # defaults included
    assert repr(value) == repr(twin).replace(twin_cls.__qualname__, cls.__qualname__, 1)
    assert value == cls(*args, **kwargs) and value != twin
    assert cls.__match_args__ == twin_cls.__match_args__  # type: ignore[attr-defined]
    assert inspect.signature(cls).parameters == inspect.signature(twin_cls).parameters
    assert hasattr(value, "__dict__") == hasattr(twin, "__dict__")  # slots or not, as before
    try:
        expected: int | None = hash(twin)
    except TypeError:  # a list field: neither hashes
        expected = None
    if expected is None:
        with pytest.raises(TypeError):
            hash(value)
    else:
        assert hash(value) == expected
    with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{names[0]}'"):
        setattr(value, names[0], None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        delattr(value, names[-1])
    assert pickle.loads(pickle.dumps(value)) == value
    assert copy.copy(value) == value and copy.deepcopy(value) == value
    # A pickle written while the class was a dataclass carries the twin's state.
    _, _, state, *_ = twin.__reduce_ex__(2)
    old: Any = object.__new__(cls)
    old.__setstate__(state)
    assert old == value
    # The dataclasses API.
    both = dataclasses.is_dataclass(cls), dataclasses.is_dataclass(value)  # not narrowing value's type
    assert both == (True, True)
    assert _field_facts(dataclasses.fields(value)) == _field_facts(dataclasses.fields(twin_cls))
    assert repr(cls.__dataclass_params__) == repr(twin_cls.__dataclass_params__)  # type: ignore[attr-defined]
    assert dataclasses.asdict(value) == dataclasses.asdict(twin)
    assert dataclasses.astuple(value) == dataclasses.astuple(twin)
    changes = {names[-1]: getattr(cls(*args, **kwargs), names[-1])}
    assert dataclasses.replace(value, **changes) == value
    replaced = dataclasses.replace(value, **{names[0]: getattr(value, names[0])})
    assert type(replaced) is cls and replaced == value and replaced is not value


def test_a_listed_session_is_the_same_value_with_its_path_built_when_read() -> None:
    listed = SessionFile.listed("/s/a.jsonl", 12, 34)
    made = SessionFile(Path("/s/a.jsonl"), 12, 34)
    assert os.fspath(listed) == os.fspath(made) == "/s/a.jsonl"
    assert listed._path is None  # nothing read its path yet
    assert listed == made and hash(listed) == hash(made) and repr(listed) == repr(made)
    assert listed.path == Path("/s/a.jsonl") and listed.path is listed.path
    assert pickle.loads(pickle.dumps(SessionFile.listed("/s/b.jsonl", 1, 2))) == SessionFile(Path("/s/b.jsonl"), 1, 2)
    assert dataclasses.replace(SessionFile.listed("/s/c.jsonl", 1, 2), size=3) == SessionFile(Path("/s/c.jsonl"), 1, 3)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'path'"):
        listed.path = Path("/elsewhere")


def test_a_third_party_source_may_replace_a_read_with_the_dataclasses_api() -> None:
    """What a host plugin wrapping another source does: ``dataclasses.replace`` on a read."""

    def read_new(cursor: dict[str, Any]) -> TranscriptRead:
        read = TranscriptRead(list(_RECORDS), {"line": 2})
        # mark the cursor as this plugin's and drop the tool record, the dataclass way
        return dataclasses.replace(read, cursor={**read.cursor, "via": "wrapper"}, records=read.records[:1])

    read = read_new({})
    assert read == TranscriptRead(_RECORDS[:1], {"line": 2, "via": "wrapper"}, 0)
    assert read.changed and read.last_timestamp == "t1"
    assert KeptRead.of(read) == KeptRead(['{"a": 1}'], [0], {"line": 2, "via": "wrapper"}, "t1", 1)
    spec = dataclasses.replace(HostSpec("demo", "Demo", "m:S", "pkg"), session_dir="~/logs")
    assert spec.session_dir == "~/logs" and spec.binary == "memu-demo"


def test_the_dataclasses_api_imports_dataclasses_only_when_used() -> None:
    code = (
        "import sys\n"
        "from memu_core._hostkit.spec import HostSpec\n"
        "from memu_core._transcript_types import TranscriptRead\n"
        "read = TranscriptRead([], {'line': 1})\n"
        "assert read == TranscriptRead([], {'line': 1}) and hash(HostSpec('a', 'A', 'm:S', 'p'))\n"
        "assert 'dataclasses' not in sys.modules, 'imported at import or by the value methods'\n"
        "import dataclasses\n"
        "print(dataclasses.replace(read, corrupt=2), dataclasses.is_dataclass(HostSpec))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "TranscriptRead(records=[], cursor={'line': 1}, corrupt=2) True"


@dataclasses.dataclass(frozen=True)
class _ListedTwin:
    name: str
    tags: list[str] = dataclasses.field(default_factory=list)


class _Listed(Frozen, DataclassAPI):
    """A value class whose dataclass had a ``default_factory``."""

    __match_args__ = _fields = ("name", "tags")
    _factories = {"tags": list}  # noqa: RUF012 - a ClassVar in DataclassAPI
    name: str
    tags: list[str]

    def __init__(self, name: str, tags: list[str] | None = None) -> None:
        self._init(name, [] if tags is None else tags)


class _Unannotated(Frozen, DataclassAPI):
    _fields = ("name",)

    def __init__(self, name: str) -> None:
        self._init(name)


def test_a_default_factory_and_a_field_without_annotation() -> None:
    assert _field_facts(dataclasses.fields(_Listed)) == _field_facts(dataclasses.fields(_ListedTwin))
    assert dataclasses.replace(_Listed("a"), name="b") == _Listed("b", [])
    with pytest.raises(TypeError, match=r"_Unannotated\.name: give the field an annotation"):
        dataclasses.is_dataclass(_Unannotated)


def test_a_dataclass_may_subclass_a_public_value_class() -> None:
    @dataclasses.dataclass(frozen=True)
    class Stamped(SessionFile):
        seen: int = 0

    stamped = cast("Any", Stamped)(Path("a"), 1, 2, seen=3)  # mypy sees only the dataclass's own field
    assert [f.name for f in dataclasses.fields(stamped)] == ["path", "mtime_ns", "size", "seen"]
    assert stamped.size == 2 and dataclasses.replace(stamped, seen=4).seen == 4
    with pytest.raises(dataclasses.FrozenInstanceError):
        stamped.size = 5


def test_a_value_subclass_adding_fields_passes_for_a_dataclass_subclass() -> None:
    """``memu memorize``'s ``RunSpec`` adds two fields to ``HostSpec``, as its dataclass did."""
    from memu_core._memorize.actions import RunSpec

    host = ("developer", "developer", "m:S", "memu_core")
    spec = RunSpec(*host, run_id="r1", run_dir="/runs/r1")
    assert [f.name for f in dataclasses.fields(spec)][-3:] == ["extra_commands", "run_id", "run_dir"]
    assert dataclasses.replace(spec, run_id="r2") == RunSpec(*host, run_id="r2", run_dir="/runs/r1")
    assert spec != RunSpec(*host, run_id="r2", run_dir="/runs/r1")
    assert spec == RunSpec(*host, run_id="r1", run_dir="/runs/r1", extra_commands=_no_commands)  # not compared
    assert repr(spec).endswith("extra_commands=None, run_id='r1', run_dir='/runs/r1')")
    assert spec.binary == "memu memorize" and spec.default_base() == Path("/runs/r1")
    assert pickle.loads(pickle.dumps(spec)) == spec


class _Tally(DataclassAPI):
    """A mutable value class with slots (no such public class yet): pickled by default."""

    __slots__ = ("count", "name")
    __match_args__ = _fields = ("name", "count")
    name: str
    count: int

    def __init__(self, name: str, count: int = 0) -> None:
        self.name = name
        self.count = count


def test_a_mutable_dataclass_like_value_pickles_and_replaces() -> None:
    tally = _Tally("a", 2)
    assert pickle.loads(pickle.dumps(tally)) == tally  # the default (None, slots) state
    assert dataclasses.replace(tally, count=3) == _Tally("a", 3)
    assert _Tally.__dataclass_params__.frozen is False  # type: ignore[attr-defined]
    assert tally.__replace__(name="b") == _Tally("b", 2)  # what copy.replace calls on Python 3.13
    assert TranscriptRead([], {}).__replace__(corrupt=1) == TranscriptRead([], {}, 1)
