"""Secret detection for memory text (error code ``secret_in_memory``,
docs/reference.md#error-secret_in_memory): memories are recalled into other agents'
prompts, so every text a caller stores is checked, and ``SecretDetector.find_secret``
answers the short kind of the first credential it finds ("AWS access key", "JWT", …)
or None, never the value. Text is read as it shows (``lookalike.ascii_visible_form``);
rules run from most to least specific (private key, provider tokens, JWT, connection
string, assignment, high entropy), and ``shapes_only`` skips the last for identifiers.
How the detect-secrets plugins are used and tuned, and the false-positive figures:
docs/DECISIONS.md#secret-detection-how-it-was-built-and-tuned.
"""

import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from detect_secrets.filters.heuristic import is_sequential_string, is_templated_secret
from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HexHighEntropyString,
)
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import DENYLIST as KEYWORD_DENYLIST
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from chalicelib.services.lookalike import ascii_visible_form

__all__ = ["HIGH_ENTROPY_KIND", "SecretDetector"]

HIGH_ENTROPY_KIND = "high-entropy string"
"""The kind reported for a random-looking token that matches no provider pattern."""

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

# --- extra provider patterns (gaps in detect-secrets 1.5) -----------------------------

_NOT_TOKEN_BEFORE = r"(?<![A-Za-z0-9_\-])"
_NOT_TOKEN_AFTER = r"(?![A-Za-z0-9_\-])"
_PRIVATE_KEY_EXTRA = re.compile(
    r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY[ A-Z]{0,20}-----|PuTTY-User-Key-File-\d"
)
# Our own API tokens: "pwk_" + secrets.token_urlsafe(32) (chalicelib/services/access/admin.py).
_PINEWORK_TOKEN = re.compile(_NOT_TOKEN_BEFORE + r"pwk_[A-Za-z0-9_\-]{32,}")
_GITHUB_PAT = re.compile(r"github_pat_[A-Za-z0-9_]{22,}")
_ANTHROPIC = re.compile(_NOT_TOKEN_BEFORE + r"sk-ant-[a-z]+\d*-[A-Za-z0-9_\-]{32,}")
_OPENAI_PROJECT = re.compile(
    _NOT_TOKEN_BEFORE + r"sk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_\-]{32,})" + _NOT_TOKEN_AFTER
)
_NPM_TOKEN = re.compile(_NOT_TOKEN_BEFORE + r"npm_[A-Za-z0-9]{36}" + _NOT_TOKEN_AFTER)
_STRIPE_EXTRA = re.compile(r"(?:sk|rk)_test_[0-9a-zA-Z]{24,}|whsec_[0-9a-zA-Z]{32,}")
_SLACK_APP = re.compile(r"xapp-\d-[A-Za-z0-9\-]{20,}")
_GOOGLE_API_KEY = re.compile(_NOT_TOKEN_BEFORE + r"AIza[0-9A-Za-z_\-]{35}" + _NOT_TOKEN_AFTER)
_HUGGING_FACE = re.compile(_NOT_TOKEN_BEFORE + r"hf_[A-Za-z]{34}" + _NOT_TOKEN_AFTER)
_AZURE_SAS_KEY = re.compile(r"SharedAccessKey=[A-Za-z0-9+/=]{40,}")
_AWS_SECRET_UNQUOTED = re.compile(
    r"aws.{0,20}?(?:secret|key|pass|token).{0,20}?[=:][ \t]*[\"']?([A-Za-z0-9/+]{40})"
    r"(?![A-Za-z0-9/+=])",
    re.IGNORECASE,
)
# Whole dotted tokens starting with a JWT header. The plugin's own regex, run on a whole
# text, is quadratic in the length of a dot-less "eyJ…" run (0.9 s for 50 KB), so it only
# ever sees these candidates.
_JWT_CANDIDATE = re.compile(r"(?<![A-Za-z0-9_=\-])eyJ[A-Za-z0-9_=\-]*+\.[A-Za-z0-9_.+/=\-]++")
# The npm plugin's ``//.+/:_authToken=`` is quadratic on long lines (9 s for 50 KB of
# "//"), so it only sees a window around each ":_authToken=".
_NPMRC_MARKER = re.compile(r":_authToken=")
# The OpenAI plugin's regex is quadratic on a long "sk-…" run (17 s for 64 KB), so it
# only sees a window around its fixed "T3BlbkFJ" infix.
_OPENAI_MARKER = re.compile(r"T3BlbkFJ")
_AWS_KEY_ID = re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}")

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
_NON_SECRET_VALUE = re.compile(
    r"(?:true|false|none|null|nil|undefined|empty|redacted|hidden|masked|required|optional|"
    r"string|str|bytes|env|\*+|x+|\.+|-+|_+)$",
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
_HEX_ONLY = re.compile(r"[0-9a-fA-F]+")
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


class _Plugin(Protocol):
    def analyze_string(self, string: str) -> Iterator[str]: ...


_Finder = Callable[[str], Iterable[str]]
_Acceptor = Callable[[str, str], bool]


@dataclass(frozen=True, slots=True)
class _Rule:
    """One kind of secret: where to look for it and how to confirm a candidate."""

    kind: str
    finders: tuple[_Finder, ...]
    accept: _Acceptor | None = None
    # Lower-case substrings; when given, the rule runs only if one occurs in the text.
    hints: tuple[str, ...] = ()


def _findall(pattern: re.Pattern[str]) -> _Finder:
    """Yield the last capture group of each match of ``pattern`` (or the whole match)."""

    def find(text: str) -> Iterator[str]:
        for match in pattern.finditer(text):
            yield match.group(match.lastindex or 0)

    return find


def _within(candidates: re.Pattern[str], plugin: _Plugin) -> _Finder:
    """Run ``plugin`` only on the substrings of a text that ``candidates`` matches."""

    def find(text: str) -> Iterator[str]:
        for match in candidates.finditer(text):
            yield from plugin.analyze_string(match.group())

    return find


def _around(marker: re.Pattern[str], plugin: _Plugin, radius: int = 256) -> _Finder:
    """Run ``plugin`` only on a window of ``radius`` characters around each ``marker``."""

    def find(text: str) -> Iterator[str]:
        covered = (0, 0)
        for match in marker.finditer(text):
            # A marker with half a radius of the previous window on each side was already
            # seen in context; skipping it keeps runs of markers linear.
            half = radius // 2
            if covered[0] <= match.start() - half and match.end() + half <= covered[1]:
                continue
            covered = (max(0, match.start() - radius), match.end() + radius)
            yield from plugin.analyze_string(text[covered[0] : covered[1]])

    return find


def _standalone(text: str, value: str) -> bool:
    """Return True if ``value`` occurs in ``text`` not glued to other alphanumerics.

    For an alphanumeric ``value`` that means it is one of the text's maximal
    alphanumeric runs; those are collected once per text, so many candidates in a
    long text (KV values reach megabytes) cost linear time, not one scan each.
    """
    if value.isascii() and value.isalnum():
        return value in _alphanumeric_runs(text)
    pattern = rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])"
    return re.search(pattern, text) is not None


