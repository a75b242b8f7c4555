"""Tests for chalicelib.services.secrets.SecretDetector.

No realistic credential is written in this file. Every secret-shaped value is generated at
run time from a seeded RNG, and the marker words (provider prefixes, "PRIVATE KEY", ...)
are assembled from fragments, so a secret scanner run over the repository finds nothing
here.
"""

import base64
import hashlib
import json
import random
import string
import time
import uuid
from collections.abc import Callable

import pytest
from ulid import ULID

from chalicelib.services.secrets import HIGH_ENTROPY_KIND, SecretDetector

UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
CROCKFORD = "".join(c for c in UPPER_DIGITS if c not in "ILOU")

# Marker fragments, assembled so that this file holds no scanner-triggering literal.
PW_WORD = "pass" + "word"
PK_LABEL = "PRIVATE" + " KEY"
DASHES = "-" * 5


@pytest.fixture(scope="module")
def detector() -> SecretDetector:
    return SecretDetector()


def rng_for(name: str) -> random.Random:
    """A per-case RNG, so that every generated value is reproducible."""
    return random.Random(f"pinework-secrets-{name}")


def rand(rng: random.Random, alphabet: str, k: int) -> str:
    return "".join(rng.choices(alphabet, k=k))


def b64(rng: random.Random, n_bytes: int) -> str:
    return base64.b64encode(rng.randbytes(n_bytes)).decode()


