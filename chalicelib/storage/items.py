"""Item <-> model conversion, in exactly one place (docs/conventions.md#rule-4).

Items here are plain Python dicts (``str``/``int``); ``None`` fields are left
out. DynamoDB returns numbers as ``Decimal``: ``int()`` turns them back, so an
integer field is ``1`` on the wire, never ``1.0``. Timestamps are RFC 3339 UTC
strings with a fixed width, so string order is time order.
"""

from __future__ import annotations

import json
import struct
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.memory import AuditRecord, Memory, MemoryKind, MemoryStatus
from chalicelib.models.principal import Agent, Person, Principal, PrincipalKind, Workspace
from chalicelib.models.recall import RecallEntry
from chalicelib.models.token import StoredToken, TokenRecord
from chalicelib.storage.keys import (
    KV_TTL_ATTRIBUTE,
    RETIRED_MEMORY_INDEXES,
    SORT_ATTRIBUTE,
    WORKSPACE_INDEXES,
    agent_key,
    agent_kind_index_value,
    audit_key,
    epoch_microseconds,
    memory_key,
    person_key,
    recall_index_loose_key,
    recall_index_segment_key,
    recall_index_tombstone_key,
    token_key,
    workspace_index_values,
    workspace_key,
)

_MEMORY_OPTIONAL_TEXT = (
    "date",
    "archiveReason",
    "supersedes",
    "supersededBy",
    "runId",
    "taskKey",
    "savedByAgentId",
    "editedByPersonId",
    "erasedBy",
    "eraseReason",
)
_MEMORY_OPTIONAL_TIME = ("archivedAt", "lastRecalledAt", "erasedAt")

MUTABLE_MEMORY_ATTRIBUTES = (
    "text",
    "tags",
    "metadata",
    "lines",
    "charCount",
    "expiresAt",
    "status",
    "archiveReason",
    "archivedAt",
    "supersededBy",
    "editedByPersonId",
    "updatedAt",
    "version",
    "embedding",
    "evidence",
    "erasedAt",
    "erasedBy",
    "eraseReason",
    "gsiAgentKind",
    *WORKSPACE_INDEXES.values(),
    *RETIRED_MEMORY_INDEXES.values(),
)
"""What a state change may rewrite; recall counters and identity never change there.
The workspace-index keys are set again by every change (an item from before
docs/issues.md#issue-23-item-2 gains them; the same value costs the index nothing) and
the retired indexes' keys, which no item written since carries, are removed."""


def memory_to_item(memory: Memory) -> dict[str, Any]:
    """Return the stored item of a memory (keys, list-index keys, ``charCount``)."""
    item: dict[str, Any] = {
        **memory_key(memory.id),
        **workspace_index_values(memory.workspace_id, memory.agent_id, memory.status.value),
        **agent_kind_index_value(memory.agent_id, memory.kind.value, memory.status.value),
        SORT_ATTRIBUTE: memory.id,
        "entity": "memory",
        "id": memory.id,
        "workspaceId": memory.workspace_id,
        "agentId": memory.agent_id,
        "kind": memory.kind.value,
        "charCount": len(memory.text),
        "expiresAt": to_rfc3339(memory.expires_at),
        "status": memory.status.value,
        "recallCount": memory.recall_count,
        "createdAt": to_rfc3339(memory.created_at),
        "updatedAt": to_rfc3339(memory.updated_at),
        "version": memory.version,
    }
    # A day row keeps its lines as a list so an append is one list_append
    # (DynamoDB update expressions cannot concatenate strings).
    if memory.kind is MemoryKind.DAY:
        item["lines"] = memory.text.split("\n")
    else:
        item["text"] = memory.text
    if memory.tags:
        item["tags"] = list(memory.tags)
    if memory.metadata:
        # JSON text: numbers keep their exact value and type (DynamoDB's numbers are
        # decimals and its SDK refuses floats), and the object is never queried by part.
        item["metadata"] = json.dumps(memory.metadata, separators=(",", ":"), ensure_ascii=False)
    if memory.embedding is not None:
        item["embedding"] = memory.embedding
    if memory.evidence is not None:
        item["evidence"] = memory.evidence
    wire = memory.model_dump(by_alias=True)
    for name in _MEMORY_OPTIONAL_TEXT:
        if wire[name] is not None:
            item[name] = str(wire[name])
    for name in _MEMORY_OPTIONAL_TIME:
        if wire[name] is not None:
            item[name] = to_rfc3339(wire[name])
    return item


