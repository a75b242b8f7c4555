"""A one-time upgrade of a table written by an older version: agents get their workspace
listing item and memories their ``byAgentKind`` index value (both from the dashboard's
release, docs/issues.md#issue-13), and memories their sharded workspace-index values (from
docs/issues.md#issue-23-item-2's), and items not keyed by their owner their owner mark
(docs/issues.md#issue-41-item-1: erasures and exports read by key), and erasures made
before their workspace listed them their entry in its past erasures
(docs/issues.md#issue-48-item-4, ``erasure_list.py``), and the tag index is filed
again from the memories (``memory_tags.refile_memory``, ``memory_tags.drop_stale_entry``:
a release without tags, rolled back to, changed memories without it;
docs/operations.md#rollback), and so is the metadata index (``memory_metadata``, from
docs/issues.md#issue-46-item-2: facts saved with metadata before it; counted with the
tag index's entries in the report); and the wiki's section index of one item a section is
rebuilt as one packed record a page (``wiki_sections.rebuild_pages``,
docs/issues.md#issue-45-item-3).

Items written since carry them all (``directory.workspace_agent_item``,
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
from chalicelib.storage.erasure_list import erasure_entry
from chalicelib.storage.keys import (
    ERASURE_PREFIX,
    MEMORY_META_PREFIX,
    MEMORY_TAGS_PREFIX,
    agent_kind_index_value,
    erasure_record_key,
    memory_key,
    upgrade_marker_key,
    workspace_index_values,
)
from chalicelib.storage.memory_metadata import drop_stale_metadata, refile_metadata
from chalicelib.storage.memory_tags import drop_stale_entry, refile_memory
from chalicelib.storage.owner_marks import mark_of
from chalicelib.storage.wiki_sections import (
    DynamoDBSectionIndex,
    is_item_of_a_section,
    rebuild_pages,
)

TABLE_UPGRADE = "metadata-index-wiki-pages-v1"
"""The marker of a finished run of this release's upgrade (older releases',
``dashboard-v1``, ``workspace-shards-v1``, ``owner-marks-v1``, ``erasure-list-v1`` and
``tag-index-v1``, did only their parts, so a table that has one is scanned again)."""


def missing_index_values(item: dict[str, Any]) -> dict[str, str]:
    """The index attributes a memory item lacks for its state (none for one written by
    this release)."""
    wanted = {
        **agent_kind_index_value(item["agentId"], item["kind"], item["status"]),
        **workspace_index_values(item["workspaceId"], item["agentId"], item["status"]),
    }
    return {name: value for name, value in wanted.items() if name not in item}


class TableUpgrade:
    """Runs ``TABLE_UPGRADE`` over one table.

    Args:
        table: the wrapped table.
        sections: the wiki's section index, whose earlier items are rebuilt as page
            records; None: they are left (an upgrade without the bucket).
    """

    def __init__(self, table: DynamoDBTable, sections: DynamoDBSectionIndex | None = None) -> None:
        self._table = table
        self._sections = sections
        self._directory = DynamoDBDirectoryRepository(table)

    def run(self, now: datetime) -> UpgradeReport:
        """Upgrade every item that needs it, then record the run (``now``).

        Returns:
            The counts; ``done_before`` when a finished run was recorded.
        """
        marker = upgrade_marker_key(TABLE_UPGRADE)
        if self._table.get(marker) is not None:
            return UpgradeReport(done_before=True)
        scanned = listed = indexed = changed = marked = erasures = refiled = dropped = 0
        old_sections: list[dict[str, Any]] = []
        for item in self._table.scan():
            scanned += 1
            if is_item_of_a_section(item):
                old_sections.append(item)
                continue
            entity = item.get("entity")
            erasures += self._list_erasure(item)
            filed, stale = self._refile(item)
            refiled, dropped = refiled + filed, dropped + stale
            if entity == "agent" and self._directory.add_workspace_listing(
                convert.agent_from_item(item)
            ):
                listed += 1
            elif entity == "memory" and (missing := missing_index_values(item)):
                if self._index(item, missing):
                    indexed += 1
                else:
                    changed += 1
            elif (mark := mark_of(item)) is not None:
                # unconditional: the same mark again is the same item
                self._table.client.put_item(TableName=self._table.name, Item=to_attributes(mark))
                marked += 1
        pages = 0 if self._sections is None else rebuild_pages(self._sections, old_sections)
        self._table.client.put_item(
            TableName=self._table.name,
            Item=to_attributes({**marker, "entity": "upgrade", "at": to_rfc3339(now)}),
        )
        return UpgradeReport(
            False, scanned, listed, indexed, changed, marked, erasures, refiled, dropped, pages
        )

    def _refile(self, item: dict[str, Any]) -> tuple[int, int]:
        """File the tag and metadata index entries of a memory ``item`` again, or drop
        ``item`` when it is an index entry its memory no longer has. Returns how many
        memories were (re)filed and entries dropped (0 or 1 each, per index)."""
        pk = str(item.get("pk", ""))
        if item.get("entity") == "memory":
            memory = convert.memory_from_item(item)
            filed = refile_memory(self._table, memory) if item.get("tags") else False
            if item.get("metadata"):
                filed = refile_metadata(self._table, memory) or filed
            return int(filed), 0
        if pk.startswith(MEMORY_TAGS_PREFIX):
            return 0, int(drop_stale_entry(self._table, item))
        if pk.startswith(MEMORY_META_PREFIX):
            return 0, int(drop_stale_metadata(self._table, item))
        return 0, 0

    def _list_erasure(self, item: dict[str, Any]) -> int:
        """Write the past-erasures entry ``item`` stands for (``erasure_entry``), unless
        its workspace was erased since (nothing of it is listed then). Unconditional:
        the entry is the one the erasure itself writes. Returns how many were written."""
        entry = erasure_entry(item)
        if entry is None:
            return 0
        workspace = str(entry["pk"]).removeprefix(ERASURE_PREFIX)
        if self._table.get(erasure_record_key(workspace)) is not None:
            return 0
        self._table.client.put_item(TableName=self._table.name, Item=to_attributes(entry))
        return 1

    def _index(self, item: dict[str, Any], missing: dict[str, str]) -> bool:
        names = {"#status": "status"}
        values: dict[str, Any] = {":status": item["status"]}
        sets, absent = [], []
        for position, (attribute, value) in enumerate(sorted(missing.items())):
            names[f"#a{position}"] = attribute
            values[f":v{position}"] = value
            sets.append(f"#a{position} = :v{position}")
            absent.append(f"attribute_not_exists(#a{position})")
        try:
            self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(memory_key(item["id"])),
                UpdateExpression="SET " + ", ".join(sets),
                # The values follow the status read: a change since then wrote its own.
                ConditionExpression=" AND ".join([*absent, "#status = :status"]),
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=to_attributes(values),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True
