"""Checks on text people and agents store: not blank, no control characters,
within its limit, no credential (docs/reference.md#3-the-memory-object, docs/reference.md#5-limits,
docs/reference.md#error-secret_in_memory).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Protocol

from chalicelib.errors import InvalidRequest, MemoryTextTooLong, SecretInMemory
from chalicelib.limits import EVIDENCE_MAX_CHARS
from chalicelib.services.lookalike import is_default_ignorable


class SecretFinder(Protocol):
    """Finds credential-shaped text (``chalicelib.services.secrets.SecretDetector``)."""

    def find_secret(self, text: str, *, shapes_only: bool = False) -> str | None:
        """Return the kind of secret found, or None; ``shapes_only``: known credential
        shapes only (no generic high-entropy rule), for identifiers."""
        ...


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def check_text(
    text: str, *, limit: int, what: str, secrets: SecretFinder, advice: str | None = None
) -> None:
    """Check memory text: not blank, no control characters, within ``limit`` code
    points, no secret.

    Args:
        advice: what to do when the text is too long (defaults to splitting a fact).

    Raises:
        InvalidRequest: blank (docs/reference.md#3-the-memory-object; ``has_content``: only white
            space, invisible characters or marks); control characters.
        MemoryTextTooLong: more than ``limit`` characters (docs/reference.md#5-limits).
        SecretInMemory: it looks like a credential (docs/reference.md#6-errors).
    """
    check_not_blank(text, what)
    if _CONTROL.search(text):
        raise InvalidRequest(f"The {what} holds control characters; send plain text.")
    if len(text) > limit:
        raise MemoryTextTooLong(
            f"The {what} has {len(text)} characters; the limit is {limit}. "
            + (advice or "Shorten it, or split it into two facts.")
        )
    check_no_secret(text, what=what, secrets=secrets)


def check_not_blank(text: str, what: str) -> None:
    """The one blank rule for every text a caller must send (docs/reference.md#3-the-memory-object:
    empty or white-space-only text is invalid): a fact, a day line, an edit, evidence, an
    archive reason. Blank is what ``has_content`` says holds nothing to read, so
    ``"\\u3164"`` or ``"\\u0301"`` alone is as blank here as in a recall query.

    Raises:
        InvalidRequest: ``text`` has no content.
    """
    if not has_content(text):
        raise InvalidRequest(
            f"The {what} is blank (only white space or invisible characters): send some text."
        )


def check_evidence(evidence: str, *, secrets: SecretFinder) -> None:
    """Check a save's ``evidence`` (docs/issues.md#issue-4, docs/reference.md#review-step-5): the
    tool-output excerpt that supports a fact. Line breaks and tabs are allowed (it is tool
    output); other control characters are not.

    Raises:
        InvalidRequest: blank (``check_not_blank``), control characters, or over
            2,000 characters.
        SecretInMemory: it looks like a credential (the same detector as texts).
    """
    check_not_blank(evidence, "evidence")
    if _CONTROL.search(evidence):
        raise InvalidRequest("evidence holds control characters; send plain text.")
    if len(evidence) > EVIDENCE_MAX_CHARS:
        raise InvalidRequest(
            f"evidence has {len(evidence)} characters; the limit is {EVIDENCE_MAX_CHARS}. "
            "Keep the lines that support the fact."
        )
    check_no_secret(evidence, what="evidence", secrets=secrets)


def check_no_secret(
    text: str, *, what: str, secrets: SecretFinder, identifier: bool = False
) -> None:
    """Reject text that looks like a credential (docs/reference.md#error-secret_in_memory).

    Args:
        identifier: ``text`` names something (a run, a session, a key-value key):
            only known credential shapes count (``find_secret(shapes_only=True)``),
            because random ids such as ``run_4bMhX3Bt7CkPqA9ZsV1oDxYw`` look like
            secrets to the high-entropy rule.

    Raises:
        SecretInMemory: the detector found a secret (its kind is named, never its value).
    """
    kind = secrets.find_secret(text, shapes_only=identifier)
    if kind is not None:
        raise SecretInMemory(
            f"The {what} looks like a secret ({kind}). Keep credentials in a secret "
            "manager, not in memory; save where to find it instead."
        )


def has_content(text: str | None) -> bool:
    """Whether ``text`` holds anything to read: a character that is neither white
    space nor an invisible one (Unicode categories Cc, Cf, Cs, Cn: controls, format
    marks such as U+200B or U+202E, lone surrogates, unassigned code points; Mn, Me:
    marks with no letter to sit on, such as U+0301 alone or a variation selector;
    Unicode's default-ignorable code points, such as the Hangul fillers U+115F,
    U+1160, U+3164, U+FFA0; and the blank Braille pattern U+2800).

    The one blank rule (``check_not_blank``): a recall query, task, message or slash
    command without content counts as absent (docs/reference.md#8-recall; DECISIONS "Run-start
    recall"), and a fact, day line, edit, evidence or reason without content is
    invalid.
    """
    return text is not None and any(
        not char.isspace()
        and char not in _BLANK_SYMBOLS
        and unicodedata.category(char) not in _INVISIBLE
        and not is_default_ignorable(char)
        for char in text
    )


_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Cn", "Mn", "Me"})

# A symbol that draws nothing, used to fake an empty-looking text.
_BLANK_SYMBOLS = frozenset("\u2800")
