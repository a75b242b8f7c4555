"""Credentials given to known tools and in credential headers, as families
(chalicelib/services/secrets/tool_rules.py), placeholders that must pass in URLs,
options and headers, and data URIs. Values come from a seeded RNG (no realistic
credential in this file)."""

from __future__ import annotations

import base64
import random

import pytest

from chalicelib.services.secrets import SecretDetector
from chalicelib.services.secrets.rules import is_placeholder
from tests.helpers import growth
from tests.secret_corpus import ALNUM, PW_WORD, rand, rng_for


@pytest.fixture(scope="module")
def detector() -> SecretDetector:
    return SecretDetector()


def password(rng: random.Random) -> str:
    return rand(rng, ALNUM, 8) + rng.choice("!9#_") + "x7"


def tool_lines(rng: random.Random) -> list[str]:
    pw, user = password(rng), rand(rng, "abcdefgh", 5)
    plain = pw.replace("#", "9").replace("!", "8")
    return [
        f"htpasswd -b .htpasswd {user} {pw}",
        f"htpasswd -bc /etc/nginx/.htpasswd {user} '{pw}'",
        f"htpasswd -nbB {user} {pw}",
        f"htpasswd -b -C 12 users.db {user} {pw}",
        f"docker login -u {user} -p {pw} registry.internal",
        f"podman login --username {user} --password {pw} quay.io",
        f"helm registry login ghcr.io -u {user} -p {pw}",
        f"docker --config /tmp/c login -u {user} -p '{pw}' reg.example",
        f"smbclient //fs/share -U {user}%{pw}",
        f'rpcclient -U "CORP\\{user}%{pw}" dc01',
        f"redis-cli -a {pw} -h cache",
        f"redis-cli -h cache --pass {pw} ping",
        f"redis-cli -h cache AUTH default {pw}",
        f"127.0.0.1:6379> AUTH {pw}",
        f"sqlcmd -S db -U sa -P '{pw}'",
        f"bcp db.dbo.t out f.dat -S srv -U sa -P{plain}",
        f"ldapsearch -x -D cn=admin,dc=ex -w {pw} -b dc=ex",
        f"openssl enc -aes-256-cbc -in a -out b -pass pass:{pw}",
        f"openssl pkcs12 -export -in c.pem -passout 'pass:{pw}' -out c.p12",
        f"openssl enc -d -aes-256-cbc -k {pw} -in a",
        f"zip -P {pw} out.zip file",
        f"7z a -p{plain} out.7z dir",
        f"keytool -importkeystore -srcstorepass {pw} -deststorepass {pw}",
        f"plink -ssh {user}@host -pw {pw}",
        f"xfreerdp /u:{user} /p:{pw} /v:host",
        f"ssh-keygen -t ed25519 -N '{pw}' -f id",
        f"gpg --batch --passphrase {pw} -c file",
        f"mongosh -u {user} -p {pw} --authenticationDatabase admin",
        f"psexec \\\\host -u {user} -p {pw} cmd",
        f"lftp -u {user},{pw} ftp.example.com",
        f"sqlplus {user}/{plain}@orcl",
        f'echo "{pw}" | docker login -u {user} --password-stdin',
        f"echo '{user}:{pw}' | chpasswd",
    ]


def header_lines(rng: random.Random) -> list[str]:
    hexkey = rand(rng, "0123456789abcdef", 32)
    token = rand(rng, ALNUM, 18) + "7q"
    return [
        f"X-Api-Key: {hexkey}",
        f"x-api-key:{token}",
        f"Api-Key: {token}",
        f"curl -H 'X-Auth-Token: {token}' https://api.example.com",
        f"Private-Token: {token}",
        f"X-Access-Token: {hexkey}",
        f'{{"X-API-KEY": "{token}"}}',
        f"Cookie: sessionid={hexkey}; theme=dark",
        f"Set-Cookie: JSESSIONID={token.upper()}; Path=/; HttpOnly",
    ]


