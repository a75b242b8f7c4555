"""docs/reference.md never calls a shipped feature unbuilt (its docs/reference.md#14-operations
says what ships; the operator's steps are in docs/operations.md).

Every "not yet", "being built", "planned" (as a future), "coming soon", "to be built"
or "TODO" in the reference must sit in a sentence (or table row) that names one of
``UNBUILT``, the features that really are not in the code, and in none that names one
of ``SHIPPED``. Both lists check themselves against the code: an unbuilt feature that
appears in the code fails (move it to ``SHIPPED``), and a shipped feature whose code
is gone fails (the list cannot rot). Words in code spans (`` `planned` ``, a review
status) are not prose and are not read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.helpers import REPO

FUTURE = re.compile(
    r"not yet|being built|coming soon|to be built|\bTODO\b"
    r"|\b(?:is|are|was|were|be)\s+planned\b|\bplanned\s+(?:for|in)\b|\(planned\)"
    r"|\bplanned\s*[:;,.)]?\s*$|:\s*planned\b",
    re.IGNORECASE,
)
"""The phrases that say a feature is not there yet."""
CODE_SPAN = re.compile(r"`[^`\n]*`")


def source(path: str) -> str:
    """A repository file's text."""
    return (REPO / path).read_text(encoding="utf-8")


def has_route(method: str, path: str) -> bool:
    """Whether the API's route table (``chalicelib/api/operations.py``) has the route."""
    from chalicelib.api.operations import OPERATIONS

    return (method, path) in OPERATIONS


@dataclass(frozen=True)
class Feature:
    """A feature the reference may name: the words that name it, and a check of the code.

    Attributes:
        name: what it is.
        words: a regular expression (case-insensitive) that finds it named in a sentence.
        in_code: True when the code (or the templates' source) has it.
    """

    name: str
    words: str
    in_code: Callable[[], bool]

    def named_in(self, text: str) -> bool:
        """Whether ``text`` names the feature."""
        return re.search(self.words, text, re.IGNORECASE) is not None


SHIPPED = [
    Feature(
        "structured logs", r"\blogs?\b", lambda: "Logger(" in source("chalicelib/api/telemetry.py")
    ),
    Feature(
        "EMF metrics",
        r"\bmetrics?\b|\bEMF\b",
        lambda: "EphemeralMetrics" in source("chalicelib/api/telemetry.py"),
    ),
    Feature(
        "alarms",
        r"\balarms?\b",
        lambda: '"AWS::CloudWatch::Alarm"' in source("infra/observability.py"),
    ),
    Feature(
        "the operations dashboard",
        r"\bdashboard\b",
        lambda: '"AWS::CloudWatch::Dashboard"' in source("infra/observability.py"),
    ),
    Feature(
        "token listing, rotation and revocation",
        r"\btokens?\b",
        lambda: all(
            f"def {name}(" in source("chalicelib/services/access/admin.py")
            for name in ("issue_token", "list_tokens", "rotate_token", "revoke_token")
        ),
    ),
    Feature("the OpenAPI document", r"\bOpenAPI\b", lambda: has_route("GET", "/openapi.json")),
    Feature(
        "Idempotency-Key",
        r"idempoten",
        lambda: "def idempotent(" in source("chalicelib/api/idempotency.py"),
    ),
    Feature(
        "ETag and If-Match",
        r"\bETag\b|If-Match",
        lambda: "if-match" in source("chalicelib/api/idempotency.py").lower(),
    ),
    Feature(
        "stage throttling",
        r"throttl",
        lambda: "ThrottlingRateLimit" in source("infra/rate_limits.py"),
    ),
    Feature(
        "WAF rate limits",
        r"\bWAF\b|rate limit",
        lambda: '"AWS::WAFv2::WebACL"' in source("infra/rate_limits.py"),
    ),
    Feature(
        "least-privilege IAM per function",
        r"\bIAM\b|least.privilege",
        lambda: "def grants(" in source("infra/iam.py"),
    ),
    Feature(
        "gateway responses in the envelope",
        r"gateway.{0,20}(?:errors|responses?)",
        lambda: (REPO / "infra" / "gateway_responses.py").is_file(),
    ),
    Feature("MCP", r"\bMCP\b", lambda: has_route("POST", "/mcp")),
    Feature("the key-value store", r"key-value|\bkv\b", lambda: has_route("POST", "/kv/remember")),
    Feature(
        "the nightly review",
        r"nightly|\breview",
        lambda: (
            "def review_fanout(" in source("app.py") and "def review_worker(" in source("app.py")
        ),
    ),
    Feature(
        "the operator's guide",
        r"operations\.md|operator's guide",
        lambda: (REPO / "docs" / "operations.md").is_file(),
    ),
]
"""Shipped features: none of them may be named next to a not-yet phrase."""

