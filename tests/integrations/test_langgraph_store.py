"""The LangGraph store (docs/integrations/langgraph.md): ``PineworkStore`` over the real Chalice
app in-process, a real ``StateGraph`` whose nodes read and write it, and the example script
against the real local server."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

import httpx
import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, PutOp, SearchOp

from chalicelib.ids import FixedClock
from pinework import AsyncClient, Client
from pinework.errors import PineworkAPIError
from pinework.integrations.langgraph import PineworkStore, item_metadata, meta_conditions
from pinework.models import KvValue
from tests.helpers import World, example_run

BASE_URL = "http://pinework.test"
REPO = Path(__file__).resolve().parents[2]
VPN = "The staging deploy needs the VPN turned on."
BASTION = "Deploys to staging run from the bastion host."
LUNCH = "Lunch is at noon on Fridays."
QUERY = "How do I deploy to staging with the VPN?"
NS = ("users", "u1")


@pytest.fixture
def client(app_transport: httpx.MockTransport, world: World) -> Iterator[Client]:
    """The agent's client."""
    with Client(BASE_URL, token=world.agent.token, transport=app_transport) as agent:
        yield agent


@pytest.fixture
def person(app_transport: httpx.MockTransport, world: World) -> Iterator[Client]:
    """A person of the agent's workspace."""
    with Client(BASE_URL, token=world.person.token, transport=app_transport) as someone:
        yield someone


@pytest.fixture
def store(client: Client, clock: FixedClock) -> PineworkStore:
    """The agent's store on the test clock."""
    return PineworkStore(client, now=clock.now)


def entry(client: Client, key: str) -> dict[str, Any] | None:
    """The JSON of a key-value entry as stored, or None."""
    found = client.kv_recall(key)
    assert isinstance(found, KvValue)
    return None if found.value is None else dict(json.loads(found.value))


def facts(client: Client) -> dict[str, Any]:
    """The agent's facts (archived too) by text."""
    return {m.text: m for m in client.iter_memories(kind="fact", include_archived=True)}


def test_put_get_delete_round_trip(store: PineworkStore, client: Client, clock: FixedClock) -> None:
    store.put(NS, "prefs", {"theme": "dark", "size": 3})
    item = store.get(NS, "prefs")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (NS, "prefs", {"theme": "dark", "size": 3})
    assert item.created_at == item.updated_at == clock.now()

    clock.set(clock.now() + dt.timedelta(minutes=5))
    store.put(NS, "prefs", {"theme": "light"})
    again = store.get(NS, "prefs")
    assert again is not None and again.value == {"theme": "light"}
    assert again.created_at == item.created_at and again.updated_at == clock.now()

    store.delete(NS, "prefs")
    assert store.get(NS, "prefs") is None
    assert list(client.iter_kv_keys()) == []
    store.delete(NS, "prefs")  # deleting nothing is fine
    assert store.get(NS, "never") is None


def test_a_value_without_text_is_an_entry_only(store: PineworkStore, client: Client) -> None:
    store.put(NS, "prefs", {"theme": "dark", "text": 42})
    assert client.list_memories().data == []
    stored = entry(client, "langgraph/users/u1/prefs")
    assert stored == {
        "value": {"theme": "dark", "text": 42},
        "createdAt": "2026-11-30T12:00:00.000Z",
        "updatedAt": "2026-11-30T12:00:00.000Z",
        "memoryId": None,
        "expiresAt": None,
    }
    assert [i.key for i in store.search(("users",))] == ["prefs"]
    assert store.search(("users",), query="theme dark") == []


def test_a_text_value_is_a_fact_of_the_agent(
    store: PineworkStore, client: Client, person: Client, world: World
) -> None:
    store.put(NS, "vpn", {"text": VPN, "topic": "deploy"})
    (fact,) = client.list_memories(kind="fact").data
    assert (fact.text, fact.agent_id, fact.status) == (VPN, world.agent.id, "active")
    stored = entry(client, "langgraph/users/u1/vpn")
    assert stored is not None and stored["memoryId"] == fact.id
    assert stored["value"] == {"text": VPN, "topic": "deploy"}
    # the person sees it on the agent's memory
    assert [m.id for m in person.list_memories(agent_id=world.agent.id).data] == [fact.id]
    # and the agent is told it at run start
    block = client.recall_start("chat-1", task="deploy to staging").block
    assert block is not None and f"{fact.id} (2026-11-30) {VPN}" in block


