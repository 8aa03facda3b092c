"""``memu commit`` killed with SIGKILL at a random moment, over and over, on one SQLite store.

Each cycle rewrites every file of a large payload with the next generation number on every line
and kills the real CLI process somewhere between its start and its usual end. After each kill:
SQLite's integrity check, foreign keys and both FTS5 indexes pass; every file holds one
generation, old or new, and its indexed lines are exactly its content; the whole payload moved
together (one commit is one transaction); and running the same command again succeeds and
leaves every file at the new generation. ``--from-dir`` is the import path (a folder of Markdown
files): until ``memu import`` exists, that is the command that imports.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import reliability_kit as kit

FILES = 300
LINES = 12
GEN = re.compile(r"\bgen(\d+)\b")


def _lines(f: int, gen: int) -> list[str]:
    return [f"- fact {i} of note {f}: build step {i} runs after step {i - 1} gen{gen}" for i in range(LINES)]


def _write_payload(folder: Path, mode: str, gen: int) -> list[str]:
    """The command's arguments for generation ``gen`` of the payload (files rewritten in place)."""
    if mode == "payload":
        files = [
            {
                "name": f"note-{f:04d}",
                "track": "memory",
                "description": f"note {f}",
                "content": "\n".join(_lines(f, gen)),
            }
            for f in range(FILES)
        ]
        path = folder / "payload.json"
        path.write_text(json.dumps({"recall_files": files}), encoding="utf-8")
        return ["commit", str(path)]
    tree = folder / "notes"
    tree.mkdir(exist_ok=True)
    for f in range(FILES):
        body = "\n".join(_lines(f, gen))
        (tree / f"note-{f:04d}.md").write_text(
            f"---\nname: note-{f:04d}\ndescription: note {f}\n---\n{body}\n", encoding="utf-8"
        )
    return ["commit", "--from-dir", str(tree)]


def _generations(db: Path, t: kit.Tally, where: str) -> set[int]:
    """Each file's generation (checking it is one, and its segments match its content)."""
    gens: set[int] = set()
    files = kit.stored_files(db)
    for key, stored in files.items():
        found = {int(g) for g in GEN.findall(stored.content)}
        if len(found) != 1:
            t.fail(f"{where}: {key} mixes generations {sorted(found)}")
            continue
        if stored.lines != kit.content_lines(stored.content):
            t.fail(f"{where}: {key}'s indexed lines differ from its content")
        gens |= found
    if files and len(files) != FILES:
        t.fail(f"{where}: {len(files)} files stored, expected 0 or {FILES}")
    return gens


@pytest.mark.parametrize("mode", ["payload", "from-dir"])
def test_killed_commit_leaves_old_or_new(tmp_path: Path, mode: str) -> None:
    cycles = kit.count(bounded=3, soak=100)
    home = tmp_path / "home"
    home.mkdir()
    db = tmp_path / "store.sqlite3"
    env = kit.cli_env(home, MEMU_DB=str(db))
    memu = kit.binary("memu")
    random = kit.rng(f"commit-{mode}")
    with kit.tally(f"killed_commit_{mode.replace('-', '_')}") as t:
        first = kit.run([memu, *_write_payload(tmp_path, mode, 0)], env, tmp_path)
        assert first.returncode == 0, first.describe()
        # The kill window: a little past the time a whole commit usually takes.
        window = max(0.3, first.seconds * 1.2)
        for gen in range(1, cycles + 1):
            args = _write_payload(tmp_path, mode, gen)
            # The first kill lands mid-way for sure; the rest anywhere in the window.
            delay = window / 2.4 if gen == 1 else random.uniform(0.0, window)
            outcome = kit.run_and_kill([memu, *args], env, tmp_path, delay)
            t.note(outcome)
            where = f"cycle {gen} ({'killed' if outcome.killed else f'exit {outcome.returncode}'})"
            for problem in kit.integrity_problems(db):
                t.fail(f"{where}: {problem}")
            gens = _generations(db, t, where)
            if not gens <= {gen - 1, gen} or len(gens) > 1:
                t.fail(f"{where}: files at generations {sorted(gens)}, expected all {gen - 1} or all {gen}")
            if not outcome.killed and outcome.returncode == 0 and gens != {gen}:
                t.fail(f"{where}: a finished commit left generations {sorted(gens)}")
            again = kit.run([memu, *args], env, tmp_path)
            if again.returncode != 0:
                t.fail(f"{where}: the next run failed: {again.describe()}")
            elif _generations(db, t, f"{where}, re-run") != {gen}:
                t.fail(f"{where}: the re-run did not leave every file at generation {gen}")
        t.verdict()
        # Bounded runs are few: a loaded machine may let each finish before its kill. The soak must kill.
        assert t.killed > 0 or not kit.SOAK, "no attempt was killed mid-way: the kill window is too short"
