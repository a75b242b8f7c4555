"""The day log through the HTTP API: prefixes, limits, UTC dates, uniqueness
(docs/reference.md#4-states to docs/reference.md#5-limits)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.ids import FixedClock
from tests.helpers import START, Api, World


def append(api: Api, world: World, line: str, task: str | None = None) -> tuple[int, dict]:
    headers = {"X-Pinework-Task": task} if task else None
    return api.call("POST", "/memories/day", world.agent, {"line": line}, headers=headers)


def test_first_line_creates_the_row_then_appends(api: Api, world: World, clock: FixedClock) -> None:
    status, first = append(api, world, "started PIN-7", task="PIN-7")
    assert status == 201
    assert first["kind"] == "day" and first["date"] == "2026-11-30"
    assert first["text"] == "12:00 [PIN-7] started PIN-7"
    clock.set(START + timedelta(minutes=5))
    status, second = append(api, world, "no task header")
    assert status == 200 and second["id"] == first["id"]
    assert second["text"] == "12:00 [PIN-7] started PIN-7\n12:05 no task header"


def test_person_cannot_use_the_day_route(api: Api, world: World) -> None:
    status, body = api.call("POST", "/memories/day", world.person, {"line": "hi"})
    assert (status, body["error"]["code"]) == (403, "memory_day_agent_only")


def test_line_limit_is_on_the_line_as_sent(api: Api, world: World) -> None:
    assert append(api, world, "字" * 300, task="PIN-1")[0] == 201
    status, body = append(api, world, "字" * 301)
    assert (status, body["error"]["code"]) == (400, "memory_text_too_long")


@pytest.mark.parametrize("line", ["", "  ", "two\nlines", "two\u2028lines", "a\x85b"])
def test_blank_or_multiline_lines_are_invalid(api: Api, world: World, line: str) -> None:
    status, body = append(api, world, line)
    assert (status, body["error"]["code"]) == (400, "invalid_request")


def test_day_log_cap_counts_prefixes_and_newlines(api: Api, world: World) -> None:
    # Each stored line is "12:00 " + 294 chars = 300; with "\n" separators 26 lines = 7,825.
    for _ in range(26):
        assert append(api, world, "x" * 294)[0] in (200, 201)
    row = append(api, world, "y" * 167)[1]  # 7,825 + 1 + 6 + 167 = 7,999
    assert len(row["text"]) == 7999
    before = row["text"]
    status, body = append(api, world, "zz")  # 7,999 + 1 + 6 + 2 > 8,000
    assert (status, body["error"]["code"]) == (409, "memory_day_full")
    after = api.call("GET", f"/memories/{row['id']}", world.agent)[1]
    assert after["text"] == before
    status, body = append(api, world, "")  # still validated before the cap
    assert status == 400


def test_date_is_utc_whatever_the_process_time_zone(
    api: Api, world: World, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14
    import time

    time.tzset()
    try:
        clock.set(datetime(2026, 11, 30, 23, 30, tzinfo=UTC))
        late = append(api, world, "late")[1]
        clock.set(datetime(2026, 12, 1, 0, 30, tzinfo=UTC))
        early = append(api, world, "early")[1]
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert (late["date"], early["date"]) == ("2026-11-30", "2026-12-01")
    assert late["id"] != early["id"]
    assert late["text"] == "23:30 late" and early["text"] == "00:30 early"


def test_archived_day_row_comes_back_only_if_its_date_is_free(api: Api, world: World) -> None:
    first = append(api, world, "one")[1]
    path = f"/memories/{first['id']}"
    assert api.call("POST", path + "/archive", world.agent, {"reason": "noise"})[0] == 200
    status, second = append(api, world, "two")
    assert status == 201 and second["id"] != first["id"]
    status, body = api.call("POST", path + "/unarchive", world.agent)
    assert (status, body["error"]["code"]) == (409, "memory_day_exists")
    api.call("POST", f"/memories/{second['id']}/archive", world.agent, {"reason": "dup"})
    status, body = api.call("POST", path + "/unarchive", world.agent)
    assert status == 200 and body["status"] == "active"
    assert append(api, world, "three")[1]["id"] == first["id"]


def test_editing_a_day_row_past_the_cap_is_day_full(api: Api, world: World) -> None:
    row = append(api, world, "one")[1]
    status, body = api.call("PATCH", f"/memories/{row['id']}", world.person, {"text": "x" * 8001})
    assert (status, body["error"]["code"]) == (409, "memory_day_full")
    status, body = api.call("PATCH", f"/memories/{row['id']}", world.person, {"text": "x" * 8000})
    assert status == 200 and len(body["text"]) == 8000


def test_every_append_is_in_the_day_rows_history_with_its_run_and_task(
    api: Api, world: World, clock: FixedClock
) -> None:
    """docs/reference.md#day-line-history: who, when, run, task and the line of each
    append, so what a later edit replaced can still be read."""
    first = append(api, world, "started PIN-7", task="PIN-7")[1]
    clock.set(START + timedelta(minutes=5))
    headers = {"X-Pinework-Task": "PIN-8", "X-Pinework-Run": "run-42"}
    status, _ = api.call(
        "POST", "/memories/day", world.agent, {"line": "moved on"}, headers=headers
    )
    assert status == 200
    status, _ = api.call(
        "PATCH", f"/memories/{first['id']}", world.person, {"text": "rewritten by a person"}
    )
    assert status == 200
    status, history = api.call("GET", f"/memories/{first['id']}/history", world.person)
    assert status == 200
    records = history["data"]
    assert [record["action"] for record in records] == ["create", "append", "edit"]
    appended = records[1]
    assert appended["actorType"] == "agent" and appended["actorId"] == world.agent.id
    assert appended["at"].startswith("2026-11-30T12:05")
    assert appended["after"] == {
        "object": "dayLine",
        "line": "12:05 [PIN-8] moved on",
        "runId": "run-42",
        "taskKey": "PIN-8",
    }
    assert appended["before"] is None
    # the lines the edit replaced are all in the history
    assert records[0]["after"]["text"] == "12:00 [PIN-7] started PIN-7"
    assert records[2]["before"]["text"] == "12:00 [PIN-7] started PIN-7\n12:05 [PIN-8] moved on"


def test_a_refused_append_leaves_no_history_record(api: Api, world: World) -> None:
    row = append(api, world, "x" * 294)[1]
    status, _ = append(api, world, "line\nbreak")
    assert status == 400
    history = api.call("GET", f"/memories/{row['id']}/history", world.person)[1]
    assert [record["action"] for record in history["data"]] == ["create"]
