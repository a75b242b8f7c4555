"""DynamoDB and S3 adapter of a workspace's section index (docs/reference.md#page-sections,
docs/issues.md#issue-45-item-2, docs/issues.md#issue-45-item-3): the sections of its
published pages with their stored embeddings, one packed record a page.

A published page has one small item in the workspace's partition
``WIKISECTIONS#<wsp_id>`` (``keys.section_page_key``: its version and the S3 key of its
record) and one S3 object, the record (``keys.section_page_object``: every section's
position, anchor, heading path, text and embedding), written once and never changed. A
recall reads the partition's items (about 100 bytes a page: one Query page for a
thousand pages) and only the records it has not read before: a process keeps the records
it read under their object keys (``RECORD_CACHE_BYTES``), so a warm reader fetches only
the pages changed since its last recall, and an edit writes only its page's record.

Writes are conditional on the page's version, never in the page's transaction: the
record's object is written first, then the item put only when none is stored or the
stored one is of the same or an older version, then the object of the version it
replaced deleted; an archive deletes the item only when it is older than the archive.
So of two changes of one page indexed out of order the newer stays, and an object is
deleted only once no item points at it (a reader that read the item just before finds
the object gone and leaves that page out of that one recall). A recall shows a section
only while its page, read by key, is published at the section's version
(``RecallService``), so a record left by a change whose indexing stopped half-way is
never shown.
"""

from __future__ import annotations

import json
import logging
import struct
import threading
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.models.page import IndexedPage, IndexedSection
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import (
    SECTION_PAGE_PREFIX,
    section_index_partition,
    section_page_key,
    section_page_object,
)
from chalicelib.storage.kv import S3ObjectStore

logger = logging.getLogger(__name__)

_CONDITION_FAILED = "ConditionalCheckFailedException"
_FORMAT = 1
"""The packed record's format number (its first byte)."""
_HEADER = struct.Struct(">BI")
"""Format, then the length of the JSON part; the embeddings follow it."""

RECORD_CACHE_BYTES = 400_000_000
"""The packed records a process keeps after reading them (least recently used dropped
first): a workspace of 1,000 pages of 50 sections is about 150 MB of records."""
_READERS = 16
"""Records fetched at once by a reader that misses several."""