def test_a_person_saves_for_the_agent_with_agent_id(
    app_transport: httpx.MockTransport, person: Client, world: World
) -> None:
    store = PineworkStore(person, agent_id=world.agent.id)
    store.put(NS, "vpn", {"text": VPN})
    item = store.get(NS, "vpn")
    assert item is not None and item.value == {"text": VPN}
    (fact,) = person.list_memories(agent_id=world.agent.id).data
    assert fact.text == VPN and fact.edited_by_person_id == world.person.id


def test_a_put_over_an_item_supersedes_its_fact(store: PineworkStore, client: Client) -> None:
    store.put(NS, "vpn", {"text": VPN})
    old = facts(client)[VPN]
    store.put(NS, "vpn", {"text": VPN, "seen": {"by": "u1"}})  # same text and metadata
    assert list(facts(client)) == [VPN] and facts(client)[VPN].id == old.id
    store.put(NS, "vpn", {"text": VPN, "checked": True})  # new metadata: a new fact
    checked = [m for m in client.list_memories().data if m.metadata == {"checked": True}]
    assert len(checked) == 1 and checked[0].supersedes == old.id and checked[0].text == VPN
    old = checked[0]
    new_text = "The staging deploy needs the VPN and the bastion host."
    store.put(NS, "vpn", {"text": new_text})

    now = facts(client)
    assert now[VPN].status == "archived" and now[VPN].archive_reason == "superseded"
    assert now[new_text].status == "active" and now[new_text].supersedes == old.id
    item = store.get(NS, "vpn")
    assert item is not None and item.value == {"text": new_text}

    store.put(NS, "vpn", {"note": "no text any more"})  # the fact goes with its text
    assert facts(client)[new_text].archive_reason == (
        "replaced through the LangGraph store by a value without text"
    )
    assert [m.text for m in client.list_memories(status="active").data] == []


def test_delete_archives_the_fact(store: PineworkStore, client: Client) -> None:
    store.put(NS, "vpn", {"text": VPN})
    store.delete(NS, "vpn")
    fact = facts(client)[VPN]
    assert (fact.status, fact.archive_reason) == ("archived", "deleted through the LangGraph store")
    assert store.get(NS, "vpn") is None and entry(client, "langgraph/users/u1/vpn") is None


def test_a_persons_veto_wins_and_an_edit_shows(
    store: PineworkStore, client: Client, person: Client
) -> None:
    store.put(NS, "vpn", {"text": VPN})
    store.put(NS, "lunch", {"text": LUNCH, "day": "friday"})
    person.veto(facts(client)[VPN].id, "not true any more")
    person.edit_memory(facts(client)[LUNCH].id, text="Lunch is at one on Fridays.")

    assert store.get(NS, "vpn") is None
    assert [i.key for i in store.search(NS)] == ["lunch"]
    lunch = store.get(NS, "lunch")
    assert lunch is not None
    assert lunch.value == {"text": "Lunch is at one on Fridays.", "day": "friday"}
    with pytest.raises(PineworkAPIError) as refused:  # vetoes stick
        store.put(NS, "vpn", {"text": VPN})
    assert refused.value.code == "memory_vetoed"


