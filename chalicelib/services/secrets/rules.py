"""The known credential kinds the secret detector looks for (error code
``secret_in_memory``, docs/reference.md#error-secret_in_memory): each kind is a
``Rule``, where to look (detect-secrets provider plugins, patterns for the keys they
miss, both kept linear on long texts by running a plugin only on candidates or around
a marker) and how to confirm a candidate (``_accept_…``). ``secrets.SecretDetector``
runs them in order, most specific first. How they were chosen and tuned:
docs/DECISIONS.md#secret-detection-how-it-was-built-and-tuned.
"""

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from detect_secrets.filters.heuristic import is_templated_secret
from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
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

from chalicelib.services.secrets.code_rules import decoded_pair, names_a_secret

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

# Values that say a secret is absent ("none", "redacted", "***"), for URLs and assignments.
NON_SECRET_VALUE = re.compile(
    r"(?:true|false|none|null|nil|undefined|empty|redacted|hidden|masked|required|optional|"
    r"string|str|bytes|env|\*+|x+|\.+|-+|_+)$",
    re.IGNORECASE,
)

# Values that stand for a credential in an example: the word itself ("password",
# "your_api_key", "changeme"), a mask, or a variable/template ($VAR, ${VAR}, %VAR%,
# {{var}}, <your key>).
_PLACEHOLDER_WORD = re.compile(
    r"(?:(?:my|your|the|some|example|sample|dummy|fake|test|new|old|db|user|admin|app|api|"
    r"root|default|secret|super)[_\-]?)*"
    r"(?:password|passwd|passwort|pass|pwd|passphrase|secret|token|api[_\-]?key|key|"
    r"credentials?|pw|pin)s?(?:[_\-]?here)?"
    r"|change[_\-]?(?:me|it|this)|placeholder|example|sample|dummy|redacted|omitted|removed|"
    r"foo|bar|foobar|baz|qwerty|todo|tbd|fixme|replace[_\-]?me|\.\.\.+|\u2026|[x*#.\-_]{3,}",
    re.IGNORECASE,
)
_VARIABLE = re.compile(r"^(?:\$|%\w+%|<[^<>]*>$|\{\{|\[[^\[\]]*\]$)")


def is_placeholder(value: str) -> bool:
    """Whether a URL password, option value or header value stands for a credential
    rather than holding one: ``password``, ``changeme``, ``your_api_key``, ``***``,
    ``xxx``, ``<token>``, ``${DB_PASS}``, ``$VAR``, ``%VAR%``, ``{{ secret }}``, a
    name for a secret (``SA_ACCESS_TOKEN``, ``clientSecret``:
    ``code_rules.names_a_secret``)."""
    value = value.strip("\"'`")
    return (
        not value
        or NON_SECRET_VALUE.match(value) is not None
        or _PLACEHOLDER_WORD.fullmatch(value) is not None
        or _VARIABLE.match(value) is not None
        or is_templated_secret(value)
        or names_a_secret(value)
    )


def is_placeholder_pair(token: str) -> bool:
    """Whether ``token`` is base64 of ``user:password`` (Basic credentials) whose
    password is empty or a placeholder (``dXNlcjpwYXNz``, ``user:pass``)."""
    pair = decoded_pair(token)
    return pair is not None and is_placeholder(pair[1])


# A hex digest (a commit SHA) is not an AWS secret, nor random enough alone.
HEX_ONLY = re.compile(r"[0-9a-fA-F]+")


class _Plugin(Protocol):
    def analyze_string(self, string: str) -> Iterator[str]: ...


_Finder = Callable[[str], Iterable[str]]
_Acceptor = Callable[[str, str], bool]


@dataclass(frozen=True, slots=True)
class Rule:
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
    return len(value) == 40 and HEX_ONLY.fullmatch(value) is None and _has_upper_lower_digit(value)


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


MIN_PASSWORD_CHARS = 4
"""Shorter than this, a URL's password is an example (``https://a:b@host``), as an
assignment's value is (``detector``)."""


def _accept_url_password(_text: str, value: str) -> bool:
    return len(value) >= MIN_PASSWORD_CHARS and not is_placeholder(value)


