"""DynamoDB adapter of the wiki pages (docs/reference.md#17-wiki-pages,
docs/issues.md#issue-45), on the one table, by key (no index):

| item | pk | sk |
| --- | --- | --- |
| a page (its text included) | ``WIKI#<wsp_id>`` | ``PAGE#<pag_id>`` |
| a slug's claim (names the page) | ``WIKI#<wsp_id>`` | ``SLUG#<slug>`` |
| the count of draft and published pages | ``WIKI#<wsp_id>`` | ``COUNT`` |
| a page's summary filed by state (no text) | ``WIKI#<wsp_id>#<state>`` | ``<pag_id>`` |
| a page's history record | ``WIKIPAGE#<pag_id>`` | ``REV#<aud_id>`` |

Every change is one transaction: the page (new, or conditional on its version), its
history record, its summary under its state (the old state's deleted), the slug's claim
(new: conditional on no other page holding it; a renamed page's old claim deleted,
conditional on naming it) and the live count (conditional on the limit when it grows).
So two persons claiming one slug, or editing one version, cannot both win.
"""

from __future__ import annotations

from typing import Any

from chalicelib.errors import PageLimitReached, PageSlugTaken
from chalicelib.ids import from_rfc3339
from chalicelib.models.page import Page, PageRevision, PageState
from chalicelib.storage.dynamodb import (
    DynamoDBTable,
    TransactionCancelled,
    from_attributes,
    put_new,
    to_attributes,
)
from chalicelib.storage.keys import page_history_partition, page_state_partition, pages_partition

_TIMES = ("createdAt", "updatedAt", "publishedAt", "archivedAt")
_LIVE = (PageState.DRAFT, PageState.PUBLISHED)


class PageVersionChanged(Exception):
    """The page changed since it was read (its version moved on)."""


def page_key(workspace_id: str, page_id: str) -> dict[str, str]:
    """Primary key of a page (its workspace in the key: a read never crosses one)."""
    return {"pk": pages_partition(workspace_id), "sk": f"PAGE#{page_id}"}


def slug_key(workspace_id: str, slug: str) -> dict[str, str]:
    """Primary key of a slug's claim in a workspace."""
    return {"pk": pages_partition(workspace_id), "sk": f"SLUG#{slug}"}


def page_state_key(workspace_id: str, state: str, page_id: str) -> dict[str, str]:
    """Primary key of a page's summary filed under its state."""
    return {"pk": page_state_partition(workspace_id, state), "sk": page_id}


def page_to_item(page: Page) -> dict[str, Any]:
    """The stored item of a page, key included."""
    return {
        **page_key(page.workspace_id, page.id),
        **page.model_dump(mode="json", by_alias=True, exclude_none=True),
        "version": page.version,
    }


def page_from_item(item: dict[str, Any]) -> Page:
    """Rebuild a page (or a summary, whose ``text`` is empty) from its item."""
    fields = {k: v for k, v in item.items() if k not in ("pk", "sk")}
    if "characters" in fields:
        fields["characters"] = int(fields["characters"])
    for name in _TIMES:
        if fields.get(name):
            fields[name] = from_rfc3339(str(fields[name]))
    fields["version"] = int(fields.get("version", 1))
    fields.setdefault("text", "")
    return Page.model_validate(fields)


def revision_from_item(item: dict[str, Any]) -> PageRevision:
    """Rebuild a page's history record from its item."""
    fields = {k: v for k, v in item.items() if k not in ("pk", "sk")}
    fields["at"] = from_rfc3339(str(fields["at"]))
    fields["version"] = int(fields["version"])
    return PageRevision.model_validate(fields)


def _summary_item(page: Page) -> dict[str, Any]:
    item = page_to_item(page)
    item.pop("text")
    return {
        **item,
        **page_state_key(page.workspace_id, page.state.value, page.id),
        "characters": len(page.text),
    }


def _revision_item(revision: PageRevision) -> dict[str, Any]:
    return {
        "pk": page_history_partition(revision.page_id),
        "sk": f"REV#{revision.id}",
        **revision.model_dump(mode="json", by_alias=True, exclude_none=True),
        "workspaceId": revision.workspace_id,
    }