def b64url_json(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def jwt(rng: random.Random) -> str:
    header = b64url_json({"alg": "HS256", "typ": "JWT"})
    payload = b64url_json({"sub": str(rng.randrange(10**6)), "iat": 1_700_000_000})
    signature = base64.urlsafe_b64encode(rng.randbytes(32)).rstrip(b"=").decode()
    return f"{header}.{payload}.{signature}"


def private_key_block(kind: str, rng: random.Random) -> str:
    label = f"{kind} {PK_LABEL}".strip()
    body = "\n".join(b64(rng, 48) for _ in range(3))
    return f"{DASHES}BEGIN {label}{DASHES}\n{body}\n{DASHES}END {label}{DASHES}"


def ulid_with(infix: str) -> str:
    """A ULID-shaped string (valid Crockford, leading 0) that contains ``infix``."""
    return ("01" + infix + "0" * 26)[:26]


Factory = Callable[[random.Random], str]

# (case id, text factory, expected kind)
SECRETS: list[tuple[str, Factory, str]] = [
    # our own API tokens
    (
        "pinework-token",
        lambda r: f"PINEWORK_TOKEN=pw{'k'}_{rand(r, URLSAFE, 43)}",
        "Pinework access token",
    ),
    # cloud access keys
    (
        "aws-key-id",
        lambda r: f"new key AK{'IA'}{rand(r, UPPER_DIGITS, 16)} for ci",
        "AWS access key",
    ),
    (
        "aws-sts-key-id",
        lambda r: f"temp creds AS{'IA'}{rand(r, UPPER_DIGITS, 16)}",
        "AWS access key",
    ),
    (
        "aws-secret-unquoted",
        lambda r: f"aws_secret_access_key = {b64(r, 30)}",
        "AWS secret access key",
    ),
    (
        "aws-secret-quoted",
        lambda r: f'AWS_SECRET_ACCESS_KEY: "{b64(r, 30)}"',
        "AWS secret access key",
    ),
    # private keys
    ("rsa-private-key", lambda r: private_key_block("RSA", r), "private key"),
    ("openssh-private-key", lambda r: private_key_block("OPENSSH", r), "private key"),
    ("ec-private-key", lambda r: private_key_block("EC", r), "private key"),
    ("pkcs8-private-key", lambda r: private_key_block("", r), "private key"),
    ("encrypted-private-key", lambda r: private_key_block("ENCRYPTED", r), "private key"),
    # provider tokens
    ("github-classic", lambda r: f"use gh{'p'}_{rand(r, ALNUM, 36)} to push", "GitHub token"),
    ("github-oauth", lambda r: f"gh{'o'}_{rand(r, ALNUM, 36)}", "GitHub token"),
    (
        "github-fine-grained",
        lambda r: f"github_{'pat'}_{rand(r, ALNUM, 22)}_{rand(r, ALNUM, 59)}",
        "GitHub token",
    ),
    ("gitlab-pat", lambda r: f"GITLAB={'gl'}pat-{rand(r, URLSAFE, 20)}", "GitLab token"),
    (
        "slack-bot",
        lambda r: (
            f"xo{'xb'}-{rand(r, string.digits, 12)}-{rand(r, string.digits, 13)}-"
            f"{rand(r, ALNUM, 24)}"
        ),
        "Slack token",
    ),
    (
        "slack-webhook",
        lambda r: (
            f"https://hooks.slack.com/services/T{rand(r, UPPER_DIGITS, 10)}"
            f"/B{rand(r, UPPER_DIGITS, 10)}/{rand(r, ALNUM, 24)}"
        ),
        "Slack token",
    ),
    ("stripe-live", lambda r: f"sk_{'live'}_{rand(r, ALNUM, 24)}", "Stripe key"),
    ("stripe-restricted", lambda r: f"rk_{'live'}_{rand(r, ALNUM, 99)}", "Stripe key"),
    ("stripe-test", lambda r: f"sk_{'test'}_{rand(r, ALNUM, 24)}", "Stripe key"),
    (
        "openai-legacy",
        lambda r: f"s{'k'}-{rand(r, ALNUM, 20)}{'T3Blbk' + 'FJ'}{rand(r, ALNUM, 20)}",
        "OpenAI API key",
    ),
    (
        "openai-project",
        lambda r: f"OPENAI_API_KEY is s{'k'}-proj-{rand(r, URLSAFE, 60)}A1b",
        "OpenAI API key",
    ),
    (
        "anthropic",
        lambda r: f"s{'k'}-ant-api03-{rand(r, URLSAFE, 93)}AA",
        "Anthropic API key",
    ),
    ("npm-token", lambda r: f"np{'m'}_{rand(r, ALNUM, 36)}", "npm token"),
    (
        "npmrc",
        lambda r: f"//registry.npmjs.org/:_auth{'Token'}={uuid.UUID(int=r.getrandbits(128))}",
        "npm token",
    ),
    (
        "pypi",
        lambda r: f"pypi-{'AgEIcHlwaS5vcmc'}{rand(r, URLSAFE, 120)}",
        "PyPI token",
    ),
    (
        "sendgrid",
        lambda r: f"S{'G'}.{rand(r, URLSAFE, 22)}.{rand(r, URLSAFE, 43)}",
        "SendGrid API key",
    ),
    ("twilio", lambda r: f"twilio sid A{'C'}{rand(r, LOWER_DIGITS, 31)}7", "Twilio API key"),
    (
        "discord",
        lambda r: f"M{rand(r, ALNUM, 23)}.{rand(r, ALNUM, 6)}.{rand(r, URLSAFE, 27)}",
        "Discord bot token",
    ),
    (
        "telegram",
        lambda r: f"bot {rand(r, string.digits, 10)}:{rand(r, URLSAFE, 35)}",
        "Telegram bot token",
    ),
    (
        "azure-storage",
        lambda r: (
            "DefaultEndpointsProtocol=https;AccountName=pinework;"
            f"Account{'Key'}={b64(r, 64)};EndpointSuffix=core.windows.net"
        ),
        "Azure storage account key",
    ),
    ("google", lambda r: f"AI{'za'}{rand(r, URLSAFE, 35)}", "Google API key"),
    ("hugging-face", lambda r: f"h{'f'}_{rand(r, string.ascii_letters, 34)}", "Hugging Face token"),
    (
        "mailchimp",
        lambda r: f"{rand(r, LOWER_DIGITS, 32)}-u{'s'}6",
        "Mailchimp API key",
    ),
    # JWTs
    ("jwt", lambda r: f"Authorization header was {jwt(r)}", "JWT"),
    ("jwt-alone", jwt, "JWT"),
    # connection strings with passwords
    (
        "postgres",
        lambda r: f"postgres://app:{rand(r, ALNUM, 16)}@db.internal:5432/app",
        "connection string with password",
    ),
    (
        "postgres-trivial",
        lambda r: "postgres://user:" + "pa" + "ss@host/db",
        "connection string with password",
    ),
    (
        "mongodb-srv",
        lambda r: f"mongodb+srv://u:{rand(r, ALNUM, 10)}@cluster0.example.net/test",
        "connection string with password",
    ),
    (
        "redis",
        lambda r: f"REDIS_URL=redis://default:{rand(r, ALNUM, 24)}@cache:6379/0",
        "connection string with password",
    ),
    # password / secret assignments
    ("password-equals", lambda r: f"{PW_WORD}={rand(r, ALNUM, 10)}", "password assignment"),
    (
        "passwd-colon",
        lambda r: f"pass{'wd'}: {rand(r, string.ascii_lowercase, 6)}42",
        "password assignment",
    ),
    (
        "secret-key-quoted",
        lambda r: f'secret_{"key"} = "{rand(r, ALNUM, 16)}"',
        "password assignment",
    ),
    (
        "env-export",
        lambda r: f"export DB_{PW_WORD.upper()}={rand(r, string.ascii_lowercase, 12)}",
        "password assignment",
    ),
    ("json", lambda r: f'{{"{PW_WORD}": "{rand(r, ALNUM, 8)}!"}}', "password assignment"),
    ("yaml-api-key", lambda r: f"api_{'key'}: {rand(r, ALNUM, 12)}", "password assignment"),
    ("access-token", lambda r: f"access_{'token'}={rand(r, ALNUM, 12)}", "password assignment"),
    (
        "prose-then-colon",
        lambda r: f"The wifi {PW_WORD}: {rand(r, string.ascii_lowercase, 5)}{r.randrange(10, 99)}!",
        "password assignment",
    ),
    # long high-entropy strings
    ("base64-blob", lambda r: f"blob {b64(r, 45)}", HIGH_ENTROPY_KIND),
    ("urlsafe-token", lambda r: f"token for the bot {rand(r, URLSAFE, 40)}A1", HIGH_ENTROPY_KIND),
    ("hex-48", lambda r: f"hmac {r.randbytes(24).hex()}", HIGH_ENTROPY_KIND),
    ("lower-digits-40", lambda r: f"key {rand(r, LOWER_DIGITS, 39)}7", HIGH_ENTROPY_KIND),
    (
        "bearer",
        lambda r: f"curl -H 'Authorization: Bearer {rand(r, URLSAFE, 40)}Z9'",
        HIGH_ENTROPY_KIND,
    ),
]


@pytest.mark.parametrize(("factory", "kind"), [c[1:] for c in SECRETS], ids=[c[0] for c in SECRETS])
def test_secret_is_caught_with_its_kind(
    detector: SecretDetector, factory: Factory, kind: str, request: pytest.FixtureRequest
) -> None:
    text = factory(rng_for(request.node.callspec.id))
    assert detector.find_secret(text) == kind


@pytest.mark.parametrize(("factory", "kind"), [c[1:] for c in SECRETS], ids=[c[0] for c in SECRETS])
def test_secret_is_caught_inside_prose(
    detector: SecretDetector, factory: Factory, kind: str, request: pytest.FixtureRequest
) -> None:
    secret = factory(rng_for(request.node.callspec.id))
    text = f"Caroline said on 2023-05-08 that she keeps this handy:\n{secret}\nThanks! 🎉"
    assert detector.find_secret(text) == kind


@pytest.mark.parametrize(("factory", "kind"), [c[1:] for c in SECRETS], ids=[c[0] for c in SECRETS])
def test_kind_never_contains_the_secret(
    detector: SecretDetector, factory: Factory, kind: str, request: pytest.FixtureRequest
) -> None:
    text = factory(rng_for(request.node.callspec.id))
    found = detector.find_secret(text)
    assert found is not None
    assert len(found) <= 40
    assert found not in text


def commit_sha(i: int) -> str:
    return hashlib.sha1(f"commit {i}".encode()).hexdigest()


SAFE_TEXTS: list[tuple[str, Callable[[], str]]] = [
    ("sha1-full", lambda: f"Merged {commit_sha(1)} into main"),
    ("sha1-short", lambda: f"reverted {commit_sha(2)[:7]} and {commit_sha(3)[:12]}"),
    ("sha1-upper", lambda: commit_sha(4).upper()),
    ("sha256", lambda: f"image digest sha256:{hashlib.sha256(b'layer').hexdigest()}"),
    ("sha256-bare", lambda: hashlib.sha256(b"x").hexdigest()),
    ("sha512", lambda: hashlib.sha512(b"x").hexdigest()),
    ("md5", lambda: f"checksum {hashlib.md5(b'x').hexdigest()}"),
    ("uuid4", lambda: f"request {uuid.uuid4()} failed"),
    ("uuid4-upper", lambda: str(uuid.uuid4()).upper()),
    ("mem-ulid", lambda: "mem_" + str(ULID())),
    (
        "all-pinework-ids",
        lambda: (
            f"agt_{ULID()} wrote mem_{ULID()} for usr_{ULID()} in wsp_{ULID()} during run_{ULID()}"
        ),
    ),
    ("bare-ulid", lambda: str(ULID())),
    ("ulid-with-aws-prefix", lambda: "mem_" + ulid_with("ACCA")),
    ("ulid-with-a3t", lambda: "run_" + ulid_with("A3T")),
    ("task-keys", lambda: "PIN-42 blocks PIN-1234; see also PIN-7"),
    ("prose", lambda: "Caroline attended an LGBTQ support group and found it inspiring."),
    ("prose-secret-word", lambda: "Caroline's secret: she loves painting sunsets."),
    ("prose-secretary", lambda: "The secretary: Jane Doe, since 2019."),
    ("prose-password-manager", lambda: f"Her {PW_WORD} manager is 1Password."),
    ("prose-password-colon", lambda: f"{PW_WORD.title()}: she forgot it again"),
    ("prose-wifi", lambda: f"The Wi-Fi {PW_WORD} is on the fridge."),
    ("cjk", lambda: "私はパスワードを忘れました。明日は東京に行きます。"),
    ("emoji", lambda: "Melanie 😊 went to the café with 3 friends 🎉🔑"),
    ("url", lambda: "https://github.com/pinework/memory/blob/main/docs/README.md#L10-L20"),
    (
        "url-with-long-id",
        lambda: f"https://docs.google.com/document/d/{rand(rng_for('doc'), ALNUM, 44)}/edit",
    ),
    ("url-user-no-password", lambda: "postgres://app@db.internal:5432/app"),
    ("url-placeholder-password", lambda: "postgres://app:<password>@db/app"),
    ("localhost", lambda: "http://localhost:8080/api/v1/memories?limit=20&cursor=abc"),
    ("versions", lambda: "python-ulid 4.1, detect-secrets 1.5.0, Python 3.11.9, v2.0.0-rc.1+b7"),
    ("dates", lambda: "2023-05-08T13:56:00Z, 8 May 2023, 05/08/2023, 13:56"),
    ("unix-path", lambda: "/usr/local/lib/python3.11/site-packages/detect_secrets/plugins/a.py"),
    ("windows-path", lambda: "C:\\Users\\caroline\\Documents\\report2023_final_v2.docx"),
    ("pwd-path", lambda: "pwd: /home/caroline/projects/pinework"),
    ("numbers", lambda: "She ran 5k in 25:30, scored 98.6%, and owes 1,234,567.89 dollars."),
    ("long-number", lambda: "order 123456789012345678901234567890"),
    ("identifier", lambda: "uses getUserAccountSettings2FAHandler in ReactNativeNavigation5x"),
    ("aws-policy-name", lambda: "ELBSecurityPolicy-TLS13-1-2-2021-06"),
    ("email", lambda: "write to caroline.smith2023@example.com"),
    ("env-reference", lambda: f"{PW_WORD} = os.environ['DB_{PW_WORD.upper()}']"),
    ("settings-reference", lambda: f"{PW_WORD} = settings.DB_{PW_WORD.upper()}"),
    ("template", lambda: f"{PW_WORD}: ${{DB_{PW_WORD.upper()}}}"),
    ("redacted", lambda: f'{PW_WORD}: "<redacted>" and {PW_WORD}=****'),
    ("placeholder", lambda: f"api_{'key'}: <your key here>"),
    ("metadata-keys", lambda: f"secret_name=prod/db/main, {PW_WORD}_length=12, max_tokens=4096"),
    ("empty", lambda: ""),
]


@pytest.mark.parametrize("make_text", [c[1] for c in SAFE_TEXTS], ids=[c[0] for c in SAFE_TEXTS])
def test_safe_text_passes(detector: SecretDetector, make_text: Callable[[], str]) -> None:
    assert detector.find_secret(make_text()) is None


@pytest.mark.parametrize(
    "make_id",
    [
        lambda i: commit_sha(i),
        lambda i: commit_sha(i)[: 7 + i % 34],
        lambda i: hashlib.sha256(str(i).encode()).hexdigest(),
        lambda i: str(uuid.uuid4()),
        lambda i: f"{('mem', 'agt', 'usr', 'wsp', 'run')[i % 5]}_{ULID()}",
    ],
    ids=["sha1", "sha1-prefix", "sha256", "uuid4", "pinework-id"],
)
def test_many_generated_ids_pass(detector: SecretDetector, make_id: Callable[[int], str]) -> None:
    flagged = [
        t for t in (f"see {make_id(i)} for details" for i in range(500)) if detector.find_secret(t)
    ]
    assert flagged == []


def test_aws_key_id_shape_inside_pinework_id_passes(detector: SecretDetector) -> None:
    # The same 20 characters are an AWS key id on their own, but not inside a Pinework id.
    infix = "ACCA" + rand(rng_for("infix"), CROCKFORD, 16)
    assert detector.find_secret(f"key {infix} here") == "AWS access key"
    assert detector.find_secret(f"saved mem_{ulid_with(infix)} today") is None


@pytest.mark.parametrize(("n_bytes", "min_rate"), [(30, 0.95), (45, 0.95)])
def test_random_base64_secrets_are_mostly_caught(
    detector: SecretDetector, n_bytes: int, min_rate: float
) -> None:
    rng = rng_for(f"base64-{n_bytes}")
    texts = [f"value {b64(rng, n_bytes)}" for _ in range(300)]
    caught = sum(detector.find_secret(t) is not None for t in texts)
    assert caught / len(texts) >= min_rate


def test_first_most_specific_kind_wins(detector: SecretDetector) -> None:
    rng = rng_for("priority")
    text = f"{PW_WORD}={rand(rng, ALNUM, 12)}\n{private_key_block('RSA', rng)}"
    assert detector.find_secret(text) == "private key"


def test_detector_is_reusable_and_stateless(detector: SecretDetector) -> None:
    rng = rng_for("reuse")
    secret = f"sk_{'live'}_{rand(rng, ALNUM, 24)}"
    assert detector.find_secret(secret) == "Stripe key"
    assert detector.find_secret("plain words") is None
    assert detector.find_secret(secret) == "Stripe key"


@pytest.mark.parametrize(
    "text",
    [
        "eyJ" * 17_000,
        "//" * 25_000 + "/:_auth" + "Token=",
        f"{DASHES}BEGIN " + "A" * 50_000,
        f"{PW_WORD}:" * 6_000,
        "aB1/" * 12_000,
    ],
    ids=["jwt-prefixes", "npmrc-slashes", "begin-run", "keyword-run", "base64-run"],
)
def test_pathological_input_stays_fast(detector: SecretDetector, text: str) -> None:
    start = time.perf_counter()
    detector.find_secret(text)
    assert time.perf_counter() - start < 0.5