def memory_from_item(item: dict[str, Any]) -> Memory:
    """Rebuild a memory from its stored item."""
    return Memory(
        id=item["id"],
        workspace_id=item["workspaceId"],
        agent_id=item["agentId"],
        kind=MemoryKind(item["kind"]),
        date=item.get("date"),
        text=item["text"] if "text" in item else "\n".join(item["lines"]),
        tags=tuple(str(tag) for tag in item.get("tags", ())),
        metadata=json.loads(item["metadata"]) if item.get("metadata") else {},
        expires_at=from_rfc3339(item["expiresAt"]),
        status=MemoryStatus(item["status"]),
        archive_reason=item.get("archiveReason"),
        archived_at=_time_or_none(item.get("archivedAt")),
        supersedes=item.get("supersedes"),
        superseded_by=item.get("supersededBy"),
        run_id=item.get("runId"),
        task_key=item.get("taskKey"),
        saved_by_agent_id=item.get("savedByAgentId"),
        edited_by_person_id=item.get("editedByPersonId"),
        recall_count=_int(item.get("recallCount", 0)),
        last_recalled_at=_time_or_none(item.get("lastRecalledAt")),
        created_at=from_rfc3339(item["createdAt"]),
        updated_at=from_rfc3339(item["updatedAt"]),
        version=_int(item.get("version", 1)),
        embedding=binary_or_none(item.get("embedding")),
        evidence=item.get("evidence"),
        erased_at=_time_or_none(item.get("erasedAt")),
        erased_by=item.get("erasedBy"),
        erase_reason=item.get("eraseReason"),
    )


def audit_to_item(record: AuditRecord) -> dict[str, Any]:
    """Return the stored item of an audit record; before/after are JSON strings."""
    item: dict[str, Any] = {
        **audit_key(record.memory_id, record.id),
        "entity": "audit",
        "id": record.id,
        "memoryId": record.memory_id,
        "workspaceId": record.workspace_id,
        "action": record.action,
        "actorType": record.actor_type,
        "at": to_rfc3339(record.at),
    }
    if record.actor_id is not None:
        item["actorId"] = record.actor_id
    if record.reason is not None:
        item["reason"] = record.reason
    if record.before is not None:
        item["before"] = json.dumps(record.before, ensure_ascii=False, separators=(",", ":"))
    if record.after is not None:
        item["after"] = json.dumps(record.after, ensure_ascii=False, separators=(",", ":"))
    if record.evidence is not None:
        item["evidence"] = record.evidence
    return item


def audit_from_item(item: dict[str, Any]) -> AuditRecord:
    """Rebuild an audit record from its stored item."""
    return AuditRecord(
        id=item["id"],
        memory_id=item["memoryId"],
        workspace_id=item["workspaceId"],
        action=item["action"],
        actor_type=item["actorType"],
        actor_id=item.get("actorId"),
        at=from_rfc3339(item["at"]),
        reason=item.get("reason"),
        before=json.loads(item["before"]) if "before" in item else None,
        after=json.loads(item["after"]) if "after" in item else None,
        evidence=item.get("evidence"),
    )


def workspace_to_item(workspace: Workspace) -> dict[str, Any]:
    """Return the stored item of a workspace."""
    item = {
        **workspace_key(workspace.id),
        "entity": "workspace",
        "id": workspace.id,
        "name": workspace.name,
        "createdAt": to_rfc3339(workspace.created_at),
        "reviewApproval": workspace.review_approval,
        "learningApproval": workspace.learning_approval,
    }
    if workspace.learning_approval_set_by and workspace.learning_approval_set_at:
        item["learningApprovalSetBy"] = workspace.learning_approval_set_by
        item["learningApprovalSetAt"] = to_rfc3339(workspace.learning_approval_set_at)
    return item


