"""Metadata on facts through the HTTP API (docs/reference.md#metadata,
docs/issues.md#issue-46-item-1): set on save, replaced by an edit with history and
If-Match, kept by a superseding save that sends none, gone with an erasure, and every
bad object refused with nothing stored."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import Api, World, error_code, save


def _edit(api: Api, world: World, memory_id: str, version: int, body: dict[str, Any]) -> Any:
    status, _, answer = api.send(
        "PATCH",
        f"/memories/{memory_id}",
        world.person,
        body,
        headers={"If-Match": f'"{memory_id}.v{version}"'},
    )
    return status, answer


def _history(api: Api, world: World, memory_id: str) -> list[dict[str, Any]]:
    status, body = api.call("GET", f"/memories/{memory_id}/history", world.person)
    assert status == 200, body
    return list(body["data"])


def test_metadata_is_saved_normalized_shown_and_replaced_by_an_edit(api: Api, world: World) -> None:
    sent = {
        " Project ": "billing",
        "priority": 2,
        "ratio": 0.25,
        "reviewed": True,
        "due": "2026-12-31",
    }
    saved = save(api, world, "Invoices are sent on the first", metadata=sent)
    assert saved["metadata"] == {
        "due": "2026-12-31",
        "priority": 2,
        "project": "billing",
        "ratio": 0.25,
        "reviewed": True,
    }
    assert list(saved["metadata"]) == sorted(saved["metadata"])
    status, shown = api.call("GET", f"/memories/{saved['id']}", world.agent)
    assert status == 200 and shown["metadata"] == saved["metadata"]
    assert save(api, world, "No metadata here")["metadata"] == {}

    status, stale = _edit(api, world, saved["id"], 7, {"metadata": {}})
    assert status == 412, stale
    status, edited = _edit(api, world, saved["id"], 1, {"metadata": {"project": "support"}})
    assert status == 200 and edited["metadata"] == {"project": "support"}
    record = _history(api, world, saved["id"])[-1]
    assert record["action"] == "edit"
    assert record["before"]["metadata"]["priority"] == 2
    assert record["after"]["metadata"] == {"project": "support"}
    # the same object again is no change: no new version, no record
    status, same = _edit(api, world, saved["id"], 2, {"metadata": {"PROJECT": "support"}})
    assert same["metadata"] == {"project": "support"}
    assert status == 200 and len(_history(api, world, saved["id"])) == 2
    status, cleared = _edit(api, world, saved["id"], 2, {"metadata": {}})
    assert status == 200 and cleared["metadata"] == {}


def test_a_superseding_save_keeps_the_metadata_unless_it_sends_some(api: Api, world: World) -> None:
    old = save(api, world, "The queue is SQS", metadata={"source": "design doc"})
    kept = save(api, world, "The queue is SQS FIFO", supersedes=old["id"])
    assert kept["metadata"] == {"source": "design doc"}
    replaced = save(api, world, "The queue is SNS", supersedes=kept["id"], metadata={})
    assert replaced["metadata"] == {}


def test_an_erasure_removes_the_metadata_from_the_memory_and_its_history(
    api: Api, world: World
) -> None:
    fact = save(api, world, "Customer ACME pays late", metadata={"customer": "acme corp"})
    status, _ = api.call("POST", f"/memories/{fact['id']}/erase", world.person, {"reason": "asked"})
    assert status == 200
    status, tombstone = api.call("GET", f"/memories/{fact['id']}", world.person)
    assert status == 200 and tombstone["metadata"] == {}
    history = _history(api, world, fact["id"])
    assert "acme corp" not in repr(history)


@pytest.mark.parametrize(
    ("metadata", "code"),
    [
        ([["a", 1]], "invalid_request"),  # not an object: the body's own type check
        ({"": "x"}, "memory_metadata_invalid"),
        ({"9lives": "x"}, "memory_metadata_invalid"),
        ({"a b": "x"}, "memory_metadata_invalid"),
        ({"k" * 41: "x"}, "memory_metadata_invalid"),
        ({"nested": {"a": 1}}, "memory_metadata_invalid"),
        ({"list": [1, 2]}, "memory_metadata_invalid"),
        ({"none": None}, "memory_metadata_invalid"),
        ({"long": "x" * 201}, "memory_metadata_invalid"),
        ({"ctl": "a\u0007b"}, "memory_metadata_invalid"),
        ({f"k{n}": n for n in range(11)}, "memory_metadata_invalid"),
        ({"Project": "a", "project": "b"}, "memory_metadata_invalid"),
        ({f"k{n}": "x" * 200 for n in range(10)}, "memory_metadata_invalid"),  # > 2,048 bytes
        ({"aws": "AKIAIOSFODNN7EXAMPLE"}, "secret_in_memory"),
    ],
)
def test_bad_metadata_is_refused_and_stores_nothing(
    api: Api, world: World, metadata: Any, code: str
) -> None:
    answer = api.call(
        "POST", "/memories", world.agent, {"text": "A fact with metadata", "metadata": metadata}
    )
    assert error_code(answer)[1] == code, answer
    status, listed = api.call("GET", "/memories", world.agent)
    assert status == 200 and listed["data"] == []
    fact = save(api, world, "A fact to edit", metadata={"keep": 1})
    status, answer = _edit(api, world, fact["id"], 1, {"metadata": metadata})
    assert (status, answer["error"]["code"]) == (error_code((status, answer))[0], code)
    assert api.call("GET", f"/memories/{fact['id']}", world.agent)[1]["metadata"] == {"keep": 1}


def test_a_day_row_takes_no_metadata(api: Api, world: World) -> None:
    status, day = api.call("POST", "/memories/day", world.agent, {"line": "deployed v2"})
    assert status in (200, 201), day
    status, answer = _edit(api, world, day["id"], 1, {"metadata": {"a": 1}})
    assert (status, answer["error"]["code"]) == (400, "memory_metadata_invalid")
