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


@dataclass(frozen=True)
class _Rule:
    kind: str
    trigger: str
    """A literal that must occur in the text for the rule to run at all (keeps big texts fast)."""
    pattern: re.Pattern[str]
    replace: Callable[[re.Match[str]], str | None]
    """The replacement for a match, or ``None`` to keep it (a near-miss the regex let through)."""
    folded: bool = False
    """The trigger is matched against the lower-cased text."""


def _whole(kind: str, check: Callable[[str], bool] | None = None) -> Callable[[re.Match[str]], str | None]:
    def repl(m: re.Match[str]) -> str | None:
        if check is not None and not check(m.group(0)):
            return None
        return _mark(kind)

    return repl


def _group(kind: str, group: int, check: Callable[[str], bool] | None = None) -> Callable[[re.Match[str]], str | None]:
    """Replace only one group (the value), keeping the context that identified it."""

    def repl(m: re.Match[str]) -> str | None:
        value = m.group(group)
        if check is not None and not check(value):
            return None
        start, end = m.span(group)
        base = m.start(0)
        whole = m.group(0)
        return whole[: start - base] + _mark(kind) + whole[end - base :]

    return repl


_PLACEHOLDERS = frozenset(
    {"changeme", "password", "secret", "token", "none", "null", "true", "false", "xxxxxx", "example", "redacted"}
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


_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private-key",
        "PRIVATE KEY-----",
        re.compile(r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY-----(?:[^\"\n]{0,20000}?-----END[A-Z0-9 ]{0,40} PRIVATE KEY-----|[A-Za-z0-9+/=\\ \t]{0,20000})"),
        _whole("private-key"),
    ),
    _Rule("anthropic", "sk-ant-", re.compile(_NOT_B64 + r"sk-ant-[A-Za-z0-9]{2,10}-[A-Za-z0-9_-]{32,}" + _END), _whole("anthropic")),
    _Rule(
        "openai",
        "sk-",
        re.compile(_NOT_B64 + r"sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{32,}" + _END),
        _whole("openai", _mixed),
    ),
    _Rule("aws-key-id", "A", re.compile(r"(?<![A-Za-z0-9+/])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9+/=])"), _whole("aws-key-id")),
    _Rule("github", "_", re.compile(_NOT_B64 + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})" + _END), _whole("github")),
    _Rule("gitlab", "glpat-", re.compile(_NOT_B64 + r"glpat-[A-Za-z0-9_-]{20,}" + _END), _whole("gitlab")),
    _Rule("slack", "xox", re.compile(_NOT_B64 + r"xox[abposre]-[A-Za-z0-9-]{10,}" + _END), _whole("slack", _mixed)),
    _Rule(
        "slack-webhook",
        "hooks.slack.com",
        re.compile(r"hooks\.slack\.com/services/[A-Za-z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9]+"),
        _whole("slack-webhook"),
    ),
    _Rule("google", "AIza", re.compile(r"(?<![A-Za-z0-9+/_-])AIza[0-9A-Za-z_-]{35}" + _END), _whole("google")),
    _Rule("stripe", "_live_", re.compile(_NOT_B64 + r"(?:sk|rk)_live_[A-Za-z0-9]{20,}" + _END), _whole("stripe")),
    _Rule("stripe", "_test_", re.compile(_NOT_B64 + r"(?:sk|rk)_test_[A-Za-z0-9]{20,}" + _END), _whole("stripe")),
    _Rule("huggingface", "hf_", re.compile(_NOT_B64 + r"hf_[A-Za-z0-9]{34,}" + _END), _whole("huggingface", _mixed)),
    _Rule("npm", "npm_", re.compile(_NOT_B64 + r"npm_[A-Za-z0-9]{36,}" + _END), _whole("npm", _mixed)),
    _Rule(
        "jwt",
        "eyJ",
        re.compile(_NOT_B64 + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + _END),
        _whole("jwt"),
    ),
    _Rule(
        "bearer",
        "bearer",
        re.compile(r"(?i)(\bbearer[ \t]+)([A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])"),
        _group("bearer", 2, _mixed),
        folded=True,
    ),
    _Rule(
        "basic-auth",
        "basic",
        re.compile(r"(?i)(\bauthorization:[ \t]*basic[ \t]+)([A-Za-z0-9+/]{12,}=*)"),
        _group("basic-auth", 2),
        folded=True,
    ),
    _Rule(
        "url-password",
        "://",
        re.compile(r"([A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@\"'\\<>]{1,128}:)([^\s@/\"'\\<>]{1,256})(@)"),
        _group("url-password", 2, _url_password),
    ),
    _Rule(
        "assignment",
        "=",
        re.compile(
            r"(?i)(?<![A-Za-z0-9_])((?:export[ \t]+)?[A-Za-z0-9_]*(?:secret|token|passw(?:or)?d|pwd|api_?key|access_?key|"
            r"private_?key|auth_?key|credentials?)[A-Za-z0-9_]*[ \t]*=[ \t]*(?:\\?[\"'])?)"
            r"([^\s\"'\\,;()\[\]{}]{1,512})(?=\\|[ \t\n\"',;)]|$)"
        ),
        _group("secret", 2, _assigned_secret),
    ),
)


class Redactor:
    """Replaces secrets with ``[REDACTED:<kind>]`` and counts what it replaced."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, text: str) -> str:
        """``text`` with every recognised secret value replaced."""
        folded: str | None = None
        for rule in _RULES:
            if rule.folded:
                if folded is None:
                    folded = text.lower()
                if rule.trigger not in folded:
                    continue
            elif rule.trigger not in text:
                continue
            text = rule.pattern.sub(self._counting(rule), text)
        return text

    def _counting(self, rule: _Rule) -> Callable[[re.Match[str]], str]:
        def repl(m: re.Match[str]) -> str:
            out = rule.replace(m)
            if out is None:
                return m.group(0)
            self.count += 1
            return out

        return repl


def redact(text: str) -> tuple[str, int]:
    """Redact one text; return it with the number of values replaced."""
    r = Redactor()
    return r(text), r.count
