"""Webhook endpoints and their deliveries in the single table (docs/reference.md#webhooks,
docs/issues.md#issue-47): an endpoint at ``WEBHOOKS#<wsp>`` / ``ENDPOINT#<whk>`` (its
state, its cursor in the workspace's change events and a ``version`` every change is
conditional on), the workspace's count of endpoints beside it (``COUNT``, the limit), its
recent deliveries (``DELIVERY#<whk>#<dlv>``, with a TTL) and an entry in the delivery
worker's list (``WEBHOOKDIR#<shard>``, named by an owner mark of the workspace so an
erasure finds it by key)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.errors import WebhookLimitReached
from chalicelib.storage.aws_errors import error_code
from chalicelib.storage.dynamodb import (
    DynamoDBTable,
    TransactionCancelled,
    put_new,
    to_attributes,
)
from chalicelib.storage.keys import (
    KV_TTL_ATTRIBUTE,
    WEBHOOK_DIRECTORY_SHARDS,
    webhook_directory_key,
    webhooks_partition,
)
from chalicelib.storage.owner_marks import owner_mark_put

ENDPOINT_SK = "ENDPOINT#"
DELIVERY_SK = "DELIVERY#"
COUNT_SK = "COUNT"


def endpoint_key(workspace_id: str, webhook_id: str) -> dict[str, str]:
    """The key of one endpoint."""
    return {"pk": webhooks_partition(workspace_id), "sk": ENDPOINT_SK + webhook_id}


class DynamoDBWebhookRepository:
    """Endpoints, their count and deliveries (``services/webhooks``).

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def create(self, endpoint: dict[str, Any], max_endpoints: int) -> None:
        """Write a new endpoint (``id``, ``workspaceId`` and its fields, ``version`` 1), its
        worker-list entry and owner mark, and count it: one transaction, refused when the
        workspace already has ``max_endpoints``.

        Raises:
            WebhookLimitReached: the workspace has ``max_endpoints`` endpoints.
        """
        workspace_id, webhook_id = str(endpoint["workspaceId"]), str(endpoint["id"])
        directory = webhook_directory_key(workspace_id, webhook_id)
        operations = [
            put_new({**endpoint_key(workspace_id, webhook_id), "entity": "webhook", **endpoint}),
            put_new({**directory, "entity": "webhook_directory", "workspaceId": workspace_id}),
            owner_mark_put(workspace_id, directory),
            {
                "Update": {
                    "Key": to_attributes({"pk": webhooks_partition(workspace_id), "sk": COUNT_SK}),
                    "UpdateExpression": "SET endpoints = if_not_exists(endpoints, :zero) + :one",
                    "ConditionExpression": "attribute_not_exists(endpoints) OR endpoints < :max",
                    "ExpressionAttributeValues": to_attributes(
                        {":zero": 0, ":one": 1, ":max": max_endpoints}
                    ),
                }
            },
        ]
        try:
            self._table.transact(operations)
        except TransactionCancelled as error:
            if error.reasons[3] == "ConditionalCheckFailed":
                raise WebhookLimitReached(
                    f"The workspace has {max_endpoints} webhook endpoints, the most it may: "
                    "remove one first."
                ) from error
            raise

    def get(self, workspace_id: str, webhook_id: str) -> dict[str, Any] | None:
        """One endpoint (strongly consistent), or None."""
        return self._table.get(endpoint_key(workspace_id, webhook_id))

    def endpoints(self, workspace_id: str) -> list[dict[str, Any]]:
        """Every endpoint of the workspace, oldest first (ids are ULIDs)."""
        return list(self._prefixed(workspace_id, ENDPOINT_SK, forward=True))

    def delete(self, workspace_id: str, webhook_id: str) -> bool:
        """Delete an endpoint, its worker-list entry, and uncount it (one transaction);
        False when it was not there. Its deliveries expire with their TTL."""
        directory = webhook_directory_key(workspace_id, webhook_id)
        try:
            self._table.transact(
                [
                    {
                        "Delete": {
                            "Key": to_attributes(endpoint_key(workspace_id, webhook_id)),
                            "ConditionExpression": "attribute_exists(pk)",
                        }
                    },
                    {"Delete": {"Key": to_attributes(directory)}},
                    {
                        "Update": {
                            "Key": to_attributes(
                                {"pk": webhooks_partition(workspace_id), "sk": COUNT_SK}
                            ),
                            "UpdateExpression": "SET endpoints = endpoints - :one",
                            "ConditionExpression": "endpoints > :zero",
                            "ExpressionAttributeValues": to_attributes({":zero": 0, ":one": 1}),
                        }
                    },
                ]
            )
        except TransactionCancelled as error:
            if error.reasons[0] == "ConditionalCheckFailed":
                return False
            raise
        return True

    def update(
        self, workspace_id: str, webhook_id: str, version: int, changes: dict[str, Any]
    ) -> bool:
        """Set ``changes`` (attribute -> value) on an endpoint whose ``version`` is still
        ``version``, and bump it; False when the endpoint changed or went meanwhile."""
        names = {f"#f{position}": name for position, name in enumerate(changes)}
        values = {f":v{position}": value for position, value in enumerate(changes.values())}
        sets = ", ".join(f"#f{position} = :v{position}" for position in range(len(changes)))
        try:
            self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(endpoint_key(workspace_id, webhook_id)),
                UpdateExpression=f"SET {sets}, version = version + :one",
                ConditionExpression="attribute_exists(pk) AND version = :version",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=to_attributes({**values, ":one": 1, ":version": version}),
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            return False
        return True

    def every_endpoint(self) -> Iterator[tuple[str, str]]:
        """(workspace id, endpoint id) of every endpoint, shard by shard (the worker's
        list; eventually consistent: an endpoint registered a moment ago waits a run)."""
        for shard in range(WEBHOOK_DIRECTORY_SHARDS):
            for item in self._table.query(
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues=to_attributes({":pk": f"WEBHOOKDIR#{shard}"}),
                ProjectionExpression="sk",
            ):
                workspace_id, webhook_id = str(item["sk"]).split("#", 1)
                yield workspace_id, webhook_id

    def record_delivery(self, workspace_id: str, delivery: dict[str, Any], expires: int) -> None:
        """Keep one delivery attempt (``id``, ``webhookId`` …) until ``expires`` (epoch s)."""
        key = {
            "pk": webhooks_partition(workspace_id),
            "sk": f"{DELIVERY_SK}{delivery['webhookId']}#{delivery['id']}",
        }
        self._table.client.put_item(
            TableName=self._table.name,
            Item=to_attributes(
                {**key, "entity": "webhook_delivery", **delivery, KV_TTL_ATTRIBUTE: expires}
            ),
            ConditionExpression="attribute_not_exists(pk)",
        )

    def deliveries(
        self, workspace_id: str, webhook_id: str, limit: int, now_epoch: int
    ) -> list[dict[str, Any]]:
        """Up to ``limit`` recent deliveries of an endpoint, newest first (expired ones,
        which TTL deletes lazily, skipped)."""
        found: list[dict[str, Any]] = []
        for item in self._prefixed(workspace_id, f"{DELIVERY_SK}{webhook_id}#", forward=False):
            if int(item[KV_TTL_ATTRIBUTE]) <= now_epoch:
                continue
            found.append(item)
            if len(found) == limit:
                break
        return found

    def _prefixed(
        self, workspace_id: str, prefix: str, *, forward: bool
    ) -> Iterator[dict[str, Any]]:
        return self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=to_attributes(
                {":pk": webhooks_partition(workspace_id), ":prefix": prefix}
            ),
            ConsistentRead=True,
            ScanIndexForward=forward,
        )
