"""Secret detection for memory text (error code ``secret_in_memory``,
docs/reference.md#error-secret_in_memory): memories are recalled into other agents'
prompts, so every text a caller stores is checked, and ``SecretDetector.find_secret``
answers the short kind of the first credential it finds ("AWS access key", "JWT", …)
or None, never the value. Text is read as it shows (``lookalike.ascii_visible_form``);
rules run from most to least specific (private key, provider tokens, JWT, connection
string: ``rules.known_rules``; passwords on command lines, ``Authorization``
headers: ``context_rules``; passwords given to known tools, credential
headers: ``tool_rules``; then assignment, password in words, high entropy),
and ``shapes_only`` skips the last for identifiers. Placeholders (``password``,
``<key>``, ``$VAR``) are not values (``rules.is_placeholder``), and a
``data:`` URI's payload is content. How the detect-secrets
plugins are used and tuned, and the false-positive figures:
docs/DECISIONS.md#secret-detection-how-it-was-built-and-tuned.
"""

import math
import re

from detect_secrets.filters.heuristic import is_sequential_string, is_templated_secret
from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HexHighEntropyString,
)
from detect_secrets.plugins.keyword import DENYLIST as KEYWORD_DENYLIST

from chalicelib.services.lookalike import ascii_visible_form
from chalicelib.services.secrets.code_rules import (
    blank_digests,
    blank_public_keys,
    is_description,
    is_reference,
    looks_random,
    names_a_setting,
)
from chalicelib.services.secrets.context_rules import context_rules
from chalicelib.services.secrets.rules import (
    HEX_ONLY,
    MIN_PASSWORD_CHARS,
    NON_SECRET_VALUE,
    is_placeholder,
    is_placeholder_pair,
    known_rules,
)
from chalicelib.services.secrets.scan import plan_scan
from chalicelib.services.secrets.tool_rules import tool_rules

__all__ = ["HIGH_ENTROPY_KIND", "UNSCANNABLE_KIND", "SecretDetector"]

HIGH_ENTROPY_KIND = "high-entropy string"
"""The kind reported for a random-looking token that matches no provider pattern."""
UNSCANNABLE_KIND = "too much credential-like text to check"
"""The kind reported for a text whose windows exceed the scan budget (``scan``)."""
_AWS_KEY_ID_ANYWHERE = re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}")

# --- safe shapes ------------------------------------------------------------------------

_CROCKFORD = "0-9A-HJKMNP-TV-Z"
# Pinework ids (mem_/agt_/usr_/wsp_/run_ + ULID) and bare ULIDs. Only the ULID part is
# blanked (python-ulid emits upper case, first char 0-7), which is enough and ~6x faster
# than matching the prefixes too; the lookbehind
# sits after the first character so that most positions fail on a cheap character test.
_PINEWORK_ID = re.compile(rf"[0-7](?<![A-Za-z0-9][0-7])[{_CROCKFORD}]{{25}}(?![A-Za-z0-9])")
_UUID = re.compile(
    r"(?<![A-Za-z0-9])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_HEX_DIGEST = re.compile(
    r"(?<![A-Za-z0-9])(?:[0-9a-f]{128}|[0-9a-f]{64}|[0-9a-f]{7,40})(?![A-Za-z0-9])",
    re.IGNORECASE,
)
# The scheme is bounded: unbounded, a long "a-b-c-…" run is rescanned from every word
# start, which is quadratic (seconds for 64 KB); real schemes are short.
_URL = re.compile(r"\b[a-z][a-z0-9+.\-]{0,31}://\S+", re.IGNORECASE)
# A data URI's base64 payload is content (an image, a font), not a credential.
_DATA_URI = re.compile(
    r"\bdata:(?:[a-z0-9.+\-]{1,64}/[a-z0-9.+\-]{1,128})?(?:;[a-z0-9.+\-]{1,64}=[^;,\s]{1,128})*"
    r";base64,[A-Za-z0-9+/_\-]*+={0,2}",
    re.IGNORECASE,
)


# --- assignment rule ----------------------------------------------------------------------

_ASSIGNMENT_KEYWORDS = (
    *KEYWORD_DENYLIST,
    r"(?:access|auth|refresh|api|bearer|session|secret)[_\-]?token",
)
_SECRET_KEYWORD = re.compile("|".join(_ASSIGNMENT_KEYWORDS), re.IGNORECASE)
# An identifier, an assignment operator and a quoted or bare value. The key is matched
# possessively from the start of an identifier, which keeps the scan linear; whether it
# names a secret is checked afterwards with _SECRET_KEYWORD.
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?P<key>[A-Za-z0-9_.\-]++)"
    r"[\"'\]]{0,2}[ \t]*(?P<op>:=|=>|==?|:)[ \t]*"
    r"(?:(?P<quote>[\"'`])(?P<quoted>[^\"'`\r\n]{1,256})(?P=quote)|(?P<bare>[^\s\"'`,;)\]}]+))"
)
# Keys that name *metadata about* a secret rather than holding one.
_METADATA_KEY = re.compile(
    r"(?:name|id|ids|arn|path|file|ref|len|length|count|ttl|version|type|manager|policy|"
    r"reset|hint|prompt|field|label|less|s)$",
    re.IGNORECASE,
)
_INDIRECT_VALUE = re.compile(
    r"^(?:[$<{]|%\(|[~.]?/|[A-Za-z]:\\|[a-z][a-z0-9+.\-]*://)"  # $VAR, <placeholder>, path, URL
    r"|[(\[]"  # call or subscript
    r"|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$"  # attribute reference: settings.DB_PASSWORD
)
_SYMBOL = re.compile(r"[^A-Za-z0-9]")

