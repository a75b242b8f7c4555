"""The recall preview as of a moment (docs/reference.md#as-of-a-moment,
docs/issues.md#issue-46-item-4): ``POST /memories/recall`` with ``count: false`` and
``asOf``, the block today's scorer would have given with the agent's memories as they
were then.

The facts are those active and unexpired at ``asOf``, each with its text then; the day
log is the day rows of that date and the day before as they were then. They are scored
as a recall scores (``RecallService.kept_scoring``, then the budgets). Learnings are not
rebuilt as of a moment: the preview gives none. Nothing is counted or logged.
"""

from __future__ import annotations

from datetime import datetime

from chalicelib.errors import InvalidRequest
from chalicelib.limits import MAX_LIST_LIMIT
from chalicelib.models.as_of import AsOfListQuery
from chalicelib.models.memory import Memory
from chalicelib.models.principal import Principal
from chalicelib.models.requests import RecallRequest
from chalicelib.services.memory.as_of import AsOfPage, MemoryAsOf, every_page
from chalicelib.services.paging import encode_next_token
from chalicelib.services.recall.service import RecallResult, RecallService
from chalicelib.services.run_context import RunContext
from chalicelib.services.text import has_content


class RecallAsOf:
    """The as-of recall preview.

    Args:
        recall: the recall service (its scorer, cut, budgets and block).
        as_of: the as-of views (``asOf``'s checks and the memories then).
    """

    def __init__(self, recall: RecallService, as_of: MemoryAsOf) -> None:
        self._recall = recall
        self._as_of = as_of

    def preview(
        self, principal: Principal, request: RecallRequest, run: RunContext
    ) -> tuple[RecallResult, datetime]:
        """The preview's result as of ``request.as_of`` and that moment.

        Reads every memory of the agent created by then (``MemoryAsOf.list``: one
        history query each).

        Raises:
            InvalidRequest: ``count`` is not false; tags, anyTags or meta sent; no query (nor
                task); a query over 4,000 characters. SecretInMemory: the query looks
                like a credential.
            AsOfInvalid, AsOfInFuture, AsOfBeforeWorkspace, MemoryNotOwn,
            MemoryAgentRequired, Forbidden: as ``MemoryAsOf.list``.
        """
        assert request.as_of is not None
        if request.tags or request.any_tags or request.meta:
            raise InvalidRequest(
                "tags, anyTags and meta do not apply with asOf: a preview as of a moment ranks "
                "every fact the agent held then (docs/reference.md#as-of-a-moment)."
            )
        if request.count:
            raise InvalidRequest(
                "asOf previews a past recall, which counts nothing: send count: false."
            )
        query = request.query if has_content(request.query) else run.task_key
        if query is None or not has_content(query):
            raise InvalidRequest("Send a query to preview the recall of that moment.")
        self._recall.check_query(query)

        moment = self._as_of.moment(principal, request.as_of)
        raw, agent_id = request.as_of, request.agent_id
        facts = memories_then(self._as_of, principal, agent_id, raw, "fact")
        facts = [fact for fact in facts if fact.text and not fact.is_expired(moment)]
        rows = day_rows_then(self._as_of, principal, agent_id, raw)
        scoring = self._recall.kept_scoring(query, facts, moment)
        picked = self._recall.within_budget(scoring.ranked)
        block = self._recall.render_block(
            request.agent_id or principal.id, picked, moment, (), rows.get
        )
        result = RecallResult(query, scoring.fallback, picked, block, scoring=scoring)
        return result, moment


def memories_then(
    as_of: MemoryAsOf, principal: Principal, agent_id: str | None, raw_as_of: str, kind: str
) -> list[Memory]:
    """Every active memory of ``kind`` (``fact`` or ``day``) of the agent at
    ``raw_as_of``, as it was then (``MemoryAsOf.list``, page after page).

    Raises:
        AsOfInvalid, AsOfInFuture, AsOfBeforeWorkspace, MemoryNotOwn,
        MemoryAgentRequired, Forbidden: as ``MemoryAsOf.list``.
    """

    def page(after: str | None) -> AsOfPage:
        listed = AsOfListQuery.model_validate(
            {
                "agentId": agent_id,
                "asOf": raw_as_of,
                "kind": kind,
                "status": "active",
                "limit": str(MAX_LIST_LIMIT),
                "nextToken": encode_next_token(after),
            }
        )
        return as_of.list(principal, listed)

    return every_page(page)


def day_rows_then(
    as_of: MemoryAsOf, principal: Principal, agent_id: str | None, raw_as_of: str
) -> dict[str, Memory]:
    """The agent's live day rows at ``raw_as_of`` by date, as they were then (what
    ``RecallService.render_block`` takes as ``day_rows``). Raises as ``memories_then``."""
    rows = memories_then(as_of, principal, agent_id, raw_as_of, "day")
    return {row.date: row for row in rows if row.date is not None}
