"""The texts that say why a memory was archived: an archive's ``reason`` (required)
and a veto's note (optional) (docs/reference.md#3-the-memory-object to docs/reference.md#5-limits;
docs/issues.md#issue-14 for blank and look-alike reasons)."""

from __future__ import annotations

import functools

from chalicelib.errors import InvalidRequest
from chalicelib.limits import ARCHIVE_REASON_MAX_CHARS
from chalicelib.models.memory import RESERVED_ARCHIVE_REASONS
from chalicelib.services.lookalike import reserved_form
from chalicelib.services.text import (
    SecretFinder,
    check_characters,
    check_no_secret,
    has_content,
)


def check_archive_reason(reason: str, secrets: SecretFinder) -> None:
    """Check an archive ``reason`` (docs/reference.md#5-limits: required, at most 500 characters).

    Raises:
        InvalidRequest: blank (``has_content``), control or tag characters
            (``check_characters``), over 500 characters, or reads as a reserved reason
            (``is_reserved_reason``).
        SecretInMemory: it looks like a credential.
    """
    if not has_content(reason):
        raise InvalidRequest("An archive needs a reason: say why in `reason`.")
    check_characters(reason, "reason")
    if len(reason) > ARCHIVE_REASON_MAX_CHARS:
        raise InvalidRequest(
            f"The reason has {len(reason)} characters; the limit is {ARCHIVE_REASON_MAX_CHARS}."
        )
    check_no_secret(reason, what="reason", secrets=secrets)
    if is_reserved_reason(reason):
        raise InvalidRequest(
            f"{reason.strip()!r} reads as a reason reserved for the system "
            f"({' and '.join(sorted(RESERVED_ARCHIVE_REASONS))}); use veto or supersedes, "
            "or give another reason."
        )


def veto_note(note: str | None, secrets: SecretFinder) -> str | None:
    """A veto's optional note as kept: a blank note is no note (None).

    Raises:
        InvalidRequest: over 500 characters, or control or tag characters.
        SecretInMemory: it looks like a credential.
    """
    if not has_content(note) or note is None:
        return None
    check_characters(note, "note")
    if len(note) > ARCHIVE_REASON_MAX_CHARS:
        raise InvalidRequest(f"The note is over {ARCHIVE_REASON_MAX_CHARS} characters.")
    check_no_secret(note, what="note", secrets=secrets)
    return note


def is_reserved_reason(reason: str) -> bool:
    """Whether an archive reason reads as one the system reserves
    (docs/reference.md#3-the-memory-object:
    ``superseded``, ``vetoed``), compared by ``lookalike.reserved_form``: after NFKC,
    without default-ignorable characters, case-folded, trimmed, as a TR39 confusables
    skeleton (``"Superseded\\u200b"`` and ``"v\\u0435toed"`` are reserved)."""
    return reserved_form(reason) in _reserved_forms()


@functools.cache
def _reserved_forms() -> frozenset[str]:
    return frozenset(reserved_form(reason) for reason in RESERVED_ARCHIVE_REASONS)
