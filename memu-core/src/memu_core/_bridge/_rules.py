"""The redaction rules: what a secret looks like, as patterns over a decoded view (see :mod:`.redact`).

Two families:

- tokens whose shape alone says "secret" (a provider prefix and a random body, a JWT, a PEM
  private key), matched case-sensitively in one combined pattern;
- values a context marks as secret (a key named like one, a URL's password, an
  ``Authorization`` header, an AWS secret key near its id or the word "secret"), matched in the
  lower-cased view so ``PASSWORD``, ``Password`` and ``password`` are one pattern; the value is
  then read from the original case.

A token may follow any character but a letter, digit or ``_`` (a ``/`` in a URL, a tab, a pad
byte where an escape was), and must end where the token ends. No rule matches a ``"``, a NUL (the
record separator) or a pad byte, so a replacement never breaks a JSON string.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Span = tuple[int, int, str]

_E = rb"(?![A-Za-z0-9_-])"


class _Lazy:
    """A pattern compiled on its first use: a steady ``prepare`` mines a handful of records, most
    of which need few rules or none, and compiling all of them cost 5-6 ms of every run."""

    __slots__ = ("_compiled", "_source")

    def __init__(self, source: bytes) -> None:
        self._source = source
        self._compiled: re.Pattern[bytes] | None = None

    @property
    def rx(self) -> re.Pattern[bytes]:
        """The compiled pattern."""
        if self._compiled is None:
            self._compiled = re.compile(self._source)
        return self._compiled


def _after(prefix: bytes) -> bytes:
    """``prefix``, then: no letter, digit or ``_`` before it. The check comes after the literal
    (a fixed-width look-behind over it) so the regex engine can skip ahead to the prefix in C."""
    return prefix + rb"(?<![A-Za-z0-9_][\s\S]{%d})" % len(prefix.replace(b"\\", b""))


# Token shapes, one pattern per literal prefix: (kind of each alternative, pattern, needs letters
# and digits both). The mixed check keeps kebab-case words (``sk-learn-style-names``) out of the
# broad prefixes.
_TOKEN_SHAPES: tuple[tuple[tuple[str, ...], bytes, bool], ...] = (
    (
        ("anthropic", "openai", "stripe"),
        _after(b"sk") + rb"(?:(-ant-[a-z0-9]{2,12}-[A-Za-z0-9_-]{32,})|(-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,})"
        rb"|(_(?:live|test)_[A-Za-z0-9]{20,}))",
        True,
    ),
    (("stripe",), _after(b"rk_") + rb"(?:live|test)_[A-Za-z0-9]{20,}", False),
    (("stripe",), _after(b"whsec_") + rb"[A-Za-z0-9]{24,}", False),
    (("github",), _after(b"gh") + rb"[pousr]_[A-Za-z0-9]{36,}", False),
    (("github",), _after(b"github_pat_") + rb"[A-Za-z0-9_]{50,}", False),
    (("gitlab",), _after(b"gl") + rb"(?:pat|dt|rt|ptt|ft|soat|cbt)-[A-Za-z0-9_-]{20,}", False),
    (("slack",), _after(b"x") + rb"(?:ox[abposre]-[A-Za-z0-9-]{10,}|app-[0-9]-[A-Za-z0-9-]{10,})", True),
    (
        ("google", "aws-key-id"),
        _after(b"A") + rb"(?:(Iza[0-9A-Za-z_-]{35})|((?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])))",
        False,
    ),
    (("google-oauth",), _after(b"ya29\\.") + rb"[0-9A-Za-z_-]{30,}", True),
    (("huggingface",), _after(b"hf_") + rb"[A-Za-z0-9]{34,}", True),
    (("npm",), _after(b"npm_") + rb"[A-Za-z0-9]{36,}", True),
    (("pypi",), _after(b"pypi-AgE") + rb"[A-Za-z0-9_-]{50,}", False),
    (("sendgrid",), _after(b"SG\\.") + rb"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", False),
    (("jwt",), _after(b"eyJ") + rb"[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", False),
    (("slack-webhook",), rb"hooks\.slack\.com/services/[A-Za-z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9]+", False),
)
_TOKEN_NEEDS: tuple[tuple[bytes, ...], ...] = (
    (b"sk-", b"sk_"),
    (b"rk_",),
    (b"whsec_",),
    tuple(b"gh" + c + b"_" for c in (b"p", b"o", b"u", b"s", b"r")),
    (b"github_pat_",),
    tuple(b"gl" + k + b"-" for k in (b"pat", b"dt", b"rt", b"ptt", b"ft", b"soat", b"cbt")),
    (b"xox", b"xapp-"),
    (b"AIza", b"AKIA", b"ASIA", b"ABIA", b"ACCA"),
    (b"ya29.",),
    (b"hf_",),
    (b"npm_",),
    (b"pypi-AgE",),
    (b"SG.",),
    (b"eyJ",),
    (b"hooks.slack.com",),
)
"""Per token shape, the literals (of :data:`TRIGGERS`) one of which its every match holds: a view
holding none is not searched, and the pattern is not even compiled."""
_TOKENS = tuple(
    (needs, kinds, _Lazy(pattern + _E), mixed)
    for needs, (kinds, pattern, mixed) in zip(_TOKEN_NEEDS, _TOKEN_SHAPES, strict=True)
)

# What every rule needs somewhere in its match, as a literal (the prefilter, :mod:`._prefilter`,
# skips records holding none). The token shapes above each start with one of these (in the view
# a letter, digit, ``_``, ``-``, ``.``, ``:`` or ``/`` is the same byte as in the line, so a
# literal in the view is a literal in the line); the rules below need a keyword in any case:
# ``key`` (also in ``PRIVATE KEY``), ``pass`` (``password``, ``passwd``, ``passphrase``),
# ``secret`` (also the AWS secret after that word), ``token``, ``pwd``, ``credential``,
# ``bearer``, ``authorization``; a URL's password needs ``://``; the AWS secret after a key id
# needs the id (``AKIA``…). A new rule must add its literal here: the golden and the corpus
# tests run with and without the prefilter.
TRIGGERS: tuple[bytes, ...] = (
    b"sk-",
    b"sk_",
    b"rk_",
    b"whsec_",
    *(b"gh" + c + b"_" for c in (b"p", b"o", b"u", b"s", b"r")),
    b"github_pat_",
    *(b"gl" + k + b"-" for k in (b"pat", b"dt", b"rt", b"ptt", b"ft", b"soat", b"cbt")),
    b"xox",
    b"xapp-",
    b"AIza",
    b"AKIA",
    b"ASIA",
    b"ABIA",
    b"ACCA",
    b"ya29.",
    b"hf_",
    b"npm_",
    b"pypi-AgE",
    b"SG.",
    b"eyJ",
    b"hooks.slack.com",
    b"://",
)
"""Literals matched as written."""
TRIGGERS_ANY_CASE: tuple[bytes, ...] = (
    b"secret",
    b"token",
    b"pass",
    b"pwd",
    b"key",
    b"credential",
    b"bearer",
    b"authorization",
)
"""Literals matched in any (ASCII) case, as the context rules read the lower-cased view."""

_PRIVATE_KEY = _Lazy(
    rb"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    # To its END line; a key cut short (a truncated tool output) is redacted to where it stops.
    rb"(?:[^\"\x00]{0,20000}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\r\n\t\x01:,-]*)"
)

_VALUE = rb"([^\s\"'`\\,;()\[\]{}<>\x00\x01]{8,2048})(?=[\s\"'`\\,;)\]}<>\x00\x01]|$)"
"""A value: 8 or more characters up to a blank, quote, bracket or separator."""
_SEP = rb"[\x01\\\"' \t]{0,12}(?::=|=>|[:=])[\x01\\\"' \t]{0,12}"
"""Between a key and its value: ``=``, ``: `` and ``:=`` with the quotes and pads of env, YAML,
JSON (also JSON inside JSON, whose inner escapes leave backslashes), TOML and code."""

_KEY_TAIL = rb"([a-z0-9_.-]{0,40})" + _SEP + _VALUE
_ASSIGN = tuple(
    (literal, _Lazy(rb"(" + keyword + rb")" + _KEY_TAIL))
    # One pattern per literal keyword: the engine skips to each in C (an alternation of them
    # would be tried at every letter). ``key`` stands for api_key, access_key, private_key and
    # an environment variable's ``_KEY``; :func:`_name_ok` reads the name before it. The literal
    # is what the lower-cased view must hold for the pattern to be searched.
    for literal, keyword in (
        (b"secret", rb"secret"),
        (b"token", rb"token"),
        (b"pass", rb"pass(?:w(?:or)?d|phrase)?"),
        (b"pwd", rb"pwd"),
        (b"key", rb"key"),
        (b"credential", rb"credentials?"),
    )
)
_URL = _Lazy(rb"://([^\s:/@\"'\\<>\x00\x01]{0,128}):([^\s/\"'\\<>\x00\x01]{1,256})@(?=[A-Za-z0-9\[._-])")
_BEARER = _Lazy(rb"bearer(?<![a-z0-9_]bearer)[ \t\x01]+([a-z0-9._~+/-]{16,}=*)(?![a-z0-9._~+/=-])")
_AUTHORIZATION = _Lazy(rb"authorization" + _SEP + rb"(?:(?:basic|token|bearer)[ \t]+)?" + _VALUE)
_AWS_SECRET = rb"(?<![a-z0-9/+])([a-z0-9/+]{40})(?![a-z0-9/+=])"
_AWS_AFTER_WORD = _Lazy(rb"secret[^\n\x00]{0,64}?" + _AWS_SECRET)
_AWS_AFTER_ID = _Lazy(rb"[^\n\x00]{0,64}?" + _AWS_SECRET)

_PLACEHOLDERS = frozenset(
    {"changeme", "password", "secret", "token", "none", "null", "true", "false", "example", "redacted", "undefined"}
)
_DOTTED = _Lazy(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_IDENT = _Lazy(rb"[A-Za-z_][A-Za-z0-9_]*")
_NAME_CHAR = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _mixed(value: bytes) -> bool:
    """Letters and digits both: keys are random, prose and slugs rarely have both."""
    return any(48 <= c <= 57 for c in value) and any(97 <= (c | 32) <= 122 for c in value)


def _placeholder(value: bytes) -> bool:
    """``$VAR``, ``${VAR}``, ``<your key>``, ``%(x)s``, ``****``, an already redacted value."""
    return (
        value.startswith((b"$", b"<", b"{", b"%", b"[REDACTED"))
        or value.lower().decode("ascii", "replace") in _PLACEHOLDERS
        or len(set(value)) <= 2
    )


def _assigned_secret(value: bytes) -> bool:
    """A value assigned to a secret-named key that looks like a secret, not code, a path or a number."""
    if value.isdigit() or _placeholder(value) or b"://" in value:
        return False
    if value.startswith((b"/", b"./", b"../", b"~/")):
        return False  # a path to a secret file, not the secret
    has_digit = any(48 <= c <= 57 for c in value)
    # ``settings.api_key``, ``token=token``: code, unless digits say the name is random.
    return has_digit or not (_IDENT.rx.fullmatch(value) or _DOTTED.rx.fullmatch(value))


_KEY_WORDS: tuple[bytes, ...] = (
    b"api",
    b"api_",
    b"api-",
    b"access",
    b"access_",
    b"access-",
    b"private",
    b"private_",
    b"private-",
)
_KEY_WORDS += (b"auth", b"auth_", b"auth-", b"secret", b"secret_", b"secret-")


def _name_ok(view: bytes, kw_start: int, keyword: bytes, tail_start: int, tail_end: int) -> bool:
    """The key's name holds the keyword as a word of its own, not inside another word.

    ``tokenizer`` and ``passenger`` are not secret names; ``api_token``, ``tokens``,
    ``SecretAccessKey`` and ``DB_PASSWORD`` are. ``key`` counts after ``api``, ``access``,
    ``private``, ``auth`` or ``secret``, or as the ``_KEY`` of an upper-case (environment
    variable) name: in code, ``cache_key`` and ``primary_key`` are not secrets.
    """
    tail = view[tail_start:tail_end]
    if tail and not (tail[:1] in (b"_", b".", b"-") or tail[:1].isupper() or tail.lower() == b"s"):
        return False
    if keyword == b"key":
        start = kw_start
        while start > 0 and view[start - 1] in _NAME_CHAR:
            start -= 1
        before = view[start:kw_start]
        if before.lower().endswith(_KEY_WORDS):
            return True
        return before[-1:] in (b"_", b"-") and view[start:tail_end].isupper()
    return True


def _aws_secret(value: bytes) -> bool:
    # Upper and lower case both: a git SHA or a hex digest of the same length has one case.
    return any(65 <= c <= 90 for c in value) and any(97 <= c <= 122 for c in value)


def _scan(
    pattern: _Lazy,
    text: bytes,
    group: int,
    kind: str,
    check: Callable[[bytes], bool],
    view: bytes,
    spans: list[Span],
) -> None:
    for m in pattern.rx.finditer(text):
        s, e = m.span(group)
        if check(view[s:e]):
            spans.append((s, e, kind))


def _always(_value: bytes) -> bool:
    return True


def _url_password(value: bytes) -> bool:
    return not _placeholder(value)


def _bearer(value: bytes) -> bool:
    return _mixed(value) and not _placeholder(value)


def _authorization(value: bytes) -> bool:
    return not _placeholder(value) and value.lower() not in (b"bearer", b"basic", b"token")


def find(view: bytes) -> list[Span]:
    """Every secret span in ``view`` (unsorted, possibly overlapping), with its kind."""
    spans: list[Span] = []
    aws_ids: list[int] = []
    for needs, kinds, pattern, mixed in _TOKENS:
        if not any(literal in view for literal in needs):
            continue
        for m in pattern.rx.finditer(view):
            kind = kinds[m.lastindex - 1] if m.lastindex else kinds[0]
            if mixed and kind != "anthropic" and not _mixed(m.group()):
                continue
            spans.append((m.start(), m.end(), kind))
            if kind == "aws-key-id":
                aws_ids.append(m.end())
    if b"PRIVATE KEY" in view:
        spans += ((m.start(), m.end(), "private-key") for m in _PRIVATE_KEY.rx.finditer(view))
    if b"://" in view:
        _scan(_URL, view, 2, "url-password", _url_password, view, spans)
    low = view.lower()
    for literal, assign in _ASSIGN:
        if literal not in low:
            continue
        for m in assign.rx.finditer(low):
            if _name_ok(view, m.start(1), m.group(1), *m.span(2)):
                s, e = m.span(3)
                if _assigned_secret(view[s:e]):
                    spans.append((s, e, "secret"))
    if b"bearer" in low:
        _scan(_BEARER, low, 1, "bearer", _bearer, view, spans)
    if b"authorization" in low:
        _scan(_AUTHORIZATION, low, 1, "authorization", _authorization, view, spans)
    if b"secret" in low:
        _scan(_AWS_AFTER_WORD, low, 1, "aws-secret", _aws_secret, view, spans)
    for at in aws_ids:
        near = _AWS_AFTER_ID.rx.match(low, at)
        if near is not None and _aws_secret(view[near.start(1) : near.end(1)]):
            spans.append((near.start(1), near.end(1), "aws-secret"))
    return spans
