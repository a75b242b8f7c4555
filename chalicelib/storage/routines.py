"""DynamoDB adapter of ``RoutineRepository``: one item per agent (``ROUTINE#<agt>``),
listed through the sparse ``byRoutineStatus`` index (docs/reference.md#9-review)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.routine import Routine, RoutineStatus
from chalicelib.storage.dynamodb import DynamoDBTable, key_range_after, page_after, to_attributes
from chalicelib.storage.keys import (
    BY_ROUTINE_STATUS,
    ROUTINE_INDEX_PARTITION,
    ROUTINE_INDEX_SORT,
    routine_index_values,
    routine_key,
)
from chalicelib.storage.protocols import RoutineExists, WriteConflict

FANOUT_PAGE = 500
"""Routines read per Query page by the fan-out."""


def routine_to_item(routine: Routine) -> dict[str, Any]:
    """Return the stored item of a routine (with its sparse-index attributes)."""
    item: dict[str, Any] = {
        **routine_key(routine.agent_id),
        **routine_index_values(routine.workspace_id, routine.agent_id, routine.status.value),
        "entity": "routine",
        "id": routine.id,
        "workspaceId": routine.workspace_id,
        "agentId": routine.agent_id,
        "name": routine.name,
        "schedule": routine.schedule,
        "status": routine.status.value,
        "createdAt": to_rfc3339(routine.created_at),
        "updatedAt": to_rfc3339(routine.updated_at),
        "version": routine.version,
    }
    if routine.updated_by_person_id is not None:
        item["updatedByPersonId"] = routine.updated_by_person_id
    return item


def routine_from_item(item: dict[str, Any]) -> Routine:
    """Rebuild a routine from its stored item."""
    return Routine(
        id=item["id"],
        workspace_id=item["workspaceId"],
        agent_id=item["agentId"],
        name=item["name"],
        schedule=item["schedule"],
        status=RoutineStatus(item["status"]),
        created_at=from_rfc3339(item["createdAt"]),
        updated_at=from_rfc3339(item["updatedAt"]),
        updated_by_person_id=item.get("updatedByPersonId"),
        version=int(item.get("version", 1)),
    )


def _conditional_failed(error: ClientError) -> bool:
    return bool(error.response["Error"]["Code"] == "ConditionalCheckFailedException")


class DynamoDBRoutineRepository:
    """``RoutineRepository`` on the single table.

    Args:
        table: the wrapped table.
        page_size: routines read per Query page by ``iter_active``.
    """

    def __init__(self, table: DynamoDBTable, page_size: int = FANOUT_PAGE) -> None:
        self._table = table
        self._page_size = page_size

    def get(self, agent_id: str) -> Routine | None:
        """Return the routine (tombstones included), strongly consistent."""
        found = self._table.get(routine_key(agent_id))
        return None if found is None else routine_from_item(found)

    def create(self, routine: Routine, *, over_tombstone: bool = False) -> None:
        """Conditional put: exactly one routine per agent, even under concurrent first saves.

        Raises:
            RoutineExists: a routine (or, without ``over_tombstone``, its tombstone)
                is stored already.
        """
        request: dict[str, Any] = {
            "TableName": self._table.name,
            "Item": to_attributes(routine_to_item(routine)),
        }
        if over_tombstone:
            # A person re-creates a deleted routine; a live one is never overwritten.
            request["ConditionExpression"] = "attribute_not_exists(pk) OR #status = :deleted"
            request["ExpressionAttributeNames"] = {"#status": "status"}
            request["ExpressionAttributeValues"] = to_attributes(
                {":deleted": RoutineStatus.DELETED.value}
            )
        else:
            # First save wins; a tombstone also blocks, so a deleted routine stays deleted.
            request["ConditionExpression"] = "attribute_not_exists(pk)"
        try:
            self._table.client.put_item(**request)
        except ClientError as error:
            if _conditional_failed(error):
                raise RoutineExists(routine.agent_id) from error
            raise

    def change(self, before: Routine, after: Routine) -> None:
        """Put ``after`` if the stored version is still ``before``'s.

        Raises:
            WriteConflict: the routine changed since it was read.
        """
        try:
            self._table.client.put_item(
                TableName=self._table.name,
                Item=to_attributes(routine_to_item(after)),
                # Optimistic concurrency: pause/resume/delete act on what they read.
                ConditionExpression="#version = :expected",
                ExpressionAttributeNames={"#version": "version"},
                ExpressionAttributeValues=to_attributes({":expected": before.version}),
            )
        except ClientError as error:
            if _conditional_failed(error):
                raise WriteConflict(before.id) from error
            raise

    def list_workspace(
        self, workspace_id: str, limit: int, after_agent_id: str | None = None
    ) -> tuple[list[Routine], str | None]:
        """Live routines of a workspace by agent id, a page at a time (docs/reference.md#lists).

        One index query per live status, each over the key range after
        ``after_agent_id`` (``key_range_after``), merged in agent id order.

        Returns:
            At most ``limit`` routines, and the agent id to continue after (None at
            the end).
        """
        found: list[Routine] = []
        for status in (RoutineStatus.ACTIVE, RoutineStatus.PAUSED):
            items = self._table.query(
                IndexName=BY_ROUTINE_STATUS,
                KeyConditionExpression="#partition = :status AND #sort BETWEEN :low AND :high",
                ExpressionAttributeNames={
                    "#partition": ROUTINE_INDEX_PARTITION,
                    "#sort": ROUTINE_INDEX_SORT,
                },
                ExpressionAttributeValues=to_attributes(
                    {":status": status.value, **key_range_after(f"{workspace_id}#", after_agent_id)}
                ),
                Limit=limit + 2,
            )
            found.extend(routine_from_item(item) for item in islice(items, limit + 2))
        found.sort(key=lambda routine: routine.agent_id)
        return page_after(found, limit, after_agent_id, key=lambda routine: routine.agent_id)

    def iter_active(self) -> Iterator[Routine]:
        """Every active routine, all workspaces, following ``LastEvaluatedKey``."""
        items = self._table.query(
            IndexName=BY_ROUTINE_STATUS,
            KeyConditionExpression="#partition = :status",
            ExpressionAttributeNames={"#partition": ROUTINE_INDEX_PARTITION},
            ExpressionAttributeValues=to_attributes({":status": RoutineStatus.ACTIVE.value}),
            Limit=self._page_size,
        )
        for item in items:
            yield routine_from_item(item)
