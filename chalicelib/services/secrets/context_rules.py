"""Credentials recognised by where they stand rather than by a provider's shape
(error code ``secret_in_memory``, docs/reference.md#error-secret_in_memory): a
password on a command line (``mysql -pS3cret``, ``--password …``, ``curl -u
user:pass``, ``sshpass -p …``), an ``Authorization`` header's credentials, a URL
password with an empty user, and an AWS key id glued to its secret. They are
``rules.Rule`` s, so every channel and the identifier check (``shapes_only``)
run them. Every pattern is anchored on a fixed marker and bounded, so long texts scan
in linear time. How they were chosen and measured:
docs/issues.md#issue-21-item-7.
"""

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Iterator

from detect_secrets.filters.heuristic import is_templated_secret

from chalicelib.services.secrets.rules import (
    NON_SECRET_VALUE,
    Rule,
    is_placeholder,
    is_placeholder_pair,
)

_VALUE = r"(?P<quote>[\"']?)(?P<value>[^\s\"'`]{1,256})(?P=quote)"
# A value that names where a secret is rather than holding it: $VAR, ${VAR}, %VAR%,
# $(cmd), <placeholder>, {{template}}, a path.
_INDIRECT = re.compile(r"^(?:\$|%\w+%|<|\{|\[|~?/|\.\.?/)")
_WORD_END = r"(?![A-Za-z0-9_\-])"

# --- command lines ------------------------------------------------------------------------

# mysql-family clients take the password glued to -p (``-pS3cret``); -p alone prompts.
_DB_CLIENT = re.compile(r"\b(?:mysql\w*|mariadb\w*|mysqlsh)\b|(?<!\S)(?:-u\S|--user\b|-u\s)")
_GLUED_P = re.compile(
    r"(?<![^\s\"'])-p(?P<quote>[\"']?)(?P<value>[^\s\"'`-][^\s\"'`]{3,255})(?P=quote)"
)
_PASSWORD_OPTION = re.compile(
    r"(?<![^\s\"'])--(?:[a-z0-9]+-)*(?:password|passwd|pass|pwd|secret|token|api-key|apikey)"
    r"(?P<op>=|[ \t]+)" + _VALUE,
    re.IGNORECASE,
)
# A page or sync token names a place in a list, not a credential.
_PAGING_OPTION = re.compile(
    r"^--(?:[a-z0-9]+-)*(?:next|page|continuation|sync|cursor|resume)-token"
)
_SSHPASS = re.compile(r"\bsshpass\b(?:[ \t]+-[a-oq-zA-Z]\S*)*[ \t]+-p[ \t]*" + _VALUE)
_USER_OPTION = re.compile(
    r"(?<![^\s\"'])(?:-u|--user|--proxy-user)(?:=|[ \t]*)(?P<quote>[\"']?)"
    r"(?P<user>[^\s\"':]{1,128}):(?P<value>[^\s\"'`]{1,256})(?P=quote)"
)

# --- headers and URLs ---------------------------------------------------------------------

_AUTHORIZATION = re.compile(
    r"\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?P<scheme>bearer|basic|token|digest|negotiate|apikey|api-key|sso-key|key)[ \t]+)?"
    r"(?P<value>[A-Za-z0-9._~+/:=\-]{1,2048})",
    re.IGNORECASE,
)
_BEARER = re.compile(r"\bbearer[ \t]+(?P<value>[A-Za-z0-9._~+/\-]{16,2048}=*)", re.IGNORECASE)
_URL_EMPTY_USER = re.compile(r"://:(?P<value>[^\s/@:]{1,256})@")

# --- AWS key id glued to its secret -------------------------------------------------------

_KEY_ID = r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"
_AWS_ID_THEN_SECRET = re.compile(
    r"(?<![A-Za-z0-9/+=])" + _KEY_ID + r"(?P<value>[A-Za-z0-9/+=]{20,})"
)
_AWS_SECRET_THEN_ID = re.compile(
    r"(?<![A-Za-z0-9/+=])(?P<value>[A-Za-z0-9/+=]{20,100}?)" + _KEY_ID + r"(?![A-Za-z0-9])"
)


def _is_value(value: str, minimum: int = 4) -> bool:
    """A value that could be a credential: long enough, not a placeholder, variable,
    template or path."""
    return (
        len(value) >= minimum
        and not is_templated_secret(value)
        and NON_SECRET_VALUE.match(value) is None
        and _INDIRECT.match(value) is None
        and not is_placeholder(value)
    )


