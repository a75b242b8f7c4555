"""The input gaps a hostile tester found (docs/issues.md#issue-14-item-6), through the HTTP API:
credentials in run headers, recall texts and key-value keys, look-alike text,
task keys that break the day line, blank texts. Every refusal leaves the store
as it was: each test reads it back afterwards."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import Actor, Api, World

AWS_PAIR = "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4" * 4 + "wXyZ"


def full_width(text: str) -> str:
    """Printable ASCII as its full-width forms (U+FF01..U+FF5E); spaces stay."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


FULL_WIDTH_AWS_KEY = full_width("AKIAIOSFODNN7EXAMPLE")
OPENAI_STYLE_RUN_ID = "run_4bMhX3Bt7CkPqA9ZsV1oDxYw"  # random, but not a credential


def memories(api: Api, actor: Actor) -> list[dict[str, Any]]:
    """Every memory of the agent, live and archived."""
    status, body = api.call("GET", "/memories?all=true", actor)
    assert status == 200
    return list(body["data"])


def recall_log(api: Api, world: World) -> list[dict[str, Any]]:
    status, body = api.call("GET", f"/recalls?agentId={world.agent.id}", world.person)
    assert status == 200
    return list(body["data"])


def kv_keys(api: Api, actor: Actor) -> list[str]:
    status, body = api.call("POST", "/kv/recall", actor, {})
    assert status == 200
    return list(body["keys"])


def code(answer: tuple[int, Any]) -> tuple[int, str]:
    status, body = answer
    return status, body["error"]["code"] if status >= 400 else "ok"


# --- credentials in the run headers -------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Pinework-Task": AWS_PAIR},
        {"X-Pinework-Task": "deploy " + GITHUB_TOKEN},
        {"X-Pinework-Run": "AKIAIOSFODNN7EXAMPLE"},
        {"X-Pinework-Run": GITHUB_TOKEN},
        {"X-Pinework-Session": GITHUB_TOKEN},
    ],
)
def test_a_credential_in_a_run_header_is_refused_and_nothing_is_written(
    api: Api, world: World, headers: dict[str, str]
) -> None:
    day = api.call("POST", "/memories/day", world.agent, {"line": "hello"}, headers=headers)
    assert code(day) == (400, "secret_in_memory")
    assert "X-Pinework-" in day[1]["error"]["message"]
    fact = api.call("POST", "/memories", world.agent, {"text": "a fact"}, headers=headers)
    assert code(fact) == (400, "secret_in_memory")
    assert memories(api, world.agent) == []


def test_a_credential_as_the_session_is_refused_at_run_start(api: Api, world: World) -> None:
    for body, headers in (
        ({"sessionId": GITHUB_TOKEN, "resumed": False, "task": "deploy"}, None),
        ({"resumed": False, "task": "deploy"}, {"X-Pinework-Session": GITHUB_TOKEN}),
    ):
        answer = api.call("POST", "/memories/recall/start", world.agent, body, headers=headers)
        assert code(answer) == (400, "secret_in_memory")
    assert recall_log(api, world) == []


def test_random_ids_are_not_taken_for_credentials(api: Api, world: World) -> None:
    headers = {"X-Pinework-Run": OPENAI_STYLE_RUN_ID, "X-Pinework-Session": "sess_8fKq2LmZ4xR7tV1w"}
    status, saved = api.call("POST", "/memories", world.agent, {"text": "a fact"}, headers=headers)
    assert status == 201 and saved["runId"] == OPENAI_STYLE_RUN_ID


# --- task keys ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "task", ["x] 23:59 [PIN-999", "PIN-1]", "[durable", "durable", "Durable", " DURABLE "]
)
def test_a_task_key_that_would_change_the_day_line_is_refused(
    api: Api, world: World, task: str
) -> None:
    headers = {"X-Pinework-Task": task}
    answer = api.call("POST", "/memories/day", world.agent, {"line": "forged"}, headers=headers)
    assert code(answer) == (400, "invalid_request")
    assert "X-Pinework-Task" in answer[1]["error"]["message"]
    assert memories(api, world.agent) == []


@pytest.mark.parametrize(
    "task",
    [
        "PIN-42",
        "feature/login-page",
        "fix the login bug",
        "#1234",
        "JIRA-7: rotate keys (staging)",
        "user@example.com/task_3",
        "durable-storage",
        "!fact nothing",
    ],
)
def test_ticket_ids_branches_and_phrases_are_task_keys(api: Api, world: World, task: str) -> None:
    headers = {"X-Pinework-Task": task}
    status, row = api.call(
        "POST", "/memories/day", world.agent, {"line": "a line"}, headers=headers
    )
    assert status == 201
    assert row["text"] == f"12:00 [{task}] a line" and row["taskKey"] == task


# --- recall texts go to the recall log ------------------------------------------------


def test_a_recall_query_with_a_credential_is_refused_and_not_logged(api: Api, world: World) -> None:
    api.call("POST", "/memories", world.agent, {"text": "Deploys need the VPN"})
    for actor, body in (
        (world.agent, {"query": "deploy with AKIAIOSFODNN7EXAMPLE"}),
        (world.person, {"query": "token " + GITHUB_TOKEN, "agentId": world.agent.id}),
        (world.agent, {"query": FULL_WIDTH_AWS_KEY}),
    ):
        assert code(api.call("POST", "/memories/recall", actor, body)) == (400, "secret_in_memory")
    assert recall_log(api, world) == []


