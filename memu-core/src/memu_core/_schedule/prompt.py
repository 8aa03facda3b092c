"""The prompt a scheduled run hands the agent: one bridging cycle, in plain steps."""

from __future__ import annotations

import shlex

from memu_core._hostkit.spec import HostSpec


def bridging_prompt(spec: HostSpec, base: str, session_dir: str | None = None, base_dir: str | None = None) -> str:
    """The steps of one run for ``spec``'s agent, working in ``base`` (shown as given).

    ``session_dir`` is baked into ``prepare`` for hosts whose sessions are not where the host's
    default says (the generic adapter, a non-default Hermes home); ``base_dir`` into ``prepare``
    and ``commit`` for a working tree of its own (one per agent on the generic adapter).
    """
    tree = f" --base-dir {shlex.quote(base_dir)}" if base_dir else ""
    binary = spec.binary
    prepare = f"{binary} prepare{tree}"
    if session_dir:
        prepare += f" --session-dir {shlex.quote(session_dir)}"
    commit = f"{binary} commit{tree}"
    jobs = f"{base.rstrip('/')}/jobs"
    return (
        f"You are the scheduled memu bridging run for {spec.display}; your working folder is {base}. "
        f"1. LEFTOVERS: if {jobs}/ already holds *.txt job files, an earlier run stopped before its "
        f"commit: work them as in step 3, run `{commit}`, then go on. "
        f"2. PREPARE: run exactly `{prepare}`. If it exits non-zero, stop and go to step 5. "
        f"3. JOBS: list {jobs}/*.txt and work every file in ascending numeric order (1.txt, 2.txt, "
        "... 10.txt; sort by number, the count varies). Each job says what to read and where to "
        "write; follow it to the letter. Writing nothing is a valid outcome; never invent. "
        f"4. COMMIT: run exactly `{commit}`. "
        f"5. ON FAILURE: if step 2 or 4 failed, run once `{binary} report error --stage remember "
        '--detail "<what went wrong, in plain words, with no paths, secrets or memory text>"` '
        "and ignore whether that command works. "
        "End with one line: how many jobs you worked and what the commit stored."
    )
