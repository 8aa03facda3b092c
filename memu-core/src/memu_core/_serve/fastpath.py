"""A host binary's ``retrieve`` answered by the warm server, before anything heavy is imported.

``memu retrieve`` prints the server's answer as it is (:func:`memu_core._cli.memory_cmds.retrieve`);
a host binary shapes it for the agent first, which is what this module adds. The CLI shell has
made stdout UTF-8 before either runs. A ``False`` answer means "no warm answer": the caller then
retrieves in process, exactly as if the warm path did not exist.
"""

from __future__ import annotations

import sys
from typing import Any


def host_retrieve(spec: Any, query: str, max_bytes: int | None = None) -> dict[str, Any] | None:
    """Print the warm answer to ``query`` shaped for ``spec``'s agent and return the answer;
    ``None`` when none came."""
    from memu_core._serve.client import warm_retrieve

    result = warm_retrieve(query)
    if result is None:
        return None
    from memu_core._retrieve_output import agent_answer, budget, locate_in_mirror

    sys.stdout.write(agent_answer(result, locate_in_mirror(spec.default_base()), budget(max_bytes)) + "\n")
    return result
