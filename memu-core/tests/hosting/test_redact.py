"""Secret redaction: generated secrets of every supported kind are caught; near-misses survive."""

from __future__ import annotations

import json
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from memu_core._bridge.redact import redact

ALNUM = string.ascii_letters + string.digits


def _rand(alphabet: str, size: int) -> st.SearchStrategy[str]:
    # Real keys are random: force at least one digit and one letter so the "looks random" check holds.
    return st.text(alphabet, min_size=size, max_size=size).map(lambda s: "a1" + s[2:])


SECRETS = st.one_of(
    _rand(ALNUM, 48).map(lambda s: f"sk-{s}"),
    _rand(ALNUM + "_-", 120).map(lambda s: f"sk-proj-{s}"),
    _rand(ALNUM + "_-", 95).map(lambda s: f"sk-ant-api03-{s}"),
    st.text(string.ascii_uppercase + string.digits, min_size=16, max_size=16).map(lambda s: f"AKIA{s}"),
    _rand(ALNUM, 36).map(lambda s: f"ghp_{s}"),
    _rand(ALNUM + "_", 70).map(lambda s: f"github_pat_{s}"),
    _rand(ALNUM + "_-", 20).map(lambda s: f"glpat-{s}"),
    _rand(ALNUM, 24).map(lambda s: f"xoxb-1234-{s}"),
    _rand(ALNUM + "_-", 35).map(lambda s: f"AIza{s}"),
    _rand(ALNUM, 24).map(lambda s: f"sk_live_{s}"),
    _rand(ALNUM, 34).map(lambda s: f"hf_{s}"),
    _rand(ALNUM, 36).map(lambda s: f"npm_{s}"),
    st.tuples(_rand(ALNUM, 20), _rand(ALNUM, 30), _rand(ALNUM + "_-", 43)).map(
        lambda t: f"eyJ{t[0]}.eyJ{t[1]}.{t[2]}"
    ),
)

CONTEXTUAL = st.one_of(
    _rand(ALNUM + "._-", 32).map(lambda s: (f"Authorization: Bearer {s}", s)),
    _rand(ALNUM, 12).map(lambda s: (f"postgresql://app:{s}@db.internal:5432/app", s)),
    _rand(ALNUM + "!%^", 14).map(lambda s: (f"DB_PASSWORD={s}", s)),
    _rand(ALNUM, 20).map(lambda s: (f'export STRIPE_SECRET="{s}"', s)),
    _rand(ALNUM, 40).map(lambda s: (f"aws_secret_access_key = {s}", s)),
    _rand(ALNUM + "+/", 64).map(
        lambda s: (f"-----BEGIN OPENSSH PRIVATE KEY-----\\n{s}\\n-----END OPENSSH PRIVATE KEY-----", s)
    ),
)

PROSE = st.text(string.ascii_letters + " .,:\n", max_size=60)


@settings(max_examples=150)
@given(before=PROSE, secret=SECRETS, after=PROSE)
def test_provider_tokens_are_redacted(before: str, secret: str, after: str) -> None:
    text = f"{before} {secret} {after}"
    out, count = redact(text)
    assert secret not in out and count == 1 and "[REDACTED:" in out


@settings(max_examples=150)
@given(case=CONTEXTUAL, before=PROSE)
def test_contextual_secrets_are_redacted(case: tuple[str, str], before: str) -> None:
    text, value = case
    out, count = redact(f"{before}\n{text}\n")
    assert value not in out and count == 1


@settings(max_examples=100)
@given(secret=SECRETS, prose=PROSE)
def test_json_lines_stay_valid_json(secret: str, prose: str) -> None:
    lines = [json.dumps({"role": "user", "text": f'{prose} key={secret} "quoted" \\ back'}) for _ in range(3)]
    out, count = redact("\n".join(lines))
    assert count == 3
    parsed = [json.loads(x) for x in out.split("\n")]
    assert all(secret not in p["text"] for p in parsed)


NEAR_MISSES = [
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "uuid 123e4567-e89b-12d3-a456-426614174000 and toolu_01ABCDEFGHJKLMNPQRSTUVWXYZ",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "const token = tokens[0]; if (password === confirmPassword) return;",
    "password = os.environ.get('DB_PASSWORD')",
    "api_key = settings.api_key",
    "f(password=pw, token=token)",
    "MAX_TOKENS=4096",
    "SECRET_KEY=${SECRET_KEY}",
    "PASSWORD=<your password here>",
    "git@github.com:org/repo.git and https://example.com/a?b=c",
    "http://localhost:8080/path",
    "the task-management-system-for-kubernetes-clusters is fine",
    "scikit-learn sk-learn-style-naming-is-not-a-key-at-all",
    "Bearer token authentication is described in RFC 6750",
    "-----BEGIN PUBLIC KEY-----\\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\\n-----END PUBLIC KEY-----",
    "def test_redaction_precision_survives_long_identifiers(): pass",
    "AKIA is the prefix of AWS access key ids",
    "eyJhbGciOiJIUzI1NiJ9 is just a header",
]


def test_near_misses_survive() -> None:
    for text in NEAR_MISSES:
        assert redact(text) == (text, 0), text


def test_count_adds_up_across_kinds() -> None:
    text = (
        "OPENAI_API_KEY=sk-abcdefghijklmnop1234567890ABCDEFGHIJ\n"
        "curl -H 'Authorization: Bearer abcdef1234567890abcdefXYZ' https://u:pa55word@h.example/x"
    )
    out, count = redact(text)
    assert count == 3
    assert "pa55word" not in out and "abcdef1234567890abcdefXYZ" not in out
