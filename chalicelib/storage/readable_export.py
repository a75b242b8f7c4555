"""A stored item as a person reads it in their export
(docs/reference.md#exports-for-a-person, docs/issues.md#issue-48-item-4): the group it is
listed under (``memories``, ``history``, ``learnings`` …) and its public object, the
API's own wire form (camelCase, ``object`` named), never the table's attributes.

Items that are bookkeeping (listing entries, counters, claims, markers, owner marks,
index entries, per-date claims) have no public form and are left out; the recall
counter pages are not listed but folded into each memory's ``recallCount`` and
``lastRecalledAt``, as ``GET /memories/{id}`` answers them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.learning import LearningAudit
from chalicelib.models.review import ReviewAction
from chalicelib.storage import items as convert
from chalicelib.storage.keys import KV_KEY_PREFIX, KV_TTL_ATTRIBUTE
from chalicelib.storage.kv import revision_of
from chalicelib.storage.learnings import learning_from_item
from chalicelib.storage.recalls import log_entry_from_item
from chalicelib.storage.reviews import summary_from_item
from chalicelib.storage.routines import routine_from_item
from chalicelib.storage.wiki_pages import page_from_item, revision_from_item

GROUPS = (
    "workspace",
    "agents",
    "persons",
    "memories",
    "history",
    "learnings",
    "learningHistory",
    "reviews",
    "reviewReports",
    "pendingActions",
    "routines",
    "recalls",
    "keyValue",
    "pages",
    "pageHistory",
)
"""The document's groups, in the order the file lists them."""

Entry = tuple[str, dict[str, Any]]


def _memory(item: dict[str, Any], now: datetime, counters: dict[str, Any] | None) -> Entry:
    memory = convert.add_recall_counts(convert.memory_from_item(item), counters)
    return "memories", memory.to_wire(now)


def _audit(item: dict[str, Any]) -> Entry:
    return "history", convert.audit_from_item(item).to_wire()


def _learning_audit(item: dict[str, Any]) -> Entry:
    fields = {k: v for k, v in item.items() if k not in ("pk", "sk", KV_TTL_ATTRIBUTE)}
    fields["at"] = from_rfc3339(str(fields["at"]))
    return "learningHistory", LearningAudit.model_validate(fields).to_wire()


def _pending(item: dict[str, Any]) -> Entry:
    action = ReviewAction.model_validate(json.loads(str(item["action"])))
    return "pendingActions", {
        "object": "pending_action",
        "reviewId": item["reviewId"],
        "agentId": item["agentId"],
        "date": item["date"],
        "approval": item["approval"],
        "waitingSince": item["waitingSince"],
        "action": action.model_dump(mode="json", by_alias=True),
    }


def _kv(item: dict[str, Any]) -> Entry:
    expires = item.get(KV_TTL_ATTRIBUTE)
    return "keyValue", {
        "object": "kv_entry",
        "scope": str(item["pk"]).removeprefix("KV#"),
        "key": str(item["sk"]).removeprefix(KV_KEY_PREFIX),
        "value": item.get("storedValue"),
        "valueBytes": int(item.get("valueBytes", 0)),
        "revision": revision_of(item),
        "expiresAt": None
        if expires is None
        else to_rfc3339(datetime.fromtimestamp(int(expires), UTC)),
    }


_BY_PARTITION: dict[str, Callable[[dict[str, Any]], Entry]] = {
    "WORKSPACE": lambda item: ("workspace", _wire(convert.workspace_from_item(item), "workspace")),
    "AGENT": lambda item: ("agents", _wire(convert.agent_from_item(item), "agent")),
    "PERSON": lambda item: ("persons", _wire(convert.person_from_item(item), "person")),
    "LEARNING": _learning_audit,
    "REVIEWS": lambda item: ("reviews", summary_from_item(item).to_wire()),
    "PENDING": _pending,
    "ROUTINE": lambda item: ("routines", routine_from_item(item).to_wire()),
    "RECALLS": lambda item: ("recalls", log_entry_from_item(item).to_wire()),
    "WIKI": lambda item: ("pages", page_from_item(item).to_wire()),
    "WIKIPAGE": lambda item: ("pageHistory", revision_from_item(item).to_wire()),
}
"""An item's partition prefix -> its public form, for the items whose partition holds
nothing else of interest (``_own_item`` picks those)."""


def _wire(model: Any, name: str) -> dict[str, Any]:
    body = model.model_dump(mode="json", by_alias=True, exclude={"sessions_epoch"})
    return {"id": body.pop("id"), "object": name, **body}


def _own_item(prefix: str, sk: str) -> bool:
    """Whether the item is the partition's public item (not a listing entry, a
    counter, a claim or a marker sharing its partition)."""
    return {
        "WORKSPACE": sk == "WORKSPACE",
        "AGENT": sk == "AGENT",
        "PERSON": sk == "PERSON",
        "LEARNING": sk.startswith("AUDIT#"),
        "ROUTINE": sk == "ROUTINE",
        "WIKI": sk.startswith("PAGE#"),
        "WIKIPAGE": sk.startswith("REV#"),
    }.get(prefix, True)


def public_entry(
    item: dict[str, Any], now: datetime, counters: dict[str, Any] | None = None
) -> Entry | None:
    """The group and public object of a stored item, or None for bookkeeping.

    Args:
        item: a table item (``pk``, ``sk`` and its attributes).
        now: the time a memory's ``expired`` is computed against.
        counters: the recall counter page of the item's memory, when it is one
            (``keys.recall_counter_key``), else None.

    Returns:
        ``(group, object)``: a group of ``GROUPS`` and the API's wire object; a
        key-value entry's ``value`` is None when the value lives in the bucket
        (``objectKey``; the caller reads it).
    """
    pk, sk = str(item["pk"]), str(item.get("sk", ""))
    prefix = pk.split("#", 1)[0]
    if prefix == "MEMORY":
        if sk.startswith("AUDIT#"):
            return _audit(item)
        return _memory(item, now, counters) if sk == "MEMORY" else None
    if prefix == "LEARNINGS":
        # the learning itself, not its copy by state, counters or refused-text entries
        is_learning = sk.startswith("LEARNING#") and pk.count("#") == 1
        return ("learnings", learning_from_item(item).to_wire()) if is_learning else None
    if prefix == "KV":
        return _kv(item) if sk.startswith(KV_KEY_PREFIX) else None
    build = _BY_PARTITION.get(prefix)
    if build is None or not _own_item(prefix, sk):
        return None
    return build(item)