def workspace_from_item(item: dict[str, Any]) -> Workspace:
    """Rebuild a workspace from its stored item (``reviewApproval`` absent: ``none``;
    ``learningApproval`` absent: ``required``)."""
    return Workspace(
        id=item["id"],
        name=item["name"],
        created_at=from_rfc3339(item["createdAt"]),
        review_approval=item.get("reviewApproval", "none"),
        learning_approval=item.get("learningApproval", "required"),
        learning_approval_set_by=item.get("learningApprovalSetBy"),
        learning_approval_set_at=(
            from_rfc3339(item["learningApprovalSetAt"])
            if item.get("learningApprovalSetAt")
            else None
        ),
    )


def agent_to_item(agent: Agent) -> dict[str, Any]:
    """Return the stored item of an agent."""
    return {
        **agent_key(agent.id),
        "entity": "agent",
        "id": agent.id,
        "workspaceId": agent.workspace_id,
        "name": agent.name,
        "createdAt": to_rfc3339(agent.created_at),
        **({} if agent.created_by is None else {"createdBy": agent.created_by}),
    }


def agent_from_item(item: dict[str, Any]) -> Agent:
    """Rebuild an agent from its stored item."""
    return Agent(
        id=item["id"],
        workspace_id=item["workspaceId"],
        name=item["name"],
        created_at=from_rfc3339(item["createdAt"]),
        created_by=item.get("createdBy"),
    )


def person_to_item(person: Person) -> dict[str, Any]:
    """Return the stored item of a person."""
    return {
        **person_key(person.id),
        "entity": "person",
        "id": person.id,
        "workspaceId": person.workspace_id,
        "email": person.email,
        "createdAt": to_rfc3339(person.created_at),
        "sessionsEpoch": person.sessions_epoch,
        **({} if person.removed_at is None else {"removedAt": to_rfc3339(person.removed_at)}),
        "role": person.role,
        **({} if person.created_by is None else {"createdBy": person.created_by}),
        **({} if person.role_set_by is None else {"roleSetBy": person.role_set_by}),
        **({} if person.role_set_at is None else {"roleSetAt": to_rfc3339(person.role_set_at)}),
    }


def person_from_item(item: dict[str, Any]) -> Person:
    """Rebuild a person from its stored item."""
    return Person(
        id=item["id"],
        workspace_id=item["workspaceId"],
        email=item["email"],
        created_at=from_rfc3339(item["createdAt"]),
        sessions_epoch=int(item.get("sessionsEpoch", 0)),
        removed_at=from_rfc3339(item["removedAt"]) if item.get("removedAt") else None,
        # a person stored before roles existed is a member (docs/reference.md#person-roles)
        role="owner" if item.get("role") == "owner" else "member",
        role_set_by=item.get("roleSetBy"),
        role_set_at=from_rfc3339(item["roleSetAt"]) if item.get("roleSetAt") else None,
        created_by=item.get("createdBy"),
    )


def principal_to_token_item(principal: Principal) -> dict[str, str]:
    """Return the token item's attributes (without its key) for a principal."""
    return {
        "entity": "token",
        "principalKind": principal.kind.value,
        "principalId": principal.id,
        "workspaceId": principal.workspace_id,
    }


def principal_from_token_item(item: dict[str, Any]) -> Principal:
    """Rebuild the principal a token item names."""
    return Principal(
        kind=PrincipalKind(item["principalKind"]),
        id=item["principalId"],
        workspace_id=item["workspaceId"],
    )


_TOKEN_OPTIONAL_TEXT = {
    "id": "tokenId",
    "prefix": "tokenPrefix",
    "label": "label",
    "rotated_to": "rotatedTo",
}
_TOKEN_OPTIONAL_TIME = {
    "created_at": "createdAt",
    "last_used_at": "lastUsedAt",
    "expires_at": "expiresAt",
}


