"""The redaction corpus: every generated secret shape in every context, and the near-misses.

Each case of :mod:`memu_core.testing.secrets` is redacted as plain text and as it reaches a
session log (a Claude Code tool result, a Codex shell output, JSON inside a JSON string). Recall
must be 100% on the generated shapes and false positives at most 1% of the near-misses; both
figures are printed (``pytest -s``). The end-to-end tests plant secrets in real Claude Code and
Codex session files, run the host's ``prepare`` and grep every file it wrote.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from memu_host_claude_code.spec import SPEC as CLAUDE_CODE
from memu_host_codex.spec import SPEC as CODEX

from memu_core._bridge.redact import Redactor, redact
from memu_core.testing.rehearse import must
from memu_core.testing.secrets import Case, claude_code_line, codex_line, json_in_json, near_miss_cases, secret_cases

ENCODINGS: dict[str, Callable[[str], str]] = {
    "plain": lambda text: text,
    "claude-code": claude_code_line,
    "codex": codex_line,
    "json-in-json": json_in_json,
}
MAX_FALSE_POSITIVES = 0.01


def _forms(secret: str) -> list[str]:
    """The secret as written, and as it reads inside one, two and three levels of JSON string."""
    forms = [secret]
    for _ in range(3):
        forms.append(json.dumps(forms[-1])[1:-1])
    return forms


def _redacted(encoding: str, line: str) -> str:
    if encoding == "plain":
        return redact(line)[0]
    out = Redactor().lines([line])[0]
    json.loads(out)  # still one valid JSON record
    return out


def test_recall_is_total_on_every_shape_and_context() -> None:
    cases = secret_cases()
    leaked: list[tuple[Case, str]] = []
    for case in cases:
        for encoding, encode in ENCODINGS.items():
            out = _redacted(encoding, encode(case.text))
            if any(form in out for form in _forms(case.secret)):
                leaked.append((case, encoding))
    total = len(cases) * len(ENCODINGS)
    print(f"\nredaction recall: {total - len(leaked)}/{total} = {1 - len(leaked) / total:.2%}")
    assert not leaked, "\n".join(f"{c.shape} / {c.context} / {enc}: {c.text[:120]!r}" for c, enc in leaked[:20])


def test_near_misses_survive() -> None:
    cases = near_miss_cases()
    hit: list[tuple[Case, str, str]] = []
    for case in cases:
        for encoding, encode in ENCODINGS.items():
            line = encode(case.text)
            out, count = redact(line)
            if count:
                hit.append((case, encoding, out))
    total = len(cases) * len(ENCODINGS)
    print(f"\nredaction false positives: {len(hit)}/{total} = {len(hit) / total:.2%}")
    assert len(hit) <= MAX_FALSE_POSITIVES * total, "\n".join(
        f"{c.shape} / {c.context} / {e}: {o[:160]!r}" for c, e, o in hit[:20]
    )


def test_every_corpus_shape_is_planted() -> None:
    # The list: a shape missing from the generator would pass the recall test unnoticed.
    shapes = {case.shape for case in secret_cases()}
    assert {
        "github-classic",
        "github-fine-grained",
        "gitlab",
        "slack",
        "stripe",
        "openai",
        "anthropic",
        "google",
        "aws-key-id",
        "aws-secret",
        "jwt",
        "private-key",
        "url-password",
        "bearer",
        "assignment",
    } <= shapes


def _planted(n: int) -> list[Case]:
    cases = secret_cases(seed=n)
    # A spread of shapes and contexts, every tenth case: enough to cover each family.
    return cases[::10]


def _tree_text(root: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_prepare_leaves_no_planted_secret_in_the_working_tree(host: str, memu_home: Path, tmp_path: Path) -> None:
    cases = _planted(7)
    sessions = tmp_path / "sessions"
    if host == "claude-code":
        spec = CLAUDE_CODE
        path = sessions / "-home-u-app" / "0b5e2c9a-1111-4222-8333-444455556666.jsonl"
        opening = {"type": "user", "sessionId": "0b5e2c9a", "message": {"role": "user", "content": "deploy it"}}
        lines = [json.dumps(opening)]
        lines += [claude_code_line(c.text, tool=i % 2 == 0, session="0b5e2c9a", n=i) for i, c in enumerate(cases)]
    else:
        spec = CODEX
        path = sessions / "2026" / "01" / "01" / "rollout-2026-01-01T10-00-00-0198aaaa.jsonl"
        meta = {"type": "session_meta", "payload": {"id": "0198aaaa", "cwd": "/w"}}
        lines = [json.dumps(meta)] + [codex_line(c.text, n=i) for i, c in enumerate(cases)]
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    base = tmp_path / "work"

    out = must(spec, "prepare", "--base-dir", str(base), "--session-dir", str(sessions))

    tree = _tree_text(base)
    assert "[REDACTED:" in tree, out
    leaked = [c for c in cases if any(form in tree for form in _forms(c.secret))]
    assert not leaked, [f"{c.shape} / {c.context}" for c in leaked]


def test_the_prefilter_changes_no_redaction() -> None:
    """With the literal prefilter (ADR 0026) the rules see only records holding a trigger; every
    corpus text, in every encoding, alone and among the others, comes out as without it."""
    from memu_core._bridge import _prefilter

    saved = _prefilter.reset_for_tests()
    try:
        if not _prefilter.load():
            pytest.skip("hyperscan is not installed here (no wheel for this platform)")
        engine = _prefilter.reset_for_tests(None, tried=True)[0]
        texts = [c.text for c in secret_cases() + near_miss_cases()]
        for encoding, encode in ENCODINGS.items():
            lines = [encode(t) for t in texts]
            plain, plain_one = Redactor(), Redactor()
            want = plain.lines(lines)
            want_one = [plain_one.lines([line])[0] for line in lines]
            _prefilter.reset_for_tests(engine, tried=True)
            fast, fast_one = Redactor(), Redactor()
            assert fast.lines(lines) == want, encoding
            sliced = Redactor().slice(lines)  # as prepare writes the full slice
            assert sliced == (want, ("\n".join(want) + "\n").encode("utf-8", "surrogatepass")), encoding
            assert [fast_one.lines([line])[0] for line in lines] == want_one, encoding
            assert (fast.count, fast_one.count) == (plain.count, plain_one.count), encoding
            _prefilter.reset_for_tests(None, tried=True)
    finally:
        _prefilter.reset_for_tests(*saved)


def _trigger_samples() -> dict[bytes, str]:
    """One secret per trigger literal, holding no other trigger: dropping any literal from the
    prefilter then leaves its sample unredacted. Bodies are drawn at run time from digits and
    letters that spell none of the keywords (no vowels, no ``p w d y k``)."""
    import random

    rng = random.Random(26)
    alphabet = "0123456789BCFGHJLMNQRSTVXZbcfghjlmnqrstvxz"
    upper = "0123456789BCFGHJLMNQRSTVXZ"

    def r(n: int, pool: str = alphabet) -> str:
        # A digit and a letter at the end: every shape wants both.
        return "".join(rng.choice(pool) for _ in range(n - 2)) + "7" + pool[-1]

    samples = {
        b"sk-": f"sk-{r(40)}",
        b"sk_": f"sk_test_{r(30)}",
        b"rk_": f"rk_test_{r(30)}",
        b"whsec_": f"whsec_{r(30)}",
        b"github_pat_": f"github_pat_{r(60)}",
        b"xox": f"xoxb-{r(20)}",
        b"xapp-": f"xapp-1-{r(20)}",
        b"AIza": f"AIza{r(35)}",
        b"ya29.": f"ya29.{r(40)}",
        b"hf_": f"hf_{r(40)}",
        b"npm_": f"npm_{r(40)}",
        b"pypi-AgE": f"pypi-AgE{r(60)}",
        b"SG.": f"SG.{r(22)}.{r(43)}",
        b"eyJ": f"eyJ{r(12)}.eyJ{r(12)}.{r(20)}",
        b"hooks.slack.com": f"hooks.slack.com/services/{r(9)}/{r(9)}/{r(20)}",
        b"://": f"https://bob:{r(14)}@db.example.net/main",
        b"secret": f"client_secret = {r(20)}",
        b"token": f"auth_token: {r(20)}",
        b"pass": f"DB_PASSWORD={r(16)}",
        b"pwd": f"PWD={r(16)}",
        b"key": f"API_KEY={r(20)}",
        b"credential": f"credentials: {r(20)}",
        b"bearer": f"curl -H 'Bearer {r(30)}'",
        b"authorization": f"Authorization: Basic {r(24)}",
    }
    samples |= {b"gh" + c + b"_": f"gh{c.decode()}_{r(40)}" for c in (b"p", b"o", b"u", b"s", b"r")}
    samples |= {
        b"gl" + k + b"-": f"gl{k.decode()}-{r(24)}" for k in (b"pat", b"dt", b"rt", b"ptt", b"ft", b"soat", b"cbt")
    }
    samples |= {b"A" + k: f"A{k.decode()}{r(16, upper)}" for k in (b"KIA", b"SIA", b"BIA", b"CCA")}
    return samples


def test_every_prefilter_literal_is_needed_and_enough() -> None:
    from memu_core._bridge import _prefilter, _rules

    samples = _trigger_samples()
    assert set(samples) == set(_rules.TRIGGERS) | set(_rules.TRIGGERS_ANY_CASE)
    saved = _prefilter.reset_for_tests()
    try:
        if not _prefilter.load():
            pytest.skip("hyperscan is not installed here (no wheel for this platform)")
        for literal, text in samples.items():
            data = text.encode()
            others = [t for t in _rules.TRIGGERS if t != literal and t in data]
            others += [t for t in _rules.TRIGGERS_ANY_CASE if t != literal and t in data.lower()]
            assert not others, (literal, others)
            assert _prefilter.candidates(data, 1) == [0], literal
            fast = Redactor()
            out = fast.lines([text])[0]
            assert fast.count >= 1 and out == redact(text)[0], (literal, out)
    finally:
        _prefilter.reset_for_tests(*saved)