def test_a_query_search_ranks_by_recall_score_and_counts_nothing(
    store: PineworkStore, client: Client
) -> None:
    store.put(NS, "vpn", {"text": VPN})
    store.put(NS, "bastion", {"text": BASTION})
    store.put(NS, "lunch", {"text": LUNCH})
    store.put(NS, "prefs", {"theme": "dark"})
    store.put(("users", "u2"), "vpn", {"text": "The VPN for staging deploys is on port 1194."})

    found = store.search(NS, query=QUERY)
    assert [i.key for i in found][:1] == ["vpn"] and "lunch" not in {i.key for i in found}
    scores = [i.score for i in found]
    assert all(s is not None and s >= 0.5 for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert all(i.namespace == NS for i in found)  # u2's fact scored, but is not under NS
    assert [i.key for i in store.search(NS, query=QUERY, limit=1, offset=1)] == [
        i.key for i in found[1:2]
    ]
    assert all(m.recall_count == 0 for m in client.list_memories().data)
    assert client.recall_log().data == []

    counting = PineworkStore(client, count_recalls=True)
    counted = counting.search(NS, query=QUERY)
    assert [i.key for i in counted] == [i.key for i in found]
    by_id = {m.id: m.recall_count for m in client.list_memories().data}
    assert by_id[facts(client)[VPN].id] == 1 and by_id[facts(client)[LUNCH].id] == 0
    (logged,) = client.recall_log().data
    assert logged.kind == "on_demand" and logged.query == QUERY


def test_filter_with_operators(store: PineworkStore) -> None:
    for key, value in {
        "a": {"color": "red", "score": 4.5, "meta": {"tier": 1}, "tags": ["x", "y"]},
        "b": {"color": "blue", "score": 3},
        "c": {"color": "red", "score": 2, "meta": {"tier": 2}},
    }.items():
        store.put(("docs",), key, value)

    def keys(condition: dict[str, Any]) -> list[str]:
        return [i.key for i in store.search(("docs",), filter=condition)]

    assert keys({"color": "red"}) == ["a", "c"]
    assert keys({"score": {"$gt": 2}}) == ["a", "b"]
    assert keys({"score": {"$gte": 3, "$lt": 4.5}}) == ["b"]
    assert keys({"score": {"$lte": 3}, "color": {"$ne": "blue"}}) == ["c"]
    assert keys({"color": {"$eq": "blue"}}) == ["b"]
    assert keys({"meta": {"tier": 2}}) == ["c"]
    assert keys({"tags": ["x", "y"]}) == ["a"]
    assert keys({"missing": 1}) == []
    with pytest.raises(ValueError, match=r"\$regex"):
        keys({"color": {"$regex": "r.*"}})


def test_a_query_searchs_filter_is_applied_by_the_server_before_the_cut(
    store: PineworkStore, client: Client
) -> None:
    # Twelve billing facts that answer the query better than the one ops fact: with the
    # filter applied after the recall (kept at most ten), the ops fact would be missed.
    for n in range(12):
        store.put(NS, f"billing-{n}", {"text": f"{VPN} Billing host {n}.", "project": "billing"})
    store.put(NS, "ops", {"text": "Staging deploys need the VPN.", "project": "ops", "tier": 2})
    store.put(NS, "long", {"text": BASTION, "note": "x" * 300, "project": "ops", "tier": 9})
    (ops,) = [m for m in client.list_memories().data if m.text.startswith("Staging deploys need")]
    assert ops.metadata == {"project": "ops", "tier": 2}
    assert "note" not in facts(client)[BASTION].metadata  # too long to be metadata
    found = store.search(NS, query=QUERY, filter={"project": "ops", "tier": {"$lt": 5}})
    assert [item.key for item in found] == ["ops"]
    assert item_metadata({"text": "t", "Project": "a", "project": "b", "n": 1.5}, "text") == {
        "Project": "a",
        "n": 1.5,
    }
    assert meta_conditions({"project": "ops", "n": {"$gte": 2, "$ne": 3}, "deep": {"a": 1}}) == [
        "project:eq:ops",
        "n:gte:2",
    ]


def test_metadata_the_server_refuses_leaves_the_fact_without_it(
    store: PineworkStore, client: Client
) -> None:
    store.put(NS, "vpn", {"text": VPN, "label": "ring the bell\x07"})
    assert facts(client)[VPN].metadata == {}
    assert store.get(NS, "vpn") is not None


def test_limit_and_offset(store: PineworkStore) -> None:
    for n in range(7):
        store.put(("docs", "all"), f"k{n}", {"n": n})
    store.put(("docs",), "top", {"n": 99})
    store.put(("doc",), "other", {"n": 98})

    def keys(**kwargs: Any) -> list[str]:
        return [i.key for i in store.search(("docs",), **kwargs)]

    assert keys() == [f"k{n}" for n in range(7)] + ["top"]  # key order, default limit 10
    assert keys(limit=3) == ["k0", "k1", "k2"]
    assert keys(limit=3, offset=5) == ["k5", "k6", "top"]
    assert keys(offset=20) == []
    assert keys(filter={"n": {"$gte": 4}}, limit=2, offset=1) == ["k5", "k6"]
    assert [i.key for i in store.search(())] == ["other", *keys()][:10]


def test_list_namespaces(store: PineworkStore) -> None:
    for namespace in [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("x/y", "ü b", "f"),
    ]:
        store.put(namespace, "k", {"v": 1})
        store.put(namespace, "k2", {"v": 2})

    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(suffix=("f",)) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("x/y", "ü b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(max_depth=1) == [("a",), ("x/y",)]
    assert store.list_namespaces(prefix=("a",), limit=2, offset=1) == [
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
    ]
    item = store.get(("x/y", "ü b", "f"), "k2")
    assert item is not None and item.value == {"v": 2}


def test_ttl_maps_to_expiry(store: PineworkStore, client: Client, clock: FixedClock) -> None:
    assert store.supports_ttl
    store.put(NS, "vpn", {"text": VPN}, ttl=60)
    store.put(NS, "prefs", {"theme": "dark"}, ttl=90)
    store.put(NS, "keep", {"theme": "light"})
    fact = facts(client)[VPN]
    assert fact.expires_at == dt.datetime(2026, 11, 30, 13, 0, tzinfo=dt.UTC)
    assert entry(client, "langgraph/users/u1/prefs") is not None
    assert (entry(client, "langgraph/users/u1/prefs") or {})["expiresAt"] == (
        "2026-11-30T13:30:00.000Z"
    )
    assert [i.key for i in store.search(NS, query=QUERY)] == ["vpn"]

    clock.set(clock.now() + dt.timedelta(minutes=61))
    assert store.get(NS, "vpn") is None and store.get(NS, "prefs") is not None
    assert store.get(NS, "vpn", refresh_ttl=True) is None  # refresh cannot be honoured
    clock.set(clock.now() + dt.timedelta(minutes=30))
    assert store.get(NS, "prefs") is None
    assert [i.key for i in store.search(NS)] == ["keep"]
    assert store.search(NS, query=QUERY) == []
    with pytest.raises(ValueError, match="ttl"):
        store.put(NS, "bad", {"v": 1}, ttl=0)


def test_refused_text_stores_nothing(store: PineworkStore, client: Client) -> None:
    secret = "AKIA" + "QX7" + "Z" * 13
    for text, code in [
        ("x" * 501, "memory_text_too_long"),
        (f"use key {secret} for s3", "secret_in_memory"),
        ("   ", "invalid_request"),
    ]:
        with pytest.raises(PineworkAPIError) as refused:
            store.put(NS, "fact", {"text": text})
        assert refused.value.code == code
    assert list(client.iter_kv_keys()) == []
    assert client.list_memories(include_archived=True).data == []
    assert store.get(NS, "fact") is None


def test_a_failed_entry_write_archives_the_new_fact(
    app_transport: httpx.MockTransport, world: World, client: Client
) -> None:
    def failing(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/kv/remember"):
            raise httpx.ConnectError("refused", request=request)
        return app_transport.handle_request(request)

    transport = httpx.MockTransport(failing)
    with (
        Client(BASE_URL, token=world.agent.token, transport=transport) as bad,
        pytest.raises(PineworkAPIError) as refused,
    ):
        PineworkStore(bad).put(NS, "vpn", {"text": VPN})
    assert refused.value.code == "connection_error"
    fact = facts(client)[VPN]
    assert (fact.status, fact.archive_reason) == (
        "archived",
        "the LangGraph store could not write its entry",
    )
    assert list(client.iter_kv_keys()) == []


def test_namespaces_and_keys_are_checked(store: PineworkStore, client: Client) -> None:
    for bad in [("a.b",), ("",), ("langgraph", "x"), ()]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("a.b",), "k", {"v": 1})])  # straight to batch, too
    with pytest.raises(ValueError, match="512"):
        store.put(("a" * 300,), "b" * 300, {"v": 1})
    with pytest.raises(ValueError, match="non-empty"):
        store.put(NS, "", {"v": 1})
    with pytest.raises(TypeError):
        store.put(NS, "when", {"at": dt.datetime.now(dt.UTC)})
    assert list(client.iter_kv_keys()) == []


