"""The arguments and flags of the memory commands, declared once.

The per-turn commands (``memu retrieve``/``commit``, ``memu-<host> retrieve``/``prepare``/
``commit``) run as fresh processes where importing typer (and through it pydantic) would cost
more than the work. Their fast paths parse argument lists with :meth:`Command.parse`, and the
typer commands are built from the same declarations by :func:`typer_command`, so a flag's name,
type, default and help live in one place and the two parsers cannot drift apart.

:meth:`Command.parse` answers only when it is sure; anything unusual (``--help``, an unknown or
repeated flag, a value that does not convert) gives ``None`` and the typer command, built from
the same table, explains the mistake.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer


# Plain classes, not dataclasses: a dataclass compiles its methods at import (about a
# millisecond each), and every ``memu`` process imports this table before it does anything.
class Param:
    """One argument (``flag`` empty) or option of a command."""

    __slots__ = ("default", "dest", "flag", "help", "kind", "repeat", "required")

    dest: str
    """The Python name: the keyword the command body receives."""
    help: str
    """Help text; ``{name}`` is filled from the context given to :func:`typer_command`, and
    ``{host_tree}`` with a host's default working tree (``~/.memu/hosts/{host_id}``)."""
    flag: str
    """``--top-k``; empty for a positional argument."""
    kind: type
    """``str``, ``int``, ``Path``, or ``bool`` for a switch."""
    default: Any
    repeat: bool
    """May be given several times; the body receives a list, or ``None`` when absent."""
    required: bool
    """A positional argument that must be present."""

    def __init__(
        self,
        dest: str,
        help: str,
        flag: str = "",
        kind: type = str,
        default: Any = None,
        repeat: bool = False,
        required: bool = False,
    ) -> None:
        self.dest = dest
        self.help = help
        self.flag = flag
        self.kind = kind
        self.default = default
        self.repeat = repeat
        self.required = required

    def __repr__(self) -> str:
        return f"Param({self.dest!r}, flag={self.flag!r})"


class Command:
    """A command's name, help and parameters."""

    __slots__ = ("help", "name", "params")

    def __init__(self, name: str, help: str, params: tuple[Param, ...]) -> None:
        self.name = name
        self.help = help
        self.params = params

    def __repr__(self) -> str:
        return f"Command({self.name!r})"

    def parse(self, args: Sequence[str]) -> dict[str, Any] | None:
        """The body's keyword arguments for ``args``, or ``None`` when typer should decide."""
        flags = {p.flag: p for p in self.params if p.flag}
        positionals = [p for p in self.params if not p.flag]
        values: dict[str, Any] = {p.dest: [] if p.repeat else p.default for p in self.params}
        seen: set[str] = set()
        rest = list(args)
        while rest:
            arg = rest.pop(0)
            if arg.startswith("-") and arg != "-":  # a lone "-" is a value (stdin)
                name, eq, value = arg.partition("=")
                param = flags.get(name)
                if param is None or (param.dest in seen and not param.repeat):
                    return None
                seen.add(param.dest)
                if param.kind is bool:
                    if eq:
                        return None
                    values[param.dest] = True
                    continue
                if not eq:
                    if not rest:
                        return None
                    value = rest.pop(0)
            else:
                if not positionals:
                    return None
                param, value = positionals.pop(0), arg
            converted = _convert(param, value)
            if converted is None:
                return None
            if param.repeat:
                values[param.dest].append(converted)
            else:
                values[param.dest] = converted
        if any(p.required for p in positionals):
            return None
        for param in self.params:
            if param.repeat and not values[param.dest]:
                values[param.dest] = None  # what typer passes for an absent repeatable option
        return values


def _convert(param: Param, value: str) -> Any:
    if param.kind is int:
        try:
            return int(value)
        except ValueError:
            return None
    if param.flag and value.startswith("--"):
        return None  # most likely a forgotten value; typer words that better
    return Path(value) if param.kind is Path else value


def _fill(text: str, context: Mapping[str, str]) -> str:
    if "{host_tree}" in text:  # the layout module is read only by the host verbs that show it
        from memu_core._layout import host_tree_shown

        text = text.replace("{host_tree}", host_tree_shown("{host_id}"))
    # Plain replacement, not str.format: help texts may hold literal braces (JSON examples).
    for key, value in context.items():
        text = text.replace("{" + key + "}", value)
    return text


def typer_command(
    app: typer.Typer,
    command: Command,
    body: Callable[..., Any],
    *,
    name: str | None = None,
    help: str | None = None,
    context: Mapping[str, str] | None = None,
) -> None:
    """Register ``command`` on ``app`` as ``name`` (default its own); typer calls ``body(**values)``."""
    import inspect
    from typing import Optional

    import typer

    parameters = []
    for param in command.params:
        text = _fill(param.help, context or {})
        # typer's "default" style (the Option is the default) rather than Annotated[type, Option]:
        # the same command, without building a typing construct per parameter on every start-up.
        default = ... if param.required else param.default
        info = typer.Option(default, param.flag, help=text) if param.flag else typer.Argument(default, help=text)
        base: Any
        if param.kind is bool:
            base = bool
        elif param.repeat:
            base = Optional[list[param.kind]]  # type: ignore[name-defined]  # noqa: UP045
        elif param.default is None:
            base = Optional[param.kind]  # noqa: UP045 - typer reads typing.Optional on every Python
        else:
            base = param.kind
        parameters.append(inspect.Parameter(param.dest, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=base))

    def callback(**values: Any) -> Any:
        return body(**values)

    # typer reads a command's parameters from its signature and type hints.
    callback.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    callback.__annotations__ = {p.name: p.annotation for p in parameters}
    callback.__name__ = callback.__qualname__ = (name or command.name).replace("-", "_")
    app.command(name or command.name, help=_fill(help or command.help, context or {}))(callback)


