"""Read and write ``config.env``, the dotenv file every memu binary on a machine shares.

Stdlib only: the per-turn ``retrieve`` path imports this module, so it must stay cheap.

The reader never crashes on a bad line: it skips it and reports ``(line_no, message)``, so one
typo cannot take every host offline. The writer is the only code that changes the file; it
merges in place (comments and other hosts' keys survive), quotes what needs quoting so the reader
gives back exactly what was written, and replaces the file atomically with mode 0600.
"""

from __future__ import annotations

import codecs
import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from memu_core.errors import ConfigError, UsageError

Problem = tuple[int, str]
"""A skipped line: its 1-based number and what was wrong with it."""

# No regular expressions on the read path: compiling them costs more than the whole parse of a
# typical config file, and every per-turn `retrieve` pays the import.
# Values made only of these characters are written bare; anything else is quoted.
_BARE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:@%+,=~^*!?[]{}-")
_DOUBLE_QUOTE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}

FILE_MODE = 0o600
DIR_MODE = 0o700


def decode(data: bytes, path: Path) -> tuple[str, bool]:
    """Decode the bytes of a config file; return ``(text, canonical)``.

    ``canonical`` is False when the file is not plain BOM-less UTF-8 (a BOM, UTF-16, or a
    Windows ANSI fallback), so the writer knows to migrate it even when no value changed.
    Invalid UTF-8 raises :class:`ConfigError` naming the file and the fix.
    """
    if data.startswith(codecs.BOM_UTF8):
        return _strict(data[len(codecs.BOM_UTF8) :], "utf-8", path), False
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return _strict(data, "utf-16", path), False
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError as exc:
        if os.name == "nt":
            # Notepad and PowerShell 5 save in the ANSI code page; reading it beats refusing.
            import locale

            return data.decode(locale.getencoding(), errors="replace"), False
        raise ConfigError(
            f"{path}: not valid UTF-8 (byte {exc.start}); re-save the file as UTF-8, or delete it and re-run `init`"
        ) from None


def _strict(data: bytes, encoding: str, path: Path) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid {encoding.upper()} (byte {exc.start}); re-save the file as UTF-8, "
            "or delete it and re-run `init`"
        ) from None


def split_lines(text: str) -> list[str]:
    """Split on CRLF, LF and lone CR only; a final line terminator yields no empty tail line."""
    # Only CRLF, LF and CR end a line. str.splitlines() would also split on form feeds, U+2028
    # and friends, which can legitimately sit inside a quoted value.
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def parse_line(line: str) -> tuple[str, str] | str | None:
    """Parse one line: ``(key, value)`` for an assignment, None for blank/comment, else a problem."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    body = stripped
    rest = _after_export(body)
    if rest is not None and "=" in rest:
        body = rest
    if "=" not in body:
        return "no '=' (expected KEY=value)"
    raw_key, raw_value = body.split("=", 1)
    key = raw_key.strip()
    if not is_valid_key(key):
        shown = key if len(key) <= 40 else key[:40] + "…"
        return f"invalid key {shown!r} (use letters, digits and _, not starting with a digit)"
    return key, _parse_value(raw_value)


def _parse_value(raw: str) -> str:
    text = raw.lstrip()
    if text[:1] == '"':
        quoted = _double_quoted(text)
        if quoted is not None:
            return quoted
    elif text[:1] == "'":
        end = text.find("'", 1)
        if end > 0 and _only_comment(text[end + 1 :]):
            return text[1:end]
    # Unquoted (or an unmatched quote, taken literally): cut a " #" comment, trim.
    hash_at = raw.find("#")
    while hash_at > 0:
        if raw[hash_at - 1].isspace():
            return raw[: hash_at - 1].strip()
        hash_at = raw.find("#", hash_at + 1)
    return raw.strip()


def is_valid_key(key: str) -> bool:
    """True for ASCII letters, digits and ``_``, not starting with a digit (a shell name)."""
    return key.isascii() and key.isidentifier()


def _after_export(body: str) -> str | None:
    """The text after a leading ``export `` keyword, or None when there is none."""
    if body.startswith("export") and body[6:7].isspace():
        return body[6:].lstrip()
    return None


def _double_quoted(text: str) -> str | None:
    """The unescaped content of a leading ``"…"``, or None if it is unterminated or trailed by junk."""
    out: list[str] = []
    i = 1
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            # An unknown escape keeps its backslash, so Windows paths survive unquoted habits.
            out.append(_DOUBLE_QUOTE_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
            continue
        if char == '"':
            return "".join(out) if _only_comment(text[i + 1 :]) else None
        out.append(char)
        i += 1
    return None


def _only_comment(rest: str) -> bool:
    rest = rest.strip()
    return not rest or rest.startswith("#")


def parse(text: str) -> tuple[dict[str, str], list[Problem]]:
    """Parse dotenv text into ``(values, problems)``; repeated keys: the last one wins."""
    values: dict[str, str] = {}
    problems: list[Problem] = []
    for number, line in enumerate(split_lines(text), start=1):
        parsed = parse_line(line)
        if parsed is None:
            continue
        if isinstance(parsed, str):
            problems.append((number, parsed))
            continue
        key, value = parsed
        values[key] = value
    return values, problems


def read_file(path: Path) -> tuple[dict[str, str], list[Problem]]:
    """Read and parse ``path``; a missing file is ``({}, [])``."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return {}, []
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot be read ({exc.strerror}); fix its permissions (chmod 600) "
            "or point MEMU_CONFIG_ENV at a readable file"
        ) from None
    text, _ = decode(data, path)
    return parse(text)


