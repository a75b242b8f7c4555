"""Step 2 of the review's sameness judgment (docs/reference.md#review-step-1): the
details a fact states. ``shape(text)`` (cached) reads a fact, once ``normalize`` has
set its filler aside, into
comparable *values* (words folded, made canonical and stemmed; numbers with their
unit; dates, weekdays and times in one form; identifiers, paths, URLs and e-mail
addresses), which of them are *details*, its quoted strings (kept exactly) and its
polarity (negations), and where its verb "is"/"are" and its passive "by" stand
(``marks``: the ``meaning`` step reads "X is Y" as "Y is X" and "Y is owned by X" as
"X owns Y"); ``meaning`` and ``sameness`` compare two shapes. A token's value does not
depend on the type it was read as, so the same word matches however it is written.
The normalisation rules, one by one:
docs/DECISIONS.md#a-review-that-never-destroys-information-issue-14-items-15.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from chalicelib.services.review.normalize import normalize
from chalicelib.services.review.vocabulary import (
    ENVIRONMENTS,
    IRREGULAR,
    MONTHS,
    NEGATIONS,
    NUMBER_WORDS,
    STOP_WORDS,
    SYNONYMS,
    UNITS,
    WEEKDAYS,
)

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_UNIT = "|".join(
    sorted((re.escape(u) for u in UNITS if u not in ("$", "€", "£")), key=len, reverse=True)
)
_TOKEN = re.compile(
    r"""
    (?P<url>(?:https?|ftp|s3|git|ssh)://[^\s<>"'`]+|www\.[^\s<>"'`]+)
  | (?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
  | (?P<iso>\d{4}-\d{2}-\d{2}
        (?:[T\ ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?)(?![\w-])
  | (?P<slashdate>\d{1,2}/\d{1,2}/\d{2,4})(?![\w/])
  | (?P<mdate>"""
    + _MONTH
    + r"""\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?)\b
  | (?P<dmdate>\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?"""
    + _MONTH
    + r"""\.?(?:,?\s+\d{4})?)\b
  | (?P<time>\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?|\d{1,2}\s?[ap]\.?m\.?)(?![\w])
  | (?P<path>(?:~|\.{1,2})?/[\w.\-~@%+/]+|[A-Za-z]:\\[\w.\-\\ ]+|[\w.\-@]+(?:/[\w.\-@{}*]+)+/?
        |[\w\-@]+/(?=[\s.,;:!?)]|$))
  | (?P<ip>\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?(?::\d+)?)(?![\w.])
  | (?P<number>[$€£]\s?\d[\d,]*(?:\.\d+)?(?:\s?[kKmM]\b)?
        |[vV]?\d[\d,]*(?:\.\d+)*(?:-[A-Za-z][\w.]*)?(?:\s?(?:"""
    + _UNIT
    + r"""))?)(?![\w.\-/]*\w)
  | (?P<word>[#@]?\w+(?:[-_.:'\u2019]\w+)*)
    """,
    re.VERBOSE | re.IGNORECASE,
)
_QUOTED = re.compile(
    r"\"([^\"\n]+)\"|\u201c([^\u201d\n]+)\u201d|\u2018([^\u2019\n]+)\u2019"
    r"|`([^`\n]+)`|(?<![\w])'([^'\n]+)'(?![\w])"
)
_SENTENCE_END = re.compile(r"[.!?;:]\s*$|[\n•*-]\s*$")
_REGION = re.compile(
    r"(?:us|eu|ap|sa|ca|me|af|il|mx|cn)(?:-gov|-iso)?-(?:north|south|east|west|central)"
    r"(?:east|west)?-\d+[a-z]?"
    r"|(?:us|europe|asia|australia|northamerica|southamerica|me|africa)"
    r"-(?:north|south|east|west|central)(?:east|west)?\d+(?:-[a-z])?"
)
"""A cloud region or zone as agents write it: AWS ``us-east-1``, ``eu-west-2a``;
Google ``europe-west4``, ``us-central1-b``."""
_STEMMER = snowballstemmer.stemmer("english")


@dataclass(frozen=True)
class Token:
    """One value of a fact.

    Attributes:
        value: the comparable form (see the module docstring).
        kind: ``word``, or the detail's type: ``number``, ``date``, ``time``,
            ``name``, ``identifier``, ``path``, ``url``, ``email``, ``environment``.
        raw: the token as written (for a report's reason).
        after: the word written just before it (stop words included), case-folded;
            empty at the start of a sentence.
    """

    value: str
    kind: str
    raw: str = ""
    after: str = ""

    @property
    def is_detail(self) -> bool:
        """True for every kind but a plain word."""
        return self.kind != "word"

    @property
    def is_region(self) -> bool:
        """True for a cloud region or zone (``us-east-1``, ``europe-west4``)."""
        return self.kind == "identifier" and _REGION.fullmatch(self.value) is not None


@dataclass(frozen=True)
class Shape:
    """What a fact states, for comparing it with another (``sameness``).

    Attributes:
        tokens: the fact's values in text order.
        quoted: its quoted strings, exact (spaces collapsed).
        negations: how many negations it says ("not", "no", "never", "n't", …); two
            facts whose counts differ differ in polarity ("not" vs "not not").
        plain: the text NFKC-normalized with spaces collapsed (for verbatim checks).
        marks: the words of ``MARKS`` ("is", "by", "from", "to", …) as ``(number of
            tokens before it, word)``: where the roles of a sentence turn.
    """

    tokens: tuple[Token, ...]
    quoted: tuple[str, ...]
    negations: int
    plain: str
    marks: tuple[tuple[int, str], ...] = ()

    @property
    def copulas(self) -> tuple[int, ...]:
        """Where "is", "are", "was", "were" stand (tokens before each)."""
        return tuple(at for at, word in self.marks if word in _COPULAS)

    @property
    def agents(self) -> tuple[int, ...]:
        """Where a passive's "by" stands (tokens before each)."""
        return tuple(at for at, word in self.marks if word == "by")

    @property
    def negated(self) -> bool:
        """Its polarity: True when it says "not", "no", "never", "n't", …"""
        return self.negations > 0

    @functools.cached_property
    def values(self) -> tuple[str, ...]:
        """The values in text order."""
        return tuple(token.value for token in self.tokens)

    @property
    def detail_values(self) -> frozenset[str]:
        """The values this fact states as details."""
        return frozenset(token.value for token in self.tokens if token.is_detail)


_COPULAS = frozenset({"is", "are", "was", "were", "be", "been"})
MARKS = _COPULAS | {"by", "from", "to", "into", "onto", "than", "'s"}
"""Stop words that still tell who does what to whom (recorded in ``Shape.marks``)."""
_MARK = "\x00"


@lru_cache(maxsize=65536)
def shape(text: str) -> Shape:
    """Read ``text`` (filler set aside by ``normalize``) into its ``Shape`` (cached; pure)."""
    plain = normalize(text)
    quoted = tuple(
        " ".join(next(group for group in match.groups() if group is not None).split())
        for match in _QUOTED.finditer(plain)
    )
    spelled = re.sub(r"(?i)\bcan(?:not|[\u2019']t)\b", "can not", plain)
    spelled = re.sub(r"(?i)\bwon[\u2019']t\b", "will not", spelled)
    spelled = re.sub(r"(?i)n[\u2019']t\b", " not", spelled)
    tokens: list[Token] = []
    negations = 0
    previous_end = 0
    previous = ""
    for match in _TOKEN.finditer(spelled):
        kind = match.lastgroup or "word"
        raw = match.group(0)
        # What lies between the previous token and this one decides (the whole
        # prefix would cost quadratic time on a 500-character fact).
        gap = spelled[previous_end : match.start()]
        sentence_start = not gap.strip() if previous_end == 0 else bool(_SENTENCE_END.search(gap))
        previous_end = match.end()
        after, previous = ("" if sentence_start else previous), raw.casefold()
        if kind == "word":
            lowered = raw.casefold()
            if lowered in NEGATIONS:
                negations += 1
                continue
            if lowered in MARKS:
                tokens.append(Token(_MARK, lowered))
                continue
            found = _word(raw, sentence_start)
        else:
            found = _detail(kind, raw)
        if found is not None:
            tokens.append(Token(found.value, found.kind, raw.rstrip(".,;:!?)]}'\""), after))
            if kind == "word" and re.search(r"[\u2019']s$", raw):
                tokens.append(Token(_MARK, "'s"))  # "Hana's manager": whose it is
    joined = _joined(tokens)
    marks: list[tuple[int, str]] = []
    kept: list[Token] = []
    for token in joined:
        if token.value == _MARK:
            marks.append((len(kept), token.kind))
        else:
            kept.append(token)
    return Shape(
        tokens=tuple(kept),
        quoted=quoted,
        negations=negations,
        plain=plain,
        marks=tuple(marks),
    )


def _joined(tokens: list[Token]) -> tuple[Token, ...]:
    """Two-word synonyms ("pull request") become one value, and so do a number
    without a unit and a unit word after it ("two weeks" is ``2 w``, as "2 weeks")."""
    result: list[Token] = []
    for token in tokens:
        unit = UNITS.get(token.raw.casefold()) if token.kind == "word" else None
        if result and result[-1].kind == "number" and " " not in result[-1].value and unit:
            result[-1] = Token(
                f"{result[-1].value} {unit}",
                "number",
                f"{result[-1].raw} {token.raw}",
                result[-1].after,
            )
            continue
        if result and result[-1].kind == "word" and token.kind == "word":
            pair = SYNONYMS.get(f"{result[-1].value} {token.value}")
            if pair is not None:
                result[-1] = Token(pair, "word", f"{result[-1].raw} {token.raw}", result[-1].after)
                continue
        result.append(token)
    return tuple(result)


def _word(raw: str, sentence_start: bool) -> Token | None:
    """A word-like token: an identifier, a name, a number word, or a plain word."""
    stripped = raw.rstrip(".:'\u2019")
    if re.fullmatch(r"[#@]?\w+(?:[-_.:]\w+)+|#\d+", stripped) or _mixes_letters_and_digits(
        stripped
    ):
        return Token(stripped.casefold(), "identifier")
    lowered = re.sub(r"[\u2019']s$", "", stripped).casefold()
    if lowered in STOP_WORDS or not lowered:
        return None
    if lowered in NUMBER_WORDS:
        return Token(NUMBER_WORDS[lowered], "number")
    if lowered in WEEKDAYS:
        return Token(WEEKDAYS[lowered], "date")
    if lowered in MONTHS and len(lowered) > 3:
        return Token(f"--{MONTHS[lowered]:02d}", "date")
    if lowered in ENVIRONMENTS:
        return Token(ENVIRONMENTS[lowered], "environment")
    stem = _stem(SYNONYMS.get(lowered, IRREGULAR.get(lowered, lowered)))
    if _is_acronym(stripped):
        # "PRs" is the plural of "PR": the value of its singular.
        core = lowered[:-1] if stripped.endswith("s") and stripped[:-1].isupper() else lowered
        return Token(_stem(SYNONYMS.get(core, core)), "identifier")
    if re.search(r"[a-z][A-Z]", stripped):
        return Token(stem, "identifier")
    if raw[:1].isupper() and not sentence_start:
        return Token(stem, "name")
    return Token(stem, "word")


def _mixes_letters_and_digits(word: str) -> bool:
    """``s3``, ``t3``, ``ec2``, ``k8s``: letters and digits in one word."""
    return any(c.isdigit() for c in word) and any(c.isalpha() for c in word)


def _is_acronym(word: str) -> bool:
    """ALL CAPS of two letters or more (``VPN``, ``APIs``)."""
    core = word[:-1] if len(word) > 2 and word.endswith("s") and word[:-1].isupper() else word
    return len(core) >= 2 and core.isalpha() and core.isupper()


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def stem(word: str) -> str:
    """A lower-case word's English stem (Snowball), as values are stemmed."""
    return _stem(word)


def _detail(kind: str, raw: str) -> Token | None:
    """A typed token (not a plain word) in canonical form."""
    text = raw.rstrip(".,;:!?)]}'\"")
    if kind == "url":
        return Token(_url(text), "url")
    if kind == "email":
        return Token(text.casefold(), "email")
    if kind == "iso":
        return Token(text[:10] + ("T" + text[11:16] if len(text) > 10 else ""), "date")
    if kind == "slashdate":
        return Token(_slash_date(text), "date")
    if kind in ("mdate", "dmdate"):
        return Token(_month_date(text), "date")
    if kind == "time":
        return Token(_time(text), "time")
    if kind == "path":
        return Token(text.rstrip("/") or "/", "path")
    if kind == "ip":
        return Token(text, "identifier")
    return _number(text)


def _url(text: str) -> str:
    match = re.match(r"(?i)([a-z0-9+]+://)?([^/?#]*)(.*)", text)
    assert match is not None
    scheme, host, rest = match.groups()
    return (scheme or "").casefold() + host.casefold() + rest.rstrip("/")


def _slash_date(text: str) -> str:
    """``30/11/2026`` (day first when the first part is over 12, else month first)."""
    first, second, year = (int(part) for part in text.split("/"))
    month, day = (first, second) if first <= 12 and second > 12 else (second, first)
    if first <= 12 and second <= 12:
        month, day = first, second  # ambiguous: read as US month/day, as agents mostly write
    if year < 100:
        year += 2000
    return f"{year:04d}-{month:02d}-{day:02d}"


def _month_date(text: str) -> str:
    lowered = text.casefold().replace(",", " ").replace(".", " ")
    words = lowered.split()
    month = next(MONTHS[w] for w in words if w in MONTHS)
    numbers = [int(re.sub(r"\D", "", w)) for w in words if re.search(r"\d", w)]
    day = next(n for n in numbers if n <= 31)
    year = next((n for n in numbers if n > 31), None)
    return f"{year:04d}-{month:02d}-{day:02d}" if year else f"--{month:02d}-{day:02d}"


def _time(text: str) -> str:
    lowered = text.casefold().replace(".", "").replace(" ", "")
    meridiem = lowered[-2:] if lowered.endswith(("am", "pm")) else None
    digits = lowered[:-2] if meridiem else lowered
    parts = digits.split(":")
    hour, minute = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    if meridiem == "pm" and hour < 12:
        hour += 12
    if meridiem == "am" and hour == 12:
        hour = 0
    return f"{hour:02d}:{minute:02d}"


def _number(text: str) -> Token:
    """``$1,200`` → ``1200 usd``; ``v2.0`` → ``2``; ``30 seconds`` → ``30 s``."""
    match = re.fullmatch(
        r"(?i)([$€£])?\s?v?(\d[\d,]*(?:\.\d+)*)(-[a-z][\w.]*)?\s?([^\d\s].*)?", text
    )
    if match is None:
        return Token(text.casefold(), "number")
    currency, digits, suffix, unit = match.groups()
    if suffix and not unit and suffix[1:].casefold() in UNITS:
        unit = suffix[1:]  # "15-minute" is "15 minutes"
        suffix = None
    number = digits.replace(",", "")
    if "." in number:
        parts = number.split(".")
        while len(parts) > 1 and set(parts[-1]) == {"0"}:
            parts.pop()
        number = ".".join(parts)
    number = number.lstrip("0") or "0" if "." not in number else number
    value = number + (suffix.casefold() if suffix else "")
    canonical_unit = UNITS.get((unit or currency or "").casefold().strip(), (unit or "").casefold())
    return Token(f"{value} {canonical_unit}" if canonical_unit else value, "number")
