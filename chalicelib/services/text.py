"""Checks on text people and agents store: not blank, no control or tag characters,
within its limit, no credential (docs/reference.md#3-the-memory-object,
docs/reference.md#stored-text, docs/reference.md#5-limits,
docs/reference.md#error-secret_in_memory).
"""

from __future__ import annotations

import unicodedata
from typing import Protocol

from chalicelib.characters import code_point, first_refused
from chalicelib.errors import InvalidRequest, MemoryTextTooLong, SecretInMemory
from chalicelib.limits import EVIDENCE_MAX_CHARS
from chalicelib.services.lookalike import is_default_ignorable


class SecretFinder(Protocol):
    """Finds credential-shaped text (``chalicelib.services.secrets.SecretDetector``)."""

    def find_secret(self, text: str, *, shapes_only: bool = False) -> str | None:
        """Return the kind of secret found, or None; ``shapes_only``: known credential
        shapes only (no generic high-entropy rule), for identifiers."""
        ...


def check_text(
    text: str, *, limit: int, what: str, secrets: SecretFinder, advice: str | None = None
) -> None:
    """Check memory text: not blank, no control characters, within ``limit`` code
    points, no secret.

    Args:
        advice: what to do when the text is too long (defaults to splitting a fact).

    Raises:
        InvalidRequest: blank (docs/reference.md#3-the-memory-object; ``has_content``: only white
            space, invisible characters or marks); control or tag characters
            (``check_characters``).
        MemoryTextTooLong: more than ``limit`` characters (docs/reference.md#5-limits).
        SecretInMemory: it looks like a credential (docs/reference.md#6-errors).
    """
    check_not_blank(text, what)
    check_characters(text, what)
    if len(text) > limit:
        raise MemoryTextTooLong(
            f"The {what} has {len(text)} characters; the limit is {limit}. "
            + (advice or "Shorten it, or split it into two facts.")
        )
    check_no_secret(text, what=what, secrets=secrets)


def check_characters(text: str | None, what: str) -> None:
    """The one character rule of stored text (docs/reference.md#stored-text): no C0
    control but tab, line feed and carriage return, no DEL or C1 control, no Unicode tag
    character (``chalicelib.characters.REFUSED_CHARACTERS``). Every text that can reach
    the run-start block or a person is checked by it: facts, day lines, learnings, edits,
    evidence, reasons, notes, names. None (an optional text not sent) passes.

    Raises:
        InvalidRequest: the text holds such a character; the message names the first one
            (``U+0085``) and its position (1-based, in characters).
    """
    found = None if text is None else first_refused(text)
    if found is not None:
        char, position = found
        kind = "a tag character" if ord(char) >= 0xE0000 else "a control character"
        raise InvalidRequest(
            f"The {what} holds {code_point(char)} ({kind}) at character {position}: stored "
            "text may not hold control characters (tab and line breaks aside) or tag "
            "characters. Remove it and send the text again."
        )


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
    check_characters(evidence, "evidence")
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
