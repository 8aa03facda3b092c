"""Secret redaction for transcript text, applied before anything reaches a job file.

The rules read the *decoded* text. A session record is one JSON line, where a key printed on
its own line by ``cat .env`` sits after a ``\\n`` escape and a quote inside a tool's JSON output
is ``\\"``; a rule reading the raw line sees ``n`` or ``\\`` glued to the token. So the line is
first turned into a same-length view (:func:`decoded_view`): each escape becomes the character
it stands for, preceded by pad bytes that no rule matches. Offsets in the view are offsets in
the line, so a secret found in the view is cut from the line in place, escapes whole, and the
line stays valid JSON without a decode and re-encode of every record.

Precision comes first: a transcript is the agent's memory of what happened, so every rule is
anchored on a provider's documented token shape (:mod:`._rules`) or on an explicit
secret-bearing context (a ``Bearer`` header, a password in a URL, a value assigned to a key
named like a secret); hashes, UUIDs, base64 of text and ordinary code survive.

Speed matters (a first run redacts every mined transcript): each rule is one compiled pattern
with a literal prefix or a rare leading keyword, so the regex engine skips ahead in C and Python
runs only on matches.
"""

from __future__ import annotations

from collections.abc import Sequence

from memu_core._bridge import _prefilter, _rules

__all__ = ["Redactor", "decoded_view", "redact"]

PAD = 0x01
"""The byte an escape's backslash (and a ``\\u`` escape's digits) become in the view."""

_COMMON = ((b"\\\\", b"\x01\\"), (b"\\n", b"\x01\n"), (b'\\"', b'\x01"'), (b"\\t", b"\x01\t"))
"""The escapes of nearly every transcript line, replaced in bulk; ``\\\\`` first (see below)."""
_RARE = {ord("r"): b"\r", ord("/"): b"/", ord("b"): b" ", ord("f"): b" "}
"""Other one-character escapes, decoded one by one where a backslash is left."""
_HEX = frozenset(b"0123456789abcdefABCDEF")


def decoded_view(data: bytes) -> bytes:
    """``data`` with its backslash escapes decoded in place, padded to keep every offset.

    ``\\\\`` is decoded first, which leaves a real backslash; the passes after it then decode
    the escapes of a JSON string held inside a JSON string (a tool's JSON output) as well.
    """
    if b"\\" not in data:
        return data
    view = data
    for escape, decoded in _COMMON:
        view = view.replace(escape, decoded)
    at = view.find(b"\\")
    if at < 0:
        return view
    buf = bytearray(view)
    while at >= 0:
        nxt = buf[at + 1] if at + 1 < len(buf) else 0
        if nxt in _RARE:
            buf[at : at + 2] = b"\x01" + _RARE[nxt]
        elif nxt == 0x75 and len(buf) >= at + 6 and all(c in _HEX for c in buf[at + 2 : at + 6]):  # \uXXXX
            buf[at : at + 6] = b"\x01" * 6
        at = buf.find(b"\\", at + 1)
    return bytes(buf)


class Redactor:
    """Replaces secrets with ``[REDACTED:<kind>]`` and counts what it replaced."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, text: str) -> str:
        """``text`` with every recognised secret value replaced."""
        return self._text(text, text.encode("utf-8", "surrogatepass"))

    def _text(self, text: str, data: bytes) -> str:
        out = self._redact(data)
        return text if out is data else out.decode("utf-8", "surrogatepass")

    def lines(self, texts: Sequence[str]) -> list[str]:
        """Redact many records (JSON lines) at once; each stays one line and valid JSON.

        The records are scanned as one text, joined by NUL bytes that no rule crosses (a JSON
        line cannot hold a raw NUL); a text that does hold one is redacted on its own.
        """
        if not texts:
            return []
        joined = "\x00".join(texts)
        if joined.count("\x00") != len(texts) - 1:
            return [self(t) for t in texts]
        if not _prefilter.loaded():
            return self(joined).split("\x00")
        data = joined.encode("utf-8", "surrogatepass")
        picked = _prefilter.candidates(data, len(texts))
        if not picked:
            return list(texts)
        if len(picked) == len(texts):
            return self._text(joined, data).split("\x00")
        # Only the records holding a trigger literal can hold a secret (see :mod:`._prefilter`).
        out = list(texts)
        for i, text in zip(picked, self("\x00".join(texts[i] for i in picked)).split("\x00"), strict=True):
            out[i] = text
        return out

    def slice(self, texts: Sequence[str]) -> tuple[list[str], bytes]:
        """:meth:`lines`, and those lines as a slice file's bytes (each ended by a newline).

        The prefilter reads the records joined as the file joins them, so when none of them
        holds a trigger literal those bytes are the file, with no second join and encode.
        """
        if not texts:
            return [], b""
        if _prefilter.loaded():
            # An empty last record ends the file with its newline without a second copy of it.
            data = "\n".join([*texts, ""]).encode("utf-8", "surrogatepass")
            picked = _prefilter.candidates(data, len(texts) + 1, b"\n")
            if picked and picked[-1] == len(texts):  # every record, the empty one too
                picked.pop()
            if not picked:
                return list(texts), data
            lines = list(texts)
            for i, text in zip(picked, self.lines([texts[i] for i in picked]), strict=True):
                lines[i] = text
        else:
            lines = self.lines(texts)
        return lines, ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")

    def _redact(self, data: bytes) -> bytes:
        view = decoded_view(data)
        spans = _rules.find(view)
        if not spans:
            return data
        spans.sort()
        out: list[bytes] = []
        last = 0
        start, end, kind = -1, -1, ""
        for s, e, k in spans:
            s, e = _align(view, s, e)
            if s < end:  # overlaps the secret being replaced: widen it, it is one secret
                end = max(end, e)
                continue
            if start >= 0:
                out += (data[last:start], b"[REDACTED:", kind.encode(), b"]")
                last = end
                self.count += 1
            start, end, kind = s, e, k
        out += (data[last:start], b"[REDACTED:", kind.encode(), b"]", data[end:])
        self.count += 1
        return b"".join(out)


def _align(view: bytes, start: int, end: int) -> tuple[int, int]:
    """Keep escapes whole: a span takes the backslash of a character it starts with and drops a
    trailing backslash whose character it does not hold (else the line would not be JSON)."""
    while start > 0 and view[start - 1] == PAD:
        start -= 1
    while end > start and view[end - 1] == PAD:
        end -= 1
    return start, end


def redact(text: str) -> tuple[str, int]:
    """Redact one text; return it with the number of values replaced."""
    r = Redactor()
    return r(text), r.count