@pytest.mark.parametrize("field", ["task", "message"])
def test_a_run_start_text_with_a_credential_is_refused_and_not_logged(
    api: Api, world: World, field: str
) -> None:
    body = {"sessionId": "s1", "resumed": False, field: "use " + AWS_PAIR}
    answer = api.call("POST", "/memories/recall/start", world.agent, body)
    assert code(answer) == (400, "secret_in_memory")
    assert field in answer[1]["error"]["message"]
    assert recall_log(api, world) == []
    # The session was not marked as recalled either: a resumed start still recalls.
    body = {"sessionId": "s1", "resumed": True, "task": "deploy"}
    status, started = api.call("POST", "/memories/recall/start", world.agent, body)
    assert status == 200 and started["skipped"] is False
    assert [entry["query"] for entry in recall_log(api, world)] == ["deploy"]


# --- key-value keys ---------------------------------------------------------------------


def test_a_credential_shaped_key_is_refused_and_not_listed(api: Api, world: World) -> None:
    for key in (GITHUB_TOKEN, "AKIAIOSFODNN7EXAMPLE", "cache/" + FULL_WIDTH_AWS_KEY):
        answer = api.call("POST", "/kv/remember", world.agent, {"key": key, "value": "x"})
        assert code(answer) == (400, "secret_in_memory")
        assert "key" in answer[1]["error"]["message"]
    assert kv_keys(api, world.agent) == []
    # Forgetting such a key (one stored before this check) still works.
    forgot = api.call("POST", "/kv/forget", world.agent, {"key": GITHUB_TOKEN})
    assert forgot == (200, {"deleted": False, "key": GITHUB_TOKEN})


def test_a_random_id_is_a_key(api: Api, world: World) -> None:
    key = "thread_Xq2s9LkP0vWmZrT4yBn8Hc1e/state"
    assert api.call("POST", "/kv/remember", world.agent, {"key": key, "value": 1})[0] == 200
    assert kv_keys(api, world.agent) == [key]


# --- look-alike text ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        FULL_WIDTH_AWS_KEY,
        "key AKIA\u200bIOSFODNN7EXAMPLE",
        full_width(GITHUB_TOKEN),
        "the password is " + full_width("Tr0ub4dor&3"),
    ],
)
def test_credentials_in_full_width_or_split_by_invisible_characters_are_secrets(
    api: Api, world: World, text: str
) -> None:
    assert code(api.call("POST", "/memories", world.agent, {"text": text})) == (
        400,
        "secret_in_memory",
    )
    assert code(api.call("POST", "/memories/day", world.agent, {"line": text})) == (
        400,
        "secret_in_memory",
    )
    value = api.call("POST", "/kv/remember", world.agent, {"key": "k", "value": text})
    assert code(value) == (400, "secret_in_memory")
    assert memories(api, world.agent) == [] and kv_keys(api, world.agent) == []


def test_full_width_prose_is_no_secret(api: Api, world: World) -> None:
    text = full_width("the deploy needs VPN on (PIN-812)")
    assert api.call("POST", "/memories", world.agent, {"text": text})[0] == 201


@pytest.mark.parametrize(
    "reason",
    ["Superseded\u200b", "v\u0435toed", full_width("VETOED"), "super\u00adseded", "vet0ed"],
)
def test_look_alikes_of_reserved_archive_reasons_are_refused(
    api: Api, world: World, reason: str
) -> None:
    fact = api.call("POST", "/memories", world.agent, {"text": "Deploys need the VPN"})[1]
    for actor in (world.agent, world.person):
        answer = api.call("POST", f"/memories/{fact['id']}/archive", actor, {"reason": reason})
        assert code(answer) == (400, "invalid_request")
        assert "reserved" in answer[1]["error"]["message"]
    assert api.call("GET", f"/memories/{fact['id']}", world.person)[1] == fact


# --- one blank rule -----------------------------------------------------------------------

BLANKS = ["\u3164", "\u0301\u0302", "\u200b\u200d", "\u2800", " \u115f\u1160\ufe0f "]


@pytest.mark.parametrize("blank", BLANKS)
def test_blank_facts_and_day_lines_are_refused_like_a_blank_query(
    api: Api, world: World, blank: str
) -> None:
    assert code(api.call("POST", "/memories", world.agent, {"text": blank})) == (
        400,
        "invalid_request",
    )
    assert code(api.call("POST", "/memories/day", world.agent, {"line": blank})) == (
        400,
        "invalid_request",
    )
    evidence = {"text": "Deploys need the VPN", "evidence": blank}
    assert code(api.call("POST", "/memories", world.agent, evidence)) == (400, "invalid_request")
    assert memories(api, world.agent) == []
    assert code(api.call("POST", "/memories/recall", world.agent, {"query": blank})) == (
        400,
        "invalid_request",
    )


@pytest.mark.parametrize("blank", BLANKS)
def test_blank_edits_and_reasons_are_refused(api: Api, world: World, blank: str) -> None:
    fact = api.call("POST", "/memories", world.agent, {"text": "Deploys need the VPN"})[1]
    path = f"/memories/{fact['id']}"
    assert code(api.call("PATCH", path, world.person, {"text": blank})) == (400, "invalid_request")
    archive = api.call("POST", path + "/archive", world.agent, {"reason": blank})
    assert code(archive) == (400, "invalid_request")
    after = api.call("GET", path, world.person)[1]
    assert after == fact
    history = api.call("GET", path + "/history", world.person)[1]["data"]
    assert [record["action"] for record in history] == ["create"]


def test_a_blank_veto_note_is_no_note(api: Api, world: World) -> None:
    fact = api.call("POST", "/memories", world.agent, {"text": "Deploys need the VPN"})[1]
    path = f"/memories/{fact['id']}"
    status, vetoed = api.call("POST", path + "/veto", world.person, {"reason": "\u3164"})
    assert status == 200 and vetoed["archiveReason"] == "vetoed"
    history = api.call("GET", path + "/history", world.person)[1]["data"]
    assert "\u3164" not in str(history)
