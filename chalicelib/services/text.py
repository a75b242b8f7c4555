"""Checks on text people and agents store: not blank, no control characters,
within its limit, no credential (SPEC §3, §5, §6 ``secret_in_memory``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Protocol

from chalicelib.errors import InvalidRequest, MemoryTextTooLong, SecretInMemory
from chalicelib.limits import EVIDENCE_MAX_CHARS


class SecretFinder(Protocol):
    """Finds credential-shaped text (``chalicelib.services.secrets.SecretDetector``)."""

    def find_secret(self, text: str) -> str | None:
        """Return the kind of secret found, or None."""
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
        InvalidRequest: empty or whitespace only (SPEC §3); control characters.
        MemoryTextTooLong: more than ``limit`` characters (SPEC §5).
        SecretInMemory: it looks like a credential (SPEC §6).
    """
    if not _visible(text):
        raise InvalidRequest(f"The {what} is empty: send some text.")
    if _CONTROL.search(text):
        raise InvalidRequest(f"The {what} holds control characters; send plain text.")
    if len(text) > limit:
        raise MemoryTextTooLong(
            f"The {what} has {len(text)} characters; the limit is {limit}. "
            + (advice or "Shorten it, or split it into two facts.")
        )
    check_no_secret(text, what=what, secrets=secrets)


def _visible(text: str) -> bool:
    """True when the text has a character that is neither white space nor an
    invisible format character (zero-width space, joiners, BOM)."""
    return any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in text)


def check_evidence(evidence: str, *, secrets: SecretFinder) -> None:
    """Check a save's ``evidence`` (issue 4, SPEC §9 step 5): the tool-output
    excerpt that supports a fact. Line breaks and tabs are allowed (it is tool
    output); other control characters are not.

    Raises:
        InvalidRequest: blank, control characters, or over 2,000 characters.
        SecretInMemory: it looks like a credential (the same detector as texts).
    """
    if not _visible(evidence):
        raise InvalidRequest("evidence is empty: send the supporting excerpt, or leave it out.")
    if _CONTROL.search(evidence):
        raise InvalidRequest("evidence holds control characters; send plain text.")
    if len(evidence) > EVIDENCE_MAX_CHARS:
        raise InvalidRequest(
            f"evidence has {len(evidence)} characters; the limit is {EVIDENCE_MAX_CHARS}. "
            "Keep the lines that support the fact."
        )
    check_no_secret(evidence, what="evidence", secrets=secrets)


def check_no_secret(text: str, *, what: str, secrets: SecretFinder) -> None:
    """Reject text that looks like a credential (SPEC §6 ``secret_in_memory``).

    Raises:
        SecretInMemory: the detector found a secret (its kind is named, never its value).
    """
    kind = secrets.find_secret(text)
    if kind is not None:
        raise SecretInMemory(
            f"The {what} looks like a secret ({kind}). Keep credentials in a secret "
            "manager, not in memory; save where to find it instead."
        )


def has_content(text: str | None) -> bool:
    """Whether ``text`` holds anything to read: a character that is neither white
    space nor an invisible one (Unicode categories Cc, Cf, Cs, Cn: controls, format
    marks such as U+200B or U+202E, lone surrogates, unassigned code points; Mn, Me:
    marks with no letter to sit on, such as U+034F or a variation selector; and the
    Hangul fillers U+115F, U+1160, U+3164, U+FFA0).

    A recall query, task, message or slash command without content counts as blank
    (SPEC §8; DECISIONS "Run-start recall"): ``"\\u0000\\u0001"`` is not scored, and a
    ``slashCommand`` of ``"\\u200b"`` is no command.
    """
    return text is not None and any(
        not char.isspace() and char not in _FILLERS and unicodedata.category(char) not in _INVISIBLE
        for char in text
    )


_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Cn", "Mn", "Me"})


# Letters that draw nothing (Unicode default-ignorable code points outside the
# categories above): the Hangul fillers and the half-width one.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")
