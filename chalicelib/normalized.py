"""A text's normalized form and its digest, shared by the rules (the review's sameness,
vetoes, learnings) and the storage indexes keyed by content (docs/conventions.md#layers:
a lower layer than both)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache


@lru_cache(maxsize=65536)
def normalize(text: str) -> str:
    """NFKC, case-folded, ``n't`` → `` not``, punctuation dropped, spaces collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("n't", " not")
    return " ".join(re.findall(r"\w+", folded))


def content_digest(text: str) -> str:
    """SHA-256 (hex) of ``normalize(text)``: equal for texts equal after normalisation
    (the key of the shared-facts index, docs/reference.md#learnings-and-the-review)."""
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()