def token_to_item(token: StoredToken) -> dict[str, Any]:
    """Return the stored item of a token (keyed by its hash; ``None`` fields left out)."""
    record = token.record
    item: dict[str, Any] = {
        **token_key(token.token_hash),
        **principal_to_token_item(record.principal),
    }
    for field, attribute in _TOKEN_OPTIONAL_TEXT.items():
        value = getattr(record, field)
        if value is not None:
            item[attribute] = value
    for field, attribute in _TOKEN_OPTIONAL_TIME.items():
        moment = getattr(record, field)
        if moment is not None:
            item[attribute] = to_rfc3339(moment)
    return item


def token_from_item(item: dict[str, Any]) -> StoredToken:
    """Rebuild a token from its item; items written before docs/issues.md#issue-12 carry only the
    principal, so every other field may be missing."""
    principal = principal_from_token_item(item)
    values: dict[str, Any] = {
        field: item.get(attribute) for field, attribute in _TOKEN_OPTIONAL_TEXT.items()
    }
    values.update(
        {
            field: _time_or_none(item.get(attribute))
            for field, attribute in _TOKEN_OPTIONAL_TIME.items()
        }
    )
    record = TokenRecord(
        principal_kind=principal.kind,
        principal_id=principal.id,
        workspace_id=principal.workspace_id,
        **values,
    )
    return StoredToken(token_hash=str(item["pk"]).removeprefix("TOKEN#"), record=record)


def binary_or_none(value: Any) -> bytes | None:
    """DynamoDB binary attributes come back as ``boto3.dynamodb.types.Binary``."""
    if value is None:
        return None
    return bytes(getattr(value, "value", value))


def _int(value: Decimal | int | str) -> int:
    return int(value)


def _time_or_none(value: str | None) -> Any:
    return None if value is None else from_rfc3339(value)


RECALL_COUNT_PREFIX = "n_"
RECALLED_AT_PREFIX = "t_"
RECALL_GUARD_ATTRIBUTE = "lastRecallId"
"""The attribute of a counter page holding the id of the last recall counted on it: the
next update's condition, so one recall is never applied to a page twice in a row
(``recalls.count_recall_update``)."""


def add_recall_counts(memory: Memory, page: dict[str, Any] | None) -> Memory:
    """``memory`` with the counts of its counter page added (docs/reference.md#8-recall).

    A memory item may carry counts of its own (written before the counter pages
    existed); the two add up, and the later ``lastRecalledAt`` wins.
    """
    if page is None or f"{RECALL_COUNT_PREFIX}{memory.id}" not in page:
        return memory
    count = memory.recall_count + int(page[f"{RECALL_COUNT_PREFIX}{memory.id}"])
    last = from_rfc3339(str(page[f"{RECALLED_AT_PREFIX}{memory.id}"]))
    if memory.last_recalled_at is not None:
        last = max(last, memory.last_recalled_at)
    return memory.model_copy(update={"recall_count": count, "last_recalled_at": last})


RECALL_INDEX_VECTOR_BYTES = 386
"""How much of a stored embedding a recall index entry keeps: the format tag, the 384
int8 sentence values and the word-piece count (``embedding_format.SENTENCE_BYTES`` + 1;
a test keeps the two in step)."""

_ENTRY_HEADER = struct.Struct(">BIqqHH")
"""An entry's fixed part: id length, memory version, created and expires (epoch µs),
the stored embedding's full size, the kept prefix's length; then the id, the prefix,
and the text (``>H`` length, UTF-8)."""
_TEXT_LENGTH = struct.Struct(">H")