def _mixes(value: str) -> bool:
    """Letters with digits or symbols (``S3cret``, ``hunter!``), not a word or a number."""
    has_letter = any(c.isalpha() for c in value)
    return has_letter and any(not c.isalpha() for c in value)


def _mixed_with_digit(value: str, minimum: int) -> bool:
    """At least ``minimum`` characters, with a letter and a digit."""
    return (
        len(value) >= minimum
        and any(c.isalpha() for c in value)
        and any(c.isdigit() for c in value)
    )


def _glued_p(text: str) -> Iterator[str]:
    """``-pS3cret`` on a line that runs a mysql-family client or names a user
    (``-u``): ``-p8080:80`` (digits), ``-pthread`` (a word) and ``mkdir -p`` pass."""
    for line in text.splitlines():
        if "-p" not in line or _DB_CLIENT.search(line) is None:
            continue
        for match in _GLUED_P.finditer(line):
            value = match.group("value")
            if (
                _is_value(value)
                and _mixes(value)
                and any(c.isdigit() or not c.isalnum() for c in value)
            ):
                yield value


def _password_option(text: str) -> Iterator[str]:
    """``--password=S3cret``, ``--db-password 'p@ss w'``; with a space the value must
    have 6+ characters with a letter and a digit (``psql --password mydb`` only asks
    for one); page tokens (``--next-token``) are not credentials."""
    for match in _PASSWORD_OPTION.finditer(text):
        value = match.group("value")
        if _PAGING_OPTION.search(match.group()) or not _is_value(value):
            continue
        if match.group("op") == "=" or match.group("quote") or _mixed_with_digit(value, 6):
            yield value


def _from_group(pattern: re.Pattern[str], minimum: int = 4) -> Callable[[str], Iterable[str]]:
    """Yield the ``value`` group of each match that could be a credential."""

    def find(text: str) -> Iterator[str]:
        for match in pattern.finditer(text):
            value = match.group("value")
            if _is_value(value, minimum):
                yield value

    return find


def _authorization(text: str) -> Iterator[str]:
    """The credentials of an ``Authorization`` (or ``Proxy-Authorization``) header:
    with a scheme, 16+ characters, or 8+ with a letter and a digit, or Basic's
    base64 ``user:password``; without a scheme, 16+ characters with a digit."""
    for match in _AUTHORIZATION.finditer(text):
        value = match.group("value").strip(":")
        if is_placeholder_pair(value):
            continue  # Basic "user:pass", "user:" (an empty password)
        credential_like = len(value) >= 16 or _mixed_with_digit(value, 8) or _basic_pair(value)
        if (match.group("scheme") and _is_value(value, 8) and credential_like) or (
            _is_value(value, 16) and any(c.isdigit() for c in value)
        ):
            yield value


def _basic_pair(value: str) -> bool:
    """Whether ``value`` is base64 of ``user:password`` (Basic credentials)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (ValueError, binascii.Error):
        return False
    return b":" in decoded


def _bearer(text: str) -> Iterator[str]:
    """``Bearer <token>`` anywhere: 16+ token characters with a letter and a digit."""
    for match in _BEARER.finditer(text):
        value = match.group("value")
        if _is_value(value) and any(c.isdigit() for c in value) and _mixes(value):
            yield value


def _aws_pair(text: str) -> Iterator[str]:
    """An AWS key id with its secret glued before or after it (no separator)."""
    for pattern in (_AWS_ID_THEN_SECRET, _AWS_SECRET_THEN_ID):
        for match in pattern.finditer(text):
            value = match.group("value")
            classes = (
                any(c.isupper() for c in value),
                any(c.islower() for c in value),
                any(c.isdigit() or c in "/+" for c in value),
            )
            if all(classes):
                yield value


def context_rules() -> tuple[Rule, ...]:
    """The rules of this module, in the order they run (after the provider rules)."""
    return (
        Rule(
            "AWS access key",
            (_aws_pair,),
            hints=("a3t", "abia", "acca", "akia", "asia"),
        ),
        Rule(
            "Authorization header credentials",
            (_authorization, _bearer),
            hints=("authorization", "bearer"),
        ),
        Rule(
            "password on a command line",
            (
                _glued_p,
                _password_option,
                _from_group(_SSHPASS),
                _from_group(_USER_OPTION),
            ),
            hints=("-p", "--", "sshpass", "-u"),
        ),
        Rule(
            "connection string with password",
            (_from_group(_URL_EMPTY_USER),),
            hints=("://:",),
        ),
    )
