"""A fact save's optional ``evidence`` (docs/issues.md#issue-4, docs/reference.md#review-step-5):
limits, secret check, stored with the fact and shown in its history, used by the review."""

from __future__ import annotations

from typing import Any

from tests.helpers import Api, World, error_code, every_memory, review, save

EVIDENCE = '$ terraform output region\n\t"eu-west-1"'


def test_evidence_is_kept_out_of_the_memory_and_shown_in_its_history(
    api: Api, world: World
) -> None:
    saved = save(api, world, "The deploy region is eu-west-1", evidence=EVIDENCE)
    assert "evidence" not in saved
    status, body = api.call("GET", f"/memories/{saved['id']}", world.agent)
    assert status == 200 and body == saved
    status, history = api.call("GET", f"/memories/{saved['id']}/history", world.person)
    assert status == 200
    (created,) = history["data"]
    assert (created["action"], created["evidence"]) == ("create", EVIDENCE)


def test_archive_record_has_no_evidence(api: Api, world: World) -> None:
    saved = save(api, world, "The deploy region is eu-west-1", evidence=EVIDENCE)
    status, _ = api.call(
        "POST", f"/memories/{saved['id']}/archive", world.agent, {"reason": "moved"}
    )
    assert status == 200
    _, history = api.call("GET", f"/memories/{saved['id']}/history", world.agent)
    assert [(r["action"], r["evidence"]) for r in history["data"]] == [
        ("create", EVIDENCE),
        ("archive", None),
    ]


def _nothing_stored(api: Api, world: World) -> None:
    assert every_memory(api, world) == []


def test_evidence_over_2000_characters_is_invalid_and_not_stored(api: Api, world: World) -> None:
    response = api.call(
        "POST", "/memories", world.agent, {"text": "A fact", "evidence": "x" * 2001}
    )
    assert error_code(response) == (400, "invalid_request")
    _nothing_stored(api, world)
    save(api, world, "A fact", evidence="x" * 2000)


def test_secret_in_evidence_is_rejected_and_not_stored(api: Api, world: World) -> None:
    key = "AKIA" + "QX7" + "Z" * 13
    response = api.call(
        "POST", "/memories", world.agent, {"text": "S3 uploads work", "evidence": f"key={key}"}
    )
    assert error_code(response) == (400, "secret_in_memory")
    _nothing_stored(api, world)


def test_bad_evidence_values_are_invalid_requests(api: Api, world: World) -> None:
    bad: list[Any] = ["   ", "bell \x07", 42, ["a list"], {"an": "object"}]
    for value in bad:
        response = api.call("POST", "/memories", world.agent, {"text": "A fact", "evidence": value})
        assert error_code(response) == (400, "invalid_request"), value
    response = api.call("POST", "/memories", world.agent, {"text": "A fact", "evidenc": "typo"})
    assert error_code(response) == (400, "invalid_request")
    _nothing_stored(api, world)


def test_review_keeps_the_conflicting_fact_its_evidence_supports(api: Api, world: World) -> None:
    supported = save(
        api,
        world,
        "The nightly backup job is enabled",
        evidence="$ backupctl status\nnightly backup job: enabled (last run 02:00)",
    )
    newer = save(api, world, "The nightly backup job is not enabled")
    report = review(api, world)
    (action,) = report["plan"]["actions"]
    assert action["action"] == "resolve_conflict"
    assert (action["keepId"], action["memoryIds"]) == (supported["id"], [newer["id"]])
    assert "evidence" in action["reason"]
    memories = {m["id"]: m for m in every_memory(api, world)}
    assert memories[supported["id"]]["status"] == "active"
    assert memories[newer["id"]]["supersededBy"] == supported["id"]
