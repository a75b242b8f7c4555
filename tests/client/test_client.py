"""The Python client against a mock transport: requests it sends, results it returns."""

from __future__ import annotations

import datetime as dt
import json
import re

import httpx
import pytest

from pinework import (
    AuditPage,
    Client,
    KvKeys,
    KvValue,
    Memory,
    MemoryPage,
    PineworkAPIError,
    RecallResult,
)
from tests.client.fake_api import BASE_URL, FakeApi, memory_json

# Requests: headers, bodies, query strings


def test_save_fact_sends_bearer_run_task_and_camel_case_body(
    client: Client, fake_api: FakeApi
) -> None:
    fake_api.on("POST", "/memories", 201, memory_json(supersedes="mem_old"))

    memory = client.save_fact(
        "The deploy bucket is in eu-west-1.",
        expires_at="2026-04-01",
        supersedes="mem_old",
        agent_id="agt_1",
        evidence="LocationConstraint: eu-west-1",
    )

    request = fake_api.last
    assert request.url == f"{BASE_URL}/api/v1/memories"
    assert request.headers["Authorization"] == "Bearer tok_agent"
    assert request.headers["X-Pinework-Task"] == "PIN-42"
    assert request.headers["X-Pinework-Run"] == "run_01"
    assert request.headers["Content-Type"] == "application/json"
    assert fake_api.last_json() == {
        "text": "The deploy bucket is in eu-west-1.",
        "expiresAt": "2026-04-01",
        "supersedes": "mem_old",
        "agentId": "agt_1",
        "evidence": "LocationConstraint: eu-west-1",
    }
    assert isinstance(memory, Memory)
    assert memory.supersedes == "mem_old"


def test_save_fact_omits_unset_fields_and_headers(fake_api: FakeApi) -> None:
    fake_api.on("POST", "/memories", 201, memory_json())
    with Client(BASE_URL, transport=fake_api.transport) as anonymous:
        anonymous.save_fact("a fact")

    assert fake_api.last_json() == {"text": "a fact"}
    for header in ("Authorization", "X-Pinework-Run", "X-Pinework-Task"):
        assert header not in fake_api.last.headers


def test_expiry_datetimes_are_sent_as_utc_and_dates_as_dates(
    client: Client, fake_api: FakeApi
) -> None:
    fake_api.on("POST", "/memories", 201, memory_json())
    plus_two = dt.timezone(dt.timedelta(hours=2))

    client.save_fact("x", expires_at=dt.datetime(2026, 5, 1, 12, 0, tzinfo=plus_two))
    assert fake_api.last_json()["expiresAt"] == "2026-05-01T10:00:00Z"

    client.save_fact("x", expires_at=dt.date(2026, 12, 31))
    assert fake_api.last_json()["expiresAt"] == "2026-12-31"


def test_naive_expiry_is_refused_before_sending(client: Client, fake_api: FakeApi) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        client.save_fact("x", expires_at=dt.datetime(2026, 5, 1, 12, 0))
    assert fake_api.requests == []


def test_append_day_line_posts_the_line(client: Client, fake_api: FakeApi) -> None:
    day_row = memory_json(kind="day", date="2026-01-01", text="10:00 [PIN-42] started")
    fake_api.on("POST", "/memories/day", 201, day_row)

    memory = client.append_day_line("started")

    assert fake_api.last_json() == {"line": "started"}
    assert memory.kind == "day"
    assert memory.date == dt.date(2026, 1, 1)


def test_append_day_line_accepts_200_for_an_existing_day_row(
    client: Client, fake_api: FakeApi
) -> None:
    fake_api.on("POST", "/memories/day", 200, memory_json(kind="day", date="2026-01-01"))
    assert client.append_day_line("more").kind == "day"


def test_list_memories_sends_every_filter_as_query_parameters(
    client: Client, fake_api: FakeApi
) -> None:
    fake_api.on(
        "GET",
        "/memories",
        200,
        {"object": "list", "data": [memory_json()], "nextToken": "tok_page2"},
    )

    page = client.list_memories(
        agent_id="agt_1",
        kind="fact",
        status="archived",
        include_archived=True,
        limit=50,
        next_token="tok_page1",
    )

    assert dict(fake_api.last.url.params) == {
        "agentId": "agt_1",
        "kind": "fact",
        "status": "archived",
        "all": "true",
        "limit": "50",
        "nextToken": "tok_page1",
    }
    assert isinstance(page, MemoryPage)
    assert page.next_token == "tok_page2"
    assert [memory.id for memory in page.data] == ["mem_01JABCDEF0000000000000000"]


