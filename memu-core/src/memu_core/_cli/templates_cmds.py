"""``memu templates list|keygen|sign``: see which template text each name resolves to, and sign
the texts a team publishes (docs/templates.md)."""

# No ``from __future__ import annotations``: typer reads the annotations at definition time.

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

if TYPE_CHECKING:
    import typer


def register(app: "typer.Typer") -> None:
    """Add the ``templates`` group to the ``memu`` typer app (bodies import what they use)."""
    import typer

    from memu_core._cli.apps import sub_app

    group = sub_app("Job templates, the retrieval skill and host guides: where each comes from; signing.")

    @group.command("list")
    def list_templates(
        as_json: Annotated[bool, typer.Option("--json", help="Machine-readable.")] = False,
    ) -> None:
        """Each template's chosen source and version, and every other valid answer."""
        run_list(as_json)

    @group.command("keygen")
    def keygen(
        out: Annotated[Path, typer.Option("--out", help="Where to write the private key (created 0600).")],
    ) -> None:
        """Make an ed25519 key pair: the private key goes to --out, the public key is printed."""
        run_keygen(out)

    @group.command("sign")
    def sign(
        files: Annotated[list[Path], typer.Argument(help="Template files to sign (each gets FILE.sig).")],
        key: Annotated[Path, typer.Option("--key", help="The private key file from `memu templates keygen`.")],
    ) -> None:
        """Write a detached signature FILE.sig beside each template file."""
        run_sign(files, key)

    app.add_typer(group, name="templates")


def run_list(as_json: bool) -> None:
    """Print, per template name, the chosen candidate and the others."""
    import json

    from memu_core._bridge import templates
    from memu_core._bridge.template_text import PLACEHOLDERS

    rows = []
    for name in PLACEHOLDERS:
        found = templates.candidates(name)
        chosen = templates.choose(name)
        others = [c for c in found if c.source != chosen.source]
        rows.append((name, chosen, others))
    if as_json:
        payload = [
            {
                "name": name,
                "source": chosen.source,
                "version": chosen.version_text,
                "others": [{"source": c.source, "version": c.version_text} for c in others],
            }
            for name, chosen, others in rows
        ]
        print(json.dumps(payload, indent=2))
        return
    for name, chosen, others in rows:
        also = ", ".join(f"{c.source} {c.version_text}" for c in others)
        print(f"{name:<16} {chosen.version_text:<12} {chosen.source}" + (f"   (also: {also})" if also else ""))


def _usage(problem: Exception) -> Exception:
    from memu_core.errors import UsageError

    return UsageError(str(problem))


def run_keygen(out: Path) -> None:
    """Write a new private key to ``out`` (never over an existing file) and print the public key."""
    import os

    from memu_core._atomic import write_text
    from memu_core._bridge import template_sign as signing
    from memu_core.errors import UsageError

    path = out.expanduser()
    if path.exists():
        raise UsageError(f"{out} already exists; pass --out with a new file name (a key is never overwritten)")
    try:
        private, public = signing.keygen()
    except signing.SignatureProblem as exc:
        raise _usage(exc) from None
    write_text(path, private + "\n", mode=0o600)
    if os.name == "posix":
        os.chmod(path, 0o600)
    print(f"private key written to {out} (keep it secret; it signs what your team publishes)")
    print(f"public key: {public}")
    print(f"trust it with MEMU_TEMPLATE_KEYS={public} (comma-separated for several keys)")


def run_sign(files: list[Path], key: Path) -> None:
    """Sign each file with the private key in ``key``; refuse a template memu would not accept."""
    from memu_core._atomic import write_text
    from memu_core._bridge import template_sign as signing
    from memu_core._bridge import template_text
    from memu_core.errors import UsageError

    try:
        private = key.expanduser().read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise UsageError(
            f"cannot read the key file {key} ({exc.strerror}); make one with `memu templates keygen`"
        ) from None
    for file in files:
        try:
            data = file.expanduser().read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {file} ({exc.strerror}); pass an existing template file") from None
        name = file.name.removesuffix(".txt")
        if name in template_text.PLACEHOLDERS:
            try:
                template_text.read(name, "file", data.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as exc:
                raise UsageError(f"{file} would be refused as template {name}: {exc}; fix it before signing") from None
        try:
            signature = signing.sign(data, private)
        except signing.SignatureProblem as exc:
            raise UsageError(f"{key}: {exc}; use a key file written by `memu templates keygen`") from None
        sig = file.with_name(file.name + signing.SIG_SUFFIX)
        write_text(sig.expanduser(), signature + "\n")
        print(f"signed {file} -> {sig}")
