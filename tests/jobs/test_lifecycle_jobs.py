"""A person's erasure of an agent and exports
(docs/reference.md#erasing-an-agent-a-person-or-a-workspace,
docs/reference.md#exports-for-a-person, docs/issues.md#issue-24-item-8): the routes queue a job
on the lifecycle queue (never the review queue: docs/issues.md#issue-41-item-2), the lifecycle
worker runs it through its Lambda entry point, and the person follows it to the tombstone,
or to a short-lived link to the file. The review worker still runs a job message it finds
on the review queue (release 0.1.0 sent them there; CHANGELOG.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlparse

import boto3
import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.errors import InvalidRequest
from chalicelib.ids import FixedClock
from chalicelib.settings import LIFECYCLE_QUEUE_NAME, REVIEW_QUEUE_NAME
from chalicelib.storage import recall_index
from chalicelib.storage.keys import learning_count_key
from tests.helpers import BUCKET, TABLE, Api, World, save, text
from tests.helpers import DashboardPage as Page
from tests.lifecycle_seed import TEXTS, seed


@pytest.fixture
def queue(aws: None) -> Any:
    client = boto3.client("sqs", region_name="us-east-1")
    client.create_queue(QueueName=REVIEW_QUEUE_NAME)
    client.create_queue(QueueName=LIFECYCLE_QUEUE_NAME)
    return client


@pytest.fixture
def client(wired: wiring.Services, queue: Any) -> Iterator[Client]:
    from app import app

    with Client(app) as test_client:
        yield test_client


WORKERS = {"lifecycle_worker": LIFECYCLE_QUEUE_NAME, "review_worker": REVIEW_QUEUE_NAME}
"""The worker of a job message -> the queue it reads: the lifecycle worker, or the review
worker running a job message of release 0.1.0 found on the review queue."""


def drain(sqs: Any, name: str = LIFECYCLE_QUEUE_NAME) -> list[str]:
    """Take every message off a queue (the lifecycle queue unless named)."""
    url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    found: list[str] = []
    while got := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        for message in got:
            found.append(message["Body"])
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return found


def work(client: Client, bodies: list[str], worker: str = "lifecycle_worker") -> list[str]:
    """Run a worker's entry point (a key of ``WORKERS``) on ``bodies``; the failed
    message ids."""
    event = client.events.generate_sqs_event(message_bodies=bodies, queue_name=WORKERS[worker])
    for number, record in enumerate(event["Records"]):
        record["messageId"] = f"m{number}"
    payload = client.lambda_.invoke(worker, dict(event)).payload
    return [failure["itemIdentifier"] for failure in payload["batchItemFailures"]]


def every_trace(dynamodb: Any, s3: Any, needles: set[str]) -> list[str]:
    """Items and object versions that hold one of ``needles``."""
    found: list[str] = []
    for page in dynamodb.get_paginator("scan").paginate(TableName=TABLE):
        for item in page["Items"]:
            raw = json.dumps(item, default=lambda b: bytes(b).decode("latin-1"))
            if any(needle in raw for needle in needles):
                found.append(f"{item['pk']['S']} {item['sk']['S']}")
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=BUCKET):
        for version in page.get("Versions", []):
            body = s3.get_object(Bucket=BUCKET, Key=version["Key"], VersionId=version["VersionId"])
            if any(needle.encode() in body["Body"].read() for needle in needles):
                found.append(version["Key"])
    return found


@pytest.mark.parametrize("worker", sorted(WORKERS))
def test_a_person_exports_the_workspace_and_an_agent_and_fetches_the_files(
    client: Client,
    world: World,
    wired: wiring.Services,
    queue: Any,
    versioned: Any,
    clock: FixedClock,
    worker: str,
) -> None:
    api = Api(client)
    seed(api, world, wired, clock)
    drain(queue)
    status, headers, queued = api.send("POST", "/exports", world.person, {})
    assert status == 202, queued
    assert (queued["status"], queued["kind"], queued["targetId"]) == (
        "queued",
        "workspace",
        world.workspace_id,
    )
    assert headers["Location"] == f"/api/v1/exports/{queued['id']}" and queued["url"] is None
    # one export per workspace queued or running: a second request answers that one
    status, same = api.call("POST", "/exports", world.person, {"agentId": world.agent.id})
    assert status == 200 and same["id"] == queued["id"] and same["status"] == "queued"
    assert drain(queue, REVIEW_QUEUE_NAME) == []  # never behind the nightly reviews
    messages = drain(queue)
    assert len(messages) == 1

    assert work(client, messages, worker) == []
    assert work(client, messages, worker) == []  # a duplicate: done already, nothing again
    status, agent_export = api.call("POST", "/exports", world.person, {"agentId": world.agent.id})
    assert status == 202 and agent_export["id"] != queued["id"]
    assert work(client, drain(queue), worker) == []
    status, done = api.call("GET", f"/exports/{queued['id']}", world.person)
    assert status == 200 and done["status"] == "done", done
    link = urlparse(done["url"])
    key = link.path.removeprefix(f"/{BUCKET}/")
    assert key.endswith(f"exports/{world.workspace_id}/{queued['id']}.json")
    assert parse_qs(link.query)["X-Amz-Expires"] == ["900"]
    raw = versioned.get_object(
        Bucket=BUCKET, Key=f"exports/{world.workspace_id}/{queued['id']}.json"
    )["Body"].read()
    document = json.loads(raw)
    assert (document["format"], document["kind"], document["targetId"]) == (
        "pinework-person-export",
        "workspace",
        world.workspace_id,
    )
    assert done["bytes"] == len(raw) and done["items"] == sum(document["counts"].values())
    # the key-value value and the two reviews' reports, all kept in S3
    reports = versioned.list_objects_v2(Bucket=BUCKET, Prefix=f"reviews/{world.workspace_id}/")
    report_keys = sorted(entry["Key"] for entry in reports["Contents"])
    assert done["items"] > 20 and done["objects"] == 1 + len(report_keys) == 3
    assert [entry["key"] for entry in document["reviewReports"]] == report_keys
    stored = versioned.get_object(Bucket=BUCKET, Key=report_keys[0])["Body"].read()
    assert document["reviewReports"][0]["report"] == json.loads(stored)
    assert {len(document[group]) for group in document["counts"]} != {0}
    assert all(len(document[group]) == n for group, n in document["counts"].items())
    body = raw.decode()
    assert TEXTS[0] in body and world.agent.token not in body
    # the workspace's wiki page and its history, as GET /pages/{id} and …/history answer
    (page,) = document["pages"]
    assert page == api.call("GET", f"/pages/{page['id']}", world.person)[1]
    history = api.call("GET", f"/pages/{page['id']}/history", world.person)[1]["data"]
    assert sorted(document["pageHistory"], key=lambda r: r["version"]) == sorted(
        history, key=lambda r: r["version"]
    )
    one = api.call("GET", f"/exports/{agent_export['id']}", world.person)[1]
    assert one["status"] == "done" and 0 < one["items"] < done["items"]

    # another workspace's person, an agent, an unknown id
    assert api.call("GET", f"/exports/{queued['id']}", world.outsider)[0] == 404
    assert api.call("GET", f"/exports/{queued['id']}", world.agent)[0] == 403
    assert api.call("POST", "/exports", world.agent, {})[0] == 403
    assert api.call("GET", "/exports/exp_nope", world.person)[0] == 404
    assert api.call("POST", "/exports", world.outsider, {"agentId": world.agent.id})[0] == 403
    assert drain(queue) == []

    # past its 7 days the export is gone from the API (the bucket's rule removes the file)
    clock.set(clock.now() + timedelta(days=7))
    assert api.call("GET", f"/exports/{queued['id']}", world.person)[0] == 404


@pytest.mark.parametrize("worker", sorted(WORKERS))
def test_a_person_erases_an_agent_through_the_worker(
    client: Client,
    world: World,
    wired: wiring.Services,
    queue: Any,
    dynamodb: Any,
    versioned: Any,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
    worker: str,
) -> None:
    api = Api(client)
    made = seed(api, world, wired, clock)
    other_fact = api.call("GET", f"/memories?agentId={world.other_agent.id}", world.person)[1][
        "data"
    ][0]["id"]
    late = save(api, world, "saved just before the erasure")
    # enough facts, with small limits, that recalls pack the index into volumes in the bucket
    monkeypatch.setattr(recall_index, "INLINE_SEGMENT_LIMIT", 1)
    monkeypatch.setattr(recall_index, "SEGMENT_BYTES", 2_000)
    monkeypatch.setattr(recall_index, "VOLUME_BYTES", 8_000)
    for number in range(40):
        save(api, world, f"service {number} deploys from branch release-{number * 7}")
    for _ in range(3):
        assert api.call("POST", "/memories/recall", world.agent, {"query": "deploy"})[0] == 200
    volumes = f"recall-index/{world.agent.id}/"
    assert versioned.list_objects_v2(Bucket=BUCKET, Prefix=volumes).get("KeyCount", 0) >= 1
    drain(queue)
    export = api.call("POST", "/exports", world.person, {})[1]
    assert work(client, drain(queue), worker) == []

    reason = {"reason": "the customer asked (ticket 7)"}
    path = f"/agents/{world.agent.id}/erase"
    assert api.call("POST", path, world.agent, reason)[0] == 403
    # Another workspace's agent id in the path answers as missing (docs/reference.md#ids-in-paths).
    foreign = api.call("POST", path, world.outsider, reason)
    unknown = api.call("POST", "/agents/agt_01M8P570G0QJRZ8T2NSWNPVZ62/erase", world.person, reason)
    assert foreign[0] == unknown[0] == 404
    assert foreign[1]["error"]["code"] == unknown[1]["error"]["code"] == "not_found"
    assert api.call("POST", path, world.person, {"reason": "   "})[0] == 400
    leaked = {"reason": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"}
    assert api.call("POST", path, world.person, leaked)[1]["error"]["code"] == "secret_in_memory"
    assert drain(queue) == []  # refusals queue nothing

    status, headers, queued = api.send("POST", path, world.person, reason)
    assert status == 202 and queued["status"] == "queued", queued
    assert headers["Location"] == f"/api/v1/erasures/{world.agent.id}"
    assert (queued["requestedBy"], queued["reason"]) == (world.person.id, reason["reason"])
    again = api.call("POST", path, world.person, {"reason": "a second click"})[1]
    assert again["reason"] == reason["reason"]  # the same erasure
    assert drain(queue, REVIEW_QUEUE_NAME) == []  # never behind the nightly reviews
    messages = drain(queue)
    assert len(messages) == 2 and len(set(messages)) == 1

    assert work(client, messages[:1], worker) == []
    status, done = api.call("GET", f"/erasures/{world.agent.id}", world.person)
    assert status == 200 and done["status"] == "done" and done["phase"] == "done", done
    assert done["items"]["MEMORY"] >= 7 and done["itemCount"] == sum(done["items"].values())
    assert done["objectVersions"] > 0
    assert work(client, messages[1:], worker) == []  # the duplicate: nothing more
    assert api.call("POST", path, world.person, reason)[0] == 200  # done: 200, the tombstone

    memories = {found for found in made if found.startswith("mem_")}
    needles = {world.agent.id, world.agent.token, TEXTS[3], late["id"], *memories}
    left = every_trace(dynamodb, versioned, needles - {other_fact})
    # its tombstone, and its entry in the workspace's past erasures (ids and a time)
    entry = f"ERASURE#{world.workspace_id} LIST#{done['requestedAt']}#{world.agent.id}"
    assert sorted(left) == [f"ERASURE#{world.agent.id} RECORD", entry], left
    assert "Versions" not in versioned.list_object_versions(Bucket=BUCKET, Prefix=volumes)
    assert api.call("GET", "/memories", world.agent)[0] == 401
    assert api.call("GET", f"/memories/{late['id']}", world.person)[0] == 404
    assert api.call("GET", f"/memories/{other_fact}", world.person)[0] == 200
    assert api.call("GET", "/memories?agentId=" + world.other_agent.id, world.person)[0] == 200
    # the workspace's cached export held the agent's facts: it is gone
    assert api.call("GET", f"/exports/{export['id']}", world.person)[1]["status"] == "expired"
    # followed by persons of the workspace only
    assert api.call("GET", f"/erasures/{world.agent.id}", world.outsider)[0] == 404
    assert api.call("GET", f"/erasures/{world.agent.id}", world.other_agent)[0] == 403
    assert api.call("GET", "/erasures/agt_nope", world.person)[0] == 404


def test_the_dashboard_exports_and_erases_an_agent(
    client: Client, world: World, wired: wiring.Services, queue: Any, versioned: Any
) -> None:
    api = Api(client)
    fact = save(api, world, "The billing cron runs at 03:10")
    page = Page(client)
    assert page.sign_in(world.person.token).status_code == 303
    tab = page.get(f"/agents/{world.agent.id}/data")
    assert tab.status_code == 200 and "Erase this agent" in text(tab)
    assert "Learnings it proposed go too, even those a person approved" in text(tab)

    started = page.post(f"/agents/{world.agent.id}/export", {"csrf": page.csrf()})
    assert started.status_code == 303
    export_path = started.headers["Location"].split("://", 1)[-1].split("/", 1)[-1]
    waiting = page.get("/" + export_path)
    assert "Being written" in text(waiting) and 'http-equiv="refresh"' in waiting.body.decode()
    assert work(client, drain(queue)) == []
    ready = page.get("/" + export_path)
    assert "Download the file" in text(ready) and "X-Amz-Expires=900" in ready.body.decode()
    workspace = page.post("/exports", {"csrf": page.csrf("/settings")})
    assert workspace.status_code == 303 and "/exports/exp_" in workspace.headers["Location"]
    workspace_path = workspace.headers["Location"].split("://", 1)[-1].split("/", 1)[-1]
    assert work(client, drain(queue)) == []

    # the name must be typed; the reason is kept when refused
    form = {"csrf": page.csrf(), "reason": "asked by the customer", "confirm": "wrong"}
    refused = page.post(f"/agents/{world.agent.id}/erase", form)
    assert refused.status_code == 400 and "Type the agent" in text(refused)
    assert "asked by the customer" in refused.body.decode()
    assert drain(queue) == []
    form["confirm"] = "builder"
    queued = page.post(f"/agents/{world.agent.id}/erase", form)
    assert queued.headers["Location"].endswith(f"/erasures/{world.agent.id}")
    assert "Waiting for the lifecycle worker" in text(page.get(f"/erasures/{world.agent.id}"))
    assert work(client, drain(queue)) == []
    done = text(page.get(f"/erasures/{world.agent.id}"))
    assert "Erased" in done and "asked by the customer" in done
    assert "facts and day logs" in done and "MEMORY" not in done  # a person's words
    assert api.call("GET", f"/memories/{fact['id']}", world.person)[0] == 404
    assert page.get(f"/agents/{world.agent.id}/data").status_code == 404  # gone: as a missing agent
    # the agent's export named it: gone with it; the workspace's file is deleted
    assert page.get("/" + export_path).status_code == 404
    assert "The file is gone" in text(page.get("/" + workspace_path))


LEARNED = "Deploys of the ledger-svc-4471 need the blue-green switch first"
EDITED = "Deploys of the ledger-svc-4471 need the blue-green switch and a drain"
FACT = "The payroll export password rotates on the ninth, ask ops-9931"


def test_an_erased_agents_learnings_lose_text_evidence_and_history_and_the_count_is_recounted(
    client: Client, world: World, wired: wiring.Services, dynamodb: Any, versioned: Any
) -> None:
    api = Api(client)
    status, mine = api.call("POST", "/learnings", world.agent, {"text": LEARNED})
    assert status == 201, mine
    assert api.call("POST", f"/learnings/{mine['id']}/approve", world.person)[0] == 200
    edited = api.call("PATCH", f"/learnings/{mine['id']}", world.person, {"text": EDITED})
    assert edited[0] == 200, edited
    status, theirs = api.call(
        "POST", "/learnings", world.other_agent, {"text": "Sibling learning stays put"}
    )
    assert status == 201
    history = api.call("GET", f"/learnings/{mine['id']}/history", world.person)[1]["data"]
    assert len(history) >= 2  # proposed, approved, edited (the edit keeps the old text)
    assert every_trace(dynamodb, versioned, {LEARNED})  # the search sees the copies

    wired.admin.erase("agent", world.agent.id, by="ops")

    assert every_trace(dynamodb, versioned, {LEARNED, EDITED, mine["id"]}) == []
    count = dynamodb.get_item(
        TableName=wired.settings.table_name,
        Key={name: {"S": value} for name, value in learning_count_key(world.workspace_id).items()},
        ConsistentRead=True,
    )["Item"]
    assert int(count["live"]["N"]) == 1  # the sibling's proposal, recounted
    assert api.call("GET", f"/learnings/{theirs['id']}", world.person)[0] == 200


def test_an_export_that_overlaps_a_memory_erasure_discards_its_file_and_runs_again(
    client: Client,
    world: World,
    wired: wiring.Services,
    queue: Any,
    versioned: Any,
    dynamodb: Any,
    monkeypatch: Any,
) -> None:
    api = Api(client)
    fact = save(api, world, FACT)
    status, export = api.call("POST", "/exports", world.person, {})
    assert status == 202
    store = wired.lifecycle._exports
    upload = store.upload

    def erase_then_upload(key: str, body: Any) -> None:
        # the erasure runs after the export read the fact and before its file lands
        erased = api.call(
            "POST", f"/memories/{fact['id']}/erase", world.person, {"reason": "ticket 9"}
        )
        assert erased[0] == 200, erased
        upload(key, body)

    monkeypatch.setattr(store, "upload", erase_then_upload)
    assert work(client, drain(queue)) != []  # the attempt fails: the queue runs it again
    failed = api.call("GET", f"/exports/{export['id']}", world.person)[1]
    assert failed["status"] == "failed" and failed["error"] == "conflict"
    assert every_trace(dynamodb, versioned, {FACT}) == []  # no version of the file holds it

    monkeypatch.setattr(store, "upload", upload)
    assert work(client, [f'{{"job":"export","id":"{export["id"]}"}}']) == []
    done = api.call("GET", f"/exports/{export['id']}", world.person)[1]
    assert done["status"] == "done" and done["items"] > 0
    assert every_trace(dynamodb, versioned, {FACT}) == []


def test_exports_are_one_at_a_time_and_capped_per_day(
    client: Client, world: World, wired: wiring.Services, queue: Any
) -> None:
    api = Api(client)
    first = api.call("POST", "/exports", world.person, {})
    assert first[0] == 202
    again = api.call("POST", "/exports", world.person, {"agentId": world.agent.id})
    assert again[0] == 200 and again[1]["id"] == first[1]["id"]
    # another workspace is not held up by this one
    assert api.call("POST", "/exports", world.outsider, {})[0] == 202
    assert work(client, drain(queue)) == []
    started = 1
    while True:
        status, body = api.call("POST", "/exports", world.person, {})
        if status != 202:
            break
        started += 1
        assert work(client, drain(queue)) == []
    assert started == 10
    assert status == 429 and body["error"]["code"] == "rate_limited"
    assert drain(queue) == []


def test_the_lifecycle_worker_fails_a_message_that_is_not_a_job_alone(
    client: Client, world: World, queue: Any
) -> None:
    api = Api(client)
    status, export = api.call("POST", "/exports", world.person, {})
    assert status == 202
    bodies = ["not json", '{"job": "review", "id": "x"}', *drain(queue)]
    assert work(client, bodies) == ["m0", "m1"]  # the export ran; the others are retried
    assert api.call("GET", f"/exports/{export['id']}", world.person)[1]["status"] == "done"


def test_a_slot_held_by_an_export_that_is_gone_is_taken_by_the_next_export(
    client: Client, world: World, dynamodb: Any, queue: Any
) -> None:
    # The export holding the slot lost its record (erased with its workspace's data, or
    # past its 7 days) before it freed the slot: the next request takes the slot, not a 500.
    api = Api(client)
    status, first = api.call("POST", "/exports", world.person, {})
    assert status == 202
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(TABLE)
    table.delete_item(Key={"pk": f"EXPORT#{first['id']}", "sk": "EXPORT"})
    status, second = api.call("POST", "/exports", world.person, {"agentId": None})
    assert status == 202 and second["id"] != first["id"]
    # and the slot is held again: a third request answers the second export
    status, third = api.call("POST", "/exports", world.person, {})
    assert status == 200 and third["id"] == second["id"]


SHARED = "The invoice queue drains through relay-7712 before midnight"
HELD = "Ledger backups land in vault-5530 at noon"
BY_PERSON = "Ask {agent} before a ledger migration, says ops-4410"


def held_by_both(
    api: Api, world: World, wired: wiring.Services, said: str
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """Both agents save ``said``; the review proposes it as a learning citing both facts
    (docs/reference.md#learnings-and-the-review). Returns the facts and the learning's id."""
    mine = save(api, world, said)
    theirs = api.call("POST", "/memories", world.other_agent, {"text": said})[1]
    learning, new = wired.learnings.propose_from_review(
        world.workspace_id, "rvw_01J0000000000000000000000A", said, [mine["id"], theirs["id"]]
    )
    assert new
    return mine, theirs, learning.id


def block_of(api: Api, world: World) -> str:
    status, recall = api.call(
        "POST", "/memories/recall", world.other_agent, {"query": "ledger invoice relay vault"}
    )
    assert status == 200, recall
    return str(recall["block"])


def live_count(wired: wiring.Services, dynamodb: Any, world: World) -> int:
    key = learning_count_key(world.workspace_id)
    item = dynamodb.get_item(
        TableName=wired.settings.table_name,
        Key={name: {"S": value} for name, value in key.items()},
        ConsistentRead=True,
    )["Item"]
    return int(item["live"]["N"])


def test_a_learning_whose_every_source_is_erased_is_retired_and_blanked(
    client: Client, world: World, wired: wiring.Services, dynamodb: Any, versioned: Any
) -> None:
    api = Api(client)
    mine, theirs, shared = held_by_both(api, world, wired, SHARED)
    approved = api.call(
        "POST", f"/learnings/{shared}/approve", world.person, {"text": SHARED + " (checked)"}
    )
    assert approved[0] == 200, approved
    assert shared in block_of(api, world) and live_count(wired, dynamodb, world) == 1

    def erase(memory_id: str) -> None:
        path = f"/memories/{memory_id}/erase"
        assert api.call("POST", path, world.person, {"reason": "ticket 12"})[0] == 200

    erase(mine["id"])
    # one source is held still: the text stays, the erased fact leaves the evidence
    kept = api.call("GET", f"/learnings/{shared}", world.person)[1]
    assert (kept["state"], kept["evidence"]) == ("active", [theirs["id"]])
    assert kept["text"] == SHARED + " (checked)" and shared in block_of(api, world)

    erase(theirs["id"])
    blank = api.call("GET", f"/learnings/{shared}", world.person)[1]
    assert (blank["state"], blank["text"], blank["evidence"]) == ("retired", "", [])
    assert shared not in block_of(api, world)
    assert live_count(wired, dynamodb, world) == 0
    history = api.call("GET", f"/learnings/{shared}/history", world.person)[1]["data"]
    assert [record["action"] for record in history] == ["propose", "approve", "erase", "erase"]
    assert (history[-1]["actorType"], history[-1]["actorId"]) == ("system", "erasure")
    assert all(not (record["before"] or {}).get("text") for record in history)
    assert every_trace(dynamodb, versioned, {SHARED}) == []
    # blank and retired: a person cannot bring it back, nor edit it
    assert api.call("PATCH", f"/learnings/{shared}", world.person, {"text": SHARED})[0] == 409
    # erasing again finds nothing more to do
    erase(theirs["id"])
    assert len(api.call("GET", f"/learnings/{shared}/history", world.person)[1]["data"]) == 4


def test_an_agents_erasure_blanks_the_learnings_of_its_facts_alone_and_persons_learnings_stay(
    client: Client, world: World, wired: wiring.Services, dynamodb: Any, versioned: Any
) -> None:
    api = Api(client)
    mine, theirs, shared = held_by_both(api, world, wired, SHARED)  # stays proposed
    mine_held, theirs_held, held = held_by_both(api, world, wired, HELD)
    assert api.call("POST", f"/learnings/{held}/approve", world.person)[0] == 200
    by_person = BY_PERSON.format(agent=world.agent.id)
    status, written = api.call("POST", "/learnings", world.person, {"text": by_person})
    assert status == 201, written
    # the other agent's fact was erased before: the agent's fact is the last source
    erased = api.call(
        "POST", f"/memories/{theirs['id']}/erase", world.person, {"reason": "ticket 3"}
    )
    assert erased[0] == 200
    assert api.call("GET", f"/learnings/{shared}", world.person)[1]["evidence"] == [mine["id"]]

    # the Data tab says which learnings go, before the person confirms
    page = Page(client)
    assert page.sign_in(world.person.token).status_code == 303
    tab = page.get(f"/agents/{world.agent.id}/data")
    body = tab.body.decode()
    blanked = body.split('id="erase-agent-blanked"', 1)[1].split("</ul>", 1)[0]
    pruned = body.split('id="erase-agent-pruned"', 1)[1].split("</ul>", 1)[0]
    assert shared in blanked and held not in blanked and held in pruned
    assert "retired and blanked" in text(tab) and "Learnings persons wrote stay (1 live)" in text(
        tab
    )

    wired.admin.erase("agent", world.agent.id, by="ops")

    blank = api.call("GET", f"/learnings/{shared}", world.person)[1]
    assert (blank["state"], blank["text"], blank["evidence"]) == ("retired", "", [])
    shown = text(page.get(f"/learnings/{shared}"))
    assert (
        "Its text was erased with every fact" in shown
        and "<strong>erase</strong> by the system (an erasure)" in shown
    )
    kept = api.call("GET", f"/learnings/{held}", world.person)[1]
    assert (kept["state"], kept["text"], kept["evidence"]) == ("active", HELD, [theirs_held["id"]])
    status, person_own = api.call("GET", f"/learnings/{written['id']}", world.person)
    assert status == 200 and person_own["text"] == by_person and person_own["state"] == "active"
    history = api.call("GET", f"/learnings/{written['id']}/history", world.person)[1]["data"]
    assert [record["action"] for record in history] == ["propose"]
    block = block_of(api, world)
    assert held in block and written["id"] in block and shared not in block
    assert live_count(wired, dynamodb, world) == 2
    assert every_trace(dynamodb, versioned, {SHARED, mine["id"], mine_held["id"]}) == []


def _keys(value: Any) -> set[str]:
    """Every object key anywhere in a parsed JSON value."""
    if isinstance(value, dict):
        return set(value) | {key for part in value.values() for key in _keys(part)}
    if isinstance(value, list):
        return {key for part in value for key in _keys(part)}
    return set()


def test_a_persons_export_is_a_readable_document_by_kind_in_the_apis_words(
    client: Client, world: World, wired: wiring.Services, queue: Any, versioned: Any, dynamodb: Any
) -> None:
    api = Api(client)
    fact = save(api, world, "The staging cluster is kube-staging-31")
    api.call("POST", "/memories/recall", world.agent, {"query": "staging cluster"})
    api.call("POST", "/memories/day", world.agent, {"line": "rotated the staging keys"})
    api.call("POST", "/kv/remember", world.person, {"key": "notes", "value": "plain words"})
    drain(queue)
    export = api.call("POST", "/exports", world.person, {"agentId": world.agent.id})[1]
    assert work(client, drain(queue)) == []
    done = api.call("GET", f"/exports/{export['id']}", world.person)[1]
    key = f"exports/{world.workspace_id}/{export['id']}.json"
    document = json.loads(versioned.get_object(Bucket=BUCKET, Key=key)["Body"].read())

    assert document["format"] == "pinework-person-export" and document["kind"] == "agent"
    assert done["items"] == sum(document["counts"].values())
    (mine,) = [memory for memory in document["memories"] if memory["id"] == fact["id"]]
    wire = api.call("GET", f"/memories/{fact['id']}", world.person)[1]
    assert mine == wire  # the memory as the API answers it, recall count included
    assert {memory["kind"] for memory in document["memories"]} == {"fact", "day"}
    history = [record for record in document["history"] if record["memoryId"] == fact["id"]]
    assert history and history[0]["object"] == "audit" and history[0]["action"] == "create"
    assert [agent["id"] for agent in document["agents"]] == [world.agent.id]
    assert document["recalls"][0]["object"] and "memories" in document["recalls"][0]
    # the API's field names, never the table's
    names = _keys(document)
    assert not names & {"pk", "sk", "gsiAgentKind", "lsk", "expiresAtEpoch", "embedding"}
    assert {"agentId", "createdAt", "recallCount"} <= names
    body = json.dumps(document)
    assert world.agent.token not in body and world.person.token not in body
    # an agent's export holds no other agent's memories, nor the account's key-value
    assert "keyValue" not in document
    assert all(memory["agentId"] == world.agent.id for memory in document["memories"])
    # for reading, not for import: the operator's import refuses it and writes nothing
    before = dynamodb.scan(TableName=TABLE)["Count"]
    lines = json.dumps(document, indent=2).splitlines()
    with pytest.raises(InvalidRequest, match="Line 1"):
        wired.admin.import_file(lambda: iter(lines))
    assert dynamodb.scan(TableName=TABLE)["Count"] == before


def test_a_person_lists_the_workspaces_past_erasures_newest_first_and_no_other_workspaces(
    client: Client,
    world: World,
    wired: wiring.Services,
    queue: Any,
    dynamodb: Any,
    clock: FixedClock,
) -> None:
    api = Api(client)
    fact = save(api, world, "The vault key lives in kms-alias-77")
    erased = api.call(
        "POST", f"/memories/{fact['id']}/erase", world.person, {"reason": "a leaked alias"}
    )
    assert erased[0] == 200, erased
    theirs = api.call("POST", "/memories", world.outsider_agent, {"text": "Outsider fact kept"})[1]
    api.call("POST", f"/memories/{theirs['id']}/erase", world.outsider, {"reason": "not yours"})
    clock.set(clock.now() + timedelta(minutes=5))
    queued = api.call(
        "POST", f"/agents/{world.agent.id}/erase", world.person, {"reason": "customer left"}
    )
    assert queued[0] == 202

    status, listed = api.call("GET", "/erasures", world.person)
    assert status == 200 and listed["object"] == "list" and listed["nextToken"] is None
    assert [(entry["kind"], entry["id"], entry["status"]) for entry in listed["data"]] == [
        ("agent", world.agent.id, "queued"),
        ("memory", fact["id"], "done"),
    ]
    memory = listed["data"][1]
    assert (memory["reason"], memory["requestedBy"]) == ("a leaked alias", world.person.id)
    assert memory["finishedAt"] is not None and "not yours" not in json.dumps(listed)

    assert work(client, drain(queue)) == []
    first = api.call("GET", "/erasures?limit=1", world.person)[1]
    (agent,) = first["data"]
    assert (agent["status"], agent["reason"], agent["requestedBy"]) == (
        "done",
        "customer left",
        world.person.id,
    )
    assert agent["startedAt"] is not None and agent["finishedAt"] is not None
    assert agent == api.call("GET", f"/erasures/{world.agent.id}", world.person)[1]
    rest = api.call("GET", f"/erasures?limit=1&nextToken={first['nextToken']}", world.person)[1]
    assert [entry["id"] for entry in rest["data"]] == [fact["id"]] and rest["nextToken"] is None
    # the listing holds ids, reasons and times, never the erased text; a memory's entry
    # keeps its reason after the memory's tombstone went with its agent
    listing = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"ERASURE#{world.workspace_id}"}},
    )["Items"]
    assert len([item for item in listing if item["sk"]["S"].startswith("LIST#")]) == 2
    assert "kms-alias-77" not in json.dumps(listing)

    other = api.call("GET", "/erasures", world.outsider)[1]["data"]
    assert [entry["id"] for entry in other] == [theirs["id"]]
    assert api.call("GET", "/erasures", world.other_agent)[0] == 403
    assert api.call("GET", "/erasures?nextToken=bm9wZQ", world.person)[0] == 400

    page = Page(client)
    assert page.sign_in(world.person.token).status_code == 303
    shown = page.get("/erasures")
    assert shown.status_code == 200
    words = text(shown)
    assert "customer left" in words and "a leaked alias" in words and "not yours" not in words
    assert f'href="/erasures/{world.agent.id}"' in shown.body.decode()
    assert "Past erasures" in text(page.get("/settings"))
