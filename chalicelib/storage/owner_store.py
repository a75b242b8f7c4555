"""The table and bucket as an erasure reads them
(docs/reference.md#erasing-an-agent-a-person-or-a-workspace,
docs/issues.md#issue-24-item-2, docs/issues.md#issue-41-item-1): the items keyed by one
owner's id, page by page, read by key (``owned_pages``; no Scan), batch deletes, object
versions under a prefix, and the erasure's own record.

The erasure's record is ``ERASURE#<target id>`` / ``RECORD`` (progress, then the
tombstone that stays); the ids it collected are ``ERASURE#<target id>`` / ``ID#<id>``,
deleted when it finishes.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from chalicelib.ids import Clock, SystemClock
from chalicelib.normalized import content_digest
from chalicelib.storage.aws_errors import S3_THROTTLING, translate_errors
from chalicelib.storage.dynamodb import DynamoDBTable, TransactionCancelled, put_new, to_attributes
from chalicelib.storage.erasure_list import DynamoDBErasureList, erasure_list_item
from chalicelib.storage.keys import (
    AGENT_KIND_INDEX_PARTITION,
    AGENT_MEMORY_STATES,
    BY_AGENT_KIND,
    BY_TOKEN_PRINCIPAL,
    EVENT_KEPT_DAYS,
    EVENT_TTL_SLACK_DAYS,
    TOKEN_INDEX_PARTITION,
    agent_key,
    agent_kind_values,
    day_pointer_key,
    erasure_epoch_key,
    erasure_id_key,
    erasure_partition,
    erasure_record_key,
    event_partitions,
    owned_key,
    owned_partition,
    owner_partitions,
    same_fact_key,
)
from chalicelib.storage.learning_recount import recount_live_learnings
from chalicelib.storage.reports import object_body

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

OWNED_PAGE_ITEMS = 500
"""Items per page an owner's read yields: one page, then its deletes."""
_BATCH = 25


@dataclass(frozen=True)
class ObjectVersion:
    """One version (or delete marker) of an object: key, version id, bytes (0 for a
    marker), and whether it is the object's current, readable version."""

    key: str
    version_id: str
    size: int
    is_live: bool = False


