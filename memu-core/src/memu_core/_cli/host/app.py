"""One CLI for every host binary, built from its :class:`HostSpec`.

Every ``memu-<host>`` gets the same verbs, flags and output as memU's: ``retrieve``,
``install-instruction`` (``--remove``), ``remove-instruction``, ``prepare``, ``commit``,
``verify-resources``, ``doctor``, ``docs``, ``init`` and ``config``, plus the host's extras.
It runs in the shared CLI shell (:mod:`memu_core._cli.shell`); the per-turn verbs' plain forms
take the fast path in :mod:`memu_core._cli.host.commands` and never import typer. typer is
imported when the app is built, and each command imports what it needs when it runs.
"""

# No ``from __future__ import annotations``: typer reads the (locally imported) annotations
# at definition time.

import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from memu_core._hostkit.spec import GUIDES, HostSpec

if TYPE_CHECKING:
    import typer


def _say(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _expand(path: str) -> Path:
    return Path(path).expanduser()


def build_host_app(spec: HostSpec, *, third_party: bool = False) -> "typer.Typer":
    """The typer app of ``spec``'s binary. Every verb comes through ``memu_register_host_commands``:
    memu-core adds the shared ones (:func:`add_shared_commands`), the host's plugin its extras, and
    ``third_party`` asks every other installed plugin too."""
    from memu_core._cli.apps import new_app
    from memu_core._plugins.manager import get_plugins

    app = new_app(
        spec.binary,
        f"memu for {spec.display}: retrieve memory, bridge sessions into it, manage the instruction.",
        distribution=distribution_of(spec),
    )
    get_plugins().add_host_commands(spec, app, third_party=third_party)
    return app


def add_shared_commands(spec: HostSpec, app: "typer.Typer") -> None:
    """memu-core's part of every host binary: the shared verbs and ``init``/``config``."""
    add_host_verbs(spec, app)
    from memu_core._schedule.commands import add_schedule_commands

    add_schedule_commands(spec, app)
    try:
        from memu_core._config.commands import build_config_commands
    except ImportError:
        pass  # settings not installed yet: the other verbs still work
    else:
        build_config_commands(app, spec.binary, after_init=partial(_install_started, spec))
    if spec.extra_commands is not None:  # deprecated: hosts add extras through memu_register_host_commands
        spec.extra_commands(app, spec)


def _install_started(spec: HostSpec) -> None:
    # After init's write, so the event carries the client id init just printed; then deliver.
    from memu_core import _events

    _events.emit("cli_install_started", host=spec.id, session_env=spec.session_id_env)
    _events.flush()


def _build(spec: HostSpec, args: Sequence[str]) -> "typer.Typer":
    # Other plugins load only for a verb neither memu-core nor the host's plugin adds.
    from typer.main import get_command

    app = build_host_app(spec)
    verb = next((a for a in args if not a.startswith("-")), None)
    if verb is not None and verb not in getattr(get_command(app), "commands", {}):
        app = build_host_app(spec, third_party=True)
    return app


def distribution_of(spec: HostSpec) -> str:
    """The name ``--version`` looks the host's distribution up by (its top-level package)."""
    return spec.package.split(".")[0]


def add_host_verbs(spec: HostSpec, app: "typer.Typer") -> None:
    """Add the verbs every host binary shares to ``app``; the per-turn ones come from the flag table."""
    import typer

    from memu_core._cli import flags
    from memu_core._cli.host import commands

    context = {"host_id": spec.id, "session_dir": spec.session_dir or "required"}
    flags.typer_command(app, flags.HOST_RETRIEVE, partial(commands.run_retrieve, spec), context=context)

    @app.command("install-instruction")
    def install_instruction(
        path: Annotated[str, typer.Option(help="Instruction file.")] = spec.instruction_path,
        skills_dir: Annotated[
            str, typer.Option("--skills-dir", help="Skills folder.", hidden=not spec.skills_dir)
        ] = spec.skills_dir,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the diff, write nothing.")] = False,
        print_only: Annotated[bool, typer.Option("--print", help="Print what would be installed.")] = False,
        remove: Annotated[bool, typer.Option("--remove", help="Remove the block and the skill instead.")] = False,
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
            _say(instruction.block(spec.binary, instruction.instruction_text(spec.binary, skill=skills is not None)))
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

    flags.typer_command(app, flags.HOST_PREPARE, partial(commands.run_prepare, spec), context=context)
    flags.typer_command(app, flags.HOST_COMMIT, partial(commands.run_commit, spec), context=context)
    flags.typer_command(app, flags.HOST_VERIFY, partial(commands.run_verify_resources, spec), context=context)

    @app.command()
    def doctor() -> None:
        """Check configuration, plugins, store, embedder and a live retrieval, then this host's
        session folder, instruction and own runs; one row per check."""
        from memu_core._cli import doctor as checkup
        from memu_core._cli.host.doctor import checks

        code = checkup.run(checks(spec), checkup.Context(spec.binary), sys.stdout, sys.stderr)
        if code:
            raise typer.Exit(code)

    @app.command()
    def docs(topic: Annotated[str, typer.Argument(help=" | ".join(GUIDES))]) -> None:
        """Print a guide: install, task (the scheduled bridging task) or uninstall."""
        from memu_core import _events
        from memu_core._bridge import guides

        sys.stdout.write(guides.load(spec, topic))
        if topic in ("install", "uninstall"):  # memU records these two; the task guide, nothing
            _events.emit(f"{topic}_guide_opened", host=spec.id, session_env=spec.session_id_env)
            _events.flush()

    add_report_verbs(spec, app)


def add_report_verbs(spec: HostSpec, app: "typer.Typer") -> None:
    """``report install|uninstall|error|flush``: what the guides ask the agent to report."""
    import typer

    from memu_core._cli.apps import sub_app

    report = sub_app("Report install, uninstall or a failure (recorded only when telemetry is on).")
    app.add_typer(report, name="report")

    @report.command("install")
    def report_install() -> None:
        """Record that the agent finished installing memu, and deliver the spool."""
        from memu_core._cli.host import report as body

        body.record(spec, "cli_install_succeeded")

    @report.command("uninstall")
    def report_uninstall() -> None:
        """Record that the agent is uninstalling memu (run it before removing the package)."""
        from memu_core._cli.host import report as body

        body.record(spec, "cli_uninstall_succeeded")

    @report.command("error")
    def report_error(
        stage: Annotated[str, typer.Option("--stage", help="install, uninstall, remember, retrieve or other.")],
        detail: Annotated[str, typer.Option("--detail", help="What failed, in a sentence (scrubbed, capped).")] = "",
    ) -> None:
        """Record a failure the agent met; the same report is recorded once an hour."""
        from memu_core._cli.host import report as body
        from memu_core.events import STAGES

        if stage not in STAGES:
            raise typer.BadParameter(f"{stage!r} is not a stage; use one of {', '.join(STAGES)}", param_hint="--stage")

        body.error(spec, stage, detail)

    @report.command("flush")
    def report_flush() -> None:
        """Deliver the spooled events now."""
        from memu_core._cli.host import report as body

        body.flush()


def _report_removal(changes: list[Any], path: str) -> None:
    reported = [c for c in changes if c.diff]
    for change in reported:
        _say(f"{change.path}: {'removed' if change.changed else 'would change'}\n\n{change.diff}")
    if not reported:
        _say(f"{path}: no managed block to remove")


def run_host(
    host: HostSpec | str, argv: list[str] | None = None, *, started: Callable[[], None] | None = None
) -> int:
    """Run a host's binary in the CLI shell and return its exit code.

    ``host`` is the host id its console script passes (the spec comes from the plugins'
    ``memu_register_hosts``; the binary's own plugin answers without loading the others) or,
    as before, the spec itself. ``started`` is called once the binary's start-up (the host's
    lookup) is over, right before the shell runs the command.
    """
    from memu_core._cli.host.commands import fast
    from memu_core._cli.shell import Binary, handled, run, split_verbose, utf8_streams

    if isinstance(host, str):
        from memu_core._plugins.manager import get_plugins

        # The lookup may fail before the shell runs: its one line obeys the shell's rules too.
        utf8_streams()
        verbose = split_verbose(sys.argv[1:] if argv is None else argv)[0]
        found: list[HostSpec] = []
        code = handled(lambda: found.append(get_plugins().host(host)), verbose=verbose, prog=f"memu-{host}")
        if not found:
            return code
        spec = found[0]
    else:
        spec = host
    binary = Binary(
        spec.binary,
        partial(_build, spec),
        distribution=distribution_of(spec),
        fast=partial(fast, spec),
        host=spec.id,
        session_env=spec.session_id_env,
    )
    if started is not None:
        started()
    return run(binary, argv)
