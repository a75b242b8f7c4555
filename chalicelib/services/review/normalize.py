"""Step 1 of the review's sameness judgment (docs/reference.md#review-step-1): a fact's
text made ready for reading, without changing what it says.

* a **filler** that adds nothing is set aside, at the front ("FYI:", "Heads up:", "Note
  that", "As a reminder,", "Worth noting:", "For the record,", …) or at the end ("…,
  btw", "…, as a reminder");
* **contractions** are spelled out ("don't" and "dont" are "do not", "can't" is "can not"),
  so a negation is read the same however it is written;
* Unicode is NFKC-normalized and spaces collapsed (case, hyphens and punctuation are
  left to the later steps: ``details`` reads values case-folded, ``meaning`` pairs
  "front end" / "front-end" / "frontend").

``normalize`` is pure and cached. The next step is ``details.shape``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_PHRASES = (
    r"fyi|for your information|heads[\s-]*up|just so you know|just a heads[\s-]*up"
    r"|as a heads[\s-]*up|keep in mind(?: that)?|note that|please note(?: that)?"
    r"|quick note|just a note|side note|worth noting(?: that)?|it is worth noting(?: that)?"
    r"|for the record|for context|for reference|as a reminder|just a reminder"
    r"|friendly reminder|reminder|remember(?: that)?|don'?t forget(?: that)?|psa|btw"
    r"|by the way|n\.?b\.?|important|update|note"
)
_FILLER_PREFIX = re.compile(
    rf"^\s*(?:{_PHRASES})\b(?![-'\u2019]\w)[\s,:;.!\-\u2013\u2014]*(?=\S)",
    re.IGNORECASE,
)
_FILLER_SUFFIX = re.compile(
    r"[\s,;:.\-\u2013\u2014(]+(?:fyi|btw|just so you know|as a heads[\s-]*up|as a reminder"
    r"|for the record|for context|for reference)[\s).!]*$",
    re.IGNORECASE,
)
_LONE_WORDS = re.compile(
    r"^(?:reminder|remember|important|update|note)\b\s+(?![:,\-\u2013\u2014])", re.IGNORECASE
)
"""A filler word that is a verb or noun of the sentence when no colon or comma follows
("Remember the VPN", "Update the runbook"): kept."""
_CONTRACTIONS = (
    (re.compile(r"(?i)\bcan(?:not|[\u2019']t)\b"), "can not"),
    (re.compile(r"(?i)\bwon[\u2019']t\b"), "will not"),
    (
        re.compile(
            r"(?i)\b(do|does|did|is|are|was|were|has|have|had|should|would|could|must)n[\u2019']?t\b"
        ),
        r"\1 not",
    ),
)


def without_filler(text: str) -> str:
    """``text`` without a leading or trailing filler that adds nothing (see the module
    docstring); the text itself when nothing else would be left.

    A leading "Remember", "Note", "Update", "Important" or "Reminder" is a filler only
    when a colon, comma or dash follows it, or (for "remember"/"note") "that".
    """
    stripped = text
    for _ in range(2):
        if _LONE_WORDS.match(stripped.strip()) and not re.match(
            r"(?i)^\s*(?:remember|note) that\b", stripped
        ):
            break
        shorter = _FILLER_PREFIX.sub("", stripped, count=1)
        if shorter == stripped:
            break
        stripped = shorter
    stripped = _FILLER_SUFFIX.sub("", stripped)
    if not re.search(r"\w", stripped):
        return text
    return stripped[:1].upper() + stripped[1:] if stripped != text else stripped


def has_filler(text: str) -> bool:
    """True when ``text`` starts or ends with a filler ``without_filler`` sets aside."""
    return without_filler(text) != text


@lru_cache(maxsize=65536)
def normalize(text: str) -> str:
    """``text`` ready for ``details.shape``: NFKC, spaces collapsed, filler set aside and
    contractions spelled out (see the module docstring)."""
    plain = " ".join(unicodedata.normalize("NFKC", text).split())
    plain = without_filler(plain)
    for pattern, spelled in _CONTRACTIONS:
        plain = pattern.sub(spelled, plain)
    return plain