UNBUILT = [
    Feature(
        "hard delete of a memory (memories are archived, never deleted)",
        r"DELETE /memories/\{",
        lambda: has_route("DELETE", "/memories/{memory_id}"),
    ),
    Feature(
        "multi-region replicas (DynamoDB global tables)",
        r"global tables?|multi-region",
        lambda: any(
            word in source(path)
            for path in ("infra/tables.py", "infra/template.py")
            for word in ("Replicas", "AWS::DynamoDB::GlobalTable")
        ),
    ),
]
"""Features not in the code: the only ones a not-yet phrase may name."""


def units(text: str) -> list[str]:
    """The reference cut where a claim ends: each table row, and each sentence of the
    other text (paragraphs cut at blank lines, then at sentence ends)."""
    found: list[str] = []
    paragraph: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.lstrip().startswith("|"):
            found.append(line)
        elif line.strip():
            paragraph.append(line.strip())
            continue
        if paragraph:
            found += re.split(r"(?<=[.!?])\s+(?=[A-Z(\[*])", " ".join(paragraph))
            paragraph = []
    return found


def findings(text: str) -> list[str]:
    """Each sentence or row with a not-yet phrase that names a shipped feature, or no
    unbuilt one (empty: the text is right)."""
    problems = []
    for unit in units(text):
        if not FUTURE.search(CODE_SPAN.sub(" ", unit)):  # a code word is not prose
            continue
        shipped = [feature.name for feature in SHIPPED if feature.named_in(unit)]
        if shipped:
            problems.append(f"calls shipped {', '.join(shipped)} unbuilt: {unit.strip()!r}")
        elif not any(feature.named_in(unit) for feature in UNBUILT):
            problems.append(f"a not-yet phrase names no unbuilt feature: {unit.strip()!r}")
    return problems


def test_the_reference_calls_no_shipped_feature_unbuilt() -> None:
    assert findings(source("docs/reference.md")) == []


@pytest.mark.parametrize("feature", SHIPPED, ids=lambda feature: feature.name)
def test_each_shipped_feature_is_in_the_code(feature: Feature) -> None:
    assert feature.in_code(), f"{feature.name} is listed as shipped but its code is gone"


@pytest.mark.parametrize("feature", UNBUILT, ids=lambda feature: feature.name)
def test_each_unbuilt_feature_is_absent_from_the_code(feature: Feature) -> None:
    assert not feature.in_code(), f"{feature.name} is in the code now: move it to SHIPPED"


@pytest.mark.parametrize(
    "text",
    [
        "| alarms and a dashboard in the template | not yet |",
        "Alarms: not yet.",
        "Structured logs are being built now.",
        "Token rotation is planned for a later release.",
        "What operating the service requires. Parts are being built now; the state is said.",
        "- TODO: OpenAPI document",
        "Rate limits (coming soon).",
    ],
)
def test_a_not_yet_phrase_on_a_shipped_or_unnamed_feature_is_found(text: str) -> None:
    assert findings(text) != []


@pytest.mark.parametrize(
    "text",
    [
        "A `DELETE /memories/{id}` route is not yet offered: archive instead.",
        "Global tables (multi-region) are not yet supported.",
        "A dry run stores its report; its status is `planned` until applied.",
        "| tokens | rotated with `not yet expired` grace |",
    ],
)
def test_an_unbuilt_feature_or_a_code_word_passes(text: str) -> None:
    assert findings(text) == []


def test_each_sentence_is_judged_alone() -> None:
    text = "Alarms ship in both deploy paths. Parts are being built now."
    assert findings(text) == [
        "a not-yet phrase names no unbuilt feature: 'Parts are being built now.'"
    ]
