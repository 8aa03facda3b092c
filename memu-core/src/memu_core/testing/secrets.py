"""A generated redaction corpus: secrets of every known shape in every context, and near-misses.

For the redactor's own tests and benchmark, and for a host plugin that wants to check that its
transcripts come out of ``prepare`` clean. Every value is built at call time from random parts
(seeded, so a failure reproduces): the repository holds no literal token a secret scanner would
flag, only prefixes.

- :func:`secret_cases`: ``(shape, context, text, secret)``; ``text`` is what an agent saw (a
  ``cat .env`` output, a YAML file, a URL, prose) and ``secret`` must not survive redaction;
- :func:`near_miss_cases`: texts that look like secrets and are not (hashes, UUIDs, SHAs,
  base64 of prose, identifiers, paths, versions); redaction must leave them alone;
- :func:`claude_code_line`, :func:`codex_line`, :func:`json_in_json`: how such a text reaches a
  session log, as one JSON line (escapes and all).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = [
    "Case",
    "claude_code_line",
    "codex_line",
    "json_in_json",
    "near_miss_cases",
    "secret_cases",
    "token_shapes",
]

SEED = 14
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"


@dataclass(frozen=True)
class Case:
    """One corpus entry: ``text`` as an agent saw it; ``secret`` the part that must go ("" if none)."""

    shape: str
    context: str
    text: str
    secret: str = ""


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    # Real keys are random: seed a digit, an upper and a lower case letter so every draw looks it.
    core = [rng.choice(alphabet) for _ in range(n)]
    for i, pool in enumerate((string.digits, string.ascii_uppercase, string.ascii_lowercase)):
        if n > 3 and any(c in alphabet for c in pool):
            core[rng.randrange(i, n, 3)] = rng.choice([c for c in pool if c in alphabet])
    return "".join(core)


def _b64url(rng: random.Random, obj: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    head = _b64url(rng, {"alg": "HS256", "typ": "JWT"})
    body = _b64url(rng, {"sub": _r(rng, ALNUM, 10), "iat": rng.randrange(10**9, 2 * 10**9)})
    return f"{head}.{body}.{_r(rng, URLSAFE, 43)}"


def token_shapes() -> dict[str, Callable[[random.Random], str]]:
    """Shape name -> a generator of one token that is a secret wherever it appears."""
    return {
        "github-classic": lambda r: f"gh{r.choice('pousr')}_{_r(r, ALNUM, 36)}",
        "github-fine-grained": lambda r: f"github_pat_{_r(r, ALNUM, 22)}_{_r(r, ALNUM, 59)}",
        "gitlab": lambda r: f"glpat-{_r(r, URLSAFE, 20)}",
        "slack": lambda r: f"xox{r.choice('bpa')}-{r.randrange(10**10, 10**11)}-{_r(r, ALNUM, 24)}",
        "stripe": lambda r: (
            f"{r.choice(['sk', 'rk'])}_{r.choice(['live', 'test'])}_{_r(r, ALNUM, 24 + r.randrange(76))}"
        ),
        "openai": lambda r: f"sk-{_r(r, ALNUM, 48)}",
        "openai-project": lambda r: f"sk-proj-{_r(r, URLSAFE, 156)}",
        "anthropic": lambda r: f"sk-ant-api03-{_r(r, URLSAFE, 93)}AA",
        "google": lambda r: f"AIza{_r(r, URLSAFE, 35)}",
        "aws-key-id": lambda r: (
            r.choice(["AKIA", "ASIA"]) + "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
        ),
        "jwt": _jwt,
        "huggingface": lambda r: f"hf_{_r(r, ALNUM, 34)}",
        "npm": lambda r: f"npm_{_r(r, ALNUM, 36)}",
    }


_BEFORE_CHARS = "\t\n !\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~"
"""Every character a token may follow without joining a longer word (the preceding-char sweep)."""


def _token_contexts(token: str) -> Iterator[tuple[str, str]]:
    yield "own-line", f"$ cat .env\n{token}\nDEBUG=1\n"
    yield "after-tab", f"key\t{token}\tactive"
    yield "prose", f"I rotated it, the new one is {token}. Please keep it safe."
    yield "url-slash", f"curl https://api.example.com/v1/{token}/items"
    yield "url-userinfo", f"git clone https://{token}@github.com/acme/app.git"
    yield "url-user-pass", f"git remote add origin https://oauth2:{token}@gitlab.example.com/acme/app.git"
    yield "env", f"SERVICE_CREDENTIAL={token}"
    yield "export", f'export UPSTREAM="{token}"'
    yield "yaml", f"upstream:\n  value: {token}\n"
    yield "json", json.dumps({"upstream": {"value": token}}, indent=2)
    yield "toml", f'[upstream]\nvalue = "{token}"\n'
    yield "header", f"curl -H 'X-Upstream: {token}' https://api.example.com"
    yield "code", f'client = Client("{token}")'
    yield "markdown", f"Use `{token}` for the staging project."
    for c in _BEFORE_CHARS:
        yield f"sweep-{ord(c):02x}", f"value{c}{token} end"


_KEY_NAMES = (
    "DB_PASSWORD",
    "API_KEY",
    "CLIENT_SECRET",
    "ACCESS_TOKEN",
    "secret_key",
    "apiKey",
    "auth_token",
    "password",
    "SessionToken",
    "REDIS_PASS",
    "x-api-key",
    "privateKey",
)


def _assignment_contexts(key: str, value: str) -> Iterator[tuple[str, str]]:
    yield "env", f"$ cat .env\nDEBUG=1\n{key}={value}\nPORT=8080\n"
    yield "env-quoted", f"{key}='{value}'"
    yield "export", f'export {key}="{value}"'
    yield "yaml", f"service:\n  {key}: {value}\n  port: 8080\n"
    yield "yaml-quoted", f'{key}: "{value}"'
    yield "json", json.dumps({"service": {key: value, "port": 8080}}, indent=2)
    yield "json-compact", json.dumps({key: value}, separators=(",", ":"))
    yield "toml", f'[service]\n{key} = "{value}"\n'
    yield "python", f'settings = Settings({key}="{value}")'
    yield "after-tab", f"\t{key}={value}"


def _aws_secret_contexts(key_id: str, value: str) -> Iterator[tuple[str, str]]:
    cli = {
        "AccessKey": {
            "UserName": "deploy",
            "AccessKeyId": key_id,
            "Status": "Active",
            "SecretAccessKey": value,
            "CreateDate": "2024-05-01T10:00:00+00:00",
        }
    }
    yield "aws-cli-json", json.dumps(cli, indent=4)
    yield "credentials-file", f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {value}\n"
    yield "env", f"AWS_ACCESS_KEY_ID={key_id}\nAWS_SECRET_ACCESS_KEY={value}\n"
    yield "prose", f"The AWS secret access key is {value} and the id is {key_id}."
    yield "prose-pair", f"use key {key_id} with secret {value} for the backup bucket"
    yield "prose-after-id", f"{key_id} / {value}"


def _sts_session(rng: random.Random, key_id: str, secret: str) -> tuple[str, str]:
    session = _r(rng, B64, 300)
    out = {"Credentials": {"AccessKeyId": key_id, "SecretAccessKey": secret, "SessionToken": session}}
    return json.dumps(out, indent=4), session


def _pem(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", ""])
    body = "\n".join(_r(rng, B64, 64) for _ in range(rng.randrange(3, 8)))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----", body.split("\n")[1]


def secret_cases(seed: int = SEED) -> list[Case]:
    """Every generated secret shape in every context it is planted in."""
    rng = random.Random(seed)
    cases: list[Case] = []
    for shape, make in token_shapes().items():
        for context, text in _token_contexts(token := make(rng)):
            cases.append(Case(shape, context, text, token))
            token = make(rng)
    for key in _KEY_NAMES:
        for context, text in _assignment_contexts(key, value := _r(rng, ALNUM + "!%^*-_.~+@#", 12 + rng.randrange(20))):
            cases.append(Case("assignment", f"{key}/{context}", text, value))
            value = _r(rng, ALNUM + "!%^*-_.~+@#", 12 + rng.randrange(20))
    for _ in range(3):
        key_id = "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
        for context, text in _aws_secret_contexts(key_id, _r(rng, B64, 40)):
            cases.append(Case("aws-secret", context, text, _aws_value(text)))
    sts, session = _sts_session(rng, "ASIA" + _r(rng, string.ascii_uppercase, 16), _r(rng, B64, 40))
    cases.append(Case("aws-session-token", "aws-cli-json", sts, session))
    for _ in range(3):
        pw = _r(rng, ALNUM + "!*-_.~", 16)
        host = f"db{rng.randrange(9)}.internal"
        cases += [
            Case("url-password", "postgres", f"DATABASE_URL=postgresql://app:{pw}@{host}:5432/app", pw),
            Case("url-password", "redis-empty-user", f"connecting to redis://:{pw}@{host}:6379/0 ...", pw),
            Case("url-password", "prose", f"the broker is amqp://worker:{pw}@{host}/vhost, see runbook", pw),
            Case("url-password", "after-tab", f"url\thttps://deploy:{pw}@{host}/hook", pw),
        ]
    for _ in range(3):
        bearer = _r(rng, URLSAFE + ".~", 40)
        cases += [
            Case("bearer", "curl", f"curl -H 'Authorization: Bearer {bearer}' https://api.example.com", bearer),
            Case("bearer", "http-dump", f"> GET /v1 HTTP/1.1\n> Authorization: Bearer {bearer}\n> Accept: */*", bearer),
            Case("bearer", "json-header", json.dumps({"headers": {"Authorization": f"Bearer {bearer}"}}), bearer),
            Case("bearer", "token-scheme", f"Authorization: token {bearer}", bearer),
        ]
        basic = base64.b64encode(f"deploy:{_r(rng, ALNUM, 14)}".encode()).decode()
        cases.append(Case("basic-auth", "header", f"Authorization: Basic {basic}", basic))
    for _ in range(3):
        pem, line = _pem(rng)
        cases += [
            Case("private-key", "own-lines", f"$ cat id_rsa\n{pem}\n", line),
            Case(
                "private-key",
                "json",
                json.dumps({"type": "service_account", "private_key": pem + "\n"}, indent=2),
                line,
            ),
        ]
    return cases


def _aws_value(text: str) -> str:
    # The 40-character secret is the token of that length in the text (the key id is 20).
    return next(w for w in text.replace('"', " ").replace("=", " ").split() if len(w) == 40)


def _b64_text(rng: random.Random, n_words: int, urlsafe: bool = False) -> str:
    words = ("the", "build", "failed", "because", "the", "cache", "was", "stale", "so", "we", "cleared", "it")
    raw = " ".join(rng.choice(words) for _ in range(n_words)).encode()
    return (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()


def _near_miss_values(rng: random.Random) -> Iterator[tuple[str, str]]:
    blob = rng.randbytes(64)
    yield "git-sha", hashlib.sha1(blob).hexdigest()
    yield "git-sha-short", hashlib.sha1(blob).hexdigest()[:7]
    yield "sha256", hashlib.sha256(blob).hexdigest()
    yield "sha256-prefixed", f"sha256:{hashlib.sha256(blob).hexdigest()}"
    yield "md5", hashlib.md5(blob).hexdigest()
    yield "sha512-integrity", "sha512-" + base64.b64encode(hashlib.sha512(blob).digest()).decode()
    yield "uuid", str(uuid.UUID(int=rng.getrandbits(128), version=4))
    yield "uuid-hex", uuid.UUID(int=rng.getrandbits(128), version=4).hex
    yield "base64-text", _b64_text(rng, rng.randrange(4, 30))
    yield "base64-text-40", _b64_text(rng, 6)[:40]
    yield "base64url-text", _b64_text(rng, rng.randrange(4, 30), urlsafe=True)
    yield (
        "identifier",
        "test_" + "_".join(rng.choice(["redaction", "keeps", "long", "names", "intact", "v2"]) for _ in range(6)),
    )
    yield (
        "camel-identifier",
        "".join(
            w.capitalize()
            for w in rng.choices(["abstract", "token", "factory", "bean", "secret", "manager", "provider"], k=5)
        ),
    )
    yield (
        "kebab-identifier",
        "-".join(rng.choices(["task", "sk", "risk", "disk", "management", "system", "for", "kubernetes"], k=6)),
    )
    yield "path", f"/usr/lib/python3.11/site-packages/pkg_{rng.randrange(99)}/tokenizer/secret_store.py"
    yield "pnpm-path", f"node_modules/.pnpm/@types+node@20.{rng.randrange(20)}.1/node_modules/@types/node/index.d.ts"
    yield (
        "pip-cache-path",
        f"~/.cache/pip/wheels/{hashlib.sha256(blob).hexdigest()[:2]}/{hashlib.sha256(blob).hexdigest()[2:58]}",
    )
    yield (
        "version",
        f"v{rng.randrange(9)}.{rng.randrange(99)}.{rng.randrange(999)}-rc.{rng.randrange(9)}+build.{rng.randrange(999)}",
    )
    yield "pinned", f"numpy=={rng.randrange(2)}.{rng.randrange(30)}.{rng.randrange(9)}"
    yield "docker-digest", f"python@sha256:{hashlib.sha256(blob).hexdigest()}"
    yield "tool-id", "toolu_01" + "".join(rng.choice(ALNUM) for _ in range(22))
    yield "email", f"dev{rng.randrange(99)}@example.com"


def _near_miss_texts(rng: random.Random) -> Iterator[tuple[str, str]]:
    # Secret-named keys with values that are not secrets, and secret words in ordinary text.
    yield "kw-env-ref", "SECRET_KEY=${SECRET_KEY}"
    yield "kw-placeholder", "PASSWORD=<your password here>"
    yield "kw-code", "password = os.environ.get('DB_PASSWORD')"
    yield "kw-attr", "api_key = settings.api_key"
    yield "kw-kwargs", "f(password=pw, token=token)"
    yield "kw-number", f"MAX_TOKENS={rng.randrange(100, 9000)}"
    yield "kw-usage", json.dumps({"usage": {"input_tokens": rng.randrange(9999), "output_tokens": rng.randrange(999)}})
    yield "kw-annotation", "def login(password: str, token: Optional[str] = None) -> Session:"
    yield "kw-tokenizer", f"tokenizer: bert-base-uncased-v{rng.randrange(9)}"
    yield "kw-secret-ref", "secretKeyRef:\n  name: db-credentials\n  key: password"
    yield "kw-file", "password_file: /run/secrets/db_password"
    yield "kw-bearer-prose", "Bearer token authentication is described in RFC 6750"
    yield "kw-akia-prose", "AKIA is the prefix of long-lived AWS access key ids"
    yield (
        "kw-url-no-pass",
        "git@github.com:org/repo.git and https://user@example.com/a?b=c and "
        f"http://localhost:{rng.randrange(1024, 65000)}/p",
    )
    yield "kw-jwt-head", "eyJhbGciOiJIUzI1NiJ9 is just a header"
    yield "kw-public-key", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"
    yield "kw-sklearn", "pip install scikit-learn; sk-learn-style-naming-is-not-a-key-at-all"
    yield "kw-secret-sha", f"the secret commit was {hashlib.sha1(rng.randbytes(8)).hexdigest()}"


def near_miss_cases(seed: int = SEED) -> list[Case]:
    """Texts redaction must leave unchanged, each in several contexts."""
    rng = random.Random(seed)
    cases: list[Case] = []
    for _ in range(4):
        for shape, value in _near_miss_values(rng):
            cases += [
                Case(shape, "own-line", f"$ git log\n{value}\n"),
                Case(shape, "after-tab", f"id\t{value}\tok"),
                Case(shape, "prose", f"see {value} for details."),
                Case(shape, "env", f"BUILD_REF={value}"),
                Case(shape, "yaml", f"ref: {value}"),
                Case(shape, "json", json.dumps({"id": value, "path": f"/{value}"})),
                Case(shape, "url", f"https://example.com/artifacts/{value}/download"),
            ]
        for shape, text in _near_miss_texts(rng):
            cases.append(Case(shape, "as-is", text))
    return cases


def claude_code_line(text: str, *, tool: bool = True, session: str = "s", n: int = 0) -> str:
    """``text`` as a Claude Code session record: a tool result (or a user message)."""
    content: object = [{"type": "tool_result", "tool_use_id": f"toolu_{n:04d}", "content": text}] if tool else text
    record = {
        "type": "user",
        "sessionId": session,
        "uuid": f"u{n}",
        "timestamp": f"2026-01-01T10:{n % 60:02d}:00Z",
        "message": {"role": "user", "content": content},
    }
    return json.dumps(record, separators=(",", ":"))


def codex_line(text: str, *, n: int = 0) -> str:
    """``text`` as a Codex rollout record: the output of a shell call."""
    payload = {
        "type": "function_call_output",
        "call_id": f"call_{n}",
        "output": json.dumps({"output": text, "metadata": {"exit_code": 0}}),
    }
    record = {"timestamp": f"2026-01-01T10:{n % 60:02d}:00Z", "type": "response_item", "payload": payload}
    return json.dumps(record, separators=(",", ":"))


def json_in_json(text: str) -> str:
    """``text`` encoded twice: a JSON line whose string holds JSON (a tool's JSON output)."""
    return json.dumps({"type": "tool_result", "content": json.dumps({"stdout": text})})
