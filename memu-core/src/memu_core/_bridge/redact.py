"""Secret redaction for transcript text, applied before anything reaches a job file.

Precision comes first: a transcript is the agent's memory of what happened, so every rule is
anchored on a provider's documented token shape or on an explicit secret-bearing context (a
``Bearer`` header, a password in a URL, a ``*_SECRET=`` assignment), and hashes, UUIDs, base64
blobs and ordinary code survive. The text is usually raw JSON lines: no rule consumes a ``"``, a
backslash or a newline, and the replacement contains none, so every line stays valid JSON and
a session's lines can be redacted in one pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Redactor", "redact"]

_NOT_B64 = r"(?<![A-Za-z0-9+/_-])"
"""A token must not continue a longer base64/identifier run (images, hashes)."""
_END = r"(?![A-Za-z0-9_-])"


def _mark(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _mixed(token: str) -> bool:
    """Looks random: letters and digits both present (keys are; prose and slugs rarely)."""
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def _always(_value: str) -> bool:
    return True


_PLACEHOLDERS = frozenset(
    {
        "changeme",
        "password",
        "secret",
        "token",
        "none",
        "null",
        "true",
        "false",
        "xxxxxx",
        "example",
        "redacted",
    }
)
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _assigned_secret(value: str) -> bool:
    """A value assigned to a secret-named key that looks like a secret, not code or a number."""
    if len(value) < 8 or value.isdigit() or value.lower() in _PLACEHOLDERS:
        return False
    if value.startswith(("$", "<", "{", "%", "*", "[REDACTED")) or _DOTTED.match(value):
        return False
    # A bare identifier (``token=token``) is a variable unless it also carries digits.
    return not (_IDENT.match(value) and not _mixed(value))


def _url_password(value: str) -> bool:
    return not value.startswith(("$", "<", "{", "*", "[REDACTED")) and value.lower() not in _PLACEHOLDERS


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[bytes]
    group: int = 0
    """The part replaced: 0 for the whole match, else the group holding the secret value."""
    check: Callable[[str], bool] = _always
    """Keeps a match the regex let through when the value does not look like a secret."""

    def span(self, m: re.Match[bytes]) -> tuple[int, int] | None:
        value = m.group(self.group).decode("utf-8", "replace")
        return m.span(self.group) if self.check(value) else None


def _rule(kind: str, pattern: str, group: int = 0, check: Callable[[str], bool] = _always) -> _Rule:
    return _Rule(kind, re.compile(pattern.encode()), group, check)


# Token rules, tried where a long word run starts with one of their prefixes.
_TOKENS: tuple[tuple[tuple[bytes, ...], _Rule], ...] = (
    ((b"sk-ant-",), _rule("anthropic", _NOT_B64 + r"sk-ant-[A-Za-z0-9]{2,10}-[A-Za-z0-9_-]{32,}" + _END)),
    (
        (b"sk-",),
        _rule(
            "openai",
            _NOT_B64 + r"sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{32,}" + _END,
            0,
            _mixed,
        ),
    ),
    (
        (b"AKIA", b"ASIA", b"ABIA", b"ACCA"),
        _rule("aws-key-id", r"(?<![A-Za-z0-9+/])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9+/=])"),
    ),
    (
        (b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_", b"github_pat_"),
        _rule("github", _NOT_B64 + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})" + _END),
    ),
    ((b"glpat-",), _rule("gitlab", _NOT_B64 + r"glpat-[A-Za-z0-9_-]{20,}" + _END)),
    ((b"xox",), _rule("slack", _NOT_B64 + r"xox[abposre]-[A-Za-z0-9-]{10,}" + _END, 0, _mixed)),
    ((b"AIza",), _rule("google", r"(?<![A-Za-z0-9+/_-])AIza[0-9A-Za-z_-]{35}" + _END)),
    (
        (b"sk_live_", b"rk_live_", b"sk_test_", b"rk_test_"),
        _rule("stripe", _NOT_B64 + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}" + _END),
    ),
    ((b"hf_",), _rule("huggingface", _NOT_B64 + r"hf_[A-Za-z0-9]{34,}" + _END, 0, _mixed)),
    ((b"npm_",), _rule("npm", _NOT_B64 + r"npm_[A-Za-z0-9]{36,}" + _END, 0, _mixed)),
    (
        (b"eyJ",),
        _rule("jwt", _NOT_B64 + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + _END),
    ),
)
_SLACK_HOOK = _rule("slack-webhook", r"hooks\.slack\.com/services/[A-Za-z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9]+")
_BEARER = _rule("bearer", r"(?i)(\bbearer[ \t]+)([A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])", 2, _mixed)
_BASIC = _rule("basic-auth", r"(?i)(\bauthorization:[ \t]*basic[ \t]+)([A-Za-z0-9+/]{12,}=*)", 2)
_PRIVATE_KEY = _rule(
    "private-key",
    r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY-----"
    r"(?:[^\"\n]{0,20000}?-----END[A-Z0-9 ]{0,40} PRIVATE KEY-----|[A-Za-z0-9+/=\\ \t]{0,20000})",
)
_URL = _rule(
    "url-password",
    r"([A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@\"'\\<>]{1,128}:)([^\s@/\"'\\<>]{1,256})(@)",
    2,
    _url_password,
)
_KEYWORDS = r"(?:secret|token|passw(?:or)?d|pwd|api_?key|access_?key|private_?key|auth_?key|credentials?)"
_ASSIGN = _rule(
    "secret",
    r"(?i)(?<![A-Za-z0-9_])((?:export[ \t]+)?[A-Za-z0-9_]*"
    + _KEYWORDS
    + r"[A-Za-z0-9_]*[ \t]*=[ \t]*(?:\\?[\"'])?)"
    r"([^\s\"'\\,;()\[\]{}]{1,512})(?=\\|[ \t\n\"',;)]|$)",
    2,
    _assigned_secret,
)
_KEY_BEFORE_EQ = re.compile((r"(?i)" + _KEYWORDS + r"[A-Za-z0-9_]*[ \t]*$").encode())

# A cheap map of the text: word characters become ``a``, ``=`` stays, quotes, backslashes and
# blanks become ``q``/`` ``, everything else ``.``. Long runs of ``a`` are where tokens live.
_WORD = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
_CLASS = bytes(
    ord("a")
    if c in _WORD
    else ord("=")
    if c == ord("=")
    else ord("q")
    if c in b"\"'\\"
    else ord(" ")
    if c in b" \t"
    else ord(".")
    for c in range(256)
)
_RUN = b"a" * 16
_NOT_A = re.compile(rb"[^a]")
_EQ_CANDIDATE = re.compile(rb"=[ q]{0,3}[a.]{6}")
_TOKEN_CHARS = frozenset(_WORD + b"-")


class Redactor:
    """Replaces secrets with ``[REDACTED:<kind>]`` and counts what it replaced.

    Speed matters (a first run redacts every mined transcript): the text is mapped once with
    ``bytes.translate``, candidates are found with substring searches (long word runs, ``=``,
    ``://``, key headers;
    a ``Basic`` credential is found through its long base64 run), and the exact rules run only there.
    """

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, text: str) -> str:
        """``text`` with every recognised secret value replaced."""
        data = text.encode("utf-8", "surrogatepass")
        spans = self._spans(data)
        if not spans:
            return text
        out: list[bytes] = []
        last = 0
        for start, end, kind in sorted(spans):
            if start < last:
                continue  # overlaps a secret already replaced
            out.append(data[last:start])
            out.append(_mark(kind).encode())
            last = end
            self.count += 1
        out.append(data[last:])
        return b"".join(out).decode("utf-8", "surrogatepass")

    def _spans(self, data: bytes) -> list[tuple[int, int, str]]:
        spans: list[tuple[int, int, str]] = []
        cls = data.translate(_CLASS)
        size = len(data)

        def window(rule: _Rule, lo: int, hi: int) -> None:
            for m in rule.pattern.finditer(data, max(0, lo), min(size, hi)):
                span = rule.span(m)
                if span is not None:
                    spans.append((*span, rule.kind))

        pos = cls.find(_RUN)
        while pos >= 0:
            stop = _NOT_A.search(cls, pos + len(_RUN))
            end = stop.start() if stop is not None else size
            start = pos
            while start > 0 and data[start - 1] in _TOKEN_CHARS:
                start -= 1
            for prefixes, rule in _TOKENS:
                if data.startswith(prefixes, start):
                    m = rule.pattern.match(data, start)
                    if m is not None and (span := rule.span(m)) is not None:
                        spans.append((*span, rule.kind))
                    break
            else:
                if start > 0 and data[start - 1] == 0x2E:  # a JWT's later segment: find its head
                    head = data.rfind(b"eyJ", max(0, start - 2048), start)
                    if head >= 0:
                        window(_TOKENS[-1][1], head, end + 1)
            before = data[max(0, start - 64) : start].lower()
            if b"bearer" in before:
                window(_BEARER, start - 64, end + 512)
            if b"basic" in before:
                window(_BASIC, start - 64, end + 512)
            if b"hooks.slack.com/services/" in data[max(0, start - 96) : start]:
                window(_SLACK_HOOK, start - 96, end + 1)
            pos = cls.find(_RUN, end)

        # Short tokens whose random part may contain ``-`` can lack a long word run: find them
        # by their fixed text instead.
        for needle, rule, back, ahead in (
            (b"://", _URL, 24, 400),
            (b"PRIVATE KEY-----", _PRIVATE_KEY, 64, 20100),
            (b"glpat-", _TOKENS[4][1], 0, 200),
            (b"AIza", _TOKENS[6][1], 0, 200),
            (b"earer", _BEARER, 2, 1024),
        ):
            hit = data.find(needle)
            while hit >= 0:
                window(rule, hit - back, hit + ahead)
                hit = data.find(needle, hit + len(needle))

        for m in _EQ_CANDIDATE.finditer(cls):
            eq = m.start()
            if _KEY_BEFORE_EQ.search(data, max(0, eq - 64), eq):
                window(_ASSIGN, eq - 96, eq + 600)
        return spans


def redact(text: str) -> tuple[str, int]:
    """Redact one text; return it with the number of values replaced."""
    r = Redactor()
    return r(text), r.count
