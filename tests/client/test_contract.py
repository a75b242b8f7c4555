"""The Python client in step with the contract (docs/issues.md#issue-15-item-5): its models against
the OpenAPI document field by field, the async client against the sync one, and the
retry, idempotency and version headers it sends."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from pinework import AsyncClient, Client, PineworkAPIError, bulk_models, models, wiki_models
from tests.client.fake_api import BASE_URL, FakeApi, memory_json

CLIENT_TO_DOCUMENT = {
    models.Webhook: "WebhookObject",
    models.WebhookPage: "WebhookList",
    models.WebhookDelivery: "DeliveryObject",
    models.WebhookDeliveryPage: "DeliveryList",
    models.Memory: "MemoryObject",
    models.MemoryPage: "MemoryList",
    models.AuditRecord: "AuditObject",
    models.AuditPage: "AuditList",
    models.ScoredMemory: "ScoredMemoryObject",
    models.RecallResult: "RecallObject",
    models.RecalledMemoryRef: "RecalledMemoryObject",
    models.RecallLogEntry: "RecallLogObject",
    models.RecallLogPage: "RecallLogList",
    models.RecallBlock: "RecallBlockObject",
    models.KvRememberResult: "KvRemembered",
    models.KvValue: "KvRecalled",
    models.KvKeys: "KvKeys",
    models.KvForgetResult: "KvForgotten",
    models.Routine: "RoutineObject",
    models.RoutinePage: "RoutineList",
    models.ReviewAction: "ReviewAction",
    models.ReviewPlan: "ReviewPlan",
    models.ActionOutcome: "ActionOutcome",
    models.ActionDecision: "ActionDecision",
    models.ReviewReport: "ReviewObject",
    models.ReviewSummary: "ReviewSummaryObject",
    models.ReviewPage: "ReviewList",
    models.ActionUndo: "ActionUndo",
    models.ReviewRun: "ReviewRunObject",
    models.PendingAction: "PendingActionObject",
    models.PendingPage: "PendingList",
    models.SignInLink: "SignInLinkObject",
    models.Learning: "LearningObject",
    models.LearningPage: "LearningList",
    models.LearningAuditRecord: "LearningAuditObject",
    models.LearningAuditPage: "LearningAuditList",
    models.ScoredLearning: "ScoredLearningObject",
    models.RecalledLearningRef: "RecalledLearningObject",
    models.ScoredSection: "ScoredSectionObject",
    models.RecalledSectionRef: "RecalledSectionObject",
    models.Erasure: "ErasureObject",
    models.ErasurePage: "ErasureList",
    models.Export: "ExportObject",
    models.Event: "EventObject",
    models.EventData: "EventData",
    models.EventPage: "EventList",
    wiki_models.WikiPage: "PageObject",
    wiki_models.WikiPageSummary: "PageSummaryObject",
    wiki_models.WikiPageList: "PageList",
    wiki_models.WikiPageRevision: "PageRevisionObject",
    wiki_models.WikiPageRevisionList: "PageRevisionList",
    bulk_models.BulkChanged: "BulkChangedObject",
    bulk_models.BulkSkipped: "BulkSkippedObject",
    bulk_models.BulkResult: "BulkResultObject",
    bulk_models.BulkRecord: "BulkRecordObject",
    bulk_models.BulkUndo: "BulkUndoObject",
}
"""Each client model and the document schema it decodes."""


@pytest.fixture(scope="module")
def schemas() -> dict[str, Any]:
    from app import app
    from chalicelib.api.openapi_document import build_document

    return dict(build_document(app.routes)["components"]["schemas"])


def json_types(schema: dict[str, Any], schemas: dict[str, Any]) -> set[str]:
    """The JSON types a property schema allows (``$ref`` resolved, ``anyOf`` joined)."""
    if "$ref" in schema:
        return json_types(schemas[schema["$ref"].rsplit("/", 1)[1]], schemas)
    if "anyOf" in schema or "oneOf" in schema:
        options = schema.get("anyOf", schema.get("oneOf", []))
        return set().union(*(json_types(option, schemas) for option in options))
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        names = {bool: "boolean", int: "integer", str: "string", type(None): "null"}
        return {names[type(value)] for value in values}
    kind = schema.get("type")
    if kind is None:
        return {"any"}
    types = set(kind) if isinstance(kind, list) else {kind}
    return types | ({"number"} if "integer" in types else set())


def test_every_document_response_schema_has_a_client_model(schemas: dict[str, Any]) -> None:
    mapped = set(CLIENT_TO_DOCUMENT.values())
    responses = {
        name
        for name in schemas
        if name.endswith(("Object", "List"))
        or name in {"KvRemembered", "KvRecalled", "KvKeys", "KvForgotten"}
    }
    assert responses - mapped == set(), "document shapes the client cannot decode"


@pytest.mark.parametrize("model", list(CLIENT_TO_DOCUMENT), ids=lambda model: model.__name__)
def test_client_models_match_the_document_field_by_field(
    model: type[BaseModel], schemas: dict[str, Any]
) -> None:
    document = schemas[CLIENT_TO_DOCUMENT[model]]
    properties = document["properties"]
    required = set(document.get("required", []))
    client = model.model_json_schema(by_alias=True, mode="validation")
    fields = client["properties"]
    assert set(fields) == set(properties), "fields differ"
    for name in client.get("required", []):
        assert name in required, f"{name}: required by the client, optional on the wire"
    client_defs = {**schemas, **client.get("$defs", {})}
    for name, schema in properties.items():
        sent = json_types(schema, schemas)
        accepted = json_types(fields[name], client_defs)
        assert "any" in accepted or sent <= accepted, f"{name}: sent {sent}, read {accepted}"


PUBLIC = [
    name
    for name, member in inspect.getmembers(Client, inspect.isfunction)
    if not name.startswith("_") and name not in {"close"}
]


@pytest.mark.parametrize("name", PUBLIC)
def test_the_async_client_has_every_method_with_the_same_signature(name: str) -> None:
    sync_signature = inspect.signature(getattr(Client, name))
    async_method = getattr(AsyncClient, name)
    async_signature = inspect.signature(async_method)
    assert list(async_signature.parameters) == list(sync_signature.parameters)
    for parameter, expected in sync_signature.parameters.items():
        got = async_signature.parameters[parameter]
        assert (got.kind, got.default) == (expected.kind, expected.default), parameter
    if name.startswith("iter_"):
        assert inspect.isasyncgenfunction(async_method)
    elif name not in {"from_env", "for_run"}:  # the two that send nothing
        assert inspect.iscoroutinefunction(async_method), name


def test_the_async_client_sends_what_the_sync_client_sends(fake_api: FakeApi) -> None:
    tag = '"mem_01JABCDEF0000000000000000.v2"'
    fake_api.on("POST", "/memories", 201, memory_json(), headers={"ETag": tag})
    fake_api.on("POST", "/memories/mem_01JABCDEF0000000000000000/archive", 200, memory_json())
    with Client(BASE_URL, token="tok", task_key="PIN-1", transport=fake_api.transport) as client:
        saved = client.save_fact("a fact", expires_at="2030-01-01", idempotency_key="k1")
        client.archive(saved.id, "old", if_match=saved.etag)
    sync_requests = list(fake_api.requests)

    async def run() -> models.Memory:
        async with AsyncClient(
            BASE_URL, token="tok", task_key="PIN-1", transport=fake_api.transport
        ) as client:
            saved = await client.save_fact("a fact", expires_at="2030-01-01", idempotency_key="k1")
            await client.archive(saved.id, "old", if_match=saved.etag)
            return saved

    saved_async = asyncio.run(run())
    async_requests = fake_api.requests[len(sync_requests) :]
    assert saved_async.etag == saved.etag == tag
    assert len(async_requests) == len(sync_requests) == 2
    for sent_sync, sent_async in zip(sync_requests, async_requests, strict=True):
        assert (sent_async.method, sent_async.url, sent_async.content) == (
            sent_sync.method,
            sent_sync.url,
            sent_sync.content,
        )
        for header in ("Authorization", "X-Pinework-Task", "Idempotency-Key", "If-Match"):
            assert sent_async.headers.get(header) == sent_sync.headers.get(header), header
    assert async_requests[0].headers["Idempotency-Key"] == "k1"
    assert async_requests[1].headers["If-Match"] == tag


def test_the_async_client_pages_and_reports_errors(fake_api: FakeApi) -> None:
    pages = iter(
        [
            {"object": "list", "data": [memory_json(id="mem_a")], "nextToken": "t1"},
            {"object": "list", "data": [memory_json(id="mem_b")], "nextToken": None},
        ]
    )

    def page(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=next(pages))

    fake_api.routes[("GET", "/api/v1/memories")] = page
    fake_api.on(
        "GET",
        "/memories/mem_x",
        404,
        {"error": {"code": "memory_not_found", "message": "No memory mem_x."}},
    )

    async def run() -> list[str]:
        async with AsyncClient(BASE_URL, token="tok", transport=fake_api.transport) as client:
            ids = [memory.id async for memory in client.iter_memories(page_size=1)]
            with pytest.raises(PineworkAPIError) as raised:
                await client.get_memory("mem_x")
            assert (raised.value.code, raised.value.status) == ("memory_not_found", 404)
            return ids

    assert asyncio.run(run()) == ["mem_a", "mem_b"]
    assert fake_api.requests[1].url.params["nextToken"] == "t1"


def test_a_client_with_retries_sends_one_key_on_every_try(fake_api: FakeApi) -> None:
    answers = iter(
        [
            httpx.Response(
                503,
                json={"error": {"code": "internal_error", "message": "busy"}},
                headers={"Retry-After": "0"},
            ),
            httpx.Response(
                409,
                json={"error": {"code": "idempotency_key_in_use", "message": "running"}},
                headers={"Retry-After": "0"},
            ),
            httpx.Response(201, json=memory_json(), headers={"Idempotent-Replayed": "true"}),
        ]
    )
    fake_api.routes[("POST", "/api/v1/memories/day")] = lambda request: next(answers)
    with Client(BASE_URL, token="tok", transport=fake_api.transport, max_retries=3) as client:
        client.append_day_line("deployed")
    keys = {request.headers["Idempotency-Key"] for request in fake_api.requests}
    assert len(fake_api.requests) == 3 and len(keys) == 1


def test_a_domain_error_is_not_retried(fake_api: FakeApi) -> None:
    refused = {"error": {"code": "memory_day_full", "message": "full"}}
    fake_api.on("POST", "/memories/day", 409, refused, headers={"Retry-After": "0"})
    with (
        Client(BASE_URL, token="tok", transport=fake_api.transport, max_retries=3) as client,
        pytest.raises(PineworkAPIError) as raised,
    ):
        client.append_day_line("deployed")
    assert raised.value.code == "memory_day_full"
    assert len(fake_api.requests) == 1


def test_without_retries_no_key_is_made_and_a_failure_is_final(fake_api: FakeApi) -> None:
    fake_api.on("POST", "/memories", 503, {"error": {"code": "internal_error", "message": "x"}})
    with (
        Client(BASE_URL, token="tok", transport=fake_api.transport) as client,
        pytest.raises(PineworkAPIError),
    ):
        client.save_fact("a fact")
    assert len(fake_api.requests) == 1
    assert "Idempotency-Key" not in fake_api.last.headers


def test_a_lost_answer_is_retried_with_the_same_key() -> None:
    sent: list[httpx.Request] = []

    def lost(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        raise httpx.ReadTimeout("lost", request=request)

    with Client(BASE_URL, transport=httpx.MockTransport(lost), max_retries=1) as client:
        for call in (lambda: client.get_memory("mem_1"), lambda: client.save_fact("a fact")):
            with pytest.raises(PineworkAPIError) as raised:
                call()
            assert raised.value.code == "connection_error"
    reads, writes = sent[:2], sent[2:]
    assert [request.method for request in reads] == ["GET", "GET"]
    assert "Idempotency-Key" not in reads[0].headers
    assert len(writes) == 2
    assert writes[0].headers["Idempotency-Key"] == writes[1].headers["Idempotency-Key"]
