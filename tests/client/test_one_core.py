"""One client core (docs/issues.md#issue-48, item 5): every operation described once in
``pinework._calls`` is a method of both clients, and both send the identical request for it;
``for_run`` binds a client to a run's headers over the same connections."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from pinework import AsyncClient, Client, PineworkAPIError
from pinework._core import ClientCore, Listing, Operation
from tests.client.fake_api import BASE_URL, FakeApi, memory_json

EXPIRY = "2030-01-01"
ARGUMENTS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "save_fact": (("a fact",), {"expires_at": EXPIRY, "supersedes": "mem_0", "evidence": "e"}),
    "append_day_line": (("deployed",), {"idempotency_key": "k1"}),
    "list_memories": ((), {"agent_id": "agt_1", "kind": "fact", "include_archived": True}),
    "iter_memories": ((), {"status": "active", "page_size": 5}),
    "get_memory": (("mem_1",), {}),
    "edit_memory": (("mem_1",), {"text": "new", "expires_at": EXPIRY, "if_match": '"v1"'}),
    "archive": (("mem_1", "old"), {"if_match": '"v1"', "idempotency_key": "k2"}),
    "veto": (("mem_1",), {"reason": "wrong"}),
    "erase": (("mem_1", "leaked"), {}),
    "unarchive": (("mem_1",), {}),
    "history": (("mem_1",), {"limit": 3, "next_token": "t"}),
    "recall": ((), {"query": "deploy", "agent_id": "agt_1", "count": False}),
    "recall_start": (("chat-1",), {"resumed": True, "task": "PIN-1", "slash_command": "/x"}),
    "recall_log": ((), {"agent_id": "agt_1", "limit": 2}),
    "list_routines": ((), {"agent_id": "agt_1"}),
    "get_routine": (("rtn_1",), {}),
    "create_routine": (("agt_1",), {}),
    "pause_routine": (("rtn_1",), {}),
    "resume_routine": (("rtn_1",), {}),
    "delete_routine": (("rtn_1",), {}),
    "run_review": (("agt_1",), {"dry_run": True}),
    "list_reviews": (("agt_1",), {"next_token": "t"}),
    "get_review": (("rvw_1",), {}),
    "wait_for_review": (("rvw_1",), {"timeout": 0}),
    "approve_review_action": (("rvw_1", 2), {"keep_id": "mem_2"}),
    "reject_review_action": (("rvw_1", "a2"), {}),
    "undo_review_action": (("rvw_1", 3), {}),
    "list_pending_actions": (("agt_1",), {"limit": 1}),
    "sign_in_link": ((), {}),
    "propose_learning": (("a learning",), {}),
    "list_learnings": ((), {"state": "active", "q": "deploy"}),
    "iter_learnings": ((), {"state": "proposed", "page_size": 2}),
    "get_learning": (("lrn_1",), {}),
    "approve_learning": (("lrn_1",), {"text": "edited", "if_match": '"v2"'}),
    "edit_learning": (("lrn_1", "edited"), {}),
    "reject_learning": (("lrn_1", "no"), {}),
    "retire_learning": (("lrn_1",), {"reason": "stale"}),
    "learning_history": (("lrn_1",), {}),
    "list_events": ((), {"after": "evt_01JD0000000000000000000000", "limit": 5}),
    "create_webhook": (
        ("https://hooks.example.com/in",),
        {"event_types": ["pinework.memory.saved"], "description": "index"},
    ),
    "list_webhooks": ((), {}),
    "recall_block": (("rcl_1",), {"agent_id": "agt_1"}),
    "list_pages": ((), {"state": "published", "limit": 3}),
    "get_page": (("on-call",), {}),
    "create_page": (("On call", "Page the lead."), {"slug": "on-call", "tags": ["ops"]}),
    "edit_page": (("on-call",), {"text": "Page the lead.", "if_match": '"pag_1.v2"'}),
    "publish_page": (("on-call",), {"idempotency_key": "k11"}),
    "archive_page": (("pag_1",), {"if_match": '"pag_1.v3"'}),
    "page_history": (("on-call",), {}),
    "delete_webhook": (("whk_1",), {"idempotency_key": "k9"}),
    "test_webhook": (("whk_1",), {"idempotency_key": "k10"}),
    "resume_webhook": (("whk_1",), {}),
    "list_webhook_deliveries": (("whk_1",), {}),
    "kv_remember": (("k", {"v": 1}), {"if_revision": 0}),
    "kv_recall": (("k",), {}),
    "kv_keys": ((), {"cursor": "c", "limit": 10}),
    "iter_kv_keys": ((), {"page_size": 10}),
    "kv_forget": (("k",), {"if_revision": 4}),
}
"""Arguments for each operation, as many as it takes: a new operation must be added here."""

OPERATIONS = sorted(
    name for name, member in vars(ClientCore).items() if isinstance(member, Operation | Listing)
)
TRANSPORT_OWN = {"user-agent"}
"""Headers the transports may set apart (both send pinework's own today)."""


def test_every_operation_has_arguments_here() -> None:
    assert set(OPERATIONS) == set(ARGUMENTS)


# The fake API answers every route it was not given with the error ``no_route``, so each
# operation sends its first request and stops there.


def sent_by_sync(name: str, client: Client) -> None:
    args, kwargs = ARGUMENTS[name]
    with pytest.raises(PineworkAPIError, match="no_route"):
        answer = getattr(client, name)(*args, **kwargs)
        list(answer) if name.startswith("iter_") else None


async def sent_by_async(name: str, client: AsyncClient) -> None:
    args, kwargs = ARGUMENTS[name]
    with pytest.raises(PineworkAPIError, match="no_route"):
        if name.startswith("iter_"):
            items: AsyncIterator[Any] = getattr(client, name)(*args, **kwargs)
            [item async for item in items]
        else:
            await getattr(client, name)(*args, **kwargs)


def shape(request: httpx.Request) -> tuple[str, str, bytes, dict[str, str]]:
    headers = {k: v for k, v in request.headers.items() if k not in TRANSPORT_OWN}
    return request.method, str(request.url), request.content, headers


@pytest.mark.parametrize("bound", [False, True], ids=["client", "for_run"])
@pytest.mark.parametrize("name", OPERATIONS)
def test_both_clients_send_the_identical_request(name: str, bound: bool) -> None:
    fake_api = FakeApi()
    settings: dict[str, Any] = {"token": "tok", "run_id": "run_0", "task_key": "PIN-0"}
    with Client(BASE_URL, transport=fake_api.transport, **settings) as client:
        sent_by_sync(name, client.for_run("run_1", session_id="chat-1") if bound else client)
    sync_requests = list(fake_api.requests)

    async def run() -> None:
        async with AsyncClient(BASE_URL, transport=fake_api.transport, **settings) as client:
            chosen = client.for_run("run_1", session_id="chat-1") if bound else client
            await sent_by_async(name, chosen)

    asyncio.run(run())
    async_requests = fake_api.requests[len(sync_requests) :]
    assert len(sync_requests) == 1
    assert [shape(r) for r in async_requests] == [shape(r) for r in sync_requests]
    headers = sync_requests[0].headers
    assert headers["Authorization"] == "Bearer tok"
    assert headers["X-Pinework-Task"] == "PIN-0"
    expected_run = ("run_1", "chat-1") if bound else ("run_0", None)
    assert (headers["X-Pinework-Run"], headers.get("X-Pinework-Session")) == expected_run


@pytest.mark.parametrize("name", OPERATIONS)
def test_an_operation_keeps_its_description_docstring_and_arguments(name: str) -> None:
    sync_method, async_method = getattr(Client, name), getattr(AsyncClient, name)
    assert sync_method.__doc__ and sync_method.__doc__ == async_method.__doc__
    described = list(inspect.signature(sync_method).parameters)
    assert described[0] == "self"
    assert described[1:] == list(inspect.signature(getattr(Client(BASE_URL), name)).parameters)


def test_a_per_run_client_shares_the_connections_and_closing_it_leaves_them_open(
    fake_api: FakeApi,
) -> None:
    fake_api.on("GET", "/memories/mem_1", 200, memory_json(id="mem_1"))
    with Client(BASE_URL, token="tok", transport=fake_api.transport) as client:
        run = client.for_run("run_9", task_key="PIN-9")
        assert isinstance(run, Client) and run.api_url == client.api_url
        run.close()
        assert client.get_memory("mem_1").id == "mem_1"  # still open
        assert "X-Pinework-Run" not in fake_api.last.headers
        run.get_memory("mem_1")
        assert (
            fake_api.last.headers["X-Pinework-Run"],
            fake_api.last.headers["X-Pinework-Task"],
        ) == (
            "run_9",
            "PIN-9",
        )
    with pytest.raises(ValueError, match="the session id"):
        client.for_run(session_id="chat\n1")


def test_a_program_of_several_requests_runs_on_both_clients(fake_api: FakeApi) -> None:
    from pinework import _calls as calls

    def saved_then_read() -> calls.Program[str]:
        saved = yield from calls.save_fact("a fact")
        read = yield from calls.get_memory(saved.id)
        return read.text

    fake_api.on("POST", "/memories", 201, memory_json(text="a fact"))
    fake_api.on("GET", "/memories/mem_01JABCDEF0000000000000000", 200, memory_json(text="read"))
    with Client(BASE_URL, token="tok", transport=fake_api.transport) as client:
        assert client.run(saved_then_read()) == "read"

    async def run() -> str:
        async with AsyncClient(BASE_URL, token="tok", transport=fake_api.transport) as client:
            return await client.run(saved_then_read())

    assert asyncio.run(run()) == "read"
    assert [r.method for r in fake_api.requests] == ["POST", "GET", "POST", "GET"]
