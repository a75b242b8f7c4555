"""Owner marks (docs/reference.md#erasing-an-agent-a-person-or-a-workspace,
docs/issues.md#issue-41-item-1): a small item ``OWNED#<owner>`` / ``<pk>|<sk>`` written
beside each item whose key cannot be derived from its owner (a run-start session, a lift
claim, a review date's claim, a dashboard session, a sign-in code, an e-mail claim, an
idempotency record, an export's record), so an erasure or an export reads one owner's
items by key instead of scanning the table.

A mark is written before (or in the same transaction as) its item and never
conditionally: a mark whose item is gone is harmless (the reader finds nothing at its
key), an item without its mark would be missed. A mark of an item that expires carries
the same TTL.
"""

from __future__ import annotations

import re
from typing import Any

from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import KV_TTL_ATTRIBUTE, owner_mark_key


def owner_mark(
    owner_id: str, owned: dict[str, str], expires_epoch: int | None = None
) -> dict[str, Any]:
    """The mark item of ``owned`` (an item's key) for ``owner_id``.

    Args:
        owner_id: the ``agt_…``, ``usr_…`` or ``wsp_…`` the item belongs to.
        owned: the item's ``pk`` and ``sk``.
        expires_epoch: the item's TTL (epoch seconds), when it has one.
    """
    item: dict[str, Any] = {
        **owner_mark_key(owner_id, owned),
        "entity": "owner_mark",
        "ownerId": owner_id,
    }
    if expires_epoch is not None:
        item[KV_TTL_ATTRIBUTE] = int(expires_epoch)
    return item


def owner_mark_put(
    owner_id: str, owned: dict[str, str], expires_epoch: int | None = None
) -> dict[str, Any]:
    """The mark as a transaction's ``Put`` (unconditional: writing it again is the same)."""
    return {"Put": {"Item": to_attributes(owner_mark(owner_id, owned, expires_epoch))}}


def put_owner_mark(
    table: DynamoDBTable,
    owner_id: str,
    owned: dict[str, str],
    expires_epoch: int | None = None,
) -> None:
    """Write the mark on its own (before the item it names)."""
    table.client.put_item(
        TableName=table.name, Item=to_attributes(owner_mark(owner_id, owned, expires_epoch))
    )


_MARKED_BY_KEY = ("SESSION#", "LIFT#", "REVIEWDATE#")
"""Items whose partition names their agent after the prefix (``<prefix><agt_…>#…``)."""
_MARKED_BY_PERSON = ("WEBSESSION#", "SIGNIN#", "PERSONEMAIL#")
_PRINCIPAL = re.compile(r"(?:agt|usr)_[0-9A-HJKMNP-TV-Z]{26}")


def mark_owner(item: dict[str, Any]) -> str | None:
    """The owner whose mark an existing item needs (the table upgrade marks items
    written before marks existed), or None for an item that needs none."""
    pk = str(item["pk"])
    if pk.startswith(_MARKED_BY_KEY):
        return pk.split("#")[1]
    if pk.startswith(_MARKED_BY_PERSON):
        return str(item.get("personId") or "") or None
    if pk.startswith("IDEMPOTENCY#"):
        parts = pk.split("#")
        return parts[3] if len(parts) > 4 and _PRINCIPAL.fullmatch(parts[3]) else None
    if pk.startswith(("EXPORT#", "PERSON#")):
        return str(item.get("workspaceId") or "") or None
    return None


def mark_of(item: dict[str, Any]) -> dict[str, Any] | None:
    """The owner mark an existing item needs (``mark_owner``), with its TTL; or None."""
    owner = mark_owner(item)
    if owner is None:
        return None
    expires = item.get(KV_TTL_ATTRIBUTE)
    return owner_mark(
        owner,
        {"pk": str(item["pk"]), "sk": str(item["sk"])},
        None if expires is None else int(expires),
    )