class DynamoDBOwnerStore:
    """``OwnerStore`` on the single table and the stack's bucket.

    Args:
        table: the wrapped table.
        s3_factory: builds a boto3 S3 client (called at most once).
        bucket: the stack's bucket.
        clock: today's date, from which the event partitions are walked back (the
            system clock by default).
    """

    def __init__(
        self,
        table: DynamoDBTable,
        s3_factory: Callable[[], S3Client],
        bucket: str,
        clock: Clock | None = None,
    ):
        self._table = table
        self._clock = clock or SystemClock()
        self._s3_factory = s3_factory
        self._s3_client: S3Client | None = None
        self._bucket = bucket

    def _s3(self) -> S3Client:
        if self._s3_client is None:
            self._s3_client = translate_errors(self._s3_factory(), S3_THROTTLING)
        return self._s3_client

    def owned_pages(self, owner_id: str) -> Iterator[list[dict[str, Any]]]:
        """The items keyed by one id, page by page (``OWNED_PAGE_ITEMS`` at most), read by
        key and never by a Scan (docs/reference.md#erasing-an-agent-a-person-or-a-workspace):

        * ``agt_…``: its partitions (``AGENT_PARTITIONS``), its memories with their audit
          records (the ``byAgentKind`` index, then each memory's partition) and day-row
          pointers, its tokens (``byTokenPrincipal``), and the items its owner marks name;
        * ``usr_…``: the person, their tokens, and the items their owner marks name
          (dashboard sessions, sign-in codes, the e-mail claim, idempotency records);
        * ``wsp_…``: the workspace's partitions (``WORKSPACE_PARTITIONS``: its listing,
          settings, learnings, actions waiting for a person, key-value entries of its
          account scope) and the items its owner marks name (exports' records);
        * ``wsp_…`` and ``agt_…`` also: their change events' day partitions
          (``event_days``);
        * ``mem_…``, ``rvw_…``, ``tok_…``, ``lrn_…``: that memory's, review's, token id's,
          learning history's partition.

        Strongly consistent but for the two index reads (an item written a moment ago may
        be missed there: an erasure revokes the tokens first, so nothing new comes).
        Another id yields nothing.
        """
        for partition in owner_partitions(owner_id) + event_partitions(
            owner_id, event_days(self._clock.now())
        ):
            yield from self._partition_pages(partition)
        if owner_id.startswith("agt_"):
            yield from self._memory_pages(owner_id)
        if owner_id.startswith(("agt_", "usr_")):
            yield from _chunks(self._tokens(owner_id))
        if owner_id.startswith(("agt_", "usr_", "wsp_")):
            yield from self._marked_pages(owner_id)

    def _partition_pages(self, partition: str) -> Iterator[list[dict[str, Any]]]:
        rows = self._table.query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=to_attributes({":pk": partition}),
            ConsistentRead=True,
        )
        yield from _chunks(rows)

    def _memory_pages(self, agent_id: str) -> Iterator[list[dict[str, Any]]]:
        """The agent's memories (every kind and status, from ``byAgentKind``), each with
        its audit records, and the day-row pointers of its day rows' dates."""
        for kind, status in AGENT_MEMORY_STATES:
            rows = self._table.query(
                IndexName=BY_AGENT_KIND,
                KeyConditionExpression="#partition = :partition",
                ExpressionAttributeNames={"#partition": AGENT_KIND_INDEX_PARTITION},
                ExpressionAttributeValues=to_attributes(agent_kind_values(agent_id, kind, status)),
            )
            for row in rows:
                # one page per memory: its audit records sort before the memory item
                page = list(
                    self._table.query(
                        KeyConditionExpression="pk = :pk",
                        ExpressionAttributeValues=to_attributes({":pk": str(row["pk"])}),
                        ConsistentRead=True,
                    )
                )
                # the entry first: it is found only from the fact's text, which goes with
                # the memory's page (an erasure stopped between the two resumes clean)
                entry = self._same_fact_entry(page)
                if entry is not None:
                    yield [entry]
                yield page
                if row.get("date"):
                    pointer = self._table.get(day_pointer_key(agent_id, str(row["date"])))
                    if pointer is not None:
                        yield [pointer]

    def _same_fact_entry(self, page: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The shared-facts entry of the page's fact (``same_facts.py``), if it has one: it
        is keyed by the digest of the fact's text, so it is found from the fact, by key."""
        for item in page:
            if item.get("entity") == "memory" and item.get("kind") == "fact" and item.get("text"):
                key = same_fact_key(
                    str(item["workspaceId"]),
                    content_digest(str(item["text"])),
                    str(item["agentId"]),
                    str(item["id"]),
                )
                return self._table.get(key)
        return None

    def _tokens(self, principal_id: str) -> Iterator[dict[str, Any]]:
        return self._table.query(
            IndexName=BY_TOKEN_PRINCIPAL,
            KeyConditionExpression="#principal = :principal",
            ExpressionAttributeNames={"#principal": TOKEN_INDEX_PARTITION},
            ExpressionAttributeValues=to_attributes({":principal": principal_id}),
        )

    def _marked_pages(self, owner_id: str) -> Iterator[list[dict[str, Any]]]:
        """The owner's marks and the items they name (``owner_marks.py``)."""
        for marks in self._partition_pages(owned_partition(owner_id)):
            keys = [owned_key(str(mark["sk"])) for mark in marks]
            yield marks + self._table.batch_get(keys)

    def workspace_of(self, agent_id: str) -> str | None:
        """The agent's workspace (its item's ``workspaceId``), or None."""
        found = self._table.get(agent_key(agent_id))
        return None if found is None else str(found.get("workspaceId") or "") or None

    def bump_erasure_epoch(self, workspace_id: str) -> None:
        """Give the workspace's erasure epoch a new value (an erasure starts or ends:
        an export running meanwhile discards its file). Last writer wins: any new
        value is a change."""
        self._table.client.put_item(
            TableName=self._table.name,
            Item=to_attributes({**erasure_epoch_key(workspace_id), "epoch": secrets.token_hex(8)}),
        )

    def recount_live_learnings(self, workspace_id: str) -> int | None:
        """Recompute the workspace's count of live learnings (``learning_recount.py``)."""
        return recount_live_learnings(self._table, workspace_id)

    def drop_erasure_epoch(self, workspace_id: str) -> None:
        """Delete the workspace's erasure epoch (its own erasure ends: nothing of it
        stays but the tombstone; the change from the last value is what an export sees)."""
        self._table.client.delete_item(
            TableName=self._table.name, Key=to_attributes(erasure_epoch_key(workspace_id))
        )

    def delete_items(self, keys: Iterable[dict[str, str]]) -> int:
        """Delete items by key (``BatchWriteItem``, unprocessed ones retried); deleting a
        missing item is no error. Returns how many keys were sent."""
        batch = list(keys)
        for start in range(0, len(batch), _BATCH):
            pending: dict[str, Any] = {
                self._table.name: [
                    {"DeleteRequest": {"Key": to_attributes(key)}}
                    for key in batch[start : start + _BATCH]
                ]
            }
            while pending:
                response = self._table.client.batch_write_item(RequestItems=pending)
                pending = response.get("UnprocessedItems") or {}
        return len(batch)

    def object_versions(self, prefix: str) -> list[ObjectVersion]:
        """Every version and delete marker of the objects under ``prefix``."""
        found: list[ObjectVersion] = []
        paginator = self._s3().get_paginator("list_object_versions")
        for page in paginator.paginate(Bucket=self._bucket, Prefix=prefix):
            for entry in page.get("Versions", []):
                found.append(
                    ObjectVersion(
                        str(entry["Key"]),
                        str(entry["VersionId"]),
                        int(entry["Size"]),
                        bool(entry.get("IsLatest")),
                    )
                )
            for marker in page.get("DeleteMarkers", []):
                found.append(ObjectVersion(str(marker["Key"]), str(marker["VersionId"]), 0))
        return found

    def delete_versions(self, versions: Iterable[ObjectVersion]) -> int:
        """Delete object versions one by one (each is its own ``s3:DeleteObjectVersion``).
        Returns how many were deleted."""
        deleted = 0
        for version in versions:
            self._s3().delete_object(
                Bucket=self._bucket, Key=version.key, VersionId=version.version_id
            )
            deleted += 1
        return deleted

    def get_object(self, key: str) -> bytes | None:
        """An object's current body, or None when it is missing (export)."""
        return object_body(self._s3(), self._bucket, key)

    def current_objects(self, prefix: str) -> list[str]:
        """The keys of the objects under ``prefix`` (current versions; export)."""
        keys: list[str] = []
        paginator = self._s3().get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self._bucket, Prefix=prefix):
            keys.extend(str(entry["Key"]) for entry in page.get("Contents", []))
        return keys

    def put_object(self, key: str, body: bytes) -> None:
        """Write an object (import; an erasure's rewritten report): the same body again
        is a new version of the same."""
        self._s3().put_object(Bucket=self._bucket, Key=key, Body=body)

    def put_new_item(self, item: dict[str, Any]) -> str:
        """Write an item unless its key exists (import): ``created``; ``same`` when an
        identical item is there; ``conflict`` when another item holds the key (it is
        left as it is)."""
        try:
            self._table.client.put_item(
                TableName=self._table.name,
                Item=to_attributes(item),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            existing = self._table.get({"pk": item["pk"], "sk": item["sk"]})
            return "same" if existing == item else "conflict"
        return "created"

    def record(self, target_id: str) -> dict[str, Any] | None:
        """The erasure's record of ``target_id`` (progress or tombstone), or None."""
        found = self._table.get(erasure_record_key(target_id))
        if found is None:
            return None
        return {**found, "progress": json.loads(str(found.get("progress", "{}")))}

    def save_record(self, target_id: str, record: dict[str, Any]) -> None:
        """Write the erasure's record (its operator's progress; last writer wins: one
        erasure of a target runs at a time, docs/operations.md#erasure-requests) and, in
        the same transaction, its workspace's listing entry (``erasure_list.py``; the
        same entry each time)."""
        listed = erasure_list_item({**record, "targetId": target_id})
        item = to_attributes(_record_item(target_id, record))
        if listed is None:
            self._table.client.put_item(TableName=self._table.name, Item=item)
            return
        self._table.transact([{"Put": {"Item": item}}, {"Put": {"Item": to_attributes(listed)}}])

    def erasures(
        self, workspace_id: str, limit: int, after: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of the workspace's past erasures, newest first (``erasure_list.py``)."""
        return DynamoDBErasureList(self._table).erasures(workspace_id, limit, after)

    def drop_erasure_list(self, workspace_id: str) -> int:
        """Delete the workspace's listing of its past erasures (its own erasure ends)."""
        return DynamoDBErasureList(self._table).drop(workspace_id)

    def queue_record(self, target_id: str, record: dict[str, Any]) -> dict[str, Any] | None:
        """Write a person's queued erasure's record unless the target has one already
        (``attribute_not_exists``: a second request never restarts or overwrites one),
        with its workspace's listing entry in the same transaction.

        Returns:
            None when written; else the record that was there.
        """
        listed = erasure_list_item({**record, "targetId": target_id})
        operations = [put_new(_record_item(target_id, record))]
        if listed is not None:
            # listed in the same transaction: no erasure is missing from its workspace's list
            operations.append({"Put": {"Item": to_attributes(listed)}})
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            if cancelled.reasons[:1] != ["ConditionalCheckFailed"]:
                raise
            return self.record(target_id)
        return None

    def add_ids(self, target_id: str, ids: Iterable[str]) -> None:
        """Remember ids the erasure collected (one small item each, idempotent)."""
        keys = [erasure_id_key(target_id, found) for found in ids]
        for start in range(0, len(keys), _BATCH):
            pending: dict[str, Any] = {
                self._table.name: [
                    {"PutRequest": {"Item": to_attributes(key)}}
                    for key in keys[start : start + _BATCH]
                ]
            }
            while pending:
                response = self._table.client.batch_write_item(RequestItems=pending)
                pending = response.get("UnprocessedItems") or {}

    def collected_ids(self, target_id: str) -> set[str]:
        """The ids ``add_ids`` remembered for ``target_id``."""
        rows = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :id)",
            ExpressionAttributeValues=to_attributes(
                {":pk": erasure_partition(target_id), ":id": "ID#"}
            ),
            ConsistentRead=True,
        )
        return {str(row["sk"])[3:] for row in rows}

    def forget_ids(self, target_id: str) -> None:
        """Delete the remembered ids (the erasure finished)."""
        ids = self.collected_ids(target_id)
        self.delete_items(erasure_id_key(target_id, found) for found in ids)