def format_value(value: str) -> str:
    """Render ``value`` so that :func:`parse_line` returns it unchanged."""
    if value == "" or _BARE_CHARS.issuperset(value):
        return value
    if "'" not in value:
        return f"'{value}'"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _check_update(key: str, value: str) -> None:
    if not is_valid_key(key):
        raise UsageError(f"config key {key!r} is invalid; use letters, digits and _ (e.g. MEMU_DB)")
    if not isinstance(value, str):
        raise UsageError(f"{key}: value must be text, got {type(value).__name__}")
    if "\n" in value or "\r" in value:
        raise UsageError(f"{key}: the value contains a line break; config.env holds one line per value")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{key}: the value is not encodable as UTF-8; pass plain text") from None


def merge(text: str, updates: Mapping[str, str]) -> str:
    """Return ``text`` with ``updates`` applied: every occurrence rewritten in place, new keys appended.

    Lines that do not assign an updated key are kept byte for byte. Line terminators follow the
    file's first one (LF for a new file), and the result always ends with one.
    """
    eol = _first_line_end(text)
    out: list[str] = []
    seen: set[str] = set()
    for line in split_lines(text):
        parsed = parse_line(line)
        if isinstance(parsed, tuple) and parsed[0] in updates:
            key = parsed[0]
            prefix = "export " if _after_export(line.strip()) is not None else ""
            out.append(f"{prefix}{key}={format_value(updates[key])}")
            seen.add(key)
        else:
            out.append(line)
    out.extend(f"{key}={format_value(value)}" for key, value in updates.items() if key not in seen)
    return "".join(line + eol for line in out)


def _first_line_end(text: str) -> str:
    """The file's own line terminator (its first one), LF when it has none."""
    for i, char in enumerate(text):
        if char == "\n":
            return "\n"
        if char == "\r":
            return "\r\n" if text[i + 1 : i + 2] == "\n" else "\r"
    return "\n"


def write_values(path: Path, updates: Mapping[str, str]) -> tuple[Path, bool]:
    """Merge ``updates`` into the file at ``path`` atomically; return ``(path, changed)``.

    Raises :class:`UsageError` for a value with a line break or an invalid key, before touching
    anything. When nothing would change in a canonical file, only the mode is re-asserted. A
    symlinked file (a dotfiles checkout) is updated at its target, so the link survives.
    """
    for key, value in updates.items():
        _check_update(key, value)
    path = Path(path)
    target = Path(os.path.realpath(path))
    from memu_core._layout import ensure_private_dir  # only writers pay for it

    ensure_private_dir(target.parent)  # 0700 when made here, or when it is ~/.memu
    with _dir_lock(target.parent):
        try:
            data = target.read_bytes()
            exists = True
        except FileNotFoundError:
            data, exists = b"", False
        original, canonical = decode(data, path)
        merged = merge(original, updates)
        if exists and canonical and merged == original:
            _restrict(target)
            return path, False
        from memu_core._atomic import write_bytes  # only writers pay for it; lookups never write

        write_bytes(target, merged.encode("utf-8"), mode=FILE_MODE)
    return path, True


@contextlib.contextmanager
def _dir_lock(directory: Path) -> Iterator[None]:
    """Serialise writers on one machine (``init`` racing a first telemetry event, say).

    Read-merge-replace without a lock loses the update of whichever writer renames first.
    The lock is an advisory flock on the directory itself, so no lock file is left behind;
    where that is unavailable the write goes ahead unlocked.
    """
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _restrict(path: Path) -> None:
    if os.name == "posix":
        os.chmod(path, FILE_MODE)


def permission_note() -> str:
    """How the written file is protected, for the ``config`` row the commands print."""
    return "mode 0600" if os.name == "posix" else "plain text; protected only by the folder's ACLs"