# --- high-entropy rule --------------------------------------------------------------------

_CANDIDATE = re.compile(r"[A-Za-z0-9+/_\-]{20,}={0,2}")
_SAFE_HEX_LENGTHS = frozenset({64, 128})
_LOWER_RUN = re.compile(r"[a-z]+")
_SEGMENT = re.compile(r"[A-Za-z0-9+=]+")
_VOWELS = frozenset("aeiouAEIOU")
# Thresholds, chosen on generated random tokens vs. identifiers from library sources.
_MIN_MIXED_LEN = 20  # upper + lower + digit
_MIN_TWO_CLASS_LEN = 32  # lower + digit or upper + digit, no separators
_LONG_LEN = 32  # from here on the word-likeness limits are relaxed
# Word-likeness limits for upper+lower+digit tokens: (max mean length of lower-case runs,
# max vowel ratio of the letters, min length of the longest run without "/", "_" or "-").
# Random base64 has short lower-case runs (~1.7) and few vowels (~0.19); identifiers, paths
# and slugs are made of words.
_SHORT_LIMITS = (2.5, 0.4, 8)
_LONG_LIMITS = (3.0, 0.4, 12)
_MAX_TWO_CLASS_VOWELS = 0.3
_MIN_NORMALISED_ENTROPY = 0.75
_HEX_ENTROPY_LIMIT = 3.0  # HexHighEntropyString's default


def _char_classes(value: str) -> int:
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value[1:])  # a capitalised word is still one class
        + any(c.isdigit() for c in value)
        + (_SYMBOL.search(value) is not None)
    )


