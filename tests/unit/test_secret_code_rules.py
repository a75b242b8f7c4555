"""The secret check reads code and checksum files (chalicelib/services/secrets/code_rules.py,
docs/reference.md#secret-check-code): each rule both ways, what no longer is refused and
the credential that still is.

No realistic credential is written in this file: every secret-shaped value is generated
from a seeded RNG, and marker words are assembled from fragments."""

from __future__ import annotations

import base64
import hashlib
import string
from collections.abc import Callable

import pytest

from chalicelib.services.secrets import HIGH_ENTROPY_KIND, SecretDetector
from chalicelib.services.secrets.code_rules import (
    is_reference,
    names_a_secret,
    names_a_setting,
    words,
)
from chalicelib.services.secrets.rules import is_placeholder
from tests.secret_corpus import ALNUM, DASHES, PK_LABEL, PW_WORD, b64, rand, rng_for

LOWER = string.ascii_lowercase


@pytest.fixture(scope="module")
def detector() -> SecretDetector:
    return SecretDetector()


def b64_digest(name: str, data: bytes, *, urlsafe: bool = False) -> str:
    raw = hashlib.new(name, data).digest()
    if urlsafe:
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    return base64.b64encode(raw).decode()


# --- digests in a checksum context --------------------------------------------------------

DIGEST_TEXTS = [
    (
        "wheel-record",
        lambda: f"pkg/cache.py,sha256={b64_digest('sha256', b'a', urlsafe=True)},1835",
    ),
    (
        "sri-script",
        lambda: (
            '<script src="https://cdn.example.org/lib.min.js" '
            f'integrity="sha384-{b64_digest("sha384", b"lib")}" crossorigin="anonymous">'
        ),
    ),
    ("package-lock", lambda: f'"integrity": "sha512-{b64_digest("sha512", b"tgz")}",'),
    ("pip-hash", lambda: f"requests==2.32.3 --hash=sha256:{hashlib.sha256(b'r').hexdigest()}"),
    ("sha384-hex", lambda: f"sha384:{hashlib.sha384(b'r').hexdigest()}"),
    ("go-sum", lambda: f"golang.org/x/text v0.3.0 h1:{b64_digest('sha256', b'g')}"),
    ("etag-words", lambda: f"for the ETAG {b64_digest('sha256', b'e', urlsafe=True)}"),
    ("checksum-key", lambda: f"checksum: {b64_digest('sha1', b'c')}"),
    ("md5-label", lambda: f"md5={b64_digest('md5', b'm')}"),
]


@pytest.mark.parametrize("make", [c[1] for c in DIGEST_TEXTS], ids=[c[0] for c in DIGEST_TEXTS])
def test_a_digest_in_a_checksum_context_is_not_a_secret(
    detector: SecretDetector, make: Callable[[], str]
) -> None:
    assert detector.find_secret(make()) is None


@pytest.mark.parametrize(
    "text",
    [
        # a label with a token of another size than the algorithm's digest
        "sha256={}",
        'integrity="sha384-{}"',
        # a digest word far from its token, or none
        "the key is {}",
    ],
)
def test_a_random_token_after_a_digest_label_of_the_wrong_size_is_still_caught(
    detector: SecretDetector, text: str
) -> None:
    token = b64(rng_for(text), 30)  # 30 bytes: no digest has that size
    assert detector.find_secret(text.format(token)) == HIGH_ENTROPY_KIND


def test_a_secret_beside_a_digest_is_still_caught(detector: SecretDetector) -> None:
    rng = rng_for("beside-digest")
    text = f'integrity="sha384-{b64_digest("sha384", b"x")}" {PW_WORD}={rand(rng, ALNUM, 12)}'
    assert detector.find_secret(text) == "password assignment"


# --- public keys and certificates ---------------------------------------------------------


