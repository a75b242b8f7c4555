"""Saving, reading, listing and the lifecycle of facts through the HTTP API
(docs/reference.md#3-the-memory-object to docs/reference.md#7-http-api)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.ids import FixedClock
from tests.helpers import START, Api, World, error_code, pages, save


def test_agent_saves_fact_with_every_field(api: Api, world: World) -> None:
    status, body = api.call(
        "POST",
        "/memories",
        world.agent,
        {"text": "Deploys need the VPN"},
        headers={"X-Pinework-Run": "run_1", "X-Pinework-Task": "PIN-42"},
    )
    assert status == 201
    assert body["id"].startswith("mem_") and len(body["id"]) == 30
    assert body["object"] == "memory"
    assert body["agentId"] == world.agent.id
    assert (body["kind"], body["date"], body["status"]) == ("fact", None, "active")
    assert body["expiresAt"] == "2027-02-28T12:00:00.000Z"  # 90 days after the save
    assert body["expired"] is False
    assert (body["runId"], body["taskKey"]) == ("run_1", "PIN-42")
    assert body["savedByAgentId"] == world.agent.id and body["editedByPersonId"] is None
    assert body["recallCount"] == 0 and isinstance(body["recallCount"], int)
    assert body["createdAt"] == body["updatedAt"] == "2026-11-30T12:00:00.000Z"
    assert "workspaceId" not in body and "version" not in body


def test_get_returns_what_was_saved(api: Api, world: World) -> None:
    saved = save(api, world)
    status, body = api.call("GET", f"/memories/{saved['id']}", world.agent)
    assert status == 200 and body == saved


def test_fact_limit_counts_code_points(api: Api, world: World) -> None:
    assert api.call("POST", "/memories", world.agent, {"text": "🎉" * 500})[0] == 201
    assert error_code(api.call("POST", "/memories", world.agent, {"text": "é" * 501})) == (
        400,
        "memory_text_too_long",
    )


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "\u200b", "\ufeff\u2060 "])
def test_blank_text_is_invalid(api: Api, world: World, text: str) -> None:
    assert error_code(api.call("POST", "/memories", world.agent, {"text": text})) == (
        400,
        "invalid_request",
    )


@pytest.mark.parametrize(
    "raw",
    [
        b"{not json",
        b"[1, 2]",
        b'"text"',
        b'{"text": NaN}',
        b'{"text": "x", "colour": "red"}',
        b'{"text": 5}',
        b'{"text": "\\ud83d"}',
        b"\xff\xfe",
        b'{"text": "ok", "expiresAt": 20261231}',
    ],
)
def test_malformed_bodies_are_invalid_request_and_change_nothing(
    api: Api, world: World, raw: bytes
) -> None:
    assert error_code(api.call("POST", "/memories", world.agent, raw=raw)) == (
        400,
        "invalid_request",
    )
    status, listing = api.call("GET", "/memories", world.agent)
    assert status == 200 and listing["data"] == []


def test_expiry_date_means_end_of_that_utc_day(api: Api, world: World) -> None:
    body = save(api, world, expiresAt="2026-12-31")
    assert body["expiresAt"] == "2026-12-31T23:59:59.999Z"
    body = save(api, world, expiresAt="2026-12-31T10:00:00+02:00")
    assert body["expiresAt"] == "2026-12-31T08:00:00.000Z"


@pytest.mark.parametrize("value", ["2026-11-29", "2026-11-30T11:59:59Z", "tomorrow", "2026-13-01"])
def test_bad_or_past_expiry_is_invalid(api: Api, world: World, value: str) -> None:
    response = api.call("POST", "/memories", world.agent, {"text": "x y", "expiresAt": value})
    assert error_code(response) == (400, "invalid_request")


def test_expired_is_computed_at_read_time(api: Api, world: World, clock: FixedClock) -> None:
    saved = save(api, world, expiresAt="2026-12-01")
    clock.set(START + timedelta(days=2))
    body = api.call("GET", f"/memories/{saved['id']}", world.agent)[1]
    assert body["expired"] is True and body["status"] == "active"


def test_missing_or_unknown_token_is_unauthorized(api: Api, world: World) -> None:
    assert error_code(api.call("GET", "/memories")) == (401, "unauthorized")
    status, body = api.call("GET", "/memories", headers={"Authorization": "Bearer nope"})
    assert (status, body["error"]["code"]) == (401, "unauthorized")


def test_person_must_name_the_agent(api: Api, world: World) -> None:
    assert error_code(api.call("POST", "/memories", world.person, {"text": "a fact"})) == (
        400,
        "memory_agent_required",
    )
    status, body = api.call(
        "POST", "/memories", world.person, {"text": "a fact", "agentId": world.agent.id}
    )
    assert status == 201
    assert body["editedByPersonId"] == world.person.id and body["savedByAgentId"] is None


def test_person_cannot_save_for_an_agent_of_another_workspace(api: Api, world: World) -> None:
    response = api.call(
        "POST", "/memories", world.outsider, {"text": "a fact", "agentId": world.agent.id}
    )
    assert error_code(response) == (403, "forbidden")


def test_agent_cannot_name_another_agent(api: Api, world: World) -> None:
    response = api.call(
        "POST", "/memories", world.agent, {"text": "a fact", "agentId": world.other_agent.id}
    )
    assert error_code(response) == (403, "memory_not_own")


def test_agent_cannot_read_another_agents_memory(api: Api, world: World) -> None:
    saved = save(api, world)
    assert error_code(api.call("GET", f"/memories/{saved['id']}", world.other_agent)) == (
        403,
        "memory_not_own",
    )
    assert api.call("GET", f"/memories/{saved['id']}", world.person)[0] == 200


def test_other_workspace_sees_not_found(api: Api, world: World) -> None:
    saved = save(api, world)
    for actor in (world.outsider, world.outsider_agent):
        assert error_code(api.call("GET", f"/memories/{saved['id']}", actor)) == (
            404,
            "memory_not_found",
        )
    assert error_code(api.call("GET", "/memories/mem_nope", world.person)) == (
        404,
        "memory_not_found",
    )


def test_secret_is_rejected_and_not_stored(api: Api, world: World) -> None:
    key = "AKIA" + "QX7" + "Z" * 13
    response = api.call("POST", "/memories", world.agent, {"text": f"use key {key} for s3"})
    assert error_code(response) == (400, "secret_in_memory")
    assert api.call("GET", "/memories", world.agent)[1]["data"] == []


def test_supersede_archives_the_old_fact(api: Api, world: World) -> None:
    old = save(api, world, "The VPN is needed")
    new = save(api, world, "The VPN is no longer needed", supersedes=old["id"])
    assert new["supersedes"] == old["id"]
    old_now = api.call("GET", f"/memories/{old['id']}", world.agent)[1]
    assert old_now["status"] == "archived" and old_now["archiveReason"] == "superseded"
    assert old_now["supersededBy"] == new["id"] and old_now["archivedAt"]


def test_supersede_errors(api: Api, world: World) -> None:
    mine = save(api, world)
    theirs = api.call("POST", "/memories", world.other_agent, {"text": "theirs"})[1]
    day = api.call("POST", "/memories/day", world.agent, {"line": "did things"})[1]
    cases = [
        (theirs["id"], (400, "memory_agent_mismatch")),
        (day["id"], (400, "memory_day_append_only")),
        ("mem_01JD0000000000000000000000", (404, "memory_not_found")),
    ]
    for target, expected in cases:
        response = api.call("POST", "/memories", world.agent, {"text": "t", "supersedes": target})
        assert error_code(response) == expected
    api.call("POST", f"/memories/{mine['id']}/archive", world.agent, {"reason": "wrong"})
    response = api.call("POST", "/memories", world.agent, {"text": "t", "supersedes": mine["id"]})
    assert error_code(response) == (409, "memory_supersede_archived")
    listing = api.call("GET", "/memories", world.agent, None)[1]["data"]
    assert [m["id"] for m in listing] == [day["id"]]  # no orphan fact from the failures


def test_archive_needs_a_reason(api: Api, world: World) -> None:
    saved = save(api, world)
    for body in ({}, {"reason": " "}, {"reason": "x" * 501}, {"reason": "vetoed"}):
        response = api.call("POST", f"/memories/{saved['id']}/archive", world.agent, body)
        assert error_code(response) == (400, "invalid_request")
    status, body = api.call(
        "POST", f"/memories/{saved['id']}/archive", world.agent, {"reason": "x" * 500}
    )
    assert status == 200 and body["archiveReason"] == "x" * 500
    response = api.call("POST", f"/memories/{saved['id']}/archive", world.agent, {"reason": "y"})
    assert error_code(response) == (409, "memory_already_archived")


def test_unarchive_rules(api: Api, world: World) -> None:
    saved = save(api, world)
    path = f"/memories/{saved['id']}"
    assert error_code(api.call("POST", path + "/unarchive", world.agent)) == (
        409,
        "memory_not_archived",
    )
    api.call("POST", path + "/archive", world.agent, {"reason": "stale"})
    status, body = api.call("POST", path + "/unarchive", world.agent)
    assert status == 200 and body["status"] == "active" and body["archiveReason"] is None


def test_agent_cannot_bring_back_a_vetoed_memory(api: Api, world: World) -> None:
    saved = save(api, world)
    path = f"/memories/{saved['id']}"
    assert error_code(api.call("POST", path + "/veto", world.agent, {})) == (403, "forbidden")
    status, body = api.call("POST", path + "/veto", world.person, {"reason": "wrong"})
    assert status == 200 and body["archiveReason"] == "vetoed"
    assert error_code(api.call("POST", path + "/unarchive", world.agent)) == (
        403,
        "memory_veto_human_only",
    )
    assert api.call("POST", path + "/unarchive", world.person)[1]["status"] == "active"


def test_superseded_memory_never_comes_back_nor_is_edited(api: Api, world: World) -> None:
    old = save(api, world, "old")
    save(api, world, "new", supersedes=old["id"])
    path = f"/memories/{old['id']}"
    assert error_code(api.call("POST", path + "/unarchive", world.person)) == (
        409,
        "memory_superseded",
    )
    assert error_code(api.call("PATCH", path, world.person, {"text": "edited"})) == (
        409,
        "memory_superseded",
    )


def test_person_edits_and_agent_cannot(api: Api, world: World) -> None:
    saved = save(api, world)
    path = f"/memories/{saved['id']}"
    assert error_code(api.call("PATCH", path, world.agent, {"text": "x"})) == (403, "forbidden")
    assert error_code(api.call("PATCH", path, world.person, {})) == (400, "invalid_request")
    status, body = api.call(
        "PATCH", path, world.person, {"text": "Deploys need the VPN", "expiresAt": "2027-01-01"}
    )
    assert status == 200
    assert body["text"] == "Deploys need the VPN" and body["editedByPersonId"] == world.person.id
    assert body["expiresAt"] == "2027-01-01T23:59:59.999Z"


def test_an_edit_that_changes_nothing_writes_nothing(api: Api, world: World) -> None:
    """The same text and the same expiry: 200 with the memory as it was, no new
    version, no history record (fresh-user finding: it wrote an "edit" record)."""
    saved = save(api, world, "Deploys need the VPN", expiresAt="2027-01-01")
    path = f"/memories/{saved['id']}"
    for body in (
        {"text": "Deploys need the VPN"},
        {"expiresAt": "2027-01-01"},
        {"text": "Deploys need the VPN", "expiresAt": "2027-01-01T23:59:59.999Z"},
        {"expiresAt": "2027-01-01T23:59:59.9999Z"},  # the same once stored (milliseconds)
        {"expiresAt": "2027-01-02T00:59:59.999+01:00"},
    ):
        status, answer = api.call("PATCH", path, world.person, body)
        assert status == 200 and answer == api.call("GET", path, world.person)[1], body
        assert answer["updatedAt"] == saved["updatedAt"] and answer["editedByPersonId"] is None
    status, history = api.call("GET", path + "/history", world.person)
    assert [record["action"] for record in history["data"]] == ["create"]
    status, answer = api.call("PATCH", path, world.person, {"text": "Deploys need the VPN!"})
    assert status == 200 and answer["editedByPersonId"] == world.person.id
    status, history = api.call("GET", path + "/history", world.person)
    assert [record["action"] for record in history["data"]] == ["create", "edit"]


def test_history_records_every_change_with_before_and_after(api: Api, world: World) -> None:
    saved = save(api, world, "v1")
    path = f"/memories/{saved['id']}"
    api.call("PATCH", path, world.person, {"text": "v2"})
    api.call("POST", path + "/archive", world.agent, {"reason": "done"})
    api.call("POST", path + "/unarchive", world.person)
    api.call("POST", path + "/veto", world.person, {})
    new = save(api, world, "v3")
    status, body = api.call("GET", path + "/history", world.person)
    assert status == 200
    actions = [(r["action"], r["actorType"], r["actorId"]) for r in body["data"]]
    assert actions == [
        ("create", "agent", world.agent.id),
        ("edit", "person", world.person.id),
        ("archive", "agent", world.agent.id),
        ("unarchive", "person", world.person.id),
        ("veto", "person", world.person.id),
    ]
    edit = body["data"][1]
    assert edit["before"]["text"] == "v1" and edit["after"]["text"] == "v2"
    assert body["data"][0]["before"] is None
    assert api.call("GET", f"/memories/{new['id']}/history", world.other_agent)[0] == 403


def test_rejected_change_writes_no_audit_record(api: Api, world: World) -> None:
    saved = save(api, world)
    path = f"/memories/{saved['id']}"
    api.call("PATCH", path, world.person, {"text": "x" * 501})
    api.call("POST", path + "/unarchive", world.agent)
    body = api.call("GET", path + "/history", world.agent)[1]
    assert [r["action"] for r in body["data"]] == ["create"]


@pytest.mark.parametrize(
    ("method", "path"),
    [("DELETE", "/memories"), ("PUT", "/memories/mem_x"), ("GET", "/memories/day")],
)
def test_wrong_method_is_405_in_our_envelope(
    api: Api, world: World, method: str, path: str
) -> None:
    assert error_code(api.call(method, path, world.agent)) == (405, "method_not_allowed")


def test_any_content_type_reaches_our_parser(api: Api, world: World) -> None:
    response = api.call(
        "POST", "/memories", world.agent, raw=b"<a/>", headers={"Content-Type": "application/xml"}
    )
    assert error_code(response) == (400, "invalid_request")
    status, _ = api.call(
        "POST",
        "/memories",
        world.agent,
        raw=b'{"text": "plain"}',
        headers={"Content-Type": "text/plain"},
    )
    assert status == 201


def test_deeply_nested_or_duplicate_key_bodies_are_invalid(api: Api, world: World) -> None:
    deep = '{"text": "x", "a": ' + '{"b": ' * 3000 + "1" + "}" * 3000 + "}"
    assert error_code(api.call("POST", "/memories", world.agent, raw=deep)) == (
        400,
        "invalid_request",
    )
    duplicate = '{"text": "a", "text": "b"}'
    assert error_code(api.call("POST", "/memories", world.agent, raw=duplicate)) == (
        400,
        "invalid_request",
    )


@pytest.mark.parametrize("value", ["9999-12-31T23:59:59-01:00", "0001-01-01T00:30:00+01:00"])
def test_expiry_at_the_ends_of_the_calendar_is_invalid_not_a_crash(
    api: Api, world: World, value: str
) -> None:
    response = api.call("POST", "/memories", world.agent, {"text": "x y", "expiresAt": value})
    assert error_code(response) == (400, "invalid_request")


def test_reads_accept_any_content_type_and_reject_stray_query_strings(
    api: Api, world: World
) -> None:
    saved = save(api, world)
    for path in ("/memories", f"/memories/{saved['id']}", f"/memories/{saved['id']}/history"):
        status, _ = api.call("GET", path, world.agent, headers={"Content-Type": "text/plain"})
        assert status == 200, path
    for stray in (f"/memories/{saved['id']}?limit=1", f"/memories/{saved['id']}/history?color=1"):
        assert error_code(api.call("GET", stray, world.agent)) == (400, "invalid_request")


def test_head_is_405_with_allow(api: Api, world: World) -> None:
    assert api.call("HEAD", "/memories", world.agent)[0] == 405


@pytest.mark.parametrize(
    "text",
    [
        "The DB password is " + "Tr0ub4" + "dor&3xyz!",
        "password is " + "hunter" + "2",
    ],
)
def test_passwords_written_in_words_are_secrets(api: Api, world: World, text: str) -> None:
    assert error_code(api.call("POST", "/memories", world.agent, {"text": text})) == (
        400,
        "secret_in_memory",
    )


def test_archive_reasons_and_veto_notes_are_checked_for_secrets(api: Api, world: World) -> None:
    saved = save(api, world)
    path = f"/memories/{saved['id']}"
    leaked = "leaked " + "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    for route, actor in (("/archive", world.agent), ("/veto", world.person)):
        response = api.call("POST", path + route, actor, {"reason": leaked})
        assert error_code(response) == (400, "secret_in_memory")
    assert api.call("GET", path, world.agent)[1]["status"] == "active"


@pytest.mark.parametrize("text", ["bell\x07", "nul\x00byte", "esc\x1b[31m"])
def test_control_characters_are_invalid(api: Api, world: World, text: str) -> None:
    assert error_code(api.call("POST", "/memories", world.agent, {"text": text})) == (
        400,
        "invalid_request",
    )


def test_full_width_reserved_reason_is_still_reserved(api: Api, world: World) -> None:
    saved = save(api, world)
    response = api.call(
        "POST",
        f"/memories/{saved['id']}/archive",
        world.agent,
        {"reason": "".join(chr(ord(c) + 0xFEE0) for c in "vetoed")},
    )
    assert error_code(response) == (400, "invalid_request")


def test_a_persons_run_headers_are_ignored(api: Api, world: World) -> None:
    status, body = api.call(
        "POST",
        "/memories",
        world.person,
        {"text": "a fact", "agentId": world.agent.id},
        headers={"X-Pinework-Task": "PIN-1", "X-Pinework-Run": "run_1"},
    )
    assert status == 201 and (body["taskKey"], body["runId"]) == (None, None)


def test_history_pages_oldest_first_with_limit_and_next_token(api: Api, world: World) -> None:
    """docs/reference.md#lists: a memory's history takes ``limit`` and ``nextToken`` (a day row
    edited many times would otherwise outgrow one answer)."""
    saved = save(api, world, "v0")
    path = f"/memories/{saved['id']}"
    for n in range(1, 5):
        assert api.call("PATCH", path, world.person, {"text": f"v{n}"})[0] == 200
    found = pages(api, world.person, path + "/history?limit=2")
    assert [len(page) for page in found] == [2, 2, 1]
    assert [record["after"]["text"] for page in found for record in page] == [
        f"v{n}" for n in range(5)
    ]
    status, body = api.call("GET", path + "/history", world.person)
    assert len(body["data"]) == 5 and body["nextToken"] is None
    for bad in ("limit=0", "agentId=x", "nextToken=nope", f"nextToken={saved['id']}"):
        status, body = api.call("GET", f"{path}/history?{bad}", world.person)
        assert (status, body["error"]["code"]) == (400, "invalid_request"), bad