def recall_entry_blob(memory: Memory) -> bytes:
    """One fact's recall index entry, packed (docs/issues.md#issue-23-item-1): what the scorer
    reads of every candidate (the text, the creation time, the embedding's first
    ``RECALL_INDEX_VECTOR_BYTES`` and its full size) and what resolving copies needs
    (the id, the memory's version, the expiry)."""
    embedding = memory.embedding or b""
    prefix = embedding[:RECALL_INDEX_VECTOR_BYTES]
    identifier = memory.id.encode("ascii")
    text = memory.text.encode("utf-8")
    return b"".join(
        (
            _ENTRY_HEADER.pack(
                len(identifier),
                memory.version,
                _as_stored(memory.created_at),
                _as_stored(memory.expires_at),
                len(embedding),
                len(prefix),
            ),
            identifier,
            prefix,
            _TEXT_LENGTH.pack(len(text)),
            text,
        )
    )


def _as_stored(moment: datetime) -> int:
    """Epoch microseconds of ``moment`` as the memory item keeps it (``to_rfc3339``:
    whole milliseconds), so an entry's times equal the memory's as read back."""
    return epoch_microseconds(moment) // 1000 * 1000


def recall_entries_from_blob(blob: bytes) -> list[tuple[RecallEntry, bytes]]:
    """Every entry packed in ``blob`` (one loose entry's, or a segment's), in order, each
    with its own packed bytes (so a compaction moves it without packing it again)."""
    entries = []
    offset = 0
    while offset < len(blob):
        start = offset
        id_size, version, created, expires, size, kept = _ENTRY_HEADER.unpack_from(blob, offset)
        offset += _ENTRY_HEADER.size
        memory_id = blob[offset : offset + id_size].decode("ascii")
        offset += id_size
        prefix = blob[offset : offset + kept]
        offset += kept
        (text_size,) = _TEXT_LENGTH.unpack_from(blob, offset)
        offset += _TEXT_LENGTH.size
        text = blob[offset : offset + text_size].decode("utf-8")
        offset += text_size
        entry = RecallEntry(
            memory_id=memory_id,
            text=text,
            created_at=_from_microseconds(created),
            expires_at=_from_microseconds(expires),
            sentence=prefix or None,
            embedding_size=size,
            version=version,
        )
        entries.append((entry, blob[start:offset]))
    return entries


def recall_loose_item(memory: Memory) -> dict[str, Any]:
    """A fact's loose index entry: ``b`` the packed entry, ``ver`` the memory's version
    (a compaction deletes it only if unchanged), and the table's TTL attribute at the
    fact's expiry (an expired fact's loose entry goes without a compaction)."""
    return {
        **recall_index_loose_key(memory.agent_id, memory.id),
        "b": recall_entry_blob(memory),
        "ver": memory.version,
        KV_TTL_ATTRIBUTE: -(-epoch_microseconds(memory.expires_at) // 1_000_000),
    }


def recall_tombstone_item(agent_id: str, memory_id: str, version: int) -> dict[str, Any]:
    """The tombstone of a fact that left the index at ``version`` (no TTL: it lives until
    a compaction drops the fact's copies from the segments)."""
    return {**recall_index_tombstone_key(agent_id, memory_id), "ver": version}


def recall_segment_item(
    agent_id: str, segment_id: str, entries: list[RecallEntry], blobs: list[bytes]
) -> dict[str, Any]:
    """A segment: ``blobs`` (the packed ``entries``, same order) joined in ``b``, ``n``
    entries; keyed by the latest expiry among them."""
    last = max(entry.expires_at for entry in entries)
    return {
        **recall_index_segment_key(agent_id, last, segment_id),
        "b": b"".join(blobs),
        "n": len(entries),
    }


def recall_volume_item(
    agent_id: str, volume_id: str, entries: list[RecallEntry], object_key: str, size: int
) -> dict[str, Any]:
    """A volume's pointer: the S3 key of its packed ``entries`` in ``o``, their bytes in
    ``z``, ``n`` entries; keyed like a segment, by the latest expiry among them."""
    last = max(entry.expires_at for entry in entries)
    return {
        **recall_index_segment_key(agent_id, last, volume_id),
        "o": object_key,
        "z": size,
        "n": len(entries),
    }


def _from_microseconds(value: int) -> datetime:
    """The aware UTC datetime of whole epoch microseconds (exact)."""
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=value)
