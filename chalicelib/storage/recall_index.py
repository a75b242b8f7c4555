"""The recall index (docs/reference.md#8-recall, docs/issues.md#issue-23-item-1): what recall's
scorer reads of every live fact (the text, the creation time, the stored sentence
vector: ``items.recall_entry_blob``, ~600 bytes), packed many facts to an item, so a
recall reads a few dozen items instead of every fact item, then fetches only the
memories it needs.

An agent's index is one partition (``keys.recall_index_partition``) of four kinds of
item:

- a **loose entry** (``L#<mem_id>``) per fact changed since the last compaction,
  written by the fact's own transaction (``index_writes``);
- **segments** (``S#<latest expiry>#<id>``): many entries packed in one binary
  attribute, written only by a compaction or the backfill, never changed (replaced);
- **volumes**: a segment key whose item points (``o``) at an S3 object of packed
  entries (up to ``VOLUME_BYTES``), written by a merge of segments, never changed;
- a **tombstone** (``X#<mem_id>``) per fact that left the index (archived, vetoed,
  superseded) whose copy a segment may still hold, written by that fact's transaction;
- the **marker** (``~BUILT``): the index holds every live fact (new agents get it at
  creation, earlier agents from the backfill); without it recall reads the facts.

Resolution (``resolve``): of the copies of one fact, the one made from the highest
memory version holds (a loose entry over a segment's copy of the same version); a
tombstone of a version at least that high removes the fact; so does its expiry. Every
write a fact's state change makes to the index is in that change's transaction, so a
read sees each fact exactly as its memory item is (at the read's consistency).

A read that finds more than ``LOOSE_LIMIT`` loose entries packs them into a new
segment, and one that finds a segment at least half dead (removed, superseded or
expired copies) rewrites it without them and drops the tombstones no other segment
needs (``_compaction``): one transaction whose every delete is conditioned on the item
being as read, so a concurrent change aborts it and the next read tries again.
Segments are keyed by the latest expiry they hold and carry it as their TTL, so a
recall's key condition never reads a segment whose facts have all expired, and
DynamoDB deletes it; a loose entry's TTL is its fact's expiry.

With an object store, a read that finds more than ``INLINE_SEGMENT_LIMIT`` segments in
the table merges them (and the smallest volumes) into one volume: the object is
written first, then one transaction puts its pointer and deletes what it replaces
(conditioned on each existing), then the replaced objects are deleted. So the table
holds a bounded number of segments whatever the store's size, and a recall's read
units no longer follow the facts' bytes (docs/issues.md#issue-23-item-2). A reader that
finds a pointer whose object a concurrent merge has just deleted reads the index again;
a volume whose facts have all expired is deleted, pointer and object, by a later merge
(``_collect``), never by TTL, so no object outlives its pointer unseen.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.errors import Conflict, RateLimited
from chalicelib.ids import to_rfc3339
from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus
from chalicelib.models.recall import RecallEntry
from chalicelib.storage import items as convert
from chalicelib.storage.dynamodb import DynamoDBTable, TransactionCancelled, put_new, to_attributes
from chalicelib.storage.keys import (
    KV_TTL_ATTRIBUTE,
    LOOSE_PREFIX,
    RECALL_INDEX_BUILT_SK,
    SEGMENT_PREFIX,
    TOMBSTONE_PREFIX,
    epoch_microseconds,
    recall_index_loose_key,
    recall_index_marker_key,
    recall_index_partition,
    recall_index_segment_floor,
    recall_index_tombstone_key,
    recall_index_volume_object,
)
from chalicelib.storage.kv import S3ObjectStore
from chalicelib.storage.memory_checks import still_live
from chalicelib.storage.memory_metadata import metadata_writes
from chalicelib.storage.memory_tags import tag_writes
from chalicelib.storage.same_facts import same_fact_writes

logger = logging.getLogger(__name__)

LOOSE_LIMIT = 40
"""A read that finds more loose entries than this packs them into a segment."""
SEGMENT_BYTES = 32_000
"""A new segment holds entries up to about this many bytes (~50 facts): what rewriting
one costs in write units, against how many items a recall reads."""
DEAD_SHARE = 0.5
"""A segment with at least this share of dead copies is rewritten without them."""
_TRANSACTION_ITEMS = 100
_COMPACTIONS_PER_READ = 4
"""At most this many compactions follow one read (after a burst of saves, a few reads
pack the backlog; each recall stays bounded)."""
_FACTS_PER_BACKFILL_SEGMENT = 49
"""A ConditionCheck a fact and the segment's Put: at most 100 actions a transaction."""
INLINE_SEGMENT_LIMIT = 8
"""With an object store, a read that finds more segments in the table than this merges
them into a volume: the table's share of a recall stays under ~9 ``SEGMENT_BYTES``."""
VOLUME_BYTES = 2_000_000
"""A merge writes a volume of at most about this many bytes (~3,700 facts): the
smallest volumes join the segments while they fit, so volumes grow towards it."""
_MERGE_ITEMS = 90
"""At most this many segments and volumes replaced by one merge (100 actions a
transaction, with the new pointer and the tombstones it frees)."""
_VOLUME_READERS = 8
"""Objects fetched at once by one read."""
_READ_ATTEMPTS = 3
"""Reads of an index whose volume a concurrent merge replaced before recall falls back
to the facts themselves."""
_SETTLE_COMPACTIONS = 10_000
"""A bound on one ``settle`` (a 100,000-fact store settles in a few dozen)."""
_COLLECT_ITEMS = 25
"""Expired segments and volumes deleted after one merge."""


