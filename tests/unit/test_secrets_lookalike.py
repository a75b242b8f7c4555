"""The secret detector reads text as it shows (docs/issues.md#issue-14): credentials written in
full-width letters or split by invisible characters are the credentials they look
like; ordinary text written so stays ordinary; identifiers get the shapes only."""

from __future__ import annotations

import pytest

from chalicelib.services.secrets import HIGH_ENTROPY_KIND, SecretDetector

PW_WORD = "pass" + "word"
CREDENTIALS = [
    ("AKIAIOSFODNN7EXAMPLE", "AWS access key"),
    ("ghp_" + "A1b2C3d4" * 4 + "wXyZ", "GitHub token"),
    ("xoxb-" + "1234567890-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx", "Slack token"),
    ("sk-ant-api03-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv" * 2, "Anthropic API key"),
    ("postgres://admin:Sup3rS3cret@db.internal:5432/app", "connection string with password"),
    (f"db_{PW_WORD}=Tr0ub4dor&3", "password assignment"),
    (f"the {PW_WORD} is Tr0ub4dor&3", "password in words"),
    ("blob dGhpcyBpcyBhIHJhbmRvbSBzZWNyZXQga2V5IDg3NjU0MzIxMHF3ZXJ0eQ", HIGH_ENTROPY_KIND),
]
ORDINARY = [
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "The staging deploy needs the VPN on (source: PIN-812).",
    "Use pnpm, not npm, in the web/ folder; CI runs on Node 20.",
    f"The {PW_WORD} is stored in the vault under kv/payments/staging.",
    "Commit 4f8b2c1a9e7d6b5a4c3d2e1f0a9b8c7d6e5f4a3b fixed the flaky test.",
]


def full_width(text: str) -> str:
    """Printable ASCII as its full-width forms (U+FF01..U+FF5E); spaces stay."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@pytest.fixture(scope="module")
def detector() -> SecretDetector:
    return SecretDetector()


@pytest.mark.parametrize(("text", "kind"), CREDENTIALS)
def test_a_credential_reads_the_same_in_full_width_or_split_by_invisible_characters(
    detector: SecretDetector, text: str, kind: str
) -> None:
    assert detector.find_secret(text) == kind
    assert detector.find_secret(full_width(text)) == kind
    assert detector.find_secret("\u200b".join(text)) == kind
    assert detector.find_secret("\u2060".join(full_width(text))) == kind


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_stays_ordinary_in_full_width(detector: SecretDetector, text: str) -> None:
    assert detector.find_secret(text) is None
    assert detector.find_secret(full_width(text)) is None


@pytest.mark.parametrize(
    "identifier",
    [
        "run_4bMhX3Bt7CkPqA9ZsV1oDxYw",
        "thread_Xq2s9LkP0vWmZrT4yBn8Hc1e",
        "chatcmpl-9pX2kL8mZq4RtYv7Bn3Wc5Ds",
        "sess_8fKq2LmZ4xR7tV1wY9bN3cH6",
        "req_011CUdPh7jv5Kx3qBz1M9wNe",
    ],
)
def test_shapes_only_lets_random_ids_pass_and_still_finds_credentials(
    detector: SecretDetector, identifier: str
) -> None:
    assert detector.find_secret(identifier) == HIGH_ENTROPY_KIND
    assert detector.find_secret(identifier, shapes_only=True) is None
    for text, kind in CREDENTIALS:
        if kind != HIGH_ENTROPY_KIND:
            assert detector.find_secret(text, shapes_only=True) == kind
