"""Safe retries (docs/issues.md#issue-15-item-3): ``Idempotency-Key`` on every state-changing
route; a retry gets the first answer again and writes nothing; the same key with
another request is refused; keys are per caller and live 24 hours."""

from __future__ import annotations

import time
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.errors import IdempotencyKeyInUse
from tests.helpers import Api, World

KEY = "8e03978e-40d5-43e8-bc93-6894a57f9324"


def key(value: str = KEY) -> dict[str, str]:
    return {"Idempotency-Key": value}


def memories(api: Api, world: World, kind: str = "fact") -> list[dict[str, Any]]:
    status, body = api.call(
        "GET", f"/memories?agentId={world.agent.id}&kind={kind}&all=true", world.person
    )
    assert status == 200
    return list(body["data"])


def history(api: Api, world: World, memory_id: str) -> list[dict[str, Any]]:
    return list(api.call("GET", f"/memories/{memory_id}/history", world.person)[1]["data"])


def test_a_retried_save_gets_the_first_answer_and_writes_nothing(api: Api, world: World) -> None:
    body = {"text": "The staging deploy needs the VPN"}
    first = api.send("POST", "/memories", world.agent, body, headers=key())
    retry = api.send("POST", "/memories", world.agent, body, headers=key())
    assert first[0] == retry[0] == 201
    assert retry[2] == first[2]
    assert retry[1]["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first[1]
    assert retry[1]["ETag"] == first[1]["ETag"]
    assert [memory["id"] for memory in memories(api, world)] == [first[2]["id"]]


def test_without_a_key_a_retry_saves_twice_as_before(api: Api, world: World) -> None:
    body = {"text": "The staging deploy needs the VPN"}
    assert api.call("POST", "/memories", world.agent, body)[0] == 201
    assert api.call("POST", "/memories", world.agent, body)[0] == 201
    assert len(memories(api, world)) == 2


def test_a_retried_day_line_is_appended_once(api: Api, world: World) -> None:
    api.call("POST", "/memories/day", world.agent, {"line": "started the deploy"})
    line = {"line": "opened PR 42"}
    first = api.send("POST", "/memories/day", world.agent, line, headers=key())
    for _ in range(3):
        retry = api.send("POST", "/memories/day", world.agent, line, headers=key())
        assert (retry[0], retry[2]) == (first[0], first[2]) == (200, first[2])
    (row,) = memories(api, world, kind="day")
    assert row["text"].count("opened PR 42") == 1
    assert row["text"].count("\n") == 1


def test_the_same_key_with_another_body_is_refused(api: Api, world: World) -> None:
    assert api.call("POST", "/memories", world.agent, {"text": "fact one"}, headers=key())[0] == 201
    status, body = api.call("POST", "/memories", world.agent, {"text": "fact two"}, headers=key())
    assert status == 422 and body["error"]["code"] == "idempotency_key_reused"
    assert [memory["text"] for memory in memories(api, world)] == ["fact one"]


def test_key_order_and_spacing_of_the_body_do_not_matter(api: Api, world: World) -> None:
    first = api.send(
        "POST",
        "/memories",
        world.agent,
        raw='{"text":"a b c","expiresAt":"2030-01-01"}',
        headers=key(),
    )
    retry = api.send(
        "POST",
        "/memories",
        world.agent,
        raw='{ "expiresAt": "2030-01-01", "text": "a b c" }',
        headers=key(),
    )
    assert retry[2] == first[2] and retry[1]["Idempotent-Replayed"] == "true"


def test_the_same_key_on_another_route_is_refused(api: Api, world: World) -> None:
    _, saved = api.call("POST", "/memories", world.agent, {"text": "fact one"})
    status, _ = api.call(
        "POST", f"/memories/{saved['id']}/archive", world.agent, {"reason": "old"}, headers=key()
    )
    assert status == 200
    status, body = api.call("POST", "/memories/day", world.agent, {"line": "x"}, headers=key())
    assert status == 422 and body["error"]["code"] == "idempotency_key_reused"
    assert memories(api, world, kind="day") == []


def test_keys_are_per_principal(api: Api, world: World) -> None:
    body = {"text": "shared words"}
    assert api.call("POST", "/memories", world.agent, body, headers=key())[0] == 201
    other = api.send("POST", "/memories", world.other_agent, body, headers=key())
    assert other[0] == 201 and "Idempotent-Replayed" not in other[1]
    person = api.send(
        "POST", "/memories", world.person, {**body, "agentId": world.agent.id}, headers=key()
    )
    assert person[0] == 201 and "Idempotent-Replayed" not in person[1]
    assert len(memories(api, world)) == 2


def test_every_memory_change_replays(api: Api, world: World) -> None:
    _, saved = api.call("POST", "/memories", world.agent, {"text": "the deploy uses blue green"})
    path = f"/memories/{saved['id']}"
    steps: list[tuple[str, str, Any, Any]] = [
        ("PATCH", path, world.person, {"text": "the deploy uses blue-green"}),
        ("POST", f"{path}/archive", world.agent, {"reason": "outdated"}),
        ("POST", f"{path}/unarchive", world.agent, {}),
        ("POST", f"{path}/veto", world.person, {"reason": "wrong"}),
        ("POST", f"{path}/unarchive", world.person, None),
    ]
    for number, (method, route, actor, body) in enumerate(steps):
        headers = key(f"step-{number}")
        first = api.send(method, route, actor, body, headers=headers)
        assert first[0] == 200, (route, first[2])
        retry = api.send(method, route, actor, body, headers=headers)
        assert (retry[0], retry[2]) == (first[0], first[2]), route
        assert retry[1]["Idempotent-Replayed"] == "true"
    actions = [record["action"] for record in history(api, world, saved["id"])]
    assert actions == ["create", "edit", "archive", "unarchive", "veto", "unarchive"]


def test_an_error_answer_is_replayed_too(api: Api, world: World) -> None:
    _, saved = api.call("POST", "/memories", world.agent, {"text": "a fact"})
    path = f"/memories/{saved['id']}/unarchive"
    first = api.send("POST", path, world.agent, {}, headers=key())
    assert first[0] == 409 and first[2]["error"]["code"] == "memory_not_archived"
    api.call("POST", f"/memories/{saved['id']}/archive", world.agent, {"reason": "old"})
    retry = api.send("POST", path, world.agent, {}, headers=key())
    assert (retry[0], retry[2]) == (first[0], first[2])
    assert retry[1]["Idempotent-Replayed"] == "true"
    assert api.call("GET", f"/memories/{saved['id']}", world.agent)[1]["status"] == "archived"


def test_routine_review_and_kv_changes_replay(api: Api, world: World) -> None:
    api.call("POST", "/memories", world.agent, {"text": "a fact"})
    pause = f"/routines/{world.agent.id}/pause"
    first = api.send("POST", pause, world.person, None, headers=key("pause"))
    assert api.send("POST", pause, world.person, None, headers=key("pause"))[2] == first[2]
    review = {"agentId": world.agent.id}
    first = api.send("POST", "/reviews", world.person, review, headers=key("review"))
    retry = api.send("POST", "/reviews", world.person, review, headers=key("review"))
    assert first[0] == 200 and retry[2] == first[2]
    _, listed = api.call("GET", f"/reviews?agentId={world.agent.id}", world.person)
    assert len(listed["data"]) == 1
    remember = {"key": "target", "value": {"ticker": "AAPL"}}
    first = api.send("POST", "/kv/remember", world.agent, remember, headers=key("kv"))
    retry = api.send("POST", "/kv/remember", world.agent, remember, headers=key("kv"))
    assert retry[2] == first[2] and retry[1]["Idempotent-Replayed"] == "true"
    forget = {"key": "target"}
    first = api.send("POST", "/kv/forget", world.agent, forget, headers=key("forget"))
    retry = api.send("POST", "/kv/forget", world.agent, forget, headers=key("forget"))
    assert first[2] == retry[2] == {"deleted": True, "key": "target"}


def test_kv_keys_are_per_api_key_and_anonymous_scope(api: Api, world: World) -> None:
    body = {"key": "k", "value": "v"}
    own = api.send("POST", "/kv/remember", None, body, headers={**key(), "X-Api-Key": "mine"})
    again = api.send("POST", "/kv/remember", None, body, headers={**key(), "X-Api-Key": "mine"})
    assert again[1]["Idempotent-Replayed"] == "true" and again[2] == own[2]
    other = api.send("POST", "/kv/remember", None, body, headers={**key(), "X-Api-Key": "theirs"})
    assert "Idempotent-Replayed" not in other[1]
    anonymous = api.send("POST", "/kv/remember", None, body, headers=key())
    assert anonymous[0] == 200 and "Idempotent-Replayed" not in anonymous[1]
    assert anonymous[2]["ttl"] == "24h"


def test_a_malformed_key_is_refused_and_nothing_is_written(api: Api, world: World) -> None:
    for bad in ("", " ", "x" * 256, "caf\u00e9"):
        status, body = api.call(
            "POST", "/memories", world.agent, {"text": "a fact"}, headers={"Idempotency-Key": bad}
        )
        assert status == 400 and body["error"]["code"] == "invalid_request", repr(bad)
    assert memories(api, world) == []


def test_a_quoted_key_is_the_same_key(api: Api, world: World) -> None:
    body = {"text": "a fact"}
    api.call("POST", "/memories", world.agent, body, headers=key("abc"))
    status, headers, _ = api.send("POST", "/memories", world.agent, body, headers=key('"abc"'))
    assert status == 201 and headers["Idempotent-Replayed"] == "true"


def test_an_unknown_token_is_401_before_the_key_is_claimed(api: Api, world: World) -> None:
    status, body = api.call(
        "POST",
        "/memories",
        None,
        {"text": "a fact"},
        headers={**key(), "Authorization": "Bearer pwk_nope"},
    )
    assert status == 401 and body["error"]["code"] == "unauthorized"
    status, _, _ = api.send("POST", "/memories", world.agent, {"text": "a fact"}, headers=key())
    assert status == 201


def test_keys_are_kept_at_least_24_hours(
    api: Api, world: World, dynamodb: Any, wired: wiring.Services
) -> None:
    before = time.time()
    api.call("POST", "/memories", world.agent, {"text": "a fact"}, headers=key())
    items = dynamodb.scan(
        TableName=wired.settings.table_name,
        FilterExpression="begins_with(pk, :prefix)",
        ExpressionAttributeValues={":prefix": {"S": "IDEMPOTENCY#"}},
    )["Items"]
    assert len(items) == 1
    (item,) = items
    assert item["sk"] == {"S": "IDEMPOTENCY"}
    assert item["status"] == {"S": "COMPLETED"}
    assert int(item["expiresAtEpoch"]["N"]) >= before + 24 * 3600
    assert KEY not in str(item), "the key itself is stored only as a hash"


def test_a_second_first_use_while_the_first_runs_is_told_to_retry(wired: wiring.Services) -> None:
    runs: list[str] = []

    def slow_action() -> dict[str, Any]:
        with pytest.raises(IdempotencyKeyInUse):
            wired.idempotency.run("scope#k", "same", lambda: {"never": True}, deadline_ms=30_000)
        runs.append("first")
        return {"status": 201}

    outcome = wired.idempotency.run("scope#k", "same", slow_action, deadline_ms=30_000)
    assert outcome.answer == {"status": 201} and not outcome.replayed
    again = wired.idempotency.run("scope#k", "same", lambda: {"never": True}, deadline_ms=30_000)
    assert again.answer == {"status": 201} and again.replayed
    assert runs == ["first"]


def test_a_failed_first_request_releases_the_key(wired: wiring.Services) -> None:
    def failing() -> dict[str, Any]:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        wired.idempotency.run("scope#k", "same", failing, deadline_ms=30_000)
    outcome = wired.idempotency.run("scope#k", "same", lambda: {"ok": 1}, deadline_ms=30_000)
    assert outcome.answer == {"ok": 1} and not outcome.replayed


def test_another_task_header_is_another_request(api: Api, world: World) -> None:
    line = {"line": "deployed"}
    first = api.call(
        "POST", "/memories/day", world.agent, line, headers={**key(), "X-Pinework-Task": "PIN-1"}
    )
    assert first[0] == 201
    status, body = api.call(
        "POST", "/memories/day", world.agent, line, headers={**key(), "X-Pinework-Task": "PIN-2"}
    )
    assert status == 422 and body["error"]["code"] == "idempotency_key_reused"
    (row,) = memories(api, world, kind="day")
    assert "[PIN-2]" not in row["text"]


def test_a_stale_if_match_412_is_not_replayed_to_a_retry_with_the_fresh_tag(
    api: Api, world: World
) -> None:
    _, headers, saved = api.send("POST", "/memories", world.agent, {"text": "uses blue"})
    stale = headers["ETag"]
    path = f"/memories/{saved['id']}"
    api.call("PATCH", path, world.person, {"text": "uses green"})
    fresh = api.send("GET", path, world.person)[1]["ETag"]
    edit = {"text": "uses blue-green"}
    first = api.send("PATCH", path, world.person, edit, headers={**key(), "If-Match": stale})
    assert first[0] == 412 and first[2]["error"]["code"] == "precondition_failed"
    retry = api.send("PATCH", path, world.person, edit, headers={**key(), "If-Match": fresh})
    assert retry[0] == 200, retry[2]
    assert "Idempotent-Replayed" not in retry[1]
    assert api.call("GET", path, world.person)[1]["text"] == "uses blue-green"


def test_another_if_match_under_a_used_key_is_another_request(api: Api, world: World) -> None:
    _, headers, saved = api.send("POST", "/memories", world.agent, {"text": "uses blue"})
    path = f"/memories/{saved['id']}/archive"
    first = api.send(
        "POST", path, world.agent, {"reason": "old"}, headers={**key(), "If-Match": headers["ETag"]}
    )
    assert first[0] == 200
    again = api.send(
        "POST", path, world.agent, {"reason": "old"}, headers={**key(), "If-Match": '"other"'}
    )
    assert again[0] == 422 and again[2]["error"]["code"] == "idempotency_key_reused"
    assert "If-Match" in again[2]["error"]["message"]
    same = api.send(
        "POST", path, world.agent, {"reason": "old"}, headers={**key(), "If-Match": headers["ETag"]}
    )
    assert (same[0], same[2]) == first[::2]
    assert same[1]["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize("query", ["?agentId=agt_x", "?a=1&b=2", "?a=1&a=2"])
def test_another_query_string_under_a_used_key_is_another_request(
    api: Api, world: World, query: str
) -> None:
    body = {"text": "the deploy uses blue green"}
    assert api.call("POST", "/memories", world.agent, body, headers=key())[0] == 201
    status, answer = api.call("POST", f"/memories{query}", world.agent, body, headers=key())
    assert status == 422 and answer["error"]["code"] == "idempotency_key_reused"
    assert "query string" in answer["error"]["message"]
    assert "(method, path or body)" not in answer["error"]["message"]
    assert len(memories(api, world)) == 1


def test_the_order_of_query_parameters_does_not_matter(api: Api, world: World) -> None:
    body = {"text": "the deploy uses blue green"}
    first = api.call("POST", "/memories?b=2&a=1", world.agent, body, headers=key())
    retry = api.send("POST", "/memories?a=1&b=2", world.agent, body, headers=key())
    assert (retry[0], retry[2]) == first
    assert retry[1]["Idempotent-Replayed"] == "true"