def test_list_memories_without_filters_sends_no_query(client: Client, fake_api: FakeApi) -> None:
    fake_api.on("GET", "/memories", 200, {"object": "list", "data": [], "nextToken": None})

    page = client.list_memories()

    assert fake_api.last.url.query == b""
    assert page.data == []
    assert page.next_token is None


def test_iter_memories_follows_next_token(client: Client, fake_api: FakeApi) -> None:
    pages = {
        None: {"object": "list", "data": [memory_json(id="mem_2")], "nextToken": "t1"},
        "t1": {"object": "list", "data": [memory_json(id="mem_1")], "nextToken": None},
    }
    fake_api.routes[("GET", "/api/v1/memories")] = lambda request: httpx.Response(
        200, json=pages[request.url.params.get("nextToken")]
    )

    ids = [memory.id for memory in client.iter_memories(page_size=1)]

    assert ids == ["mem_2", "mem_1"]
    assert [request.url.params.get("limit") for request in fake_api.requests] == ["1", "1"]


def test_memory_routes_use_the_right_method_path_and_body(
    client: Client, fake_api: FakeApi
) -> None:
    memory_id = "mem_01JABCDEF0000000000000000"
    archived = memory_json(status="archived", archiveReason="wrong")
    fake_api.on("GET", f"/memories/{memory_id}", 200, memory_json())
    fake_api.on("PATCH", f"/memories/{memory_id}", 200, memory_json(editedByPersonId="usr_1"))
    fake_api.on("POST", f"/memories/{memory_id}/archive", 200, archived)
    fake_api.on("POST", f"/memories/{memory_id}/veto", 200, archived)
    fake_api.on("POST", f"/memories/{memory_id}/unarchive", 200, memory_json())

    assert client.get_memory(memory_id).id == memory_id
    assert fake_api.last.content == b""

    assert client.edit_memory(memory_id, text="new", expires_at="2026-06-01").edited_by_person_id
    assert fake_api.last_json() == {"text": "new", "expiresAt": "2026-06-01"}

    assert client.archive(memory_id, "wrong").archive_reason == "wrong"
    assert fake_api.last_json() == {"reason": "wrong"}

    client.veto(memory_id)
    assert fake_api.last_json() == {}
    client.veto(memory_id, "made up")
    assert fake_api.last_json() == {"reason": "made up"}

    assert client.unarchive(memory_id).status == "active"
    assert fake_api.last_json() == {}


def test_edit_memory_needs_a_change(client: Client, fake_api: FakeApi) -> None:
    with pytest.raises(ValueError, match="text, expires_at, tags or metadata"):
        client.edit_memory("mem_1")
    assert fake_api.requests == []


def test_memory_id_is_escaped_as_one_path_segment(client: Client, fake_api: FakeApi) -> None:
    fake_api.on("GET", "/memories/mem_1%2Frecall", 200, memory_json())

    client.get_memory("mem_1/recall")

    assert fake_api.last.url.raw_path == b"/api/v1/memories/mem_1%2Frecall"
    for bad in ("", ".", ".."):
        with pytest.raises(ValueError, match="not a memory id"):
            client.get_memory(bad)


def test_history_returns_audit_records_with_snapshots(client: Client, fake_api: FakeApi) -> None:
    record = {
        "object": "audit",
        "id": "aud_1",
        "memoryId": "mem_1",
        "action": "archive",
        "actorType": "person",
        "actorId": "usr_1",
        "at": "2026-01-02T08:00:00Z",
        "reason": "wrong",
        "before": memory_json(id="mem_1"),
        "after": memory_json(id="mem_1", status="archived"),
    }
    fake_api.on("GET", "/memories/mem_1/history", 200, {"object": "list", "data": [record]})

    page = client.history("mem_1")

    assert isinstance(page, AuditPage)
    (audit,) = page.data
    assert (audit.action, audit.actor_type, audit.actor_id) == ("archive", "person", "usr_1")
    assert audit.before is not None and audit.before.status == "active"
    assert audit.after is not None and audit.after.status == "archived"
    assert audit.at == dt.datetime(2026, 1, 2, 8, 0, tzinfo=dt.UTC)


