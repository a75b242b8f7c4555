"""Change events (docs/reference.md#change-events, docs/issues.md#issue-47): an outbox in
the single table. Each event is one more Put pair in the transaction of the change it
reports (``event_puts``), so a committed change always has its event and a cancelled
one never does; the event is built from the change's audit record, and its id is the
audit record's ULID under ``evt_`` (one event per audit record, in time order).

An event is a CloudEvents 1.0 JSON object that carries references, never stored text
(ids, kinds, states, versions, actors): erasing a memory or a learning leaves nothing
to redact in its events. It is written twice: in the workspace's partition of its UTC
day (``EVENTS#<wsp>#<day>``) and, when the change is about an agent's memory or an
agent's proposal, in the agent's (``AGENTEVENTS#<agt>#<day>``), each with a TTL of
``EVENT_KEPT_DAYS``. ``DynamoDBEventFeed`` pages them forward from a cursor.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

from chalicelib.ids import from_rfc3339, to_rfc3339, ulid_floor
from chalicelib.models.learning import Learning, LearningAudit
from chalicelib.models.memory import RESERVED_ARCHIVE_REASONS, AuditRecord, Memory, MemoryKind
from chalicelib.storage.dynamodb import DynamoDBTable, put_new, to_attributes
from chalicelib.storage.items import audit_to_item
from chalicelib.storage.keys import (
    EVENT_KEPT_DAYS,
    KV_TTL_ATTRIBUTE,
    agent_events_partition,
    workspace_events_partition,
)
from chalicelib.storage.recalls import epoch_seconds

SPEC_VERSION = "1.0"
EVENT_PREFIX = "evt_"
MEMORY_EVENT_TYPES = {
    "create": "pinework.memory.saved",
    "edit": "pinework.memory.edited",
    "archive": "pinework.memory.archived",
    "unarchive": "pinework.memory.unarchived",
    "supersede": "pinework.memory.superseded",
    "veto": "pinework.memory.vetoed",
    "erase": "pinework.memory.erased",
    "renew": "pinework.memory.renewed",
    "undo": "pinework.memory.restored",
    "absorb": "pinework.memory.absorbed",
}
"""The event type of each memory audit action (docs/reference.md#change-events)."""
DAY_LINE_APPENDED = "pinework.memory.day_line_appended"
"""A day row's line: its first (the row's ``create``) and every ``append``."""
MEMORY_CHANGED = "pinework.memory.changed"
"""An audit action this table does not name yet."""
LEARNING_EVENT_TYPES = {
    "propose": "pinework.learning.proposed",
    "approve": "pinework.learning.approved",
    "edit": "pinework.learning.edited",
    "reject": "pinework.learning.rejected",
    "retire": "pinework.learning.retired",
    "erase": "pinework.learning.erased",
}
"""The event type of each learning history action."""
KNOWN_EVENT_TYPES = frozenset(
    {
        *MEMORY_EVENT_TYPES.values(),
        DAY_LINE_APPENDED,
        MEMORY_CHANGED,
        *LEARNING_EVENT_TYPES.values(),
    }
)
"""Every event type the outbox writes (what a webhook endpoint may ask for)."""
SETTLE = timedelta(seconds=5)
"""The feed shows an event once it is this old: its id is taken just before its
transaction commits, so a younger event could still be overtaken by an older one
committing late, and a cursor past it would skip that one."""
_QUERY_PAGE = 201
"""Items one Query reads at a time (a feed page is at most 200 events)."""


def event_id(audit_id: str) -> str:
    """The event id of the change an audit record (``aud_…``, a learning's ``lau_…``)
    reports: the record's ULID under ``evt_``, so ids sort by time."""
    return EVENT_PREFIX + audit_id.split("_", 1)[1]


def event_day(identifier: str) -> date:
    """The UTC day of an event id's time part.

    Raises:
        ValueError: not ``evt_`` and a ULID.
    """
    if not identifier.startswith(EVENT_PREFIX):
        raise ValueError(identifier)
    from ulid import ULID  # not at import: the cold start loads no third-party id library

    return ULID.from_str(identifier[len(EVENT_PREFIX) :]).datetime.astimezone(UTC).date()


def _event(
    audit_id: str, kind: str, at: datetime, subject: str, workspace_id: str, agent_id: str | None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "specversion": SPEC_VERSION,
        "id": event_id(audit_id),
        "source": f"/workspaces/{workspace_id}",
        "type": kind,
        "time": to_rfc3339(at),
        "subject": subject,
        "datacontenttype": "application/json",
        "workspace": workspace_id,
    }
    if agent_id is not None:
        body["agent"] = agent_id
    return body


def _actor(audit: AuditRecord | LearningAudit) -> dict[str, Any]:
    """The part of ``data`` every event has: the history record and who acted."""
    return {
        "action": audit.action,
        "auditId": audit.id,
        "actorType": audit.actor_type,
        "actorId": audit.actor_id,
    }


def memory_event(audit: AuditRecord, memory: Memory) -> dict[str, Any]:
    """The event of one memory change: ``memory`` as the change left it, ``audit`` its
    record. ``data`` holds ids, kind, date, status, version, the supersede links, a
    reserved archive reason (``superseded``, ``vetoed``; a person's own reason is text
    and stays out) and the actor; never text or tags."""
    if memory.kind is MemoryKind.DAY and audit.action == "create":
        kind = DAY_LINE_APPENDED
    else:
        kind = MEMORY_EVENT_TYPES.get(audit.action, MEMORY_CHANGED)
    body = _event(audit.id, kind, audit.at, memory.id, memory.workspace_id, memory.agent_id)
    reason = memory.archive_reason if memory.archive_reason in RESERVED_ARCHIVE_REASONS else None
    body["data"] = {
        "object": "memory",
        "id": memory.id,
        "kind": memory.kind.value,
        "agentId": memory.agent_id,
        "date": memory.date,
        "status": memory.status.value,
        "version": memory.version,
        "archiveReason": reason,
        "supersedes": memory.supersedes,
        "supersededBy": memory.superseded_by,
        **_actor(audit),
    }
    return body


def day_line_event(audit: AuditRecord, agent_id: str) -> dict[str, Any]:
    """The event of a line appended to a live day row (its ``append`` record): the row
    as ``memory_event`` names it, but ``data.version`` null (the store bumps it) and no
    supersede links or archive reason (a live day row has none)."""
    body = _event(
        audit.id, DAY_LINE_APPENDED, audit.at, audit.memory_id, audit.workspace_id, agent_id
    )
    date = audit.at.astimezone(UTC).date().isoformat()
    body["data"] = {
        "object": "memory",
        "id": audit.memory_id,
        "kind": MemoryKind.DAY.value,
        "agentId": agent_id,
        "date": date,
        "status": "active",
        **dict.fromkeys(("version", "archiveReason", "supersedes", "supersededBy")),
        **_actor(audit),
    }
    return body


def learning_event(audit: LearningAudit, learning: Learning) -> dict[str, Any]:
    """The event of one learning change (``learning`` as it left it): its id, state,
    version, who proposed it and the actor; never its text or reason. An agent's
    proposal is in that agent's feed too."""
    agent = learning.proposed_by if learning.proposed_by_type == "agent" else None
    kind = LEARNING_EVENT_TYPES[audit.action]
    body = _event(audit.id, kind, audit.at, learning.id, learning.workspace_id, agent)
    body["data"] = {
        "object": "learning",
        "id": learning.id,
        "state": learning.state.value,
        "version": learning.version,
        "proposedBy": learning.proposed_by,
        "proposedByType": learning.proposed_by_type,
        **_actor(audit),
    }
    return body


def event_puts(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The transaction items that record ``event`` (``memory_event`` …): a new item in
    the workspace's partition of the event's day and, with an ``agent``, one in the
    agent's; each ``attribute_not_exists`` (an id is never reused) and with the TTL of
    ``EVENT_KEPT_DAYS`` after the event's time."""
    day = event_day(event["id"]).isoformat()
    expires = epoch_seconds(from_rfc3339(event["time"]) + timedelta(days=EVENT_KEPT_DAYS))
    common = {
        "sk": event["id"],
        "entity": "event",
        "workspaceId": event["workspace"],
        "event": json.dumps(event, ensure_ascii=False, separators=(",", ":")),
        KV_TTL_ATTRIBUTE: expires,
    }
    agent = event.get("agent")
    if agent is not None:
        common["agentId"] = agent
    puts = [put_new({"pk": workspace_events_partition(event["workspace"], day), **common})]
    if agent is not None:
        puts.append(put_new({"pk": agent_events_partition(agent, day), **common}))
    return puts


def audited(audit: AuditRecord, memory: Memory) -> list[dict[str, Any]]:
    """The transaction items of one memory change besides the memory's own write: its
    audit record's Put and its event's (``event_puts``; ``memory`` as the change left
    it). Every writer of a memory audit record uses this, so no change goes unreported."""
    return [put_new(audit_to_item(audit)), *event_puts(memory_event(audit, memory))]


def appended(audit: AuditRecord, agent_id: str) -> list[dict[str, Any]]:
    """The transaction items of a line appended to a live day row besides the row's
    update: its ``append`` record's Put and its event's (``day_line_event``)."""
    return [put_new(audit_to_item(audit)), *event_puts(day_line_event(audit, agent_id))]


class DynamoDBEventFeed:
    """The pull feed's reads (docs/reference.md#change-events).

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def page(
        self,
        *,
        workspace_id: str | None,
        agent_id: str | None,
        after: str | None,
        limit: int,
        now: datetime,
    ) -> tuple[list[dict[str, Any]], bool]:
        """Up to ``limit`` events after the id ``after`` (oldest first), of the workspace
        or (``agent_id``) of the agent's own feed, and whether more may follow now.

        The walk reads the day partitions forward, from the cursor's day (or the oldest
        kept day) to ``now``'s, one strongly consistent Query each, keys only from
        ``after`` up to ``now - SETTLE``; expired events (TTL deletion is lazy) are
        skipped.

        Raises:
            ValueError: ``after`` is not an event id.
        """
        oldest = (now - timedelta(days=EVENT_KEPT_DAYS)).astimezone(UTC).date()
        start = oldest if after is None else max(event_day(after), oldest)
        today = now.astimezone(UTC).date()
        upper = EVENT_PREFIX + ulid_floor(now - SETTLE)
        low = after if after is not None else EVENT_PREFIX
        # A cursor not older than the settle time: nothing is ready yet (and DynamoDB
        # refuses a BETWEEN whose low bound is above its high one; moto does not).
        if low >= upper:
            return [], False
        now_epoch = epoch_seconds(now)
        found: list[dict[str, Any]] = []
        day = start
        while day <= today:
            for item in self._day(workspace_id, agent_id, day.isoformat(), low, upper):
                if item["sk"] == after or int(item[KV_TTL_ATTRIBUTE]) <= now_epoch:
                    continue
                if len(found) == limit:
                    return found, True
                found.append(json.loads(str(item["event"])))
            day += timedelta(days=1)
        return found, False

    def _day(
        self, workspace_id: str | None, agent_id: str | None, day: str, low: str, upper: str
    ) -> Iterator[dict[str, Any]]:
        if agent_id is not None:
            partition = agent_events_partition(agent_id, day)
        else:
            assert workspace_id is not None
            partition = workspace_events_partition(workspace_id, day)
        return self._table.query(
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues=to_attributes(
                {":pk": partition, ":low": low, ":high": upper}
            ),
            ConsistentRead=True,
            Limit=_QUERY_PAGE,
        )
