"""Characters of stored text that a reader must not get raw: the ones refused on write
(docs/reference.md#stored-text), the invisible ones shown as ``⟨U+XXXX⟩`` markers on
the dashboard and in the run-start block (docs/reference.md#13-dashboard,
docs/reference.md#block-grammar), and the escape that keeps an item's text from reading
as one of the block's markers.

One implementation for the dashboard (``chalicelib.web.render``), the block
(``chalicelib.services.recall.service``, ``chalicelib.models.learning``) and the write
checks (``chalicelib.services.text``). The CLI, a separate package, keeps its own copy
of ``INVISIBLE_CHARACTERS`` (``pinework._render.UNSAFE_CHARACTERS``); a test holds both
to ``unicodedata``.
"""

from __future__ import annotations

import re

INVISIBLE_CHARACTERS = (
    "\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\xad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890-\\u0891"
    "\\u08e2\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb"
    "\\U000110bd\\U000110cd\\U00013430-\\U0001343f\\U0001bca0-\\U0001bca3"
    "\\U0001d173-\\U0001d17a\\U000e0000-\\U000e007f"
)
"""A character class of the code points a reader must not get raw: Unicode's control
(Cc, but line feed and tab), format (Cf: bidi overrides and isolates, zero-width
characters, U+200E/F, the BOM, the soft hyphen, tag characters) and line and paragraph
separators (Zl, Zp), written out (computing them from ``unicodedata`` costs 0.6 s at
start); whole blocks where Unicode keeps adding format characters."""
_INVISIBLE = re.compile(f"[{INVISIBLE_CHARACTERS}]")

REFUSED_CHARACTERS = "\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f\\U000e0000-\\U000e007f"
"""A character class of the code points stored text may not hold
(docs/reference.md#stored-text): C0 controls but tab, line feed and carriage return;
DEL and the C1 controls (U+007F to U+009F, among them NEL U+0085 and CSI U+009B); the
tag characters U+E0000 to U+E007F (invisible to people, read by models)."""
_REFUSED = re.compile(f"[{REFUSED_CHARACTERS}]")

DASH_CHARACTERS = (
    "\\-\\u058a\\u05be\\u1400\\u1806\\u2010-\\u2015\\u2053\\u207b\\u208b\\u2212\\u23af"
    "\\u2500\\u2501\\u2796\\u2e17\\u2e1a\\u2e3a\\u2e3b\\u2e40\\u2e5d\\u301c\\u3030\\u30a0"
    "\\ufe31\\ufe32\\ufe58\\ufe63\\uff0d\\U00010ead"
)
"""A character class of dashes: the hyphen-minus, Unicode's dash punctuation (Pd) and
the look-alikes a reader takes for one (minus signs, swung dash, horizontal box lines)."""
DASH_RUN = re.compile(f"[{DASH_CHARACTERS}]{{3,}}")
"""Three or more dashes in a row: the shape of the block's markers (``--- MEMORY ---``)."""


def first_refused(text: str) -> tuple[str, int] | None:
    """The first ``REFUSED_CHARACTERS`` code point of ``text`` and its position (1-based,
    in code points), or None when it holds none."""
    found = _REFUSED.search(text)
    return None if found is None else (found.group(), found.start() + 1)


def code_point(char: str) -> str:
    """``U+XXXX`` (at least four hex digits) of one character."""
    return f"U+{ord(char):04X}"


def marker(char: str) -> str:
    """The visible stand-in of one invisible character: ``⟨U+202E⟩``."""
    return f"⟨{code_point(char)}⟩"


def mark_invisible(text: str, keep: str = "") -> str:
    """``text`` with each ``INVISIBLE_CHARACTERS`` code point (but those in ``keep``)
    written as its ``marker``; tabs and line feeds stay. What is stored does not change.
    """
    return _INVISIBLE.sub(
        lambda match: match.group() if match.group() in keep else marker(match.group()), text
    )


def invisible_found(text: str) -> list[str]:
    """The distinct ``INVISIBLE_CHARACTERS`` code points of ``text`` as markers, in code
    point order; empty when it holds none."""
    return [marker(chr(code)) for code in sorted({ord(c) for c in _INVISIBLE.findall(text)})]


def block_text(text: str) -> str:
    """An item's text as its block line shows it (docs/reference.md#block-grammar): each
    invisible character (``INVISIBLE_CHARACTERS``, but carriage returns, which break lines)
    written as ``⟨U+XXXX⟩``, every run of white space (line breaks and tabs too) as one
    space, trimmed, and every run of three or more dashes (``DASH_RUN``) quoted as
    ``⟨---⟩``, so no text holds a line break or a marker's ``---``. Items stored before the
    write rules are shown the same way.

    Args:
        text: the stored text, any Unicode.

    Returns:
        One line (no line break of any kind), never holding ``---`` outside ``⟨`` ``⟩``.
    """
    flat = " ".join(mark_invisible(text, keep="\r").split())
    return DASH_RUN.sub(lambda match: f"⟨{match.group()}⟩", flat)