def marker_item(agent_id: str, now: datetime) -> dict[str, Any]:
    """The marker that the agent's index is complete (``keys.recall_index_marker_key``)."""
    return {
        **recall_index_marker_key(agent_id),
        "entity": "recall_index",
        "builtAt": to_rfc3339(now),
    }


def is_indexed(memory: Memory) -> bool:
    """Whether the memory has an index entry: it is a fact and active (expired or not)."""
    return memory.kind is MemoryKind.FACT and memory.status is MemoryStatus.ACTIVE


def index_writes(before: Memory | None, after: Memory) -> list[dict[str, Any]]:
    """The transaction actions that keep the index in step with a memory going from
    ``before`` (``None``: a new memory) to ``after``, for that change's transaction.

    Returns:
        For an active fact: a Put of its loose entry (and, when it was not live before,
        a Delete of its tombstone). For a fact that leaves the index: a Delete of its
        loose entry and a Put of its tombstone at ``after``'s version. Nothing for day
        rows and archived memories that stay so. Unconditional: the memory's own write
        in the transaction carries the condition, so all happen or none does. The
        shared-facts index, the tag index and the metadata index ride along
        (``same_facts.same_fact_writes``, ``memory_tags.tag_writes``,
        ``memory_metadata.metadata_writes``).
    """
    operations: list[dict[str, Any]] = []
    was = before is not None and is_indexed(before)
    if is_indexed(after):
        operations.append({"Put": {"Item": to_attributes(convert.recall_loose_item(after))}})
        if before is not None and not was:
            key = recall_index_tombstone_key(after.agent_id, after.id)
            operations.append({"Delete": {"Key": to_attributes(key)}})
    elif was:
        key = recall_index_loose_key(after.agent_id, after.id)
        tombstone = convert.recall_tombstone_item(after.agent_id, after.id, after.version)
        operations.append({"Delete": {"Key": to_attributes(key)}})
        operations.append({"Put": {"Item": to_attributes(tombstone)}})
    operations.extend(same_fact_writes(before, after))
    operations.extend(tag_writes(before, after))
    operations.extend(metadata_writes(before, after))
    return operations


@dataclass
class _Segment:
    """A segment or a volume as read: its key, entries, each entry's packed bytes, and a
    volume's object key (``None``: a segment in the table)."""

    sk: str
    entries: list[RecallEntry]
    blobs: list[bytes]
    object_key: str | None = None

    @property
    def size(self) -> int:
        """The packed entries' bytes."""
        return sum(len(blob) for blob in self.blobs)


class _VolumeGone(Exception):
    """A pointer read names an object that is not there (a concurrent merge replaced it,
    or the index has no object store to read it from)."""


@dataclass
class _Plan:
    """One compaction: the transaction, the objects to write before it and the objects
    it retires (deleted after it commits)."""

    operations: list[dict[str, Any]]
    objects: list[tuple[str, bytes]] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)


