"""The review routes' request bodies and query strings (docs/reference.md#7-http-api,
docs/reference.md#9-review): running a review (``RunReviewRequest``), approving a pending action
(``ApproveRequest``) and the two listings' query strings. The review's own shapes (plan, report,
decisions) are in
``review``.
"""

from __future__ import annotations

from chalicelib.models.common import RequestModel
from chalicelib.models.requests import PageQuery


class ApproveRequest(RequestModel):
    """``POST /reviews/{id}/actions/{n}/approve``: empty, or ``{keepId}`` naming which
    fact of a ``resolve_conflict`` pair to keep (the plan proposes the newer)."""

    keep_id: str | None = None


class RunReviewRequest(RequestModel):
    """``POST /reviews``: run an agent's review now; ``dryRun`` returns the plan only."""

    agent_id: str | None = None
    dry_run: bool = False


class ReviewListQuery(PageQuery):
    """``GET /reviews`` query string: ``agentId`` (persons), ``limit`` (docs/reference.md#5-limits:
    100 by default, at most 500), ``nextToken``."""


class PendingListQuery(PageQuery):
    """``GET /reviews/pending`` query string: ``agentId`` (a person may omit it: the
    whole workspace), ``limit`` (100 by default, at most 500), ``nextToken``."""