LOOKALIKES = [
    "docker login -u ci --password-stdin",
    "redis-cli -a $REDIS_PASSWORD",
    "redis-cli -a ${REDIS_PASSWORD} -h cache",
    "openssl enc -pass env:VAR",
    "openssl enc -aes-256-cbc -pass file:/run/secrets/k -in a",
    "openssl enc -aes-256-cbc -pass stdin -in a",
    "htpasswd -c file user",
    "htpasswd -B /etc/htpasswd alice",
    "X-Api-Key: <your key>",
    "X-Api-Key: ${API_KEY}",
    "X-Auth-Token: your_token_here",
    'curl -H "X-Api-Key: YOUR_API_KEY" https://api.example.com',
    "set the X-Api-Key: header on every request",
    "docker run -p 8080:80 nginx",
    "mkdir -p dir",
    "psql -p 5432 -h db",
    f"postgres://user:{PW_WORD}@localhost:5432/db is the template",
    "mysql://root:changeme@localhost/app in the README",
    "https://admin:***@host/",
    "redis://:{{ redis_password }}@cache:6379",
    "amqp://guest:<pass>@mq:5672/",
    "docker login -u ci -p $CI_TOKEN registry.example",
    "docker login -u ci -p ${{ secrets.REGISTRY_TOKEN }} ghcr.io",
    "docker login -u ci -p password registry.example",
    'sqlcmd -S db -U sa -P "$SA_PASSWORD"',
    "smbclient //fs/share -U admin",
    "smbclient //fs/share -U admin%$SMB_PASS",
    "the discount is 50% off -U",
    "redis-cli -h cache ping",
    "the Redis AUTH command takes a password",
    "ldapsearch -x -W -b dc=example,dc=org -s children -a always",
    "7z x archive.7z",
    "zip -r out.zip dir",
    "keytool -list -keystore ks.jks",
    'ssh-keygen -t ed25519 -N "" -f id',
    "gpg --passphrase-fd 0 --batch -c file",
    "echo $PASSWORD | docker login --password-stdin",
    "Cookie: theme=dark; lang=en",
    "X-Access-Token: none",
]


@pytest.mark.parametrize("seed", range(4))
def test_passwords_given_to_known_tools_are_found(detector: SecretDetector, seed: int) -> None:
    for text in tool_lines(rng_for(f"tool-{seed}")):
        assert detector.find_secret(text) == "password on a command line", text
        assert detector.find_secret(f"deploy notes:\n{text}\nthen restart") is not None, text


@pytest.mark.parametrize("seed", range(4))
def test_credential_headers_are_found(detector: SecretDetector, seed: int) -> None:
    for text in header_lines(rng_for(f"header-{seed}")):
        assert detector.find_secret(text) is not None, text
        assert detector.find_secret(text, shapes_only=True) is not None, text


@pytest.mark.parametrize("text", LOOKALIKES)
def test_placeholders_prompts_and_lookalikes_pass(detector: SecretDetector, text: str) -> None:
    assert detector.find_secret(text) is None


@pytest.mark.parametrize(
    ("value", "placeholder"),
    [
        (PW_WORD, True),
        ("changeme", True),
        ("your_api_key", True),
        ("YOUR-TOKEN-HERE", True),
        ("***", True),
        ("xxxx", True),
        ("<token>", True),
        ("${DB_PASS}", True),
        ("%DB_PASS%", True),
        ("{{ db_pass }}", True),
        ("hunter2", False),
        ("S3cretValue", False),
        ("passw0rd!", False),
    ],
)
def test_placeholder_values(value: str, placeholder: bool) -> None:
    assert is_placeholder(value) is placeholder


@pytest.mark.parametrize("size", [16, 200, 700])
def test_a_data_uri_payload_is_content(detector: SecretDetector, size: int) -> None:
    rng = rng_for(f"data-uri-{size}")
    payload = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(size))).decode()
    for text in (
        f"the logo is data:image/png;base64,{payload}",
        f'<img src="data:image/svg+xml;charset=utf-8;base64,{payload}">',
        f"font: url(data:font/woff2;base64,{payload}) format('woff2')",
    ):
        assert detector.find_secret(text) is None, text[:80]
    # the same random payload outside a data URI is still a high-entropy secret
    assert detector.find_secret(f"token {payload[:40]}") is not None


def test_a_credential_next_to_a_data_uri_is_still_found(detector: SecretDetector) -> None:
    rng = rng_for("data-uri-next")
    payload = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(120))).decode()
    text = f"data:image/png;base64,{payload} and redis-cli -a {password(rng)}"
    assert detector.find_secret(text) == "password on a command line"


@pytest.mark.parametrize(
    "unit",
    [
        "docker login -p ",
        "redis-cli -a ",
        "htpasswd -b ",
        "Cookie: sid=",
        "X-Api-Key: ",
        "echo x | ",
        "AUTH ",
        "-U a%",
        "sqlplus a/",
        "docker ",
    ],
)
def test_tool_families_scan_in_linear_time(detector: SecretDetector, unit: str) -> None:
    size = 32 * 1024
    assert growth(detector.find_secret, lambda n: unit * (n // len(unit)), size // 8) < 32
