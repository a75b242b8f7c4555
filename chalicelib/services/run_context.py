"""What an agent's ``X-Pinework-*`` headers say about its run (SPEC §2, §7)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from chalicelib.errors import InvalidRequest
from chalicelib.limits import HEADER_MAX_CHARS

_HEADER_VALUE = re.compile(r"^[\x21-\x7e][\x20-\x7e]*$")


def check_body_session(value: str | None) -> str | None:
    """Validate a body's ``sessionId`` by the header's rules (``check_header``), except
    that nothing is trimmed: a value with white space (or anything else) around it is
    refused rather than read as another session.

    Returns:
        The session id, or None when absent.

    Raises:
        InvalidRequest: empty, not printable ASCII, over 128 characters, or
            surrounded by white space.
    """
    if value is not None and (not value or value != value.strip()):
        raise InvalidRequest(
            f"sessionId must be 1 to {HEADER_MAX_CHARS} printable ASCII characters, with "
            "no white space around them."
        )
    return check_header(value, "sessionId")


def check_header(value: str | None, name: str) -> str | None:
    """Validate an ``X-Pinework-*`` header: printable ASCII, at most 128 characters.

    Raises:
        InvalidRequest: the value is too long or holds control characters.
    """
    # Only HTTP's own white space (SP, HTAB) is trimmed: "\x85" or "\xa0" is not
    # "no header" but a malformed one.
    if value is None or value.strip(" \t") == "":
        return None
    value = value.strip(" \t")
    if len(value) > HEADER_MAX_CHARS or not _HEADER_VALUE.match(value):
        raise InvalidRequest(
            f"{name} must be printable ASCII of at most {HEADER_MAX_CHARS} characters."
        )
    return value


@dataclass(frozen=True)
class RunContext:
    """What an agent's headers say about the run (``X-Pinework-Run`` / ``-Task`` /
    ``-Session``)."""

    run_id: str | None = None
    task_key: str | None = None
    session_id: str | None = None