@dataclass
class _Loose:
    """A loose entry as read."""

    entry: RecallEntry
    blob: bytes


@dataclass
class IndexState:
    """Everything one read of an agent's index found (``resolve`` makes the facts)."""

    segments: list[_Segment] = field(default_factory=list)
    loose: dict[str, _Loose] = field(default_factory=dict)
    tombstones: dict[str, int] = field(default_factory=dict)
    built: bool = False


def resolve(state: IndexState, now: datetime) -> dict[str, RecallEntry]:
    """The live, unexpired facts of ``state`` by id: per fact the copy of the highest
    version; of copies of one version (an embedding backfill keeps the version), a
    loose entry over any segment's, a newer segment's over an older one's; unless a
    tombstone of that version or later removes it (see the module doc)."""
    best: dict[str, tuple[tuple[int, int, str], RecallEntry]] = {}
    for segment in state.segments:
        written = segment.sk.rsplit("#", 1)[-1]  # the segment's id: a ULID, so time order
        for entry in segment.entries:
            _keep_better(best, (entry.version, 0, written), entry)
    for loose in state.loose.values():
        _keep_better(best, (loose.entry.version, 1, ""), loose.entry)
    return {
        memory_id: entry
        for memory_id, ((version, _, _), entry) in best.items()
        if state.tombstones.get(memory_id, -1) < version and entry.expires_at > now
    }


def _keep_better(
    best: dict[str, tuple[tuple[int, int, str], RecallEntry]],
    rank: tuple[int, int, str],
    entry: RecallEntry,
) -> None:
    held = best.get(entry.memory_id)
    if held is None or rank > held[0]:
        best[entry.memory_id] = (rank, entry)