def pack_sections(sections: Iterable[IndexedSection]) -> bytes:
    """The packed record of a page's sections: a header, a JSON list of each section's
    index, anchor, heading path, text and embedding length, then the embeddings."""
    listed = list(sections)
    embeddings = [section.embedding or b"" for section in listed]
    described = [
        {
            "i": section.index,
            "a": section.anchor,
            "h": list(section.heading_path),
            "t": section.text,
            "e": len(embedding) if section.embedding is not None else -1,
        }
        for section, embedding in zip(listed, embeddings, strict=True)
    ]
    head = json.dumps(described, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return _HEADER.pack(_FORMAT, len(head)) + head + b"".join(embeddings)


def unpack_sections(
    data: bytes, workspace_id: str, page_id: str, version: int, slug: str
) -> list[IndexedSection]:
    """The sections of a packed record (``pack_sections``).

    Raises:
        ValueError: not a packed record of a known format."""
    form, length = _HEADER.unpack_from(data)
    if form != _FORMAT:
        raise ValueError(f"section record of format {form}")
    start = _HEADER.size
    described = json.loads(data[start : start + length].decode("utf-8"))
    at = start + length
    sections: list[IndexedSection] = []
    for entry in described:
        size = int(entry["e"])
        embedding = None if size < 0 else bytes(data[at : at + size])
        at += max(size, 0)
        sections.append(
            IndexedSection(
                workspace_id=workspace_id,
                page_id=page_id,
                version=version,
                index=int(entry["i"]),
                anchor=str(entry["a"]),
                heading_path=tuple(str(part) for part in entry["h"]),
                slug=slug,
                text=str(entry["t"]),
                embedding=embedding,
            )
        )
    return sections


def page_item(
    workspace_id: str, page_id: str, version: int, slug: str, count: int
) -> dict[str, Any]:
    """A published page's item in its workspace's section index (its record's pointer)."""
    return {
        **section_page_key(workspace_id, page_id),
        "pageId": page_id,
        "version": version,
        "slug": slug,
        "sections": count,
        "o": section_page_object(workspace_id, page_id, version),
    }


class _RecordCache:
    """Records read, by object key, least recently used dropped past a byte bound."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._records: OrderedDict[str, tuple[IndexedPage, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> IndexedPage | None:
        with self._lock:
            found = self._records.get(key)
            if found is None:
                return None
            self._records.move_to_end(key)
            return found[0]

    def put(self, record: IndexedPage, size: int) -> None:
        with self._lock:
            if record.key in self._records:
                return
            self._records[record.key] = (record, size)
            self._bytes += size
            while self._bytes > self._limit and len(self._records) > 1:
                _, (_, dropped) = self._records.popitem(last=False)
                self._bytes -= dropped


_CACHE = _RecordCache(RECORD_CACHE_BYTES)
"""The process's records (shared by every service it builds: a record's key names its
content, whichever table wrapper read it)."""


class DynamoDBSectionIndex:
    """The workspaces' section indexes on the single table and the stack's bucket.

    Args:
        table: the table wrapper.
        objects: the bucket of the packed records.
    """

    def __init__(self, table: DynamoDBTable, objects: S3ObjectStore) -> None:
        self._table = table
        self._objects = objects

    def replace(
        self, workspace_id: str, page_id: str, version: int, sections: list[IndexedSection]
    ) -> None:
        """Make ``sections`` (all of ``version``) the page's sections unless a newer
        version's are stored: one PutObject, one conditional PutItem (the item as it
        was returned), one DeleteObject of the record it replaced."""
        slug = sections[0].slug if sections else ""
        item = page_item(workspace_id, page_id, version, slug, len(sections))
        self._objects.put(str(item["o"]), pack_sections(sections))
        try:
            response = self._table.client.put_item(
                TableName=self._table.name,
                Item=to_attributes(item),
                ConditionExpression="attribute_not_exists(pk) OR version <= :v",
                ExpressionAttributeValues=to_attributes({":v": version}),
                ReturnValues="ALL_OLD",
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != _CONDITION_FAILED:
                raise
            self._objects.delete(str(item["o"]))  # a newer version's record stays
            return
        old = response.get("Attributes", {}).get("o", {}).get("S")
        if old is not None and old != item["o"]:
            self._objects.delete(old)

    def remove(self, workspace_id: str, page_id: str, version: int) -> None:
        """Delete the page's record when it is older than ``version`` (the page was
        archived at it): one DeleteItem, one DeleteObject."""
        try:
            response = self._table.client.delete_item(
                TableName=self._table.name,
                Key=to_attributes(section_page_key(workspace_id, page_id)),
                ConditionExpression="version < :v",
                ExpressionAttributeValues=to_attributes({":v": version}),
                ReturnValues="ALL_OLD",
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != _CONDITION_FAILED:
                raise
            return
        old = response.get("Attributes", {}).get("o", {}).get("S")
        if old is not None:
            self._objects.delete(old)

    def pages(self, workspace_id: str) -> list[IndexedPage]:
        """Every page record of the workspace's index, in page id order (eventually
        consistent: what a recall reads). One Query of the page items, and one GetObject
        a record this process has not read before; a record whose object is gone (its
        page changed since the Query) is left out."""
        rows = list(
            self._table.query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :page)",
                ExpressionAttributeValues=to_attributes(
                    {
                        ":pk": section_index_partition(workspace_id),
                        ":page": SECTION_PAGE_PREFIX,
                    }
                ),
            )
        )
        found: dict[str, IndexedPage] = {}
        missing: list[dict[str, Any]] = []
        for row in rows:
            cached = _CACHE.get(str(row["o"]))
            if cached is None:
                missing.append(row)
            else:
                found[cached.key] = cached
        if missing:
            for record in self._fetch(workspace_id, missing):
                if record is not None:
                    found[record.key] = record
        return [found[str(row["o"])] for row in rows if str(row["o"]) in found]

    def delete_old_item(self, key: dict[str, str]) -> None:
        """Delete one item of the earlier index (``rebuild_pages``)."""
        self._table.client.delete_item(TableName=self._table.name, Key=to_attributes(key))

    def sections(self, workspace_id: str) -> list[IndexedSection]:
        """Every section of the workspace's index, page by page, in page order."""
        return [section for page in self.pages(workspace_id) for section in page.sections]

    def _fetch(self, workspace_id: str, rows: list[dict[str, Any]]) -> list[IndexedPage | None]:
        def one(row: dict[str, Any]) -> IndexedPage | None:
            key = str(row["o"])
            data = self._objects.get(key)
            if data is None:
                logger.info("section record %s is gone (its page changed)", key)
                return None
            page_id, version = str(row["pageId"]), int(row["version"])
            record = IndexedPage(
                key=key,
                page_id=page_id,
                version=version,
                sections=tuple(
                    unpack_sections(data, workspace_id, page_id, version, str(row["slug"]))
                ),
            )
            _CACHE.put(record, len(data))
            return record

        if len(rows) == 1:
            return [one(rows[0])]
        with ThreadPoolExecutor(max_workers=min(_READERS, len(rows))) as pool:
            futures = [pool.submit(copy_context().run, one, row) for row in rows]
            return [future.result() for future in futures]


def is_item_of_a_section(item: dict[str, Any]) -> bool:
    """Whether ``item`` is a section item of release 0.x's index (one item a section,
    ``keys.section_key``), which ``rebuild_pages`` replaces."""
    return str(item.get("pk", "")).startswith(section_index_partition("")) and not str(
        item.get("sk", "")
    ).startswith(SECTION_PAGE_PREFIX)


def rebuild_pages(index: DynamoDBSectionIndex, old_items: Iterable[dict[str, Any]]) -> int:
    """Replace section items of the earlier index (``is_item_of_a_section``) by page
    records: each page's sections of its newest version found, written as its record
    (``DynamoDBSectionIndex.replace``, conditional on the version as every write), then
    the old items deleted. Their stored embeddings are kept, so nothing is embedded
    again; a recall still shows a section only while its page is published at its
    version. Returns how many pages were rebuilt."""
    by_page: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for item in old_items:
        by_page.setdefault((str(item["workspaceId"]), str(item["pageId"])), []).append(item)
    for (workspace_id, page_id), items in sorted(by_page.items()):
        newest = max(int(item["version"]) for item in items)
        sections = sorted(
            (_old_section(item) for item in items if int(item["version"]) == newest),
            key=lambda section: section.index,
        )
        index.replace(workspace_id, page_id, newest, sections)
        for item in items:
            index.delete_old_item({"pk": str(item["pk"]), "sk": str(item["sk"])})
    return len(by_page)


def _old_section(item: dict[str, Any]) -> IndexedSection:
    """A section from an item of the earlier index."""
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