def test_another_workspace_never_sees_the_items(
    app_transport: httpx.MockTransport, world: World, store: PineworkStore
) -> None:
    store.put(NS, "vpn", {"text": VPN})
    store.put(NS, "prefs", {"theme": "dark"})
    with Client(BASE_URL, token=world.outsider_agent.token, transport=app_transport) as spy:
        theirs = PineworkStore(spy)
        assert theirs.get(NS, "vpn") is None and theirs.get(NS, "prefs") is None
        assert theirs.search(()) == [] and theirs.search(NS, query=QUERY) == []
        assert theirs.list_namespaces() == []
        theirs.put(NS, "prefs", {"theme": "spy"})
    item = store.get(NS, "prefs")
    assert item is not None and item.value == {"theme": "dark"}


def test_another_agent_of_the_workspace_shares_the_entries(
    app_transport: httpx.MockTransport, world: World, store: PineworkStore
) -> None:
    store.put(NS, "vpn", {"text": VPN})
    with Client(BASE_URL, token=world.other_agent.token, transport=app_transport) as other:
        theirs = PineworkStore(other)
        item = theirs.get(NS, "vpn")  # the fact is the first agent's: read from the entry
        assert item is not None and item.value == {"text": VPN}
        assert theirs.search(NS, query=QUERY) == []  # recall scores its own facts only