class DynamoDBRecallIndex:
    """``RecallIndexRepository`` on the single table.

    Args:
        table: the wrapped table.
        ids: makes segment and volume ids (``seg_…``, ``vol_…``, time-ordered).
        objects: the bucket for volumes; ``None``: segments only, never merged.
    """

    def __init__(
        self, table: DynamoDBTable, ids: Any, objects: S3ObjectStore | None = None
    ) -> None:
        self._table = table
        self._ids = ids
        self._objects = objects

    def entries(self, agent_id: str, now: datetime) -> list[RecallEntry] | None:
        """The agent's live facts that have not expired at ``now``, newest first, or
        ``None`` when the agent's index is not complete (no marker: an agent from before
        the index that the backfill has not reached; recall then reads the facts).

        Two Queries of the agent's partition, eventually consistent as the memory index
        it replaces was: the loose entries, then (``sk >= recall_index_segment_floor``)
        the segments with a fact that has not expired, the tombstones and the marker;
        a segment whose facts have all expired is never read
        (docs/issues.md#issue-23-item-3). Compactions may follow, at most
        ``_COMPACTIONS_PER_READ`` (see the module doc); the facts returned are those of
        this read, which compaction does not change. ``None`` too when a volume stays
        unreadable for ``_READ_ATTEMPTS`` reads (logged): recall then reads the facts.
        """
        state = self._settled_read(agent_id, now)
        if state is None or not state.built:
            return None
        live = resolve(state, now)
        found = sorted(live.values(), key=lambda e: e.memory_id, reverse=True)
        for _ in range(_COMPACTIONS_PER_READ):
            if not self._compact(agent_id, state, live, now):
                break
            state = self._settled_read(agent_id, now)
            if state is None:
                break
            live = resolve(state, now)
        return found

    def _settled_read(self, agent_id: str, now: datetime) -> IndexState | None:
        """``read``, again while a volume it names is gone; ``None`` after
        ``_READ_ATTEMPTS``."""
        for _ in range(_READ_ATTEMPTS):
            try:
                return self.read(agent_id, now)
            except _VolumeGone:
                continue
        logger.warning("recall index of %s: a volume stayed unreadable", agent_id)
        return None

    def read(self, agent_id: str, now: datetime) -> IndexState:
        """Every loose entry, tombstone and unexpired segment and volume of the agent's
        index (the volumes' objects fetched ``_VOLUME_READERS`` at a time; not fetched
        for an index without its marker, which nothing reads as complete).

        Raises:
            _VolumeGone: a volume's object is missing (read again).
        """
        partition = recall_index_partition(agent_id)
        state = IndexState()
        loose = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :loose)",
            ExpressionAttributeValues=to_attributes({":pk": partition, ":loose": LOOSE_PREFIX}),
        )
        for item in loose:
            for entry, blob in convert.recall_entries_from_blob(
                convert.binary_or_none(item["b"]) or b""
            ):
                state.loose[entry.memory_id] = _Loose(entry, blob)
        rest = self._table.query(
            KeyConditionExpression="pk = :pk AND sk >= :floor",
            ExpressionAttributeValues=to_attributes(
                {":pk": partition, ":floor": recall_index_segment_floor(now)}
            ),
        )
        volumes: list[tuple[str, str]] = []
        for item in rest:
            _take(state, item, volumes)
        if not state.built:
            return state  # not read as complete: its volumes are not needed
        for (sk, object_key), data in zip(volumes, self._fetch(volumes), strict=True):
            if data is None:
                raise _VolumeGone(object_key)
            state.segments.append(_unpacked(sk, data, object_key))
        return state

    def _fetch(self, volumes: list[tuple[str, str]]) -> list[bytes | None]:
        """The objects of ``volumes`` (``None`` for one that is gone), in order."""
        if not volumes:
            return []
        objects = self._objects
        if objects is None:
            raise _VolumeGone(volumes[0][1])
        keys = [object_key for _, object_key in volumes]
        if len(keys) == 1:
            return [objects.get(keys[0])]
        objects.client  # noqa: B018 - built once here, not by each reading thread
        with ThreadPoolExecutor(max_workers=min(_VOLUME_READERS, len(keys))) as pool:
            # Each in a copy of this context: what the caller's context carries (the
            # request's attribution, docs/issues.md#issue-12) holds in the threads too.
            fetched = [pool.submit(copy_context().run, objects.get, key) for key in keys]
            return [future.result() for future in fetched]

    def _compact(
        self, agent_id: str, state: IndexState, live: dict[str, RecallEntry], now: datetime
    ) -> bool:
        """Pack, merge or rewrite what ``state`` calls for, in one transaction (a merge's
        volume written before it, the objects it replaces deleted after it); a failure
        (a concurrent change, another read compacting, the bucket unavailable) is logged,
        its new objects deleted, and left to a later read.

        Args:
            live: ``resolve(state, now)``, which the caller has already made.

        Returns:
            Whether a compaction was written (the index changed: read it again for more).
        """
        plan = _compaction(agent_id, state, live, self._ids.new, merge=self._objects is not None)
        if plan is None or not plan.operations:
            return False
        written: list[str] = []
        try:
            for object_key, data in plan.objects:
                assert self._objects is not None  # only a merge or a volume's rewrite
                self._objects.put(object_key, data)
                written.append(object_key)
            # Once: a conflict means another read is compacting the same items.
            self._table.transact(plan.operations, attempts=1)
        except (TransactionCancelled, Conflict, ClientError, BotoCoreError, RateLimited):
            logger.info("recall index of %s: compaction not written; left for later", agent_id)
            self._delete_objects(written)
            return False
        self._delete_objects(plan.retired)
        if plan.objects:
            self._collect(agent_id, now)
        return True

    def _delete_objects(self, object_keys: Iterable[str]) -> None:
        """Delete objects no pointer names (best effort: ``S3ObjectStore.delete``)."""
        for object_key in object_keys:
            assert self._objects is not None
            self._objects.delete(object_key)

    def _collect(self, agent_id: str, now: datetime) -> None:
        """Delete up to ``_COLLECT_ITEMS`` of the agent's segments and volumes whose facts
        have all expired (the key condition no read passes), a volume's object first; a
        segment's TTL would delete it too, a volume has none."""
        expired = self._table.query(
            KeyConditionExpression="pk = :pk AND sk BETWEEN :first AND :floor",
            ExpressionAttributeValues=to_attributes(
                {
                    ":pk": recall_index_partition(agent_id),
                    ":first": SEGMENT_PREFIX,
                    ":floor": recall_index_segment_floor(now),
                }
            ),
            ProjectionExpression="pk, sk, o",
            Limit=_COLLECT_ITEMS,
        )
        for item in islice(expired, _COLLECT_ITEMS):
            if "o" in item:
                self._delete_objects([str(item["o"])])
            self._table.client.delete_item(
                TableName=self._table.name,
                Key=to_attributes({"pk": str(item["pk"]), "sk": str(item["sk"])}),
            )

    def put_entries(self, memories: list[Memory]) -> list[str]:
        """Write the entries of those of ``memories`` that are active facts as segments,
        each fact's only if its memory is still at the version read (one transaction of
        a ConditionCheck per fact and the segment's Put, 49 facts a segment): the
        backfill's write (docs/issues.md#issue-23-item-4). A fact archived or edited since it
        was read never gets a stale entry; its own transaction wrote what holds.

        Returns:
            The ids of the groups not written because one of their memories changed
            since read (the caller reads them again); other groups are written.
        """
        facts = [memory for memory in memories if is_indexed(memory)]
        changed: list[str] = []
        for start in range(0, len(facts), _FACTS_PER_BACKFILL_SEGMENT):
            group = facts[start : start + _FACTS_PER_BACKFILL_SEGMENT]
            blobs = [convert.recall_entry_blob(memory) for memory in group]
            entries = [convert.recall_entries_from_blob(blob)[0][0] for blob in blobs]
            segment = convert.recall_segment_item(
                group[0].agent_id, self._ids.new("seg"), entries, blobs
            )
            operations = [still_live(memory) for memory in group]
            operations.append(put_new(_with_ttl(segment, entries)))
            try:
                self._table.transact(operations)
            except TransactionCancelled:
                # One fact changed and the transaction wrote none of the group:
                # the caller reads the whole group again.
                changed.extend(memory.id for memory in group)
        return changed

    def settle(self, agent_id: str, now: datetime) -> int:
        """Compact the agent's index until a read finds nothing to pack, merge or rewrite
        (or a compaction is refused: a concurrent change; later reads go on): the
        backfill's last step, so the first recalls of a large store do not merge
        thousands of segments themselves (docs/issues.md#issue-23-item-4).

        Returns:
            How many compactions were written (at most ``_SETTLE_COMPACTIONS``).
        """
        written = 0
        while written < _SETTLE_COMPACTIONS:
            state = self._settled_read(agent_id, now)
            if state is None or not self._compact(agent_id, state, resolve(state, now), now):
                break
            written += 1
        return written

    def is_built(self, agent_id: str) -> bool:
        """Whether the agent's index is complete (its marker exists)."""
        return self._table.get(recall_index_marker_key(agent_id)) is not None

    def mark_built(self, agent_id: str, now: datetime) -> None:
        """Record that the agent's index holds every live fact (the backfill's last
        step for an agent; every later change keeps it so)."""
        self._table.client.put_item(
            TableName=self._table.name, Item=to_attributes(marker_item(agent_id, now))
        )

    def clear(self, agent_id: str) -> int:
        """Delete the agent's marker, then every other item of its index and its volumes'
        objects (a rebuild's first step: recall reads the facts themselves until the
        marker is back).

        Returns:
            How many items were deleted besides the marker.
        """
        self._table.client.delete_item(
            TableName=self._table.name, Key=to_attributes(recall_index_marker_key(agent_id))
        )
        found = list(
            self._table.query(
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues=to_attributes({":pk": recall_index_partition(agent_id)}),
                ProjectionExpression="pk, sk, o",
            )
        )
        self._delete_objects(str(item["o"]) for item in found if "o" in item)
        keys = [{"pk": str(item["pk"]), "sk": str(item["sk"])} for item in found]
        for start in range(0, len(keys), 25):
            pending: dict[str, Any] = {
                self._table.name: [
                    {"DeleteRequest": {"Key": to_attributes(key)}}
                    for key in keys[start : start + 25]
                ]
            }
            while pending:
                response = self._table.client.batch_write_item(RequestItems=pending)
                pending = response.get("UnprocessedItems") or {}
        return len(keys)