def known_rules() -> tuple[Rule, ...]:
    """The rules for known credential kinds, in the order they run (most specific
    first); builds the detect-secrets plugins they use (once per detector)."""
    aws: _Plugin = AWSKeyDetector()
    return (
        Rule(
            "private key",
            (PrivateKeyDetector().analyze_string, _findall(_PRIVATE_KEY_EXTRA)),
            hints=("private key", "putty-user-key"),
        ),
        Rule("Pinework access token", (_findall(_PINEWORK_TOKEN),), hints=("pwk_",)),
        Rule(
            "AWS access key",
            (aws.analyze_string,),
            _accept_aws_key_id,
            hints=("a3t", "abia", "acca", "akia", "asia"),
        ),
        Rule(
            "AWS secret access key",
            (aws.analyze_string, _findall(_AWS_SECRET_UNQUOTED)),
            _accept_aws_secret,
            hints=("aws",),
        ),
        Rule(
            "GitHub token",
            (GitHubTokenDetector().analyze_string, _findall(_GITHUB_PAT)),
            hints=("gh", "github_pat_"),
        ),
        Rule(
            "GitLab token",
            (GitLabTokenDetector().analyze_string,),
            hints=("gl", "gr1348941"),
        ),
        Rule(
            "Slack token",
            (SlackDetector().analyze_string, _findall(_SLACK_APP)),
            hints=("xox", "hooks.slack.com", "xapp-"),
        ),
        Rule(
            "Stripe key",
            (StripeDetector().analyze_string, _findall(_STRIPE_EXTRA)),
            hints=("_live_", "_test_", "whsec_"),
        ),
        Rule("Anthropic API key", (_findall(_ANTHROPIC),), hints=("sk-ant-",)),
        Rule(
            "OpenAI API key",
            (_around(_OPENAI_MARKER, OpenAIDetector(), radius=64),),
            hints=("t3blbkfj",),
        ),
        Rule("OpenAI API key", (_findall(_OPENAI_PROJECT),), _accept_mixed, hints=("sk-",)),
        Rule(
            "npm token",
            (_around(_NPMRC_MARKER, NpmDetector()), _findall(_NPM_TOKEN)),
            hints=("_authtoken", "npm_"),
        ),
        Rule("PyPI token", (PypiTokenDetector().analyze_string,), hints=("pypi-",)),
        Rule("SendGrid API key", (SendGridDetector().analyze_string,), hints=("sg.",)),
        Rule("Twilio API key", (TwilioKeyDetector().analyze_string,), _accept_twilio),
        Rule("Discord bot token", (DiscordBotTokenDetector().analyze_string,), hints=(".",)),
        Rule("Telegram bot token", (TelegramBotTokenDetector().analyze_string,), hints=(":",)),
        Rule(
            "Azure storage account key",
            (AzureStorageKeyDetector().analyze_string,),
            hints=("accountkey=",),
        ),
        Rule(
            "Azure shared access key",
            (_findall(_AZURE_SAS_KEY),),
            hints=("sharedaccesskey=",),
        ),
        Rule("Google API key", (_findall(_GOOGLE_API_KEY),), hints=("aiza",)),
        Rule("Hugging Face token", (_findall(_HUGGING_FACE),), hints=("hf_",)),
        Rule("Mailchimp API key", (MailchimpDetector().analyze_string,), hints=("-us",)),
        Rule("Square OAuth secret", (SquareOAuthDetector().analyze_string,), hints=("sq0",)),
        Rule(
            "Artifactory credential",
            (ArtifactoryDetector().analyze_string,),
            _accept_artifactory,
            hints=("akc", "ap"),
        ),
        Rule(
            "IBM Cloud IAM key",
            (IbmCloudIamDetector().analyze_string,),
            _mentions("ibm", "iam"),
            hints=("ibm", "iam"),
        ),
        Rule(
            "IBM COS HMAC secret",
            (IbmCosHmacDetector().analyze_string,),
            _mentions("ibm", "cos", "hmac"),
            hints=("ibm", "cos", "hmac"),
        ),
        Rule(
            "Cloudant credential",
            (CloudantDetector().analyze_string,),
            hints=("cl",),
        ),
        Rule(
            "SoftLayer credential",
            (SoftlayerDetector().analyze_string,),
            hints=("sl", "softlayer"),
        ),
        Rule("JWT", (_within(_JWT_CANDIDATE, JwtTokenDetector()),), hints=("eyj",)),
        Rule(
            "connection string with password",
            (BasicAuthDetector().analyze_string,),
            _accept_url_password,
            hints=("://",),
        ),
    )
