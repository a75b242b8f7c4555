"""Bounded counts of a list's items (docs/reference.md#list-totals, docs/issues.md#issue-48):
``Select=COUNT`` Queries of the caller's own partition (never a Scan), stopped once
they have read a fixed number of items, so a count costs at most that many items'
bytes whatever the list holds (the caps and read units: docs/DECISIONS.md, issue 48).

A list is counted in two parts around a page's cursor: the items ahead of it (the
page's place) and the items from it on; each part is one or more Queries (one per
index partition a list merges). The parts share one budget of items read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chalicelib.models.totals import ListTotal
from chalicelib.storage.dynamodb import DynamoDBTable


class _Budget:
    """Items a count may still read (``cap + 1``: one past the cap tells a list of
    exactly ``cap`` items from a longer one)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.left = cap + 1

    def count(self, table: DynamoDBTable, requests: Sequence[dict[str, Any]]) -> int:
        """Items matching ``requests`` (Query arguments; a ``FilterExpression`` is
        applied), reading at most what is left of the budget."""
        matched = 0
        for request in requests:
            call = {"TableName": table.name, **request, "Select": "COUNT"}
            while self.left > 0:
                call["Limit"] = self.left
                response = table.client.query(**call)
                matched += int(response.get("Count", 0))
                self.left -= int(response.get("ScannedCount", 0))
                last = response.get("LastEvaluatedKey")
                if not last:
                    break
                call["ExclusiveStartKey"] = last
        return matched

    @property
    def spent(self) -> bool:
        """True when the count stopped at the cap (one item past it was read)."""
        return self.left <= 0


def count_list(
    table: DynamoDBTable,
    ahead: Sequence[dict[str, Any]],
    rest: Sequence[dict[str, Any]],
    cap: int,
) -> ListTotal:
    """Count a list around a page: ``ahead`` (Queries of the items before the page;
    empty on the first page) first, then ``rest`` (the page and what follows), at most
    ``cap`` items read in all (plus one, to know whether more exist).

    Args:
        ahead: Query arguments (key condition, optional filter) of the items ahead.
        rest: Query arguments of the items from the page on.
        cap: the most items the count reads (its cost bound).

    Returns:
        The total; ``before`` is None when the cap was reached ahead of the page.
    """
    budget = _Budget(cap)
    before = budget.count(table, ahead)
    if budget.spent:
        return ListTotal(before=None, total=min(before, cap), capped=True)
    after = budget.count(table, rest)
    if budget.spent:
        return ListTotal(before=before, total=min(before + after, cap), capped=True)
    return ListTotal.whole(before + after, before=before)
