"""The secret detector scans long adversarial text in linear time (docs/issues.md#issue-5: key-value
values reach megabytes). Before the fix, 64 KB of "sk-" took 17 s and "AKIA" 3 s."""

from __future__ import annotations

import pytest

from chalicelib.services.secrets import SecretDetector
from tests.helpers import growth

SIZE = 256 * 1024


@pytest.fixture(scope="module")
def detector() -> SecretDetector:
    return SecretDetector()


@pytest.mark.parametrize(
    "unit",
    ["AKIA", "sk-", "xoxb-", "-us", "pypi-", "T3BlbkFJ", "sk-aaaaT3BlbkFJ", "SK" + "ab12" * 8],
)
def test_repeated_patterns_scan_in_linear_time(detector: SecretDetector, unit: str) -> None:
    # linear work takes about 8x the time for 8x the text; quadratic would take 64x
    assert growth(detector.find_secret, lambda size: unit * (size // len(unit)), SIZE // 8) < 32


def test_the_fixes_still_find_what_they_guard(detector: SecretDetector) -> None:
    legacy_openai = "sk-abcdefghij1234567890T3BlbkFJabcdefghij1234567890"
    assert detector.find_secret(f"the key is {legacy_openai} ok") is not None
    assert detector.find_secret("id AKIAIOSFODNN7EXAMPLE here") == "AWS access key"
    assert detector.find_secret("glued xAKIAIOSFODNN7EXAMPLE here") != "AWS access key"
    assert detector.find_secret("see https://example.com/a-b-c for the runbook") is None
