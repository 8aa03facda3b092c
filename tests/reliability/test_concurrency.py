"""Several writers at once: ``memu commit`` processes racing on one store, and bridging runs of
one host overlapping (two prepares at once; a second prepare before the first run committed).

Every command either succeeds or refuses with an exit code and an ``error:`` line; the store
passes its integrity checks; each commit that succeeded is wholly in the store; a file several
writers wrote holds one writer's whole version; and across overlapping runs no generated
record is lost or committed twice.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import reliability_kit as kit

WRITERS = 4
FILES = 60


def _payload(folder: Path, writer: int, rnd: int) -> Path:
    files = [
        {
            "name": f"w{writer}-note-{f:03d}",
            "track": "memory",
            "description": f"writer {writer} note {f}",
            "content": "\n".join(f"- writer{writer} round{rnd} fact {i}" for i in range(8)),
        }
        for f in range(FILES)
    ]
    files.append(
        {
            "name": "shared",
            "track": "memory",
            "description": "every writer writes it",
            "content": "\n".join(f"- writer{writer} round{rnd} shared {i}" for i in range(8)),
        }
    )
    path = folder / f"payload-{writer}.json"
    path.write_text(json.dumps({"recall_files": files}), encoding="utf-8")
    return path


def test_concurrent_commits_are_each_whole(tmp_path: Path) -> None:
    rounds = kit.count(bounded=1, soak=25)
    home = tmp_path / "home"
    home.mkdir()
    db = tmp_path / "store.sqlite3"
    env = kit.cli_env(home, MEMU_DB=str(db))
    memu = kit.binary("memu")
    with kit.tally("concurrent_commits") as t:
        for rnd in range(rounds):
            payloads = [_payload(tmp_path, w, rnd) for w in range(WRITERS)]
            procs = [
                subprocess.Popen(
                    [memu, "commit", str(p)],
                    env=env,
                    cwd=tmp_path,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for p in payloads
            ]
            outcomes = []
            for proc, p in zip(procs, payloads, strict=True):
                try:
                    out, err = proc.communicate(timeout=kit.RUN_TIMEOUT)
                finally:
                    if proc.poll() is None:
                        proc.kill()
                        proc.communicate()
                outcomes.append(kit.Outcome([memu, "commit", str(p)], proc.returncode, out, err, False, 0.0))
            for o in outcomes:
                t.note(o)
            where = f"round {rnd}"
            for problem in kit.integrity_problems(db):
                t.fail(f"{where}: {problem}")
            files = kit.stored_files(db)
            for w, o in enumerate(outcomes):
                if o.returncode != 0:
                    continue
                for f in range(FILES):
                    stored = files.get(f"memory/w{w}-note-{f:03d}")
                    if stored is None or f"writer{w} round{rnd} " not in stored.content:
                        t.fail(f"{where}: writer {w} exited 0 but its note {f} is not its round-{rnd} version")
                        break
            shared = files.get("memory/shared")
            if any(o.returncode == 0 for o in outcomes):
                writers = set(re.findall(r"writer(\d+) round(\d+)", shared.content)) if shared else set()
                if len(writers) != 1:
                    t.fail(f"{where}: the shared file mixes writers {sorted(writers)}")
                if shared and shared.lines != kit.content_lines(shared.content):
                    t.fail(f"{where}: the shared file's indexed lines differ from its content")
        t.verdict()
        assert t.refused < t.attempts, "every writer refused: nothing was tested"


def test_two_prepares_at_once(tmp_path: Path) -> None:
    """Launched together: one runs, the other waits or refuses (exit 3, the lock); never both in
    the tree at once. Then overlapping runs: a second prepare while the first run's agent has
    written but not committed. Nothing lost, nothing committed twice, every exit explicit."""
    rounds = kit.count(bounded=1, soak=25)
    world = kit.BridgeWorld(tmp_path, kit.rng("overlap"))
    with kit.tally("overlapping_bridging") as t:
        for rnd in range(rounds):
            world.generate()
            procs = [
                subprocess.Popen(
                    [world.exe, "prepare", "--max-jobs", str(world.max_jobs)],
                    env=world.env,
                    cwd=world.project,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for _ in range(2)
            ]
            for proc in procs:
                try:
                    out, err = proc.communicate(timeout=kit.RUN_TIMEOUT)
                finally:
                    if proc.poll() is None:
                        proc.kill()
                        proc.communicate()
                t.note(kit.Outcome([world.exe, "prepare"], proc.returncode, out, err, False, 0.0))
            if all(p.returncode != 0 for p in procs):
                # Both refused: only an unfinished earlier run may cause that; finish it.
                world.finish(t)
                t.note(world.prepare())
            world.agent()
            # A second run starts before the first committed (a slow agent, a second schedule).
            world.generate()
            second = world.prepare()
            t.note(second)
            if second.returncode == 0:
                world.agent()
            time.sleep(0.01)
            for _ in range(2):
                t.note(world.commit())
            world.check_store(t, f"round {rnd}")
        world.drain(t)
        world.check_store(t, "after draining")
        world.account(t)
        t.verdict()