def event_days(now: datetime) -> list[str]:
    """The UTC days whose event partitions may still hold items at ``now``: the kept
    days and ``EVENT_TTL_SLACK_DAYS`` more (TTL deletion is lazy), and tomorrow (a clock
    a little ahead), oldest first (docs/reference.md#change-events)."""
    today = now.astimezone(UTC).date()
    back = EVENT_KEPT_DAYS + EVENT_TTL_SLACK_DAYS
    return [(today - timedelta(days=n)).isoformat() for n in range(back, -2, -1)]


def read_erasure_epoch(table: DynamoDBTable, workspace_id: str) -> str:
    """The workspace's erasure epoch (``keys.erasure_epoch_key``; "" when none)."""
    found = table.get(erasure_epoch_key(workspace_id))
    return "" if found is None else str(found.get("epoch", ""))


def _chunks(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    page: list[dict[str, Any]] = []
    for row in rows:
        page.append(row)
        if len(page) == OWNED_PAGE_ITEMS:
            yield page
            page = []
    if page:
        yield page


def _record_item(target_id: str, record: dict[str, Any]) -> dict[str, Any]:
    """An erasure's record as stored: its progress as a JSON string."""
    return {
        **erasure_record_key(target_id),
        **{name: value for name, value in record.items() if name != "progress"},
        "progress": json.dumps(record.get("progress", {}), sort_keys=True),
    }