def test_recall_sends_query_and_agent_and_returns_scores(client: Client, fake_api: FakeApi) -> None:
    fake_api.on(
        "POST",
        "/memories/recall",
        200,
        {
            "object": "recall",
            "query": "deploy",
            "fallback": None,
            "memories": [{"score": 0.91, "memory": memory_json()}],
            "block": "--- MEMORY ---\n...",
        },
    )

    result = client.recall(query="deploy", agent_id="agt_1")

    assert fake_api.last_json() == {"query": "deploy", "agentId": "agt_1"}
    assert isinstance(result, RecallResult)
    assert result.fallback is None
    assert [(s.score, s.memory.recall_count) for s in result.memories] == [(0.91, 2)]
    assert result.block.startswith("--- MEMORY ---")


def test_recall_without_arguments_sends_an_empty_body(client: Client, fake_api: FakeApi) -> None:
    fake_api.on(
        "POST",
        "/memories/recall",
        200,
        {"object": "recall", "query": "PIN-42", "fallback": "newest", "memories": [], "block": ""},
    )

    result = client.recall()

    assert fake_api.last_json() == {}
    assert result.fallback == "newest"


def test_recall_block_names_the_agent_and_reads_the_rebuilt_block(
    client: Client, fake_api: FakeApi
) -> None:
    fake_api.on(
        "GET",
        "/recalls/rcl_1/block",
        200,
        {
            "object": "recall_block",
            "recallId": "rcl_1",
            "agentId": "agt_1",
            "kind": "start",
            "at": "2026-01-02T08:00:00Z",
            "query": "deploy",
            "rebuilt": True,
            "block": "--- MEMORY ---\n---",
            "erased": ["mem_9"],
            "learningsChanged": [],
            "sections": [{"pageId": "pag_1", "index": 2, "anchor": "rollback", "score": 0.8}],
        },
    )

    seen = client.recall_block("rcl_1", agent_id="agt_1")

    assert fake_api.last.url.params["agentId"] == "agt_1"
    assert (seen.kind, seen.erased, seen.sections[0].anchor) == ("start", ["mem_9"], "rollback")
    assert seen.at == dt.datetime(2026, 1, 2, 8, 0, tzinfo=dt.UTC)
    with pytest.raises(ValueError):
        client.recall_block("..")


# Results, typing and tolerance


def test_memory_fields_are_typed(client: Client, fake_api: FakeApi) -> None:
    fake_api.on("GET", "/memories/mem_1", 200, memory_json(id="mem_1"))

    memory = client.get_memory("mem_1")

    assert memory.object_type == "memory"
    assert memory.agent_id == "agt_1"
    assert memory.recall_count == 2
    assert memory.expires_at == dt.datetime(2026, 4, 1, tzinfo=dt.UTC)
    assert memory.date is None
    assert memory.expired is False


def test_unknown_fields_are_ignored_but_kept_in_raw(client: Client, fake_api: FakeApi) -> None:
    body = memory_json(id="mem_1", importance="high")
    fake_api.on("GET", "/memories/mem_1", 200, body)

    memory = client.get_memory("mem_1")

    assert not hasattr(memory, "importance")
    assert memory.raw == body


def test_models_accept_python_names_too() -> None:
    memory = Memory.model_validate(memory_json())
    rebuilt = Memory(**memory.model_dump())
    assert rebuilt == memory
    assert rebuilt.raw["agentId"] == "agt_1"


# Errors


def test_error_envelope_becomes_pinework_api_error(client: Client, fake_api: FakeApi) -> None:
    fake_api.on(
        "POST",
        "/memories",
        400,
        {"error": {"code": "memory_text_too_long", "message": "Shorten the fact to 500."}},
    )

    with pytest.raises(PineworkAPIError) as caught:
        client.save_fact("x" * 501)

    error = caught.value
    assert (error.code, error.status) == ("memory_text_too_long", 400)
    assert error.message == "Shorten the fact to 500."
    assert error.envelope() == {
        "error": {"code": "memory_text_too_long", "message": "Shorten the fact to 500."}
    }


def test_rate_limited_error_carries_retry_after(client: Client, fake_api: FakeApi) -> None:
    fake_api.on(
        "POST",
        "/memories/recall",
        429,
        {"error": {"code": "rate_limited", "message": "Slow down."}},
        headers={"Retry-After": "3"},
    )

    with pytest.raises(PineworkAPIError) as caught:
        client.recall()

    assert (caught.value.code, caught.value.status, caught.value.retry_after) == (
        "rate_limited",
        429,
        3.0,
    )


