"""Secret families closed by docs/issues.md#issue-21-item-7: an AWS key id glued to its
secret, passwords on command lines, Authorization headers, credentials in or glued to
long base64 runs (a kubeconfig's key data); and the check's bound on long texts.
Every value is generated from a seeded RNG (no realistic credential in this file)."""

from __future__ import annotations

import base64
import random

import pytest

from chalicelib.limits import SECRET_SCAN_BUDGET_CHARS
from chalicelib.services.secrets import SecretDetector
from chalicelib.services.secrets.scan import plan_scan
from tests.helpers import growth
from tests.secret_corpus import ALNUM, PW_WORD, UPPER_DIGITS, b64, private_key_block, rand, rng_for

B64 = ALNUM + "+/"


@pytest.fixture(scope="module")
def detector() -> SecretDetector:
    return SecretDetector()


def key_id(rng: random.Random) -> str:
    return rng.choice(["AK" + "IA", "AS" + "IA"]) + rand(rng, UPPER_DIGITS, 16)


def aws_secret(rng: random.Random) -> str:
    return rand(rng, B64, 37) + "a1Z"


def password(rng: random.Random) -> str:
    return rand(rng, ALNUM, 9) + rng.choice("!9#") + "x7"


def glued_pairs(rng: random.Random) -> list[str]:
    kid, secret = key_id(rng), aws_secret(rng)
    return [kid + secret, secret + kid, f"creds {kid}{secret} end", f"'{secret}{kid}'"]


@pytest.mark.parametrize("seed", range(5))
def test_an_aws_key_id_glued_to_its_secret_is_found_in_text_and_identifiers(
    detector: SecretDetector, seed: int
) -> None:
    for text in glued_pairs(rng_for(f"glued-{seed}")):
        assert detector.find_secret(text) == "AWS access key", text
        assert detector.find_secret(text[:128], shapes_only=True) == "AWS access key", text


def command_lines(rng: random.Random) -> list[str]:
    pw, user = password(rng), rand(rng, "abcdefgh", 6)
    return [
        f"mysql -u {user} -p{pw} orders",
        f"mysqldump -u{user} -p'{pw}' shop > dump.sql",
        f"mariadb -h db -p{pw}",
        f"mysql --{PW_WORD}={pw} orders",
        f"psql --{PW_WORD} {pw} -h db",
        f"app --db-{PW_WORD}='{pw}' --verbose",
        f"run --api-token {pw}",
        f"curl -u {user}:{pw} https://api.example.com/v1",
        f"curl --user={user}:{pw} https://x.example",
        f"sshpass -p '{pw}' ssh deploy@host",
        f"sshpass -p{pw} scp a b:",
        f"PG{PW_WORD.upper()}={pw} psql -h db",
        f"MYSQL_PWD={pw} mysql",
        f"redis://:{pw.replace('#', '%23')}@cache:6379/0",
        f"amqp://{user}:{pw.replace('#', '%23')}@mq/vhost",
    ]


COMMAND_LOOKALIKES = [
    "mkdir -p build/out",
    "docker run -p 8080:80 nginx",
    "docker run -p8080:80 -p 127.0.0.1:53:53/udp dns",
    "ssh -p 2222 deploy@host and ssh -p2222 host",
    "gcc -pthread -pedantic -o app main.c",
    "cp -pR src dst; tar -xpf a.tar; rsync -pavz a b",
    "mysql -u root -p orders (it prompts for the password)",
    f"psql --{PW_WORD} mydb",
    "curl -u $USER:$API_TOKEN https://x.example",
    "curl -u alice https://x.example",
    'sshpass -p "$SSHPASS" ssh host',
    f"PG{PW_WORD.upper()}=$PGPASS psql",
    "git log -p HEAD~3; pytest -p no:randomly; ps -p 1234 -o pid",
    "redis://cache:6379/0 and https://example.com/a-b",
    f"run with --{PW_WORD}-file /run/secrets/db",
    "kubectl -n prod get pods -o wide --all-namespaces",
]


@pytest.mark.parametrize("seed", range(4))
def test_passwords_on_command_lines_are_found(detector: SecretDetector, seed: int) -> None:
    for text in command_lines(rng_for(f"cli-{seed}")):
        assert detector.find_secret(text) is not None, text


@pytest.mark.parametrize("text", COMMAND_LOOKALIKES)
def test_command_lines_without_a_password_pass(detector: SecretDetector, text: str) -> None:
    assert detector.find_secret(text) is None


def headers(rng: random.Random) -> list[str]:
    token = rand(rng, ALNUM, 30) + "9q"
    basic = base64.b64encode(f"{rand(rng, 'abcdef', 5)}:{password(rng)}".encode()).decode()
    return [
        f"Authorization: Bearer {token}",
        f"authorization: bearer {token[:18]}",
        f"Authorization: Basic {basic}",
        f"Proxy-Authorization: Basic {basic}",
        f"Authorization: Token {rand(rng, '0123456789abcdef', 40)}",
        f"curl -H 'Authorization: Bearer {token}' https://api.example.com",
        f'{{"headers": {{"Authorization": "Bearer {token}"}}}}',
        f"Authorization={token}",
        f"use Bearer {token} for the call",
    ]