def _compaction(
    agent_id: str,
    state: IndexState,
    live: dict[str, RecallEntry],
    new_id: Any,
    *,
    merge: bool = False,
) -> _Plan | None:
    """The compaction ``state`` calls for, or ``None``: pack its loose entries (more than
    ``LOOSE_LIMIT``), else, with ``merge``, merge its segments into a volume (more than
    ``INLINE_SEGMENT_LIMIT`` in the table), else rewrite its most dead segment or volume
    (at least ``DEAD_SHARE`` dead). ``live`` is ``resolve`` of ``state``; every Delete is
    conditioned on the item being as read."""
    if len(state.loose) > LOOSE_LIMIT:
        return _Plan(_pack_loose(agent_id, state, live, new_id))
    inline = sorted(
        (segment for segment in state.segments if segment.object_key is None),
        key=lambda segment: segment.sk,
    )
    if merge and len(inline) > INLINE_SEGMENT_LIMIT:
        sources: list[_Segment] = []
        size = 0
        volumes = sorted(
            (s for s in state.segments if s.object_key is not None and s.size < VOLUME_BYTES // 2),
            key=lambda segment: segment.size,
        )
        for segment in [*inline, *volumes]:
            # The first always: a segment over the target still leaves the table.
            if sources and (len(sources) >= _MERGE_ITEMS or size + segment.size > VOLUME_BYTES):
                break
            sources.append(segment)
            size += segment.size
        return _replace(agent_id, state, sources, live, new_id, volume=True)
    for segment in state.segments:
        dead = [entry for entry in segment.entries if live.get(entry.memory_id) is not entry]
        if segment.entries and len(dead) >= DEAD_SHARE * len(segment.entries):
            volume = segment.object_key is not None
            return _replace(agent_id, state, [segment], live, new_id, volume=volume)
    return None


def _pack_loose(
    agent_id: str, state: IndexState, live: dict[str, RecallEntry], new_id: Any
) -> list[dict[str, Any]]:
    """New segments of the live loose entries; every loose entry read is deleted (at its
    version). At most ``_TRANSACTION_ITEMS`` actions: the oldest loose entries first."""
    taken = sorted(state.loose)[: _TRANSACTION_ITEMS - 10]
    kept = [
        (state.loose[i].entry, state.loose[i].blob)
        for i in taken
        if live.get(i) is state.loose[i].entry
    ]
    operations = _segments(agent_id, kept, new_id)
    for memory_id in taken:
        operations.append(
            _delete_as_read(
                recall_index_loose_key(agent_id, memory_id), state.loose[memory_id].entry.version
            )
        )
    return operations


def _replace(
    agent_id: str,
    state: IndexState,
    sources: list[_Segment],
    live: dict[str, RecallEntry],
    new_id: Any,
    *,
    volume: bool,
) -> _Plan:
    """``sources`` again as one volume (``volume``) or as segments, without their dead
    copies; the sources deleted (a volume's object after the commit), and the tombstones
    only they needed."""
    replaced = {id(segment) for segment in sources}
    kept = [
        (entry, blob)
        for segment in sources
        for entry, blob in zip(segment.entries, segment.blobs, strict=True)
        if live.get(entry.memory_id) is entry
    ]
    plan = _volume(agent_id, kept, new_id) if volume else _Plan(_segments(agent_id, kept, new_id))
    for segment in sources:
        plan.operations.append(
            {
                "Delete": {
                    "Key": to_attributes(
                        {"pk": recall_index_partition(agent_id), "sk": segment.sk}
                    ),
                    "ConditionExpression": "attribute_exists(pk)",
                }
            }
        )
        if segment.object_key is not None:
            plan.retired.append(segment.object_key)
    elsewhere = {
        entry.memory_id
        for other in state.segments
        if id(other) not in replaced
        for entry in other.entries
    }
    mine = {entry.memory_id for segment in sources for entry in segment.entries}
    for memory_id, version in sorted(state.tombstones.items()):
        if (
            memory_id in mine
            and memory_id not in elsewhere
            and len(plan.operations) < _TRANSACTION_ITEMS
        ):
            plan.operations.append(
                _delete_as_read(recall_index_tombstone_key(agent_id, memory_id), version)
            )
    return plan


def _volume(agent_id: str, kept: list[tuple[RecallEntry, bytes]], new_id: Any) -> _Plan:
    """A new volume of ``kept`` (its pointer's Put and its object), or nothing to write
    when none is kept."""
    if not kept:
        return _Plan([])
    kept = sorted(kept, key=lambda pair: (pair[0].expires_at, pair[0].memory_id))
    volume_id = new_id("vol")
    object_key = recall_index_volume_object(agent_id, volume_id)
    data = b"".join(blob for _, blob in kept)
    pointer = convert.recall_volume_item(
        agent_id, volume_id, [entry for entry, _ in kept], object_key, len(data)
    )
    return _Plan([put_new(pointer)], objects=[(object_key, data)])


def _take(state: IndexState, item: dict[str, Any], volumes: list[tuple[str, str]]) -> None:
    """Add one item of the index's second Query to ``state``: the marker, a tombstone, a
    segment, or (to ``volumes``, fetched after) a volume's sort key and object key."""
    sk = str(item["sk"])
    if sk == RECALL_INDEX_BUILT_SK:
        state.built = True
    elif sk.startswith(TOMBSTONE_PREFIX):
        state.tombstones[sk[len(TOMBSTONE_PREFIX) :]] = int(item["ver"])
    elif sk.startswith(SEGMENT_PREFIX) and "o" in item:
        volumes.append((sk, str(item["o"])))
    elif sk.startswith(SEGMENT_PREFIX):
        state.segments.append(_unpacked(sk, convert.binary_or_none(item["b"]) or b"", None))


def _unpacked(sk: str, data: bytes, object_key: str | None) -> _Segment:
    """A segment or volume as read from its packed bytes."""
    packed = convert.recall_entries_from_blob(data)
    return _Segment(sk, [entry for entry, _ in packed], [blob for _, blob in packed], object_key)


def _segments(
    agent_id: str, kept: Iterable[tuple[RecallEntry, bytes]], new_id: Any
) -> list[dict[str, Any]]:
    """Puts of new segments holding ``kept`` (``segment_items``)."""
    return [put_new(item) for item in segment_items(agent_id, kept, new_id)]


def segment_items(
    agent_id: str, kept: Iterable[tuple[RecallEntry, bytes]], new_id: Any
) -> list[dict[str, Any]]:
    """New segment items (with their TTL) holding ``kept`` (entries with their packed
    bytes), ordered by expiry, about ``SEGMENT_BYTES`` each and never two UTC expiry
    dates in one (so the facts of a day's segment expire together and the key
    condition skips it from then on); ``new_id("seg")`` names each. A compaction
    writes them; so does a bench seeding a store."""
    groups: list[list[tuple[RecallEntry, bytes]]] = [[]]
    size = 0
    for pair in sorted(kept, key=lambda pair: (pair[0].expires_at, pair[0].memory_id)):
        day = pair[0].expires_at.date()
        if groups[-1] and (
            size + len(pair[1]) > SEGMENT_BYTES or groups[-1][0][0].expires_at.date() != day
        ):
            groups.append([])
            size = 0
        groups[-1].append(pair)
        size += len(pair[1])
    return [_segment_item(agent_id, group, new_id("seg")) for group in groups if group]


def _segment_item(
    agent_id: str, group: list[tuple[RecallEntry, bytes]], segment_id: str
) -> dict[str, Any]:
    entries = [entry for entry, _ in group]
    segment = convert.recall_segment_item(agent_id, segment_id, entries, [b for _, b in group])
    return _with_ttl(segment, entries)


def _with_ttl(segment: dict[str, Any], entries: Sequence[RecallEntry]) -> dict[str, Any]:
    """``segment`` with the table's TTL attribute at its latest expiry."""
    last = max(epoch_microseconds(entry.expires_at) for entry in entries)
    return {**segment, KV_TTL_ATTRIBUTE: -(-last // 1_000_000)}


def _delete_as_read(key: dict[str, str], version: int) -> dict[str, Any]:
    """A Delete of a loose entry or tombstone only if it still holds ``version``."""
    return {
        "Delete": {
            "Key": to_attributes(key),
            "ConditionExpression": "#version = :version",
            "ExpressionAttributeNames": {"#version": "ver"},
            "ExpressionAttributeValues": to_attributes({":version": version}),
        }
    }