QUERY = Param("query", "What to recall: the user's request or a few keywords.", required=True)
TOP_K = Param("top_k", "How many segments (default 5).", flag="--top-k", kind=int)
MAX_BYTES = Param(
    "max_bytes",
    "Largest answer, in bytes of JSON: the best segments and their files first (default 6000, or "
    "MEMU_RETRIEVE_MAX_BYTES; 0 = no limit).",
    flag="--max-bytes",
    kind=int,
)
TRACKS = Param("track", "Only this track (repeatable).", flag="--track", repeat=True)
USER_ID = Param("user_id", "Only this user's memory.", flag="--user-id")
AGENT_ID = Param("agent_id", "Only this agent's memory.", flag="--agent-id")
PAYLOAD = Param("payload", "JSON file in commit_results' shape, or - for stdin.")
FROM_DIR = Param(
    "from_dir",
    "Commit every *.md file under DIR (frontmatter name/description/track); a file that cannot be "
    "read or named is listed on stderr, the rest commit, and the exit code is 2.",
    flag="--from-dir",
    kind=Path,
)
AS_JSON = Param("as_json", "Print the result as JSON.", flag="--json", kind=bool, default=False)
PRUNE = Param(
    "prune",
    "With --from-dir: also forget the scope's files, on each track the folder has files for, that the "
    "folder no longer holds (without it, a removed file stays stored).",
    flag="--prune",
    kind=bool,
    default=False,
)
RETRIEVE_JSON = Param(
    "as_json", "JSON output (already the default; memU's flag, accepted).", flag="--json", kind=bool, default=False
)
OUTPUT_FORMAT = Param(
    "output_format",
    "json (the default, for agents) or text (a ranked list for people).",
    flag="--format",
    default="json",
)
# memU's per-call local overrides (memu_core._cli.overrides): the store and the embedder for this
# one command, as if the variable were exported for it. Cloud mode ignores them, as in memU.
DB = Param("db", "Local store for this call (overrides MEMU_DB).", flag="--db")
PROVIDER = Param("provider", "Embedding provider for this call (overrides MEMU_EMBED_PROVIDER).", flag="--provider")
EMBED_MODEL = Param("embed_model", "Embedding model for this call (overrides MEMU_EMBED_MODEL).", flag="--embed-model")
BASE_URL = Param("base_url", "Embedding endpoint for this call (overrides MEMU_BASE_URL).", flag="--base-url")
API_KEY = Param(
    "api_key",
    "Embedding key for this call (overrides MEMU_API_KEY; other local users can read a command "
    "line, so prefer the variable).",
    flag="--api-key",
)
LOCAL_OVERRIDES = (DB, PROVIDER, EMBED_MODEL, BASE_URL, API_KEY)
NAME = Param("name", "Name of the recall file to delete.", required=True)
TRACK = Param("track", "Its track.", flag="--track", default="memory")
BASE_DIR = Param("base_dir", "Working tree (default {host_tree}).", flag="--base-dir")
SESSION_DIR = Param("session_dir", "Session logs (default {session_dir}).", flag="--session-dir", default="")
MAX_JOBS = Param(
    "max_jobs",
    "Sessions to mine this run (0: as many as fit --budget-kb, at most 250).",
    flag="--max-jobs",
    kind=int,
    default=0,
)
BUDGET_KB = Param(
    "budget_kb",
    "Conversation text one run takes, in KiB (default 12288 when --max-jobs is 0).",
    flag="--budget-kb",
    kind=int,
)
ABANDON = Param(
    "abandon_unfinished",
    "Drop an unfinished run whose agent is gone (its sessions are offered again).",
    flag="--abandon-unfinished",
    kind=bool,
    default=False,
)
RUN_ID = Param("run_id", "Commit only if RUN (printed by prepare) is still the prepared run.", flag="--run")

RETRIEVE = Command(
    "retrieve",
    "Search memory; prints segments, files and resources as JSON.",
    (QUERY, TOP_K, TRACKS, USER_ID, AGENT_ID, RETRIEVE_JSON, OUTPUT_FORMAT, MAX_BYTES, *LOCAL_OVERRIDES),
)
COMMIT = Command(
    "commit",
    "Store recall files and resources (unchanged ones cost nothing).",
    (PAYLOAD, FROM_DIR, PRUNE, AS_JSON, *LOCAL_OVERRIDES),
)
LIST_FILES = Command(
    "list-files",
    "List every recall file (follows the cursor to the end).",
    (AS_JSON, USER_ID, AGENT_ID, *LOCAL_OVERRIDES),
)
FORGET = Command(
    "forget",
    "Delete a recall file and everything indexed from it (`memu restore NAME --undo-forget` brings it back).",
    (NAME, TRACK, USER_ID, AGENT_ID, AS_JSON),
)

HOST_RETRIEVE = Command(
    "retrieve",
    "Recall memory, skills and resources for QUERY as JSON (no LLM; writes nothing).",
    (QUERY, MAX_BYTES),
)
HOST_PREPARE = Command(
    "prepare",
    "Mine new session turns into job files for the agent (cursor staged until commit).",
    (BASE_DIR, SESSION_DIR, MAX_JOBS, BUDGET_KB, AS_JSON, ABANDON),
)
HOST_COMMIT = Command(
    "commit", "Store what the agent changed in the mirror and advance the cursor.", (BASE_DIR, RUN_ID)
)
HOST_VERIFY = Command(
    "verify-resources", "Keep the touched files that exist and write them to resources.md for describing.", (BASE_DIR,)
)
