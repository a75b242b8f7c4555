"""DynamoDB adapter of a workspace's section index (docs/reference.md#page-sections,
docs/issues.md#issue-45 item 2): every section of its published pages, with its stored
embedding, in one partition ``WIKISECTIONS#<wsp_id>`` keyed ``<pag_id>#<index>``, so a
recall reads the wiki with one Query of its own workspace (no index, no other tenant).

Writes are conditional on the page's version, never in the page's transaction (a page of
40,000 characters has more sections than a transaction holds): a section is put only
when none is stored or the stored one is of the same or an older version, and deleted
only when it is older, so of two changes of one page indexed out of order the newer
stays. A recall shows a section only while its page, read by key, is published at the
section's version (``RecallService``), so a section left by a change whose indexing
stopped half-way is never shown.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from chalicelib.models.page import IndexedSection
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import section_index_partition, section_key

_CONDITION_FAILED = "ConditionalCheckFailedException"


def section_to_item(section: IndexedSection) -> dict[str, Any]:
    """The stored item of a section, key included."""
    item: dict[str, Any] = {
        **section_key(section.workspace_id, section.page_id, section.index),
        "workspaceId": section.workspace_id,
        "pageId": section.page_id,
        "version": section.version,
        "index": section.index,
        "anchor": section.anchor,
        "headingPath": list(section.heading_path),
        "slug": section.slug,
        "text": section.text,
    }
    if section.embedding is not None:
        item["embedding"] = section.embedding
    return item


def section_from_item(item: dict[str, Any]) -> IndexedSection:
    """Rebuild a section from its item."""
    embedding = item.get("embedding")
    return IndexedSection(
        workspace_id=str(item["workspaceId"]),
        page_id=str(item["pageId"]),
        version=int(item["version"]),
        index=int(item["index"]),
        anchor=str(item["anchor"]),
        heading_path=tuple(str(part) for part in item["headingPath"]),
        slug=str(item["slug"]),
        text=str(item["text"]),
        embedding=None if embedding is None else bytes(embedding),
    )


class DynamoDBSectionIndex:
    """The workspaces' section indexes on the single table.

    Args:
        table: the table wrapper.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def replace(
        self, workspace_id: str, page_id: str, version: int, sections: list[IndexedSection]
    ) -> None:
        """Make ``sections`` (all of ``version``) the page's sections: each put unless a
        newer version's is stored; the page's other stored sections of an older version
        deleted. One Query of the page's keys, one PutItem a section, one DeleteItem a
        stale one."""
        for section in sections:
            self._conditional(
                "put_item",
                Item=to_attributes(section_to_item(section)),
                ConditionExpression="attribute_not_exists(pk) OR version <= :v",
                ExpressionAttributeValues=to_attributes({":v": version}),
            )
        kept = {section_key(workspace_id, page_id, s.index)["sk"] for s in sections}
        for stale in self._page_keys(workspace_id, page_id):
            if stale["sk"] not in kept:
                self._delete_older(stale, version)

    def remove(self, workspace_id: str, page_id: str, version: int) -> None:
        """Delete the page's sections older than ``version`` (it was archived at it)."""
        for stale in self._page_keys(workspace_id, page_id):
            self._delete_older(stale, version)

    def sections(self, workspace_id: str) -> list[IndexedSection]:
        """Every section of the workspace's index, in key order (eventually consistent:
        what a recall reads)."""
        rows = self._table.query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=to_attributes({":pk": section_index_partition(workspace_id)}),
        )
        return [section_from_item(row) for row in rows]

    def _page_keys(self, workspace_id: str, page_id: str) -> list[dict[str, str]]:
        rows = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :page)",
            ExpressionAttributeValues=to_attributes(
                {":pk": section_index_partition(workspace_id), ":page": f"{page_id}#"}
            ),
            ProjectionExpression="pk, sk",
            ConsistentRead=True,
        )
        return [{"pk": str(row["pk"]), "sk": str(row["sk"])} for row in rows]

    def _delete_older(self, key: dict[str, str], version: int) -> None:
        self._conditional(
            "delete_item",
            Key=to_attributes(key),
            ConditionExpression="version < :v",
            ExpressionAttributeValues=to_attributes({":v": version}),
        )

    def _conditional(self, operation: str, **kwargs: Any) -> None:
        """One conditional write; a failed condition (a newer version is stored) is the
        rule working, not an error."""
        try:
            getattr(self._table.client, operation)(TableName=self._table.name, **kwargs)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != _CONDITION_FAILED:
                raise
