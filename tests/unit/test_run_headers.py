"""The ``X-Pinework-*`` headers (docs/reference.md#7-http-api): printable ASCII; only HTTP's own
white space around a value is trimmed (the fuzzer sent a lone U+0085, which Python counts
as white space, and it was read as no header at all)."""

from __future__ import annotations

import pytest

from chalicelib.errors import InvalidRequest
from chalicelib.services.run_context import check_header


@pytest.mark.parametrize("sent", [None, "", " ", "\t \t"])
def test_an_empty_header_is_no_header(sent: str | None) -> None:
    assert check_header(sent, "X-Pinework-Task") is None


def test_spaces_and_tabs_around_a_value_are_trimmed() -> None:
    assert check_header(" \tPIN-42 \t", "X-Pinework-Task") == "PIN-42"
    assert check_header("PIN 42", "X-Pinework-Task") == "PIN 42"


@pytest.mark.parametrize("sent", ["\x85", "\xa0", "\u2003", "PIN-42\x85", "caf\u00e9", "x" * 129])
def test_other_characters_are_refused(sent: str) -> None:
    with pytest.raises(InvalidRequest, match="X-Pinework-Task must be printable ASCII"):
        check_header(sent, "X-Pinework-Task")