HEADER_LOOKALIKES = [
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer <token>",
    "Authorization: Bearer ${{ secrets.API_TOKEN }}",
    "Authorization: Basic <base64 of user:pass>",
    "send the Authorization: Bearer header with every call",
    "basic auth goes in the Authorization header",
    "the bearer token expires hourly; Bearer tokens rotate",
    "Authorization header uses the Bearer scheme",
]


@pytest.mark.parametrize("seed", range(4))
def test_authorization_headers_are_found(detector: SecretDetector, seed: int) -> None:
    for text in headers(rng_for(f"auth-{seed}")):
        assert detector.find_secret(text) is not None, text
        assert detector.find_secret(text[:128], shapes_only=True) is not None, text


@pytest.mark.parametrize("text", HEADER_LOOKALIKES)
def test_header_talk_without_credentials_passes(detector: SecretDetector, text: str) -> None:
    assert detector.find_secret(text) is None


def blob(rng: random.Random, size: int, urlsafe: bool = False) -> str:
    raw = rng.randbytes(size * 3 // 4)
    return (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()


@pytest.mark.parametrize("seed", range(3))
def test_credentials_glued_to_or_inside_a_long_base64_run_are_found(
    detector: SecretDetector, seed: int
) -> None:
    rng = rng_for(f"data-{seed}")
    data = blob(rng, 3000)
    kid = key_id(rng)
    github = "gh" + "p_" + rand(rng, ALNUM, 36)
    for text in [
        kid + data,
        data + kid,
        data[:1500] + kid + data[1500:],
        "A" * 2000 + kid,
        github + data,
        data + github,
        f"{PW_WORD}={password(rng)}" + data,
        data + f"{PW_WORD}={password(rng)}",
    ]:
        assert detector.find_secret(text) is not None, text[:40]


def test_a_kubeconfig_with_base64_key_data_is_refused(detector: SecretDetector) -> None:
    rng = rng_for("kubeconfig")
    pem = private_key_block("RSA", rng) + "\n" + "\n".join(b64(rng, 48) for _ in range(30))
    encoded = base64.b64encode(pem.encode()).decode()
    assert len(encoded) > 1024
    config = (
        "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n"
        f"    client-certificate-data: {blob(rng, 1600)}\n    client-key-data: {encoded}\n"
    )
    assert detector.find_secret(config) == "private key"
    env = base64.b64encode(("DEBUG=1\n" * 200 + f"DB_{PW_WORD.upper()}={password(rng)}\n").encode())
    assert detector.find_secret(f"data:\n  app.env: {env.decode()}") is not None


@pytest.mark.parametrize("seed", range(5))
def test_long_data_without_credentials_passes(detector: SecretDetector, seed: int) -> None:
    rng = rng_for(f"plain-data-{seed}")
    image = f"![chart](data:image/png;base64,{blob(rng, 200_000)})"
    hex_dump = "\n".join(rng.randbytes(32).hex() for _ in range(2000))
    certificate = "client-certificate-data: " + blob(rng, 4000)
    text_b64 = base64.b64encode(("the deploy runs nightly\n" * 100).encode()).decode()
    for text in [image, hex_dump, certificate, text_b64, blob(rng, 100_000, urlsafe=True)]:
        assert detector.find_secret(text) is None, text[:60]


def test_a_long_value_is_read_within_the_budget_and_a_secret_at_its_end_is_found(
    detector: SecretDetector,
) -> None:
    rng = rng_for("budget")
    words = [
        "the",
        "staging",
        "deploy",
        "uses",
        "blue",
        "green",
        "with",
        "three",
        "replicas",
        "and",
        "a",
        "leaky",
        "bucket",
    ]
    prose = " ".join(rng.choice(words) for _ in range(900_000))
    plan = plan_scan(prose)
    assert sum(map(len, plan.full + plan.shapes)) <= SECRET_SCAN_BUDGET_CHARS
    assert not plan.unscannable
    assert detector.find_secret(prose) is None
    secret = f"Authorization: Bearer {rand(rng, ALNUM, 30)}9q"
    assert detector.find_secret(prose + " " + secret) is not None
    assert detector.find_secret(prose[:3_000_000] + secret + prose[3_000_000:]) is not None


def test_a_text_too_dense_to_read_within_the_budget_is_refused(detector: SecretDetector) -> None:
    rng = rng_for("dense")
    dense = " ".join(f"tok{rand(rng, ALNUM, 20)}" for _ in range(120_000))
    assert plan_scan(dense).unscannable
    assert detector.find_secret(dense) == "too much credential-like text to check"


@pytest.mark.parametrize("unit", ["token ", "akia", "-p ", "Bearer x1 ", "A" * 31 + "1 "])
def test_long_texts_scan_in_linear_time(detector: SecretDetector, unit: str) -> None:
    assert growth(detector.find_secret, lambda size: unit * (size // len(unit)), 64 * 1024) < 32