class DynamoDBPageRepository:
    """Wiki pages on the single table.

    Args:
        table: the table wrapper.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def create(self, page: Page, revision: PageRevision, *, max_live: int) -> None:
        """Store a new page with its slug's claim, its ``create`` record and its summary;
        count it live.

        Raises:
            PageSlugTaken: another page of the workspace holds the slug.
            PageLimitReached: the workspace holds ``max_live`` draft and published pages.
        """
        operations = [
            put_new(page_to_item(page)),
            put_new(self._claim(page)),
            self._count_op(page.workspace_id, 1, max_live),
            put_new(_revision_item(revision)),
            {"Put": {"Item": to_attributes(_summary_item(page))}},
        ]
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            self._raise_for(cancelled, slug=1, count=2, slug_value=page.slug, max_live=max_live)
            raise

    def change(self, before: Page, after: Page, revision: PageRevision, *, max_live: int) -> None:
        """Replace ``before`` with ``after`` (same id; ``after.version`` one more): its
        history record, its summary (moved when the state changes), its slug's claim
        (moved when the slug changes) and the live count (when it leaves or re-enters
        the draft and published states).

        Raises:
            PageVersionChanged: it changed since ``before`` was read.
            PageSlugTaken: another page holds the new slug.
            PageLimitReached: re-publishing an archived page past ``max_live``.
        """
        operations: list[dict[str, Any]] = [
            {
                "Put": {
                    "Item": to_attributes(page_to_item(after)),
                    "ConditionExpression": "version = :v",
                    "ExpressionAttributeValues": to_attributes({":v": before.version}),
                }
            },
            put_new(_revision_item(revision)),
        ]
        slug_at = count_at = None
        if after.slug != before.slug:
            slug_at = len(operations)
            operations.append(put_new(self._claim(after)))
            operations.append(
                {
                    "Delete": {
                        "Key": to_attributes(slug_key(before.workspace_id, before.slug)),
                        "ConditionExpression": "pageId = :id",
                        "ExpressionAttributeValues": to_attributes({":id": before.id}),
                    }
                }
            )
        was_live, is_live = before.state in _LIVE, after.state in _LIVE
        if was_live != is_live:
            count_at = len(operations)
            operations.append(
                self._count_op(
                    after.workspace_id, 1 if is_live else -1, max_live if is_live else None
                )
            )
        if before.state is not after.state:
            key = page_state_key(before.workspace_id, before.state.value, before.id)
            operations.append({"Delete": {"Key": to_attributes(key)}})
        operations.append({"Put": {"Item": to_attributes(_summary_item(after))}})
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            if cancelled.reasons and cancelled.reasons[0] == "ConditionalCheckFailed":
                raise PageVersionChanged(after.id) from cancelled
            self._raise_for(
                cancelled, slug=slug_at, count=count_at, slug_value=after.slug, max_live=max_live
            )
            raise

    def get(self, workspace_id: str, page_id: str) -> Page | None:
        """The page of the workspace (strongly consistent), or None."""
        found = self._table.get(page_key(workspace_id, page_id))
        return None if found is None else page_from_item(found)

    def page_id_of(self, workspace_id: str, slug: str) -> str | None:
        """The id of the page holding ``slug`` in the workspace, or None."""
        found = self._table.get(slug_key(workspace_id, slug))
        return None if found is None else str(found["pageId"])

    def summaries(
        self, workspace_id: str, *, state: PageState, limit: int, after: str | None
    ) -> tuple[list[Page], str | None]:
        """One list page of the workspace's pages in ``state``, newest first (their
        summaries: ``text`` empty), older than ``after`` (a page id); at most ``limit``,
        and the id to continue after (None: the list ends). Reads ``limit + 1`` items."""
        partition = page_state_key(workspace_id, state.value, "")["pk"]
        values: dict[str, Any] = {":pk": partition}
        condition = "pk = :pk"
        if after is not None:
            condition += " AND sk < :after"
            values[":after"] = after
        rows = self._table.client.query(
            TableName=self._table.name,
            KeyConditionExpression=condition,
            ExpressionAttributeValues=to_attributes(values),
            ScanIndexForward=False,
            ConsistentRead=True,
            Limit=limit + 1,
        )
        found = [page_from_item(from_attributes(row)) for row in rows.get("Items", [])]
        if len(found) <= limit:
            return found, None
        return found[:limit], found[limit - 1].id

    def history(self, page_id: str) -> list[PageRevision]:
        """The page's records, oldest first."""
        rows = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :rev)",
            ExpressionAttributeValues=to_attributes(
                {":pk": page_history_partition(page_id), ":rev": "REV#"}
            ),
            ConsistentRead=True,
        )
        return [revision_from_item(row) for row in rows]

    @staticmethod
    def _claim(page: Page) -> dict[str, Any]:
        return {
            **slug_key(page.workspace_id, page.slug),
            "pageId": page.id,
            "workspaceId": page.workspace_id,
        }

    @staticmethod
    def _raise_for(
        cancelled: TransactionCancelled,
        *,
        slug: int | None,
        count: int | None,
        slug_value: str,
        max_live: int,
    ) -> None:
        reasons = cancelled.reasons

        def failed(at: int | None) -> bool:
            return at is not None and len(reasons) > at and reasons[at] == "ConditionalCheckFailed"

        if failed(slug):
            raise PageSlugTaken(
                f"Another page of the workspace has the slug {slug_value!r}: choose another."
            ) from cancelled
        if failed(count):
            raise PageLimitReached(
                f"The workspace holds {max_live} draft and published pages, the most it may: "
                "archive some first."
            ) from cancelled

    @staticmethod
    def _count_op(workspace_id: str, delta: int, max_live: int | None) -> dict[str, Any]:
        values: dict[str, Any] = {":delta": delta, ":wsp": workspace_id}
        update: dict[str, Any] = {
            "Key": to_attributes({"pk": pages_partition(workspace_id), "sk": "COUNT"}),
            "UpdateExpression": "ADD live :delta SET workspaceId = :wsp",
        }
        if max_live is not None:
            update["ConditionExpression"] = "attribute_not_exists(live) OR live < :max"
            values[":max"] = max_live
        update["ExpressionAttributeValues"] = to_attributes(values)
        return {"Update": update}
