"""A one-time upgrade of a table written by a version before the dashboard
(docs/issues.md#issue-13): agents get their workspace listing item, memories their ``byAgentKind``
index value.

Items written since carry both (``directory.workspace_agent_item``,
``items.memory_to_item``). The upgrade scans the whole table once, so it is an
operator command (``pinework admin upgrade-table``), never run by the API; the
local server runs it at start. Every write is conditional, so it is safe to run
while the service runs and to run again; a marker item records a finished run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.ids import to_rfc3339
from chalicelib.storage import items as convert
from chalicelib.storage.dashboard_protocols import UpgradeReport
from chalicelib.storage.directory import DynamoDBDirectoryRepository
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import (
    AGENT_KIND_INDEX_PARTITION,
    agent_kind_index_value,
    memory_key,
    upgrade_marker_key,
)

DASHBOARD_UPGRADE = "dashboard-v1"


class TableUpgrade:
    """Runs ``DASHBOARD_UPGRADE`` over one table.

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table
        self._directory = DynamoDBDirectoryRepository(table)

    def run(self, now: datetime) -> UpgradeReport:
        """Upgrade every item that needs it, then record the run (``now``).

        Returns:
            The counts; ``done_before`` when a finished run was recorded.
        """
        marker = upgrade_marker_key(DASHBOARD_UPGRADE)
        if self._table.get(marker) is not None:
            return UpgradeReport(done_before=True)
        scanned = listed = indexed = changed = 0
        for item in self._table.scan():
            scanned += 1
            entity = item.get("entity")
            if entity == "agent" and self._directory.add_workspace_listing(
                convert.agent_from_item(item)
            ):
                listed += 1
            elif entity == "memory" and AGENT_KIND_INDEX_PARTITION not in item:
                if self._index(item):
                    indexed += 1
                else:
                    changed += 1
        self._table.client.put_item(
            TableName=self._table.name,
            Item=to_attributes({**marker, "entity": "upgrade", "at": to_rfc3339(now)}),
        )
        return UpgradeReport(False, scanned, listed, indexed, changed)

    def _index(self, item: dict[str, Any]) -> bool:
        value = agent_kind_index_value(item["agentId"], item["kind"], item["status"])
        try:
            self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(memory_key(item["id"])),
                UpdateExpression="SET #index = :value",
                # The value follows the status read: a change since then wrote its own.
                ConditionExpression="attribute_not_exists(#index) AND #status = :status",
                ExpressionAttributeNames={
                    "#index": AGENT_KIND_INDEX_PARTITION,
                    "#status": "status",
                },
                ExpressionAttributeValues=to_attributes(
                    {":value": value[AGENT_KIND_INDEX_PARTITION], ":status": item["status"]}
                ),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True