@pytest.mark.parametrize(
    ("status", "content"),
    [
        (502, b"<html>Bad Gateway</html>"),
        (403, b'{"message": "Forbidden"}'),
        (500, b""),
        (200, b"not json"),
    ],
)
def test_answers_that_are_not_the_documented_json_are_invalid_response(
    client: Client, fake_api: FakeApi, status: int, content: bytes
) -> None:
    fake_api.on("GET", "/memories/mem_1", status, content=content)

    with pytest.raises(PineworkAPIError) as caught:
        client.get_memory("mem_1")

    assert caught.value.code == "invalid_response"
    assert caught.value.status == status
    assert f"HTTP {status}" in caught.value.message


def test_json_of_the_wrong_shape_is_invalid_response(client: Client, fake_api: FakeApi) -> None:
    fake_api.on("GET", "/memories/mem_1", 200, {"id": "mem_1"})

    with pytest.raises(PineworkAPIError) as caught:
        client.get_memory("mem_1")

    assert caught.value.code == "invalid_response"
    assert "not a Memory" in caught.value.message


def test_connection_failure_is_connection_error_with_status_zero() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Connection refused", request=request)

    with (
        Client(BASE_URL, transport=httpx.MockTransport(refuse)) as client,
        pytest.raises(PineworkAPIError) as caught,
    ):
        client.list_memories()

    assert (caught.value.code, caught.value.status) == ("connection_error", 0)
    assert "http://pinework.test/api/v1" in caught.value.message
    assert "PINEWORK_API_URL" in caught.value.message


def test_timeout_is_connection_error() -> None:
    def hang(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    with pytest.raises(PineworkAPIError) as caught:
        Client(BASE_URL, transport=httpx.MockTransport(hang)).recall()

    assert caught.value.code == "connection_error"


# Configuration


def test_from_env_reads_url_token_run_and_task(fake_api: FakeApi) -> None:
    fake_api.on("GET", "/memories", 200, {"object": "list", "data": [], "nextToken": None})
    environ = {
        "PINEWORK_API_URL": "http://pinework.test/api/v1/",
        "PINEWORK_TOKEN": "tok_person\n",
        "PINEWORK_RUN": "run_9",
        "PINEWORK_TASK": "PIN-7",
    }

    with Client.from_env(environ, transport=fake_api.transport) as client:
        client.list_memories()

    request = fake_api.last
    assert request.url == "http://pinework.test/api/v1/memories"
    assert request.headers["Authorization"] == "Bearer tok_person"
    assert request.headers["X-Pinework-Run"] == "run_9"
    assert request.headers["X-Pinework-Task"] == "PIN-7"


def test_from_env_defaults_to_the_local_server() -> None:
    assert Client.from_env({}).api_url == "http://127.0.0.1:8000/api/v1"


def test_api_url_must_be_http() -> None:
    with pytest.raises(ValueError, match="PINEWORK_API_URL"):
        Client.from_env({"PINEWORK_API_URL": "127.0.0.1:8000"})


# Key-value meta-tools


def test_kv_calls_post_their_bodies(client: Client, fake_api: FakeApi) -> None:
    fake_api.on("POST", "/kv/remember", 200, {"stored": True, "key": "k", "ttl": "permanent"})
    fake_api.on("POST", "/kv/forget", 200, {"deleted": True, "key": "k"})

    assert client.kv_remember("k", {"a": [1, 2]}).ttl == "permanent"
    assert fake_api.last_json() == {"key": "k", "value": {"a": [1, 2]}}
    assert client.kv_forget("k").deleted is True
    assert json.loads(fake_api.last.content) == {"key": "k"}


def test_kv_recall_returns_a_value_or_the_keys(client: Client, fake_api: FakeApi) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if "key" in body:
            return httpx.Response(200, json={"key": body["key"], "value": None, "found": False})
        return httpx.Response(200, json={"keys": ["a", "b"], "count": 2})

    fake_api.routes[("POST", "/api/v1/kv/recall")] = answer

    missing = client.kv_recall("nope")
    keys = client.kv_recall()

    assert isinstance(missing, KvValue) and missing.found is False and missing.value is None
    assert isinstance(keys, KvKeys) and keys.keys == ["a", "b"] and keys.count == 2


@pytest.mark.parametrize(
    ("task", "said"),
    [
        ("déploiement", "U+00E9"),
        ("PIN-42\n", "U+000A"),
        (" PIN-42", "white space"),
        ("x" * 129, "the limit is 128"),
    ],
)
def test_a_task_key_that_cannot_be_sent_is_named_before_anything_is_sent(
    fake_api: FakeApi, task: str, said: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(said)):
        Client(BASE_URL, token="tok_agent", task_key=task, transport=fake_api.transport)
    assert fake_api.requests == []
