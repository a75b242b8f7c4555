"""The secret test corpus: credential-shaped strings, one factory per kind (shared by
the detector's tests and the log tests, which check no secret reaches a log line).

No realistic credential is written in this file. Every secret-shaped value is generated at
run time from a seeded RNG, and the marker words (provider prefixes, "PRIVATE KEY", ...)
are assembled from fragments, so a secret scanner run over the repository finds nothing
here.
"""

import base64
import json
import random
import string
import uuid
from collections.abc import Callable

from chalicelib.services.secrets import HIGH_ENTROPY_KIND

UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
CROCKFORD = "".join(c for c in UPPER_DIGITS if c not in "ILOU")

# Marker fragments, assembled so that this file holds no scanner-triggering literal.
PW_WORD = "pass" + "word"
PK_LABEL = "PRIVATE" + " KEY"
DASHES = "-" * 5


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
        "postgres-trivial",  # a weak password, not a placeholder ("pass" is one)
        lambda r: "postgres://user:" + "hunter" + "2@host/db",
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
        "Authorization header credentials",
    ),
]
