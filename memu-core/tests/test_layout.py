"""``memu_core._layout`` is the one module that knows where memu's files live under ``~/.memu``."""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core import _layout

REPO = Path(__file__).resolve().parents[2]
SOURCES = [
    REPO / "memu-core" / "src",
    *sorted((REPO / "memu-backends").glob("*/src")),
    *sorted((REPO / "memu-hosts").glob("*/src")),
    REPO / "memu-telemetry" / "src",
]
LAYOUT_MODULE = REPO / "memu-core" / "src" / "memu_core" / "_layout.py"
# A string naming a piece of the layout as a path: memu's folder, the default store, the config
# file. Prose (help text, error messages, docstrings) has spaces and is not a path.
LAYOUT_PIECE = re.compile(r"^(~/)?\.memu(/\S*)?$|^(\S*/)?(memu\.sqlite3|config\.env)$")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    # Attribute docstrings (a bare string after an assignment) are prose too.
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for before, stmt in itertools.pairwise(body):
                assigned = isinstance(before, ast.Assign | ast.AnnAssign)
                if assigned and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    found.add(id(stmt.value))
    return found


def layout_strings(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of every string constant in ``path`` that names a layout piece."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            text = node.value.strip()
            if LAYOUT_PIECE.match(text):
                yield node.lineno, text


def test_the_pattern_finds_what_it_should() -> None:
    for text in (".memu", "~/.memu", "~/.memu/hosts/", "memu.sqlite3", "config.env", "~/.memu/config.env"):
        assert LAYOUT_PIECE.match(text), text
    for text in ("Working tree (default ~/.memu/hosts/x).", "a .memu folder", "memu.sqlite3.bak"):
        assert not LAYOUT_PIECE.match(text), text


# The per-turn warm client repeats the few names it needs rather than import the layout module
# (whose pathlib and dataclasses it must not pay for, ADR 0020); the test below holds them equal.
# The local embedder's models folder is repeated for the same reason (memu_core.settings loads
# pydantic); tests/test_cold_hybrid_retrieve.py holds it equal to memu_core.settings.models_dir.
MIRRORS = {
    LAYOUT_MODULE.parent / "_serve" / "turn.py",
    REPO / "memu-backends" / "memu-embed-local" / "src" / "memu_embed_local" / "model.py",
}


def test_only_the_layout_module_names_memus_files() -> None:
    offenders = [
        f"{path.relative_to(REPO)}:{line}: {text!r}"
        for root in SOURCES
        for path in sorted(root.rglob("*.py"))
        if path != LAYOUT_MODULE and path not in MIRRORS
        for line, text in layout_strings(path)
    ]
    assert offenders == [], "ask memu_core._layout (or memu_core.host.hosts_root / memu_core.settings.plugin_dir)"
    assert any(layout_strings(LAYOUT_MODULE))


def test_everything_lives_under_home_unless_overridden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(_layout.CONFIG_ENV_VAR, raising=False)
    monkeypatch.delenv(_layout.RUN_DIR_ENV, raising=False)
    home = tmp_path / ".memu"
    assert _layout.home() == home
    assert _layout.config_file() == home / "config.env"
    assert _layout.default_db() == home / "memu.sqlite3"
    assert _layout.instruction_cache("skill") == home / "cache" / "instructions" / "skill.txt"
    assert _layout.serve_socket() == home / "run" / "memu.sock"
    assert {_layout.serve_lock().parent, _layout.serve_pidfile().parent, _layout.serve_log().parent} == {home / "run"}
    assert _layout.host_tree("codex") == home / "hosts" / "codex"
    assert Path(_layout.host_tree_shown("codex")).expanduser() == _layout.host_tree("codex")
    assert _layout.plugin_dir("server") == home / "server"

    monkeypatch.setenv(_layout.CONFIG_ENV_VAR, "~/elsewhere.env")
    monkeypatch.setenv(_layout.RUN_DIR_ENV, str(tmp_path / "r"))
    assert _layout.config_file() == tmp_path / "elsewhere.env"
    assert _layout.serve_socket() == tmp_path / "r" / "memu.sock"


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "../server"])
def test_a_plugin_folder_is_one_plain_name(name: str) -> None:
    with pytest.raises(ValueError, match="one plain folder name"):
        _layout.plugin_dir(name)


def test_the_warm_clients_copies_agree_with_the_layout() -> None:
    from memu_core import _layout
    from memu_core._serve import turn

    for name in ("HOME_DIR", "CONFIG_ENV_VAR", "RUN_DIR_ENV", "SOCKET_NAME"):
        assert getattr(turn, name) == getattr(_layout, name), name


def test_remove_tree_removes_a_folder_and_never_follows_a_link(tmp_path: Path) -> None:
    from memu_core._layout import remove_tree

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("kept")
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "f.txt").write_text("x")
    (tree / "g.txt").write_text("y")
    (tree / "link").symlink_to(outside, target_is_directory=True)
    remove_tree(tree)
    assert not tree.exists() and (outside / "keep.txt").read_text() == "kept"
    remove_tree(tree)  # missing: nothing to do, no error
    linked = tmp_path / "linked"
    linked.symlink_to(outside, target_is_directory=True)
    remove_tree(linked)  # a link named as the folder: left as it is, as shutil.rmtree leaves it
    assert linked.is_symlink() and (outside / "keep.txt").exists()
