"""Tests for chalicelib.services.secrets.SecretDetector.

No realistic credential is written in this file. Every secret-shaped value is generated at
run time from a seeded RNG, and the marker words (provider prefixes, "PRIVATE KEY", ...)
are assembled from fragments, so a secret scanner run over the repository finds nothing
here.
"""

import hashlib
import uuid
from collections.abc import Callable

import pytest
from ulid import ULID

from chalicelib.services.secrets import SecretDetector
from tests.helpers import growth
from tests.secret_corpus import (
    ALNUM,
    CROCKFORD,
    DASHES,
    PW_WORD,
    SECRETS,
    Factory,
    b64,
    private_key_block,
    rand,
    rng_for,
    ulid_with,
)


@pytest.fixture(scope="module")
def detector() -> SecretDetector:
    return SecretDetector()


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
    "build",
    [
        lambda n: "eyJ" * n,
        lambda n: "//" * n + "/:_auth" + "Token=",
        lambda n: f"{DASHES}BEGIN " + "A" * n,
        lambda n: f"{PW_WORD}:" * (n // 8),
        lambda n: "aB1/" * (n // 4),
    ],
    ids=["jwt-prefixes", "npmrc-slashes", "begin-run", "keyword-run", "base64-run"],
)
def test_pathological_input_scans_in_linear_time(
    detector: SecretDetector, build: Callable[[int], str]
) -> None:
    assert growth(detector.find_secret, build, 12_500) < 32