def ssh_public_key(kind: str, body_kind: str) -> str:
    def field(data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + data

    blob = field(body_kind.encode()) + field(rng_for(kind).randbytes(32))
    return f"{kind} {base64.b64encode(blob).decode()} deploy@ci"


def test_an_ssh_public_key_is_not_a_secret(detector: SecretDetector) -> None:
    assert detector.find_secret(ssh_public_key("ssh-ed25519", "ssh-ed25519")) is None


def test_a_random_blob_dressed_as_a_public_key_is_still_caught(detector: SecretDetector) -> None:
    # The body must name the key type the line names.
    assert detector.find_secret(ssh_public_key("ssh-ed25519", "not-a-key")) == HIGH_ENTROPY_KIND


def test_a_certificate_is_not_a_secret_and_a_private_key_still_is(
    detector: SecretDetector,
) -> None:
    rng = rng_for("pem")
    body = "\n".join(b64(rng, 48) for _ in range(4))
    certificate = f"{DASHES}BEGIN CERTIFICATE{DASHES}\n{body}\n{DASHES}END CERTIFICATE{DASHES}"
    assert detector.find_secret(certificate) is None
    private = f"{DASHES}BEGIN {PK_LABEL}{DASHES}\n{body}\n{DASHES}END {PK_LABEL}{DASHES}"
    assert detector.find_secret(private) == "private key"


# --- references, names and settings -------------------------------------------------------

REFERENCES = [
    f"user = User(username=username, {PW_WORD}=hashed_{PW_WORD})",
    "creds = Credentials(client_id=CLIENT_ID, client_secret=CLIENT_SECRET)",
    "return { token: accessToken, user }",
    f"const {PW_WORD} = await readUserInfo.{PW_WORD}()",
    "this.authKey = authKey",
    "assert info['refresh_token'] == NEW_REFRESH_TOKEN",
    "api_key: SecretStr",
]


@pytest.mark.parametrize("text", REFERENCES)
def test_a_variable_named_like_a_secret_is_not_a_secret(
    detector: SecretDetector, text: str
) -> None:
    assert detector.find_secret(text) is None


@pytest.mark.parametrize(
    "template",
    [
        "user = User(username=username, {pw}={value})",
        "export DB_{PW}={value}",
        '{pw} = "{value}"',
        "return {{ {pw}: '{value}', user }}",
        "client_secret={value}",
    ],
)
def test_a_literal_in_the_same_place_is_still_caught(
    detector: SecretDetector, template: str
) -> None:
    value = rand(rng_for(template), LOWER, 12)
    text = template.format(pw=PW_WORD, PW=PW_WORD.upper(), value=value)
    assert detector.find_secret(text) == "password assignment"


@pytest.mark.parametrize(
    "text",
    [
        '"access_token": "SA_ACCESS_TOKEN",',
        "REFRESH_TOKEN = 'REFRESH_TOKEN'",
        "headers = {'X-Api-Key': 'myApiKey'}",
    ],
)
def test_a_quoted_name_for_a_secret_is_a_placeholder(detector: SecretDetector, text: str) -> None:
    assert detector.find_secret(text) is None


@pytest.mark.parametrize(
    "text",
    ['"access_token": "{}",', "REFRESH_TOKEN = '{}'"],
)
def test_a_quoted_random_value_is_still_caught(detector: SecretDetector, text: str) -> None:
    assert detector.find_secret(text.format(rand(rng_for(text), ALNUM, 16))) is not None


@pytest.mark.parametrize(
    "text", ['"--password-store=basic",', "token_type: bearer", "secret_backend = vault"]
)
def test_a_setting_about_a_secret_is_not_a_secret(detector: SecretDetector, text: str) -> None:
    assert detector.find_secret(text.replace("password", PW_WORD)) is None


def test_a_random_value_of_such_a_setting_is_still_caught(detector: SecretDetector) -> None:
    rng = rng_for("setting")
    value = rand(rng, LOWER, 8) + "7" + rand(rng, LOWER, 3)
    assert detector.find_secret(f"secret_key_base: {value}") == "password assignment"


@pytest.mark.parametrize(
    "text",
    [
        "access_token: OAuth access token.",
        f"USERNAME_AND_{PW_WORD.upper()}: Regular username/{PW_WORD} pair.",
        "AUTH_TOKEN: Auth Token, e.g. bearer token.",
    ],
)
def test_a_field_description_is_not_a_secret(detector: SecretDetector, text: str) -> None:
    assert detector.find_secret(text) is None


def test_a_value_with_a_comment_after_it_is_still_caught(detector: SecretDetector) -> None:
    value = rand(rng_for("described"), LOWER, 8) + "42"
    assert detector.find_secret(f"access_token: {value} for the prod bot") is not None


# --- Basic credentials and Redis AUTH -----------------------------------------------------


def basic(pair: str) -> str:
    return base64.b64encode(pair.encode()).decode()


@pytest.mark.parametrize("pair", ["user:pass", "user:", f"username:{PW_WORD}"])
def test_basic_credentials_with_a_placeholder_password_are_not_a_secret(
    detector: SecretDetector, pair: str
) -> None:
    assert detector.find_secret(f'{{"Proxy-Authorization": "Basic {basic(pair)}"}}') is None
    assert detector.find_secret(f'BASIC_AUTH_ENCODING = "{basic(pair)}"') is None


def test_basic_credentials_with_a_real_password_are_still_caught(detector: SecretDetector) -> None:
    pair = "deploy:" + rand(rng_for("basic"), ALNUM, 14)
    assert detector.find_secret(f"Authorization: Basic {basic(pair)}") is not None
    assert detector.find_secret(f'AUTH = "{basic(pair)}"') is not None


def test_a_sentence_about_redis_auth_is_not_a_secret(detector: SecretDetector) -> None:
    text = "Enables Redis AUTH for the instance. If omitted AUTH is disabled."
    assert detector.find_secret(text) is None
    value = rand(rng_for("redis-auth"), LOWER, 8) + "9!"
    assert detector.find_secret(f"redis> AUTH {value}") == "password on a command line"


# --- the helpers --------------------------------------------------------------------------


def test_words_split_identifiers_of_every_case() -> None:
    assert words(f"db_{PW_WORD}") == ["db", PW_WORD]
    assert words("newToken") == ["new", "token"]
    assert words("API-Key2") == ["api", "key", "2"]
    assert words("SA_ACCESS_TOKENS") == ["sa", "access", "token"]


def test_names_and_references_need_words_not_random_letters() -> None:
    assert names_a_secret("SA_ACCESS_TOKEN") and is_placeholder("SA_ACCESS_TOKEN")
    assert not names_a_secret("Secret_Sauce")  # the last word is no secret word
    assert not names_a_secret("Tr0ub4dor_token")  # digits: a literal
    assert is_reference(f"hashed_{PW_WORD}") and is_reference("CLIENT_SECRET")
    assert not is_reference(rand(rng_for("ref"), LOWER, 12))
    assert not is_reference(f"{PW_WORD}123")
    assert names_a_setting(f"{PW_WORD}_store") and not names_a_setting(f"db_{PW_WORD}2")


def test_a_url_with_a_one_to_three_character_password_is_an_example(
    detector: SecretDetector,
) -> None:
    assert detector.find_secret("const myURL = new URL('https://abc:xyz@example.com');") is None
    assert detector.find_secret("// Prints https://a:b@example.com/?abc#foo") is None
    value = rand(rng_for("url-password"), ALNUM, 4)
    found = detector.find_secret(f"new URL('https://abc:{value}@example.com')")
    assert found == "connection string with password"
