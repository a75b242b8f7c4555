"""Memories as of a moment (docs/issues.md#issue-46 item 4, docs/reference.md#as-of-a-moment):
``GET /memories/{id}?asOf=`` and ``GET /memories?agentId=…&asOf=`` rebuilt from the audit
history, after edits, archives, supersedes, vetoes and an erasure; the error codes; other
workspaces."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import quote

import pytest

from chalicelib.ids import FixedClock, to_rfc3339
from tests.helpers import START, Api, Faults, World, error_code, save


def at(minutes: float) -> str:
    return to_rfc3339(START + timedelta(minutes=minutes))


def as_of(api: Api, world: World, memory_id: str, minutes: float) -> dict[str, Any]:
    status, body = api.call("GET", f"/memories/{memory_id}?asOf={at(minutes)}", world.person)
    assert status == 200, body
    return dict(body)


def listed(api: Api, world: World, minutes: float, extra: str = "") -> list[dict[str, Any]]:
    status, body = api.call(
        "GET", f"/memories?agentId={world.agent.id}&asOf={at(minutes)}{extra}", world.person
    )
    assert status == 200, body
    return list(body["data"])


@pytest.fixture
def story(api: Api, world: World, clock: FixedClock) -> dict[str, str]:
    """Minute 1 save A; 2 edit A; 3 archive A; 4 unarchive A; 5 save B superseding A;
    6 veto B; 7 save C; 8 erase C; 9 save D. Returns the ids."""

    def move(minutes: int) -> None:
        clock.set(START + timedelta(minutes=minutes))

    move(1)
    a = save(api, world, "The staging deploy needs the VPN on")["id"]
    move(2)
    edited = {"text": "The staging deploy needs the office VPN on"}
    assert api.call("PATCH", f"/memories/{a}", world.person, edited)[0] == 200
    move(3)
    archived = {"reason": "unsure about it"}
    assert api.call("POST", f"/memories/{a}/archive", world.agent, archived)[0] == 200
    move(4)
    assert api.call("POST", f"/memories/{a}/unarchive", world.person, {})[0] == 200
    move(5)
    b = save(api, world, "Staging deploys run through the bastion host", supersedes=a)["id"]
    move(6)
    assert api.call("POST", f"/memories/{b}/veto", world.person, {})[0] == 200
    move(7)
    c = save(api, world, "The on-call phone number is in the wiki")["id"]
    move(8)
    erased = {"reason": "personal data"}
    assert api.call("POST", f"/memories/{c}/erase", world.person, erased)[0] == 200
    move(9)
    d = save(api, world, "Release notes go out on Thursdays")["id"]
    move(10)
    return {"a": a, "b": b, "c": c, "d": d}


def test_one_memory_at_each_moment_between_its_changes(
    api: Api, world: World, story: dict[str, str]
) -> None:
    a, b = story["a"], story["b"]
    first = as_of(api, world, a, 1.5)
    assert (first["text"], first["status"], first["editedByPersonId"]) == (
        "The staging deploy needs the VPN on",
        "active",
        None,
    )
    assert first["expired"] is False and first["recallCount"] == 0
    edited = as_of(api, world, a, 2.5)
    assert edited["text"] == "The staging deploy needs the office VPN on"
    assert edited["editedByPersonId"] == world.person.id
    archived = as_of(api, world, a, 3.5)
    assert (archived["status"], archived["archiveReason"]) == ("archived", "unsure about it")
    assert archived["archivedAt"] == at(3)
    back = as_of(api, world, a, 4.5)
    assert (back["status"], back["archiveReason"], back["supersededBy"]) == ("active", None, None)
    superseded = as_of(api, world, a, 5.5)
    assert (superseded["archiveReason"], superseded["supersededBy"]) == ("superseded", b)
    # B did not exist before minute 5: as for an unknown memory.
    assert error_code(api.call("GET", f"/memories/{b}?asOf={at(4.5)}", world.person)) == (
        404,
        "memory_not_found",
    )
    new = as_of(api, world, b, 5.5)
    assert (new["status"], new["supersedes"], new["text"]) == (
        "active",
        a,
        "Staging deploys run through the bastion host",
    )
    assert as_of(api, world, b, 6.5)["archiveReason"] == "vetoed"
    # The exact moment of a change shows the change; a millisecond before, the state before.
    assert as_of(api, world, a, 3)["status"] == "archived"
    status, body = api.call(
        "GET",
        f"/memories/{a}?asOf={to_rfc3339(START + timedelta(minutes=3, milliseconds=-1))}",
        world.person,
    )
    assert status == 200 and body["status"] == "active"
    # Without asOf: as it is now.
    assert api.call("GET", f"/memories/{a}", world.person)[1]["supersededBy"] == b


def test_erased_text_stays_erased_at_every_moment(
    api: Api, world: World, story: dict[str, str]
) -> None:
    c = story["c"]
    before = as_of(api, world, c, 7.5)
    assert before["status"] == "active" and before["text"] == ""
    assert before["erasedBy"] == world.person.id and before["eraseReason"] == "personal data"
    after = as_of(api, world, c, 8.5)
    assert after["status"] == "erased" and after["text"] == ""
    history = api.call("GET", f"/memories/{c}/history", world.person)[1]["data"]
    assert all("on-call" not in str(record) for record in history)
    status, headers, body = api.send("GET", f"/memories/{c}?asOf={at(7.5)}", world.person)
    assert status == 200 and "on-call" not in str(body) and "on-call" not in str(headers)


def test_the_list_at_each_moment(api: Api, world: World, story: dict[str, str]) -> None:
    a, b, c, d = story["a"], story["b"], story["c"], story["d"]
    assert listed(api, world, 0.5) == []
    assert [m["id"] for m in listed(api, world, 1.5)] == [a]
    assert listed(api, world, 3.5) == []  # active only by default, as the plain list
    assert [m["id"] for m in listed(api, world, 3.5, "&all=true")] == [a]
    assert [m["id"] for m in listed(api, world, 5.5)] == [b]
    assert [m["id"] for m in listed(api, world, 5.5, "&status=archived")] == [a]
    assert listed(api, world, 6.5) == []
    seven = listed(api, world, 7.5)
    assert [m["id"] for m in seven] == [c] and seven[0]["text"] == ""
    everything = listed(api, world, 9.5, "&all=true")
    assert [m["id"] for m in everything] == [d, c, b, a]
    assert [m["status"] for m in everything] == ["active", "erased", "archived", "archived"]
    assert [m["id"] for m in listed(api, world, 9.5, "&all=true&kind=day")] == []
    # The agent lists its own, the same way.
    status, body = api.call("GET", f"/memories?asOf={at(1.5)}", world.agent)
    assert status == 200 and [m["id"] for m in body["data"]] == [a]


def test_the_list_pages_like_the_plain_list(api: Api, world: World, story: dict[str, str]) -> None:
    seen: list[str] = []
    token = ""
    while True:
        path = f"/memories?agentId={world.agent.id}&asOf={at(9.5)}&all=true&limit=1{token}"
        status, body = api.call("GET", path, world.person)
        assert status == 200 and len(body["data"]) <= 1
        seen.extend(m["id"] for m in body["data"])
        if body["nextToken"] is None:
            break
        token = f"&nextToken={body['nextToken']}"
    assert seen == [story["d"], story["c"], story["b"], story["a"]]


def test_a_day_row_as_of_each_line(api: Api, world: World, clock: FixedClock) -> None:
    clock.set(START + timedelta(minutes=1))
    row = api.call("POST", "/memories/day", world.agent, {"line": "started the deploy"})[1]
    clock.set(START + timedelta(minutes=2))
    api.call("POST", "/memories/day", world.agent, {"line": "deploy finished"})
    clock.set(START + timedelta(minutes=3))
    first = as_of(api, world, row["id"], 1.5)["text"]
    assert first.endswith("started the deploy") and "finished" not in first
    lines = as_of(api, world, row["id"], 2.5)["text"].split("\n")
    assert [line.split(" ", 1)[1] for line in lines] == ["started the deploy", "deploy finished"]


@pytest.mark.parametrize(
    "value",
    ["yesterday", "2026-11-30", "2026-11-30T12:00:00", "2026-13-30T12:00:00Z", "", "12:00Z"],
)
def test_a_malformed_time_is_as_of_invalid(api: Api, world: World, value: str) -> None:
    fact = save(api, world)
    for path in (f"/memories/{fact['id']}", f"/memories?agentId={world.agent.id}"):
        sep = "&" if "?" in path else "?"
        response = api.call("GET", f"{path}{sep}asOf={quote(value)}", world.person)
        assert error_code(response) == (400, "as_of_invalid"), (path, value)


def test_an_offset_time_is_read_with_its_zone(api: Api, world: World, clock: FixedClock) -> None:
    clock.set(START + timedelta(minutes=1))
    fact = save(api, world)
    clock.set(START + timedelta(hours=1))
    # 13:00:30+01:00 is 12:00:30Z: before the save; 13:01:30+01:00 after it.
    for value, status in (("2026-11-30T13:00:30+01:00", 404), ("2026-11-30T13:01:30+01:00", 200)):
        assert (
            api.call("GET", f"/memories/{fact['id']}?asOf={quote(value)}", world.person)[0]
            == status
        )
    # An unescaped "+" arrives as a space: read as "+".
    assert (
        api.call("GET", f"/memories/{fact['id']}?asOf=2026-11-30T13:01:30+01:00", world.person)[0]
        == 200
    )


def test_a_future_time_and_a_time_before_the_workspace(api: Api, world: World) -> None:
    fact = save(api, world)
    future = to_rfc3339(START + timedelta(seconds=1))
    long_ago = to_rfc3339(START - timedelta(days=1))
    for path in (f"/memories/{fact['id']}?", f"/memories?agentId={world.agent.id}&"):
        assert error_code(api.call("GET", f"{path}asOf={future}", world.person)) == (
            400,
            "as_of_in_future",
        )
        assert error_code(api.call("GET", f"{path}asOf={long_ago}", world.person)) == (
            400,
            "as_of_before_workspace",
        )
    # Now is not the future.
    assert (
        api.call("GET", f"/memories/{fact['id']}?asOf={to_rfc3339(START)}", world.person)[0] == 200
    )


def test_access_rules_are_the_plain_gets(api: Api, world: World, story: dict[str, str]) -> None:
    a = story["a"]
    moment = at(1.5)
    # Another workspace's person: 404, as for an unknown memory.
    assert error_code(api.call("GET", f"/memories/{a}?asOf={moment}", world.outsider)) == (
        404,
        "memory_not_found",
    )
    assert error_code(
        api.call("GET", f"/memories?agentId={world.agent.id}&asOf={moment}", world.outsider)
    ) == (403, "forbidden")
    # Another agent: not its memory.
    assert error_code(api.call("GET", f"/memories/{a}?asOf={moment}", world.other_agent)) == (
        403,
        "memory_not_own",
    )
    assert error_code(
        api.call("GET", f"/memories?agentId={world.agent.id}&asOf={moment}", world.other_agent)
    ) == (403, "memory_not_own")
    # A person must name the agent.
    assert error_code(api.call("GET", f"/memories?asOf={moment}", world.person))[0] == 400
    # The owner agent may.
    assert api.call("GET", f"/memories/{a}?asOf={moment}", world.agent)[0] == 200
    # Unknown query parameters are still refused.
    assert error_code(api.call("GET", f"/memories/{a}?asof={moment}", world.person)) == (
        400,
        "invalid_request",
    )


def test_a_list_reads_by_key_and_never_reads_later_memories(
    api: Api, world: World, clock: FixedClock, faults: Faults
) -> None:
    clock.set(START + timedelta(minutes=1))
    early = save(api, world, "The staging deploy needs the VPN on")
    clock.set(START + timedelta(minutes=2))
    for number in range(12):
        save(api, world, f"Later fact number {number} about the release train")
    clock.set(START + timedelta(minutes=3))
    faults.calls.clear()
    assert [m["id"] for m in listed(api, world, 1.5)] == [early["id"]]
    assert "Scan" not in faults.calls
    # 6 keys-only index queries (2 kinds x 3 statuses) and one history query for the one
    # memory that existed then: the 12 later facts cost nothing.
    assert faults.calls.count("Query") == 6 + 1, faults.calls
    faults.calls.clear()
    assert len(listed(api, world, 2.5)) == 13
    assert "Scan" not in faults.calls and faults.calls.count("Query") == 6 + 13


def test_the_recall_preview_as_of_a_moment(api: Api, world: World, clock: FixedClock) -> None:
    def move(minutes: int) -> None:
        clock.set(START + timedelta(minutes=minutes))

    def block(minutes: float, **extra: object) -> tuple[int, Any]:
        body = {"query": "how do staging deploys work", "count": False, "asOf": at(minutes)}
        return api.call(
            "POST", "/memories/recall", world.person, {**body, "agentId": world.agent.id, **extra}
        )

    move(1)
    a = save(api, world, "Staging deploys need the VPN switched on first")["id"]
    api.call("POST", "/memories/day", world.agent, {"line": "started the staging deploy"})
    move(2)
    edit = {"text": "Staging deploys need the office VPN switched on first"}
    assert api.call("PATCH", f"/memories/{a}", world.person, edit)[0] == 200
    api.call("POST", "/memories/day", world.agent, {"line": "staging deploy finished"})
    move(3)
    b = save(api, world, "Staging deploys run through the bastion host")["id"]
    move(4)
    assert api.call("POST", f"/memories/{b}/veto", world.person, {})[0] == 200
    move(5)

    status, early = block(1.5)
    assert status == 200 and early["recallId"] is None, early
    assert [item["memory"]["id"] for item in early["memories"]] == [a]
    assert "VPN switched on first" in early["block"] and "office VPN" not in early["block"]
    assert "started the staging deploy" in early["block"]
    assert "staging deploy finished" not in early["block"]
    assert early["memories"][0]["memory"]["text"].startswith("Staging deploys need the VPN")

    status, later = block(3.5)
    assert status == 200 and {item["memory"]["id"] for item in later["memories"]} == {a, b}
    assert "office VPN" in later["block"] and "staging deploy finished" in later["block"]
    status, vetoed = block(4.5)
    assert [item["memory"]["id"] for item in vetoed["memories"]] == [a]

    # Nothing was counted or logged.
    assert api.call("GET", f"/memories/{a}", world.person)[1]["recallCount"] == 0
    assert api.call("GET", f"/recalls?agentId={world.agent.id}", world.person)[1]["data"] == []
    # Only a preview looks back; the time's errors are the list's.
    assert error_code(block(1.5, count=True)) == (400, "invalid_request")
    assert error_code(block(9)) == (400, "as_of_in_future")
    assert error_code(block(1.5, asOf="noon")) == (400, "as_of_invalid")
    # tag filters are not applied as of a moment: refused, never silently ignored
    assert error_code(block(1.5, tags=["ops"])) == (400, "invalid_request")
    status, body = api.call(
        "GET", f"/memories?agentId={world.agent.id}&asOf={at(1.5)}&tag=ops", world.person
    )
    assert (status, body["error"]["code"]) == (400, "invalid_request")
