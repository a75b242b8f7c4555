"""What of a text the secret detector reads, and how (docs/reference.md#secret-check-bounds):
a bounded amount of work for any text, with no part of it left unread.

A text is split into its *data runs* (over 1 KiB of base64-like characters: an image,
a dump, a kubeconfig's certificate) and the rest. The rest is read by every rule;
a text over 64 KiB only in windows around the places a rule could match, which one
linear pass finds (``_CANDIDATE``). In a data run only credential shapes count,
looked for around the fixed markers they start with (``_DATA_MARKER``); a data run
that decodes from base64 to text is read decoded too, by every rule. When the
windows and decoded texts exceed 1 MiB the text is refused as unscannable. Choices
and figures: docs/issues.md#issue-21-item-7.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field

from chalicelib.limits import (
    SECRET_DATA_RUN_MIN_CHARS,
    SECRET_KEYWORD_WINDOW_CHARS,
    SECRET_SCAN_BUDGET_CHARS,
    SECRET_TOKEN_WINDOW_CHARS,
    SECRET_WINDOWED_FROM_CHARS,
)

_RUN_CHARS = "A-Za-z0-9+/=_\\-"
DATA_RUN = re.compile(rf"(?<![{_RUN_CHARS}])[{_RUN_CHARS}]{{{SECRET_DATA_RUN_MIN_CHARS},}}")
"""A data run (it starts only at a token's start, so it scans in linear time)."""

# Every place a rule can match has one of these: a token of 16+ characters with a digit
# (random secrets and provider tokens; hex digests, UUIDs and numbers aside), or a
# marker (secret keywords for assignments and passwords in words, URLs, PEM and PuTTY
# headers, command-line options, Authorization headers, the letter-only provider
# prefixes). Found with ``str.find`` and one character-class scan: linear and fast.
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{16,}")
_SAFE_TOKEN = re.compile(
    r"[0-9]+|[0-9a-f]{16,40}|[0-9a-f]{64}|[0-9a-f]{128}"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    re.IGNORECASE,
)
MARKERS = (
    *("pass", "pwd", "secret", "token", "_key", "apikey", "authkey", "servicekey"),
    *("accountkey", "dbkey", "databasekey", "privkey", "clientkey", "contrase", "pin code"),
    *("private", "putty", "authoriz", "bearer", "://", "sshpass", " -p", " -u", " --"),
    *("\t-p", "\t-u", "\n-p", "\n-u", "hf_", "xox", "eyj"),
    # the tool families and credential headers of ``tool_rules``
    *(" -a", " -w", " -k", " -n", "/p:", "htpasswd", "sqlplus", "auth ", "api-key", "cookie"),
)
"""Lower-case substrings around which the full rules read a long text."""
_TOKEN_RADIUS = SECRET_TOKEN_WINDOW_CHARS
_MARKER_BEFORE, _MARKER_AFTER = SECRET_KEYWORD_WINDOW_CHARS
# Fixed starts of provider credentials, and base64 of "-----BEGIN" at its three
# alignments, looked for inside data runs (lower case).
DATA_MARKERS = (
    *("a3t", "abia", "acca", "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    *("github_pat_", "glpat-", "xox", "xapp-", "sk-", "sk_", "rk_", "whsec_", "pypi-"),
    *("aiza", "hf_", "npm_", "pwk_", "eyj", "ls0tls1crudjt", "0tls0tqkvhsu", "ltlts0tlqkvhsu"),
    *("pass", "pwd", "secret", "token", "_key", "apikey", "private", "auth"),
)
_PRINTABLE = re.compile(r"[\t\n\r\x20-\x7e\u00a0-\uffff]")


@dataclass
class ScanPlan:
    """The texts to check for one input text.

    Attributes:
        full: read by every rule (the text without its data runs, or windows of it;
            decoded data runs).
        shapes: read for credential shapes only (windows of data runs).
        unscannable: the windows exceed ``SECRET_SCAN_BUDGET_CHARS``.
    """

    full: list[str] = field(default_factory=list)
    shapes: list[str] = field(default_factory=list)
    unscannable: bool = False


def plan_scan(text: str) -> ScanPlan:
    """Split ``text`` (already read as it shows) into what the detector reads.

    Returns:
        The plan; every character of ``text`` is either in it or in a data run
        whose markers, and decoded text, are.
    """
    plan = ScanPlan()
    runs = (
        [match.span() for match in DATA_RUN.finditer(text)]
        if len(text) >= SECRET_DATA_RUN_MIN_CHARS
        else []
    )
    rest = _blank(text, runs)
    plan.full.append(rest if len(rest) <= SECRET_WINDOWED_FROM_CHARS else _windows(rest))
    for start, end in runs:
        run = text[start:end]
        plan.shapes.append(_marker_windows(run))
        decoded = decoded_text(run)
        if decoded is not None:
            plan.full.append(_blank(decoded, [m.span() for m in DATA_RUN.finditer(decoded)]))
    read = sum(map(len, plan.full)) + sum(map(len, plan.shapes))
    plan.unscannable = read > SECRET_SCAN_BUDGET_CHARS
    return plan


def decoded_text(run: str) -> str | None:
    """A data run decoded from base64 (standard or URL-safe alphabet, padding
    optional) when it is text: UTF-8 with at least 95 % printable characters."""
    body = run.rstrip("=")
    altchars = b"-_" if ("-" in body or "_" in body) else None
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=altchars, validate=True)
        decoded = raw.decode("utf-8")
    except (ValueError, binascii.Error):
        return None
    printable = len(_PRINTABLE.findall(decoded))
    return decoded if decoded and printable >= 0.95 * len(decoded) else None


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span replaced by one space."""
    if not spans:
        return text
    parts, last = [], 0
    for start, end in spans:
        parts.append(text[last:start])
        last = end
    parts.append(text[last:])
    return " ".join(parts)


def _windows(text: str) -> str:
    """The windows of ``text`` around every candidate token and marker, merged, each
    widened to white space (at most 64 more characters) so no token is cut, joined
    by blank lines."""
    spans = [
        (match.start() - _TOKEN_RADIUS, match.end() + _TOKEN_RADIUS)
        for match in _TOKEN.finditer(text)
        if _SAFE_TOKEN.fullmatch(match.group()) is None and any(c.isdigit() for c in match.group())
    ]
    spans += [(at - _MARKER_BEFORE, at + _MARKER_AFTER) for at in _find_all(text.lower(), MARKERS)]
    merged = _merge(spans)
    return "\n\n".join(text[_widen_left(text, s) : _widen_right(text, e)] for s, e in merged)


_MAX_HITS = SECRET_SCAN_BUDGET_CHARS // 64
"""More places than this cannot fit the budget: the search stops (the text is refused)."""


def _find_all(lowered: str, needles: tuple[str, ...]) -> list[int]:
    """Every position of every needle in ``lowered`` (``str.find``, at C speed), or
    more than ``_MAX_HITS`` of them."""
    found: list[int] = []
    for needle in needles:
        at = lowered.find(needle)
        while at >= 0 and len(found) <= _MAX_HITS:
            found.append(at)
            at = lowered.find(needle, at + len(needle))
    return found


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, overlapping spans joined; starts clipped at 0."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        start = max(0, start)
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _widen_left(text: str, start: int) -> int:
    floor = max(0, start - 64)
    cut = max(text.rfind(" ", floor, start), text.rfind("\n", floor, start))
    return floor if cut < 0 else cut


def _widen_right(text: str, end: int) -> int:
    cuts = [i for i in (text.find(" ", end, end + 64), text.find("\n", end, end + 64)) if i >= 0]
    return min(cuts) if cuts else end + 64


def _marker_windows(run: str) -> str:
    """Windows of a data run around each of ``DATA_MARKERS`` (merged), or ``""``."""
    spans = [(at - 128, at + 256) for at in _find_all(run.lower(), DATA_MARKERS)]
    return "\n".join(run[start:end] for start, end in _merge(spans))
