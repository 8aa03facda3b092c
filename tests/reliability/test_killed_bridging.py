"""Bridging cycles of ``memu-claude-code`` with ``prepare`` or ``commit`` killed at random moments.

The host keeps writing: before each cycle new sessions appear and old ones grow. Each cycle
kills one step (prepare or commit, chosen at random) with SIGKILL somewhere in its usual run
time, then carries on the way the schedule would: a killed prepare is simply run again, a killed
commit is followed by the next cycle's prepare. After every kill the store passes its integrity
checks and every stored memory file is exactly what the agent wrote. At the end, unkilled runs
drain what is left, and every generated record must be in the store exactly once: none lost,
none mined and committed twice.
"""

from __future__ import annotations

from pathlib import Path

import reliability_kit as kit


def test_killed_bridging_cycles_lose_and_double_nothing(tmp_path: Path) -> None:
    cycles = kit.count(bounded=4, soak=200)
    random = kit.rng("bridging")
    world = kit.BridgeWorld(tmp_path, random)
    with kit.tally("killed_bridging") as t:
        world.generate()
        world.cycle(t, "first run")
        # Kill windows: a little past what each step usually takes on this machine.
        timing_prep = world.prepare()
        timing_commit = world.commit()
        windows = {"prepare": timing_prep.seconds * 1.2, "commit": timing_commit.seconds * 1.2}
        killed_cycles = 0
        for n in range(1, cycles + 1):
            world.generate()
            step = random.choice(["prepare", "commit"])
            where = f"cycle {n} ({step} killed)"
            delay = windows[step] / 2.4 if n == 1 else random.uniform(0.0, windows[step])
            if step == "prepare":
                outcome = world.prepare(delay)
                t.note(outcome)
                world.check_store(t, where)
                if not world.cycle(t, where) and t.failures:
                    break
            else:
                prep = world.prepare()
                t.note(prep)
                if prep.returncode != 0:
                    # Refused: an unfinished earlier run (a killed commit) must be finished first.
                    world.finish(t)
                    prep = world.prepare()
                    t.note(prep)
                if prep.returncode != 0:
                    t.fail(f"{where}: prepare failed: {prep.describe()}")
                    break
                world.agent()
                outcome = world.commit(delay)
                t.note(outcome)
                world.check_store(t, where)
            killed_cycles += outcome.killed
        world.drain(t)
        world.check_store(t, "after draining")
        world.account(t)
        t.killed = killed_cycles
        t.verdict()
        assert killed_cycles > 0 or not kit.SOAK, "no step was killed mid-way: the kill windows are too short"
