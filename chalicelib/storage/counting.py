"""Bounded counts of a list's items (docs/reference.md#list-totals, docs/issues.md#issue-48-item-4):
``Select=COUNT`` Queries of the caller's own partition (never a Scan), stopped once
they have read a fixed number of items, so a count costs at most that many items'
bytes whatever the list holds (the caps and read units:
docs/DECISIONS.md#totals-when-paging-issue-48-item-4).

A list is counted in two parts around a page's cursor: the items ahead of it (the
page's place) and the items from it on; each part is one or more Queries (one per
index partition a list merges). The parts share one budget of items read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chalicelib.models.totals import ListTotal
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes


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


@dataclass(frozen=True)
class Condition:
    """An expression and the values it names (plain, converted when sent)."""

    expression: str
    values: dict[str, Any]


def count_keyed(
    table: DynamoDBTable,
    listing: Condition,
    ahead: Condition | None,
    cursor_key: dict[str, str] | None,
    *,
    cap: int,
    consistent: bool,
    newest_first: bool,
    keep: Condition | None = None,
) -> ListTotal:
    """Count a list that pages one partition of the table by ``ExclusiveStartKey``.

    Args:
        listing: the list's own key condition (the whole list).
        ahead: the key condition of the items ahead of the page, the cursor's own item
            included (it ended the page before), e.g. ``sk >= :cursor`` for a newest-first
            list; None when the cursor lies outside ``listing`` (every item is ahead).
        cursor_key: the table key the page continues after; None on the first page.
        cap: the most items read (``count_list``).
        consistent: strongly consistent reads, as the list's own.
        newest_first: the list reads sort keys in descending order (the part from the
            cursor on is read the list's way: ``ExclusiveStartKey`` depends on it).
        keep: a ``FilterExpression`` the list applies (items past their retention).
    """

    def request(condition: Condition, start: dict[str, str] | None) -> dict[str, Any]:
        values = {**condition.values, **(keep.values if keep else {})}
        built: dict[str, Any] = {
            "KeyConditionExpression": condition.expression,
            "ExpressionAttributeValues": to_attributes(values),
            "ConsistentRead": consistent,
            "ScanIndexForward": not newest_first,
        }
        if keep is not None:
            built["FilterExpression"] = keep.expression
        if start is not None:
            built["ExclusiveStartKey"] = to_attributes(start)
        return built

    if cursor_key is None:
        return count_list(table, [], [request(listing, None)], cap)
    if ahead is None:
        return count_list(table, [request(listing, None)], [], cap)
    return count_list(table, [request(ahead, None)], [request(listing, cursor_key)], cap)


def count_newest_first(
    table: DynamoDBTable,
    partition: str,
    oldest: str,
    after: str | None,
    *,
    cap: int,
    keep: Condition | None = None,
) -> ListTotal:
    """Count a newest-first list of one partition's sort keys from ``oldest`` on (a
    retention window of ULID ids: the recall log, review summaries), paged after the
    sort key ``after``; eventually consistent reads, as those lists' own."""
    listing = Condition("pk = :pk AND sk >= :oldest", {":pk": partition, ":oldest": oldest})
    ahead = None
    if after is not None and after >= oldest:
        ahead = Condition("pk = :pk AND sk >= :cursor", {":pk": partition, ":cursor": after})
    cursor_key = None if after is None else {"pk": partition, "sk": after}
    return count_keyed(
        table, listing, ahead, cursor_key, cap=cap, consistent=False, newest_first=True, keep=keep
    )
