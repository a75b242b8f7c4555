"""The workspace's review actions waiting for a person (docs/reference.md#13-dashboard):
every agent's, by agent and oldest review first, 50 to a page, each linking to its card on
its review's page where it is decided; and the count the agents overview shows."""

from __future__ import annotations

from chalicelib.limits import PENDING_COUNT_MAX
from chalicelib.services.paging import decode_next_token, encode_next_token
from chalicelib.services.review.service import PENDING_TOKEN
from chalicelib.web.context import WebContext
from chalicelib.web.http import WebResponse

PENDING_PER_PAGE = 50
"""Actions listed on one page (and the most the overview's notice counts)."""


def pending_page(web: WebContext) -> WebResponse:
    """``GET /pending``: the actions waiting for a person, and how many wait
    (docs/reference.md#list-totals); ``after`` (from the page's "More" link) continues
    the list.

    Raises:
        InvalidRequest: ``after`` is not a cursor this page made (400).
    """
    after = web.request.param("after") or None
    start = decode_next_token(after, pattern=PENDING_TOKEN)
    reviews = web.services.reviews
    actions, more = reviews.list_pending(web.principal, None, PENDING_PER_PAGE, start)
    return web.page(
        "pending.html",
        nav="pending",
        actions=actions,
        more=encode_next_token(more),
        after=after,
        total=reviews.count_pending(web.principal, None, start, PENDING_COUNT_MAX),
    )


def pending_count(web: WebContext) -> tuple[int, bool]:
    """How many actions wait for a person: ``(count, more)``, the count at most
    :data:`PENDING_PER_PAGE` and ``more`` when there are others past it."""
    actions, more = web.services.reviews.list_pending(web.principal, None, PENDING_PER_PAGE, None)
    return len(actions), more is not None
