"""Text as a person sees it: NFKC, default-ignorable code points, and the Unicode
TR39 confusables skeleton. ``ascii_visible_form`` is what the secret detector reads
(full-width letters and zero-width spaces read as the plain key they show);
``reserved_form`` compares a word a caller may not use (the archive reasons
``superseded`` and ``vetoed``, docs/reference.md#3-the-memory-object) the way a reader
would. The data is Unicode's vendored ``chalicelib/data/confusables.txt`` (UTS #39
13.0.0, licence beside it) and the ``Default_Ignorable_Code_Point`` property, both held
against libraries in ``tests/unit/test_lookalike.py``; choices:
docs/DECISIONS.md#input-rules-issue-14-item-6.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import Path

CONFUSABLES_FILE = Path(__file__).resolve().parents[1] / "data" / "confusables.txt"

# Default_Ignorable_Code_Point (DerivedCoreProperties.txt): code points that draw
# nothing where a renderer does not support them (soft hyphen, zero-width space and
# joiners, bidi controls, variation selectors, Hangul fillers, tags).
_DEFAULT_IGNORABLE = re.compile(
    "["
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
    "]+"
)


def is_default_ignorable(char: str) -> bool:
    """Whether one code point has Unicode's ``Default_Ignorable_Code_Point`` property."""
    return _DEFAULT_IGNORABLE.fullmatch(char) is not None


def without_ignorables(text: str) -> str:
    """``text`` without its default-ignorable code points."""
    return _DEFAULT_IGNORABLE.sub("", text)


def visible_form(text: str) -> str:
    """NFKC of ``text`` without default-ignorable code points: what it shows.

    Compatibility characters become their plain forms (full-width ``Ａ`` -> ``A``,
    ligature ``ﬁ`` -> ``fi``); invisible ones disappear. Case and script are kept.
    """
    if text.isascii():
        return text  # the common case: ASCII is NFKC and holds no ignorable
    return without_ignorables(unicodedata.normalize("NFKC", text))


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def ascii_visible_form(text: str) -> str:
    """``text`` with each character whose NFKC form is ASCII replaced by that form
    (``ＡＫＩＡ`` -> ``AKIA``, ``ｓｋ－`` -> ``sk-``, ``𝟎`` -> ``0``), default-ignorable code
    points removed, and every other character kept as it is.

    What the secret detector reads (its patterns are ASCII). Unlike a whole-text NFKC
    it never grows a text by more than a few characters per character (NFKC turns
    U+FDFA into 18 Arabic letters; a 5 MiB key-value value of it would become 34
    million), and costs one dictionary look-up per non-ASCII character (about 0.3 s
    for a 5.5 MiB value written in CJK on a busy machine).
    """
    if text.isascii():
        return text
    return _NON_ASCII.sub(_ascii_run, text)


class _AsciiFold(dict[int, "str | int"]):
    """A ``str.translate`` table filled on demand: a code point -> its NFKC form when
    that is ASCII, ``""`` when it is default-ignorable, else itself. It holds at most
    ~65,000 entries (a hostile text of every code point must not grow it for good)."""

    def __missing__(self, point: int) -> str | int:
        char = chr(point)
        folded: str | int = point
        if is_default_ignorable(char):
            folded = ""
        else:
            plain = unicodedata.normalize("NFKC", char)
            if plain.isascii():
                folded = plain
        if len(self) >= _FOLD_ENTRIES:
            self.clear()
        self[point] = folded
        return folded


_FOLD_ENTRIES = 65536
_FOLD = _AsciiFold()


def _ascii_run(match: re.Match[str]) -> str:
    return match.group().translate(_FOLD)


def skeleton(text: str) -> str:
    """The UTS #39 (TR39) skeleton: NFD, each code point replaced by its confusables
    prototype, NFD again. Two strings are confusable when their skeletons are equal."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", decomposed.translate(_prototypes()))


def reserved_form(text: str) -> str:
    """The form in which a reserved word is compared: ``visible_form``, trimmed, its
    ``skeleton``, then case-folded (``" Superseded\\u200b"``, ``"v\\u0435toed"``,
    ``"vet0ed"`` and ``"VΕTOED"`` with a Greek capital epsilon have the forms of
    ``"superseded"`` and ``"vetoed"``).

    The skeleton comes before case folding: folding first turns some look-alikes
    into letters that look like nothing reserved (Cherokee ``ꮁ``, like ``r``, folds
    to ``Ꮁ``, like ``Γ``; Greek ``Ε`` folds to ``ε``).
    """
    return skeleton(visible_form(text).strip()).casefold()


@functools.cache
def _prototypes() -> dict[int, str]:
    """``confusables.txt`` as a ``str.translate`` table: source code point ->
    prototype string (read once, on first use)."""
    table: dict[int, str] = {}
    with CONFUSABLES_FILE.open(encoding="utf-8-sig") as lines:
        for line in lines:
            fields = line.split("#", 1)[0].split(";")
            if len(fields) < 3:
                continue  # comments and blank lines
            source, target = fields[0].strip(), fields[1].split()
            table[int(source, 16)] = "".join(chr(int(point, 16)) for point in target)
    return table
