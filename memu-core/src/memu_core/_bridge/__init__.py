"""The bridging pipeline: session logs in, job files out, the agent's edits stored back.

``prepare`` scans a host's sessions (:mod:`.scan`, :mod:`.mine`, :mod:`.redact`), writes the
job files (:mod:`.jobs`, :mod:`.templates`) and mirrors the store (:mod:`.sync`,
:mod:`.snapshot`); ``commit`` stores what the agent changed (:mod:`.pipeline`). Private: the host
CLI (:mod:`memu_core._cli.host`) drives it; host plugins see only :mod:`memu_core.host`.
"""
