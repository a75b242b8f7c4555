"""The recall index's pieces (docs/issues.md#issue-23-item-1): an entry's packing, the stand-in
the scorer reads, how copies of one fact resolve, and how segments are cut."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.memory import Memory, MemoryKind
from chalicelib.models.recall import RecallEntry
from chalicelib.services.recall.embedding_format import (
    SENTENCE_BYTES,
    TOKEN_BYTES,
    is_ours,
    sentence_stand_in,
)
from chalicelib.storage.items import (
    RECALL_INDEX_VECTOR_BYTES,
    recall_entries_from_blob,
    recall_entry_blob,
)
from chalicelib.storage.recall_index import (
    SEGMENT_BYTES,
    IndexState,
    _Loose,
    _Segment,
    resolve,
    segment_items,
)

NOW = datetime(2026, 12, 3, 12, 0, 0, 123456, tzinfo=UTC)


def memory(number: int, text: str = "fact", **changes: object) -> Memory:
    values: dict[str, object] = {
        "id": f"mem_01KAAAAAAAAAAAAAAAAAAAAA{number:02d}",
        "workspace_id": "wsp_1",
        "agent_id": "agt_1",
        "kind": MemoryKind.FACT,
        "text": text,
        "expires_at": NOW + timedelta(days=90),
        "created_at": NOW,
        "updated_at": NOW,
        **changes,
    }
    return Memory.model_validate(values)


def token_embedding(pieces: int) -> bytes:
    return bytes([3]) + bytes(range(128)) * 3 + bytes([pieces]) + b"\x55" * (TOKEN_BYTES * pieces)


def test_the_kept_prefix_is_the_sentence_part_and_its_piece_count() -> None:
    assert RECALL_INDEX_VECTOR_BYTES == SENTENCE_BYTES + 1


def test_an_entry_packs_and_unpacks_exactly_with_times_as_the_item_keeps_them() -> None:
    stored = token_embedding(5)
    fact = memory(1, "Ünïcode façade — 部署", embedding=stored, version=7)
    ((entry, blob),) = recall_entries_from_blob(recall_entry_blob(fact))
    assert blob == recall_entry_blob(fact)
    assert (entry.memory_id, entry.text, entry.version) == (fact.id, fact.text, 7)
    assert entry.sentence == stored[:RECALL_INDEX_VECTOR_BYTES]
    assert entry.embedding_size == len(stored)
    # Milliseconds, as to_rfc3339 stores them on the memory item.
    assert entry.created_at == from_rfc3339(to_rfc3339(NOW)) != NOW
    bare = memory(2)
    ((entry, _),) = recall_entries_from_blob(recall_entry_blob(bare))
    assert (entry.sentence, entry.embedding_size) == (None, 0)
    both = recall_entry_blob(fact) + recall_entry_blob(bare)
    assert [e.memory_id for e, _ in recall_entries_from_blob(both)] == [fact.id, bare.id]


def test_the_stand_in_is_a_format_one_embedding_of_the_same_sentence_or_nothing() -> None:
    stored = token_embedding(4)
    stand_in = sentence_stand_in(stored[:RECALL_INDEX_VECTOR_BYTES], len(stored))
    assert stand_in is not None and is_ours(stand_in) and stand_in[0] == 1
    assert stand_in[1:] == stored[1:SENTENCE_BYTES]
    format_one = bytes([1]) + bytes(384)
    assert sentence_stand_in(format_one, len(format_one)) == format_one
    # A size that is not what the tag says, a foreign tag, nothing: the scorer embeds.
    assert sentence_stand_in(stored[:RECALL_INDEX_VECTOR_BYTES], len(stored) + 1) is None
    assert sentence_stand_in(bytes([9]) + stored[1:RECALL_INDEX_VECTOR_BYTES], len(stored)) is None
    assert sentence_stand_in(None, 0) is None
    assert sentence_stand_in(format_one, len(format_one) + TOKEN_BYTES) is None


def entry_of(fact: Memory) -> tuple[RecallEntry, bytes]:
    return recall_entries_from_blob(recall_entry_blob(fact))[0]


def test_copies_resolve_by_version_tombstones_and_expiry() -> None:
    old = memory(1, "old text", version=1)
    new = memory(1, "new text", version=2)
    gone = memory(2, "gone", version=1)
    back = memory(3, "back", version=4)
    expired = memory(4, "expired", expires_at=NOW - timedelta(seconds=1))
    same = memory(5, "same version, loose wins", version=1)
    packed = [
        entry_of(f) for f in (old, gone, memory(3, "back", version=1), expired, memory(5, "x"))
    ]
    state = IndexState(
        segments=[_Segment("S#1", [e for e, _ in packed], [b for _, b in packed])],
        loose={f.id: _Loose(*entry_of(f)) for f in (new, back, same)},
        tombstones={gone.id: 2, back.id: 3},
        built=True,
    )
    live = resolve(state, NOW)
    assert {i: e.text for i, e in live.items()} == {
        new.id: "new text",
        back.id: "back",
        same.id: "same version, loose wins",
    }


def test_segments_are_cut_by_size_and_never_span_two_expiry_dates() -> None:
    facts = [memory(n, "x" * 500, expires_at=NOW + timedelta(days=1 + n // 60)) for n in range(90)]
    numbers = iter(range(99))
    items = segment_items("agt_1", [entry_of(f) for f in facts], lambda _: f"seg_{next(numbers)}")
    dates = []
    for item in items:
        entries = [e for e, _ in recall_entries_from_blob(item["b"])]
        assert len(item["b"]) <= SEGMENT_BYTES + 600
        assert len({e.expires_at.date() for e in entries}) == 1
        last = max(e.expires_at for e in entries)
        assert item["expiresAtEpoch"] == int(last.timestamp()) + (last.microsecond > 0)
        dates.append(entries[0].expires_at.date())
    assert sum(item["n"] for item in items) == 90
    assert dates == sorted(dates) and len(set(dates)) == 2 and len(items) > 2


def test_of_two_segments_with_one_version_the_newer_segment_holds() -> None:
    """An embedding backfill keeps the memory's version: its loose entry, packed later,
    must win over the older segment's copy whatever order the segments are read in."""
    before = memory(1, "text", embedding=bytes([1]) + bytes(384))
    after = memory(1, "text", embedding=bytes([1]) + bytes([7]) * 384)
    old, new = entry_of(before), entry_of(after)
    segments = [
        _Segment("S#0001#seg_01OLD", [old[0]], [old[1]]),
        _Segment("S#0001#seg_02NEW", [new[0]], [new[1]]),
    ]
    for ordered in (segments, segments[::-1]):
        state = IndexState(segments=ordered, built=True)
        assert resolve(state, NOW)[before.id].sentence == after.embedding