_ALPHANUMERIC_RUN = re.compile(r"[A-Za-z0-9]+")


@functools.lru_cache(maxsize=4)
def _alphanumeric_runs(text: str) -> frozenset[str]:
    return frozenset(_ALPHANUMERIC_RUN.findall(text))


@functools.lru_cache(maxsize=4)
def _lower(text: str) -> str:
    return text.lower()


def _has_upper_lower_digit(value: str) -> bool:
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    )


def _accept_aws_key_id(text: str, value: str) -> bool:
    return _AWS_KEY_ID.fullmatch(value) is not None and _standalone(text, value)


def _accept_aws_secret(_text: str, value: str) -> bool:
    # 40 characters like the secret, but a commit SHA (pure hex) is not one.
    return len(value) == 40 and _HEX_ONLY.fullmatch(value) is None and _has_upper_lower_digit(value)


def _accept_twilio(text: str, value: str) -> bool:
    return any(c.isdigit() for c in value) and _standalone(text, value)


def _accept_artifactory(_text: str, value: str) -> bool:
    token = value.strip(' \t\r\n=:"')
    return len(token) >= 16 and _has_upper_lower_digit(token)


def _accept_mixed(_text: str, value: str) -> bool:
    return _has_upper_lower_digit(value)


def _mentions(*words: str) -> _Acceptor:
    def accept(text: str, _value: str) -> bool:
        lowered = _lower(text)  # once per text, not once per candidate
        return any(word in lowered for word in words)

    return accept