class SecretDetector:
    """Finds credential-shaped content in memory text.

    Build one instance and reuse it: the detect-secrets plugins and all regular expressions
    are constructed once, in ``__init__``. Instances hold no per-call state and are safe to
    share between threads.
    """

    def __init__(self) -> None:
        """Instantiate the detect-secrets plugins and assemble the ordered rule list."""
        self._base64_entropy = Base64HighEntropyString()
        self._hex_entropy = HexHighEntropyString()
        self._rules = known_rules() + context_rules() + tool_rules()

    def find_secret(self, text: str, *, shapes_only: bool = False) -> str | None:
        """Return the kind of the first secret found in ``text``, or None.

        The text is read as it shows (``lookalike.ascii_visible_form``): a character
        whose NFKC form is ASCII counts as that form (full-width ``ＡＫＩＡ…`` is an AWS
        key id) and invisible characters inside a token do not split it.

        Args:
            text: The memory text to check. Any length and any script; it may span lines.
            shapes_only: report only known credential shapes (every rule but the
                generic high-entropy one), for identifiers such as run and session
                ids and key-value keys, whose random ids that rule would call secrets.

        Returns:
            A short, human-readable kind such as ``"AWS access key"``, ``"private key"``,
            ``"JWT"``, ``"password assignment"``, ``"connection string with password"`` or
            ``"high-entropy string"``, or None when nothing credential-like is found. The
            secret value itself is never returned.
        """
        if not text:
            return None
        masked = blank_public_keys(blank_digests(_PINEWORK_ID.sub(" ", ascii_visible_form(text))))
        plan = plan_scan(masked)
        if plan.unscannable:
            return UNSCANNABLE_KIND
        for part in plan.full:
            kind = self._check(part, shapes_only=shapes_only)
            if kind is not None:
                return kind
        for part in plan.shapes:
            kind = self._check(part, shapes_only=True)
            if kind is None and _AWS_KEY_ID_ANYWHERE.search(part):
                kind = "AWS access key"  # glued to data: 16 of 36 characters by chance is ~1e-11
            if kind is not None:
                return kind
        return None

    def _check(self, masked: str, *, shapes_only: bool) -> str | None:
        """Run the rules, most specific first, on one part of a text (``find_secret``)."""
        if not masked.strip():
            return None
        lowered = masked.lower()
        for rule in self._rules:
            if rule.hints and not any(hint in lowered for hint in rule.hints):
                continue
            for finder in rule.finders:
                for value in finder(masked):
                    if rule.accept is None or rule.accept(masked, str(value)):
                        return rule.kind
        if self._has_secret_assignment(masked):
            return "password assignment"
        if _has_password_in_words(masked):
            return "password in words"
        if not shapes_only and self._has_high_entropy_token(masked):
            return HIGH_ENTROPY_KIND
        return None

    @staticmethod
    def _has_secret_assignment(text: str) -> bool:
        """Return True for ``password=…``/``secret_key: "…"``-style assignments."""
        for match in _ASSIGNMENT.finditer(text):
            key, op = match.group("key"), match.group("op")
            if _SECRET_KEYWORD.search(key) is None:
                continue
            quoted = match.group("quoted")
            value = quoted if quoted is not None else match.group("bare")
            if _METADATA_KEY.search(key) and not _ends_with_keyword(key):
                continue
            if (
                len(value) < MIN_PASSWORD_CHARS
                or is_templated_secret(value)
                or NON_SECRET_VALUE.match(value)
                or is_placeholder(value)
                or _INDIRECT_VALUE.search(value)
            ):
                continue
            if quoted is None and is_reference(value):
                continue  # password=hashed_password, secret=CLIENT_SECRET: a variable
            if names_a_setting(key) and not looks_random(value):
                continue  # password_store=basic, token_type: bearer
            rest = text[match.end() : match.end() + 128].split("\n", 1)[0]
            if quoted is None and op == ":" and is_description(value, rest):
                continue  # access_token: OAuth access token.
            plain_key = op == ":" and key.isalpha()
            if quoted is None and plain_key and (len(value) < 6 or _char_classes(value) < 2):
                continue  # "Her secret: patience" reads like prose
            if quoted is not None and plain_key and any(c.isspace() for c in value):
                continue  # 'His password: "the dog's name"' is a quote, not a value
            return True
        return False

    def _has_high_entropy_token(self, text: str) -> bool:
        """Return True if a long, random-looking base64/hex token survives the safe
        shapes; base64 of Basic credentials with a placeholder password (``user:pass``,
        ``username:password``) is not random."""
        if _CANDIDATE.search(text) is None:
            return False  # the common case: prose has no 20-character tokens
        for pattern in (_DATA_URI, _URL, _UUID, _HEX_DIGEST):
            text = pattern.sub(" ", text)
        for match in _CANDIDATE.finditer(text):
            token = match.group().strip("/+_-")
            if len(token) >= _MIN_MIXED_LEN and self._looks_random(token):
                if is_placeholder_pair(token):
                    continue  # Basic "user:pass", "user:" (an empty password)
                return True
        return False

    def _looks_random(self, token: str) -> bool:
        """Decide whether one candidate token is a random secret rather than a word or id."""
        if token.isdigit() or is_sequential_string(token):
            return False
        if HEX_ONLY.fullmatch(token):
            return (
                len(token) > 40
                and len(token) not in _SAFE_HEX_LENGTHS
                and not token.isalpha()
                and float(self._hex_entropy.calculate_shannon_entropy(token)) > _HEX_ENTROPY_LIMIT
            )
        has_upper = any(c.isupper() for c in token)
        has_lower = any(c.islower() for c in token)
        has_digit = any(c.isdigit() for c in token)
        if not has_digit:
            return False
        letters = [c for c in token if c.isalpha()]
        if not letters:
            return False
        vowel_ratio = sum(c in _VOWELS for c in letters) / len(letters)
        if has_upper and has_lower:
            max_run, max_vowels, min_segment = (
                _LONG_LIMITS if len(token) >= _LONG_LEN else _SHORT_LIMITS
            )
            runs = _LOWER_RUN.findall(token)
            if (
                sum(map(len, runs)) / len(runs) > max_run
                or vowel_ratio > max_vowels
                or max(map(len, _SEGMENT.findall(token))) < min_segment
            ):
                return False
        else:
            digits = sum(c.isdigit() for c in token)
            if (
                len(token) < _MIN_TWO_CLASS_LEN
                or not token.isalnum()
                or vowel_ratio > _MAX_TWO_CLASS_VOWELS
                or not 0.15 <= digits / len(token) <= 0.85
            ):
                return False
        entropy = float(self._base64_entropy.calculate_shannon_entropy(token))
        return entropy >= _MIN_NORMALISED_ENTROPY * math.log2(min(len(token), 64))


def _ends_with_keyword(key: str) -> bool:
    """Return True if ``key`` ends in a secret keyword (``db_password``, not ``password_len``)."""
    lowered = key.lower()
    return lowered.endswith(("password", "passwd", "pwd", "pass", "secret", "key", "token"))


_PASSWORD_IN_WORDS = re.compile(
    r"\b(?:password|passwd|passphrase|pass ?code|pin code|api key|secret key)"
    r"\s+(?:is|was)\s+[\"'\u201c\u2018]?(?P<value>[^\s\"'\u201d\u2019]{6,})",
    re.IGNORECASE,
)


def _has_password_in_words(text: str) -> bool:
    """Return True for prose such as "the DB password is Tr0ub4dor&3".

    The value must mix letters with digits or symbols, so "the password is stored
    in the vault" and "the password is rotated weekly" pass.
    """
    for match in _PASSWORD_IN_WORDS.finditer(text):
        value = match.group("value").rstrip(".,;:!?)")
        has_letter = any(ch.isalpha() for ch in value)
        has_other = any(ch.isdigit() or not ch.isalnum() for ch in value)
        if len(value) >= 6 and has_letter and has_other:
            return True
    return False