def test_a_batch_reads_before_its_puts(store: PineworkStore) -> None:
    store.put(NS, "a", {"v": 1})
    results = store.batch(
        [
            PutOp(NS, "a", {"v": 2}),
            GetOp(NS, "a"),
            PutOp(NS, "a", {"v": 3}),
            SearchOp(NS),
        ]
    )
    first = results[1]
    assert results[0] is None and first is not None and getattr(first, "value", None) == {"v": 1}
    assert [i.value for i in results[3] or []] == [{"v": 1}]  # type: ignore[union-attr]
    item = store.get(NS, "a")
    assert item is not None and item.value == {"v": 3}


def test_abatch_over_the_async_client_and_in_a_thread(
    app_transport: httpx.MockTransport, world: World, client: Client, clock: FixedClock
) -> None:
    async def go(store: PineworkStore) -> list[Any]:
        await store.aput(NS, "vpn", {"text": VPN})
        await store.aput(NS, "prefs", {"theme": "dark"})
        got = await store.aget(NS, "vpn")
        found = await store.asearch(NS, query=QUERY)
        spaces = await store.alist_namespaces()
        await store.adelete(NS, "prefs")
        return [got, found, spaces, await store.aget(NS, "prefs")]

    async def with_async_client() -> list[Any]:
        async with AsyncClient(BASE_URL, token=world.agent.token, transport=app_transport) as ac:
            return await go(PineworkStore(client, async_client=ac, now=clock.now))

    for results in (
        asyncio.run(with_async_client()),
        asyncio.run(go(PineworkStore(client, now=clock.now))),
    ):
        got, found, spaces, gone = results
        assert got is not None and got.value == {"text": VPN}
        assert [i.key for i in found] == ["vpn"] and spaces == [NS] and gone is None
        asyncio.run(PineworkStore(client).adelete(NS, "vpn"))
    assert client.list_memories(status="active").data == []


class State(TypedDict):
    """The graph's state."""

    user: str
    said: str
    answer: str


def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
    """A node that writes what the user said to the store."""
    store.put(("users", state["user"]), "said", {"text": state["said"], "turn": 1})
    return {}


def answer(state: State, runtime: Runtime[None]) -> dict[str, Any]:
    """A node that reads the store through the runtime."""
    assert runtime.store is not None
    item = runtime.store.get(("users", state["user"]), "said")
    found = runtime.store.search(("users", state["user"]), query=QUERY)
    told = item.value["text"] if item else "nothing"
    return {"answer": f"{told} | {len(found)} found"}


def test_a_state_graph_reads_and_writes_the_store(store: PineworkStore, client: Client) -> None:
    graph = (
        StateGraph(State)
        .add_node("remember", remember)
        .add_node("answer", answer)
        .add_edge(START, "remember")
        .add_edge("remember", "answer")
        .add_edge("answer", END)
        .compile(store=store)
    )
    out = graph.invoke({"user": "u7", "said": VPN, "answer": ""})
    assert out["answer"] == f"{VPN} | 1 found"
    assert [m.text for m in client.list_memories().data] == [VPN]
    assert [i.key for i in store.search(("users", "u7"))] == ["said"]


def test_an_async_state_graph_uses_the_async_client(
    app_transport: httpx.MockTransport, world: World, client: Client
) -> None:
    async def remember_async(state: State, runtime: Runtime[None]) -> dict[str, Any]:
        assert runtime.store is not None
        await runtime.store.aput(("users", state["user"]), "said", {"text": state["said"]})
        item = await runtime.store.aget(("users", state["user"]), "said")
        return {"answer": item.value["text"] if item else "nothing"}

    async def go() -> dict[str, Any]:
        async with AsyncClient(BASE_URL, token=world.agent.token, transport=app_transport) as ac:
            store = PineworkStore(client, async_client=ac)
            graph = (
                StateGraph(State)
                .add_node("remember", remember_async)
                .add_edge(START, "remember")
                .compile(store=store)
            )
            return await graph.ainvoke({"user": "u8", "said": BASTION, "answer": ""})

    assert asyncio.run(go())["answer"] == BASTION
    assert [m.text for m in client.list_memories().data] == [BASTION]


def test_the_example_runs_against_the_local_server(tmp_path: Path) -> None:
    with example_run(tmp_path, "langgraph_store.py") as (done, client):
        texts = [m.text for m in client.list_memories(kind="fact").data]
        keys = list(client.iter_kv_keys())
    assert "run 2 found: vpn (score " in done.stdout and "eu-west-1" in done.stdout
    assert any("VPN" in text for text in texts)
    assert any(key.startswith("langgraph/example/") for key in keys)