def _accept_url_password(_text: str, value: str) -> bool:
    return not is_templated_secret(value) and _NON_SECRET_VALUE.match(value) is None


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
        aws: _Plugin = AWSKeyDetector()
        self._base64_entropy = Base64HighEntropyString()
        self._hex_entropy = HexHighEntropyString()
        self._rules: tuple[_Rule, ...] = (
            _Rule(
                "private key",
                (PrivateKeyDetector().analyze_string, _findall(_PRIVATE_KEY_EXTRA)),
                hints=("private key", "putty-user-key"),
            ),
            _Rule("Pinework access token", (_findall(_PINEWORK_TOKEN),), hints=("pwk_",)),
            _Rule(
                "AWS access key",
                (aws.analyze_string,),
                _accept_aws_key_id,
                hints=("a3t", "abia", "acca", "akia", "asia"),
            ),
            _Rule(
                "AWS secret access key",
                (aws.analyze_string, _findall(_AWS_SECRET_UNQUOTED)),
                _accept_aws_secret,
                hints=("aws",),
            ),
            _Rule(
                "GitHub token",
                (GitHubTokenDetector().analyze_string, _findall(_GITHUB_PAT)),
                hints=("gh", "github_pat_"),
            ),
            _Rule(
                "GitLab token",
                (GitLabTokenDetector().analyze_string,),
                hints=("gl", "gr1348941"),
            ),
            _Rule(
                "Slack token",
                (SlackDetector().analyze_string, _findall(_SLACK_APP)),
                hints=("xox", "hooks.slack.com", "xapp-"),
            ),
            _Rule(
                "Stripe key",
                (StripeDetector().analyze_string, _findall(_STRIPE_EXTRA)),
                hints=("_live_", "_test_", "whsec_"),
            ),
            _Rule("Anthropic API key", (_findall(_ANTHROPIC),), hints=("sk-ant-",)),
            _Rule(
                "OpenAI API key",
                (_around(_OPENAI_MARKER, OpenAIDetector(), radius=64),),
                hints=("t3blbkfj",),
            ),
            _Rule("OpenAI API key", (_findall(_OPENAI_PROJECT),), _accept_mixed, hints=("sk-",)),
            _Rule(
                "npm token",
                (_around(_NPMRC_MARKER, NpmDetector()), _findall(_NPM_TOKEN)),
                hints=("_authtoken", "npm_"),
            ),
            _Rule("PyPI token", (PypiTokenDetector().analyze_string,), hints=("pypi-",)),
            _Rule("SendGrid API key", (SendGridDetector().analyze_string,), hints=("sg.",)),
            _Rule("Twilio API key", (TwilioKeyDetector().analyze_string,), _accept_twilio),
            _Rule("Discord bot token", (DiscordBotTokenDetector().analyze_string,), hints=(".",)),
            _Rule("Telegram bot token", (TelegramBotTokenDetector().analyze_string,), hints=(":",)),
            _Rule(
                "Azure storage account key",
                (AzureStorageKeyDetector().analyze_string,),
                hints=("accountkey=",),
            ),
            _Rule(
                "Azure shared access key",
                (_findall(_AZURE_SAS_KEY),),
                hints=("sharedaccesskey=",),
            ),
            _Rule("Google API key", (_findall(_GOOGLE_API_KEY),), hints=("aiza",)),
            _Rule("Hugging Face token", (_findall(_HUGGING_FACE),), hints=("hf_",)),
            _Rule("Mailchimp API key", (MailchimpDetector().analyze_string,), hints=("-us",)),
            _Rule("Square OAuth secret", (SquareOAuthDetector().analyze_string,), hints=("sq0",)),
            _Rule(
                "Artifactory credential",
                (ArtifactoryDetector().analyze_string,),
                _accept_artifactory,
                hints=("akc", "ap"),
            ),
            _Rule(
                "IBM Cloud IAM key",
                (IbmCloudIamDetector().analyze_string,),
                _mentions("ibm", "iam"),
                hints=("ibm", "iam"),
            ),
            _Rule(
                "IBM COS HMAC secret",
                (IbmCosHmacDetector().analyze_string,),
                _mentions("ibm", "cos", "hmac"),
                hints=("ibm", "cos", "hmac"),
            ),
            _Rule(
                "Cloudant credential",
                (CloudantDetector().analyze_string,),
                hints=("cl",),
            ),
            _Rule(
                "SoftLayer credential",
                (SoftlayerDetector().analyze_string,),
                hints=("sl", "softlayer"),
            ),
            _Rule("JWT", (_within(_JWT_CANDIDATE, JwtTokenDetector()),), hints=("eyj",)),
            _Rule(
                "connection string with password",
                (BasicAuthDetector().analyze_string,),
                _accept_url_password,
                hints=("://",),
            ),
        )

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
        masked = _PINEWORK_ID.sub(" ", ascii_visible_form(text))
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
                len(value) < 4
                or is_templated_secret(value)
                or _NON_SECRET_VALUE.match(value)
                or _INDIRECT_VALUE.search(value)
            ):
                continue
            plain_key = op == ":" and key.isalpha()
            if quoted is None and plain_key and (len(value) < 6 or _char_classes(value) < 2):
                continue  # "Her secret: patience" reads like prose
            if quoted is not None and plain_key and any(c.isspace() for c in value):
                continue  # 'His password: "the dog's name"' is a quote, not a value
            return True
        return False

    def _has_high_entropy_token(self, text: str) -> bool:
        """Return True if a long, random-looking base64/hex token survives the safe shapes."""
        if _CANDIDATE.search(text) is None:
            return False  # the common case: prose has no 20-character tokens
        for pattern in (_URL, _UUID, _HEX_DIGEST):
            text = pattern.sub(" ", text)
        for match in _CANDIDATE.finditer(text):
            token = match.group().strip("/+_-")
            if len(token) >= _MIN_MIXED_LEN and self._looks_random(token):
                return True
        return False

    def _looks_random(self, token: str) -> bool:
        """Decide whether one candidate token is a random secret rather than a word or id."""
        if token.isdigit() or is_sequential_string(token):
            return False
        if _HEX_ONLY.fullmatch(token):
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
