"""One CLI for every host binary, built from its :class:`HostSpec`.

Every ``memu-<host>`` gets the same verbs, flags and output as memU's: ``retrieve``,
``install-instruction`` (``--remove``), ``remove-instruction``, ``prepare``, ``commit``,
``verify-resources``, ``doctor``, ``docs``, ``init`` and ``config``, plus the host's extras.
typer is imported when the app is built, and each command imports what it needs when it runs,
so ``retrieve`` never pays for the rest.
"""

# No ``from __future__ import annotations``: typer reads the (locally imported) annotations
# at definition time.

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from memu_core._hostkit.spec import GUIDES, HostSpec

if TYPE_CHECKING:
    import typer


def _say(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _warn(text: str) -> None:
    sys.stderr.write(text + "\n")


def _layout(spec: HostSpec, base_dir: str | None) -> Any:
    from memu_core._hostkit.layout import Layout

    return Layout.at(base_dir or spec.default_base(), spec.id)


def _expand(path: str) -> Path:
    return Path(path).expanduser()


def build_host_app(spec: HostSpec) -> "typer.Typer":
    """The typer app of ``spec``'s binary."""
    import typer

    app = typer.Typer(
        name=spec.binary,
        help=f"memu for {spec.display}: retrieve memory, bridge sessions into it, manage the instruction.",
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
    )
    BaseDir = Annotated[
        str | None, typer.Option("--base-dir", help=f"Working tree (default ~/.memu/hosts/{spec.id}).")
    ]

    @app.command()
    def retrieve(
        query: Annotated[str, typer.Argument(help="What to recall (the user's request or keywords).")],
    ) -> None:
        """Recall memory, skills and resources for QUERY as JSON (no LLM; writes nothing)."""
        retrieve_in_process(spec, query)

    @app.command("install-instruction")
    def install_instruction(
        path: Annotated[str, typer.Option(help="Instruction file.")] = spec.instruction_path,
        skills_dir: Annotated[
            str, typer.Option("--skills-dir", help="Skills folder.", hidden=not spec.skills_dir)
        ] = spec.skills_dir,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the diff, write nothing.")] = False,
        print_only: Annotated[bool, typer.Option("--print", help="Print what would be installed.")] = False,
        remove: Annotated[
            bool, typer.Option("--remove", help="Remove the block and the skill instead.")
        ] = False,
    ) -> None:
        """Install (or with --remove, remove) the retrieve-before-answering instruction."""
        from memu_core._bridge import instruction

        skills = _expand(skills_dir) if skills_dir else None
        if remove:
            _report_removal(instruction.remove(_expand(path), spec.binary, skills, dry_run=dry_run), path)
            return
        if print_only:
            if skills is not None:
                _say(f"# {skills / instruction.SKILL_NAME / 'SKILL.md'}\n")
                _say(instruction.skill_text(spec.binary))
            _say(
                instruction.block(
                    spec.binary, instruction.instruction_text(spec.binary, skill=skills is not None)
                )
            )
            return
        for change in instruction.install(_expand(path), spec.binary, skills, dry_run=dry_run):
            if not change.diff:
                _say(f"{change.path}: already up to date")
            elif dry_run:
                _say(f"{change.path}: would change\n\n{change.diff}")
            else:
                _say(f"{change.path}: {'updated' if change.changed else 'unchanged'}\n\n{change.diff}")

    @app.command("remove-instruction")
    def remove_instruction(
        path: Annotated[str, typer.Option(help="Instruction file.")] = spec.instruction_path,
        skills_dir: Annotated[
            str, typer.Option("--skills-dir", help="Skills folder.", hidden=not spec.skills_dir)
        ] = spec.skills_dir,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the diff, write nothing.")] = False,
    ) -> None:
        """Remove the managed block and the memu-retrieve skill (same as install-instruction --remove)."""
        from memu_core._bridge import instruction

        skills = _expand(skills_dir) if skills_dir else None
        _report_removal(instruction.remove(_expand(path), spec.binary, skills, dry_run=dry_run), path)

    @app.command()
    def prepare(
        base_dir: BaseDir = None,
        session_dir: Annotated[
            str,
            typer.Option("--session-dir", help=f"Session logs (default {spec.session_dir or 'required'})."),
        ] = "",
        max_jobs: Annotated[int, typer.Option("--max-jobs", help="Sessions to mine this run.")] = 10,
    ) -> None:
        """Mine new session turns into job files for the agent (cursor staged until commit)."""
        from memu_core._cli.host.commands import run_prepare

        run_prepare(spec, base_dir, session_dir, max_jobs)

    @app.command()
    def commit(base_dir: BaseDir = None) -> None:
        """Store what the agent changed in the mirror and advance the cursor."""
        from memu_core._cli.host.commands import run_commit

        run_commit(spec, base_dir)

    @app.command("verify-resources")
    def verify_resources(base_dir: BaseDir = None) -> None:
        """Keep the touched files that exist and write them to resources.md for describing."""
        from memu_core._bridge import pipeline

        layout = _layout(spec, base_dir)
        count = pipeline.verify_resources(layout, spec.id)
        _say(f"{count} resource(s) written to {layout.resources}")

    @app.command()
    def doctor() -> None:
        """Check config, mode, store, embedder and the live retrieval the instruction runs."""
        from memu_core._bridge import doctor as doc
        from memu_core._bridge.backend import open_backend

        code = doc.run(spec.binary, open_backend, sys.stdout, sys.stderr)
        if code:
            raise typer.Exit(code)

    @app.command()
    def docs(topic: Annotated[str, typer.Argument(help=" | ".join(GUIDES))]) -> None:
        """Print a guide: install, task (the scheduled bridging task) or uninstall."""
        from memu_core._bridge import guides

        sys.stdout.write(guides.load(spec, topic))

    try:
        from memu_core._config.commands import build_config_commands
    except ImportError:
        pass  # settings not installed yet: the other verbs still work
    else:
        build_config_commands(app, spec.binary)
    if spec.extra_commands is not None:
        spec.extra_commands(app, spec)
    return app


def _report_removal(changes: list[Any], path: str) -> None:
    reported = [c for c in changes if c.diff]
    for change in reported:
        _say(f"{change.path}: {'removed' if change.changed else 'would change'}\n\n{change.diff}")
    if not reported:
        _say(f"{path}: no managed block to remove")


def _guarded(call: Any) -> int:
    """Run ``call`` with the CLI's error contract (one line on stderr, the error's exit code)."""
    from memu_core.errors import MemuError

    try:
        call()
    except MemuError as exc:
        if os.environ.get("MEMU_DEBUG") == "1":
            raise
        _warn(f"error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if os.environ.get("MEMU_DEBUG") == "1":
            raise
        _warn(f"error: {exc} (set MEMU_DEBUG=1 for a traceback)")
        return 1
    return 0


def retrieve_in_process(spec: HostSpec, query: str) -> None:
    """``retrieve`` answered by the engine in this process (no warm server)."""
    from memu_core._bridge.backend import open_backend
    from memu_core._retrieve_output import locate_in_mirror, render, shape_for_agent
    from memu_core.errors import UsageError

    if not query.strip():
        raise UsageError("the query is empty; pass the user's request or a few keywords in quotes")
    result = open_backend().progressive_retrieve(query)
    _say(render(shape_for_agent(result, locate_in_mirror(spec.default_base()))))


def run_host(spec: HostSpec, argv: list[str] | None = None) -> int:
    """Run ``spec``'s CLI and return its exit code (handled errors become one line on stderr)."""
    if (sys.argv[1:] if argv is None else argv)[:1] == ["retrieve"]:  # per-turn: warm server first, no click
        from memu_core._serve.fastpath import host_retrieve

        rest = (sys.argv[1:] if argv is None else argv)[1:]
        if (code := host_retrieve(spec, rest)) is not None:
            return code
        if len(rest) == 1 and not rest[0].startswith("-") and rest[0].strip():
            # No warm answer: the engine in process, still without typer (it imports pydantic).
            return _guarded(lambda: retrieve_in_process(spec, rest[0]))
    args_now = sys.argv[1:] if argv is None else argv
    from memu_core._cli.host.commands import fast_command

    fast = fast_command(spec, args_now)
    if fast is not None:
        # The bridging verbs' plain forms skip typer: its parameter machinery imports pydantic,
        # which alone costs more than a steady-state prepare.
        return _guarded(fast)
    import typer

    from memu_core.errors import MemuError

    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(OSError, ValueError):
                reconfigure(encoding="utf-8", errors="replace")
    debug = os.environ.get("MEMU_DEBUG") == "1"
    try:
        result = build_host_app(spec)(args_now, prog_name=spec.binary, standalone_mode=False)
    except MemuError as exc:
        if debug:
            raise
        _warn(f"error: {exc}")
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        return 130
    except typer.TyperException as exc:  # usage errors: typer vendors its own click
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            _warn(f"error: {exc}")
        return int(getattr(exc, "exit_code", 2))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if debug:
            raise
        _warn(f"error: {exc} (set MEMU_DEBUG=1 for a traceback)")
        return 1
    return result if isinstance(result, int) else 0
