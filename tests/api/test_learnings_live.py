"""Learnings read only what is live, retired texts stay retired, agents see what is theirs
(docs/reference.md#15-learnings; docs/issues.md#issue-41-item-4, docs/issues.md#issue-42
items 2 and 5)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.models.learning import LearningState
from chalicelib.services.memory.vetoes import veto_index_keys
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import learning_state_partition, learnings_partition
from chalicelib.storage.learnings import DynamoDBLearningRepository
from tests.helpers import TABLE, Api, World


class Reads:
    """Every learning item a Query of the table yields (sort keys), while installed."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = DynamoDBTable.query

        def counting(table: DynamoDBTable, **kwargs: Any) -> Iterator[dict[str, Any]]:
            for row in original(table, **kwargs):
                if str(row.get("pk", "")).startswith("LEARNINGS#"):
                    self.keys.append(str(row["sk"]))
                yield row

        monkeypatch.setattr(DynamoDBTable, "query", counting)


def fresh_copies(dynamodb: Any, workspace_id: str) -> int:
    """How many state copies the workspace's learnings have."""
    return sum(
        dynamodb.query(
            TableName=TABLE,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=to_attributes(
                {":pk": learning_state_partition(workspace_id, state.value)}
            ),
        )["Count"]
        for state in LearningState
    )


def retire_all(api: Api, world: World, texts: list[str]) -> list[str]:
    """A person proposes each text (active at once) and retires it; their ids."""
    retired = []
    for text in texts:
        status, made = api.call("POST", "/learnings", world.person, {"text": text})
        assert status == 201, made
        status, done = api.call(
            "POST", f"/learnings/{made['id']}/retire", world.person, {"reason": "obsolete"}
        )
        assert status == 200, done
        retired.append(made["id"])
    return retired


def test_recall_propose_and_lists_read_no_retired_learning(
    api: Api, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    retired = retire_all(api, world, [f"Service {n} listens on port {8000 + n}" for n in range(8)])
    live = api.call("POST", "/learnings", world.person, {"text": "Builds run on arm64 runners"})[1]
    reads = Reads()
    reads.install(monkeypatch)

    status, recall = api.call("POST", "/memories/recall", world.agent, {"query": "arm64 builds"})
    assert status == 200 and [item["learning"]["id"] for item in recall["learnings"]] == [
        live["id"]
    ]
    status, proposed = api.call("POST", "/learnings", world.agent, {"text": "Deploys need the VPN"})
    assert status == 201, proposed
    status, page = api.call("GET", "/learnings?state=active&limit=1", world.person)
    assert status == 200 and [found["id"] for found in page["data"]] == [live["id"]]
    assert not [key for key in reads.keys if any(lrn in key for lrn in retired)], reads.keys

    # an unfiltered list reads one page's worth (limit + 2), however many are retired
    reads.keys.clear()
    status, page = api.call("GET", "/learnings?limit=1", world.person)
    assert status == 200 and page["nextToken"]
    assert len([key for key in reads.keys if key.startswith("LEARNING#")]) <= 3
    # and pages through every state
    ids: list[str] = []
    token = None
    while True:
        query = "/learnings?limit=3" + (f"&nextToken={token}" if token else "")
        page = api.call("GET", query, world.person)[1]
        ids.extend(found["id"] for found in page["data"])
        token = page["nextToken"]
        if not token:
            break
    assert sorted(ids, reverse=True) == ids and set(retired) <= set(ids) and len(ids) == 10
    retired_page = api.call("GET", "/learnings?state=retired&limit=200", world.person)[1]
    assert [found["id"] for found in retired_page["data"]] == sorted(retired, reverse=True)
    # over the list's most is read as its most (200), as every list clamps, never refused
    status, clamped = api.call("GET", "/learnings?state=retired&limit=900", world.person)
    assert status == 200 and clamped["data"] == retired_page["data"]
    status, refused = api.call("GET", "/learnings?limit=ten", world.person)
    assert status == 400 and "is read as its largest" in refused["error"]["message"]


@pytest.mark.parametrize(
    "again",
    [
        "Staging deploys need the VPN turned on first",
        "staging deploys need the VPN turned on first!",
        "Staging deploys need the VPN to be turned on first",
    ],
)
def test_a_retired_text_does_not_come_back_from_an_agent(
    api: Api, world: World, wired: wiring.Services, again: str
) -> None:
    retired = retire_all(api, world, ["Staging deploys need the VPN turned on first"])[0]
    status, refused = api.call("POST", "/learnings", world.agent, {"text": again})
    assert (status, refused["error"]["code"]) == (409, "learning_rejected"), refused
    assert retired in refused["error"]["message"] and "obsolete" not in refused["error"]["message"]
    # nor from the review
    with pytest.raises(Exception, match="retired"):
        wired.learnings.propose_from_review(world.workspace_id, "rvw_x", again, ["mem_a"])
    # a person may still propose it: active again
    status, back = api.call("POST", "/learnings", world.person, {"text": again})
    assert (status, back["state"]) == (201, "active")
    # unrelated texts are not refused
    assert api.call("POST", "/learnings", world.agent, {"text": "Logs ship to Loki"})[0] == 201


def test_learnings_filed_before_the_state_copies_are_filed_on_first_read(
    api: Api, world: World, dynamodb: Any, wired: wiring.Services
) -> None:
    retired = retire_all(api, world, ["The wiki moved to Notion"])[0]
    active = api.call("POST", "/learnings", world.person, {"text": "Logs ship to Loki"})[1]
    # as an older release left them: no state copies, no marker, no retired-text entries
    partitions = [learnings_partition(world.workspace_id)] + [
        learning_state_partition(world.workspace_id, state.value) for state in LearningState
    ]
    for partition in partitions:
        rows = dynamodb.query(
            TableName=TABLE,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=to_attributes({":pk": partition}),
        )["Items"]
        for row in rows:
            sk = row["sk"]["S"]
            if partition != partitions[0] or sk.startswith(("STATES", "REJECTED#")):
                dynamodb.delete_item(TableName=TABLE, Key={"pk": row["pk"], "sk": row["sk"]})
    assert fresh_copies(dynamodb, world.workspace_id) == 0
    fresh = DynamoDBLearningRepository(DynamoDBTable(dynamodb, TABLE))
    fresh.file_by_state(world.workspace_id, veto_index_keys)
    assert fresh_copies(dynamodb, world.workspace_id) == 2
    assert [found.id for found in fresh.in_state(world.workspace_id, LearningState.ACTIVE)] == [
        active["id"]
    ]
    assert [found.id for found in fresh.in_state(world.workspace_id, LearningState.RETIRED)] == [
        retired
    ]
    assert fresh.rejected(world.workspace_id, veto_index_keys("The wiki moved to Notion")) == {
        retired
    }


def test_agents_see_active_learnings_and_their_own_proposals(api: Api, world: World) -> None:
    mine = api.call("POST", "/learnings", world.agent, {"text": "Builds run on arm64"}, headers={})[
        1
    ]
    theirs = api.call("POST", "/learnings", world.other_agent, {"text": "Logs ship to Loki"})[1]
    rejected = api.call("POST", "/learnings", world.other_agent, {"text": "Tabs, not spaces"})[1]
    api.call(
        "POST", f"/learnings/{rejected['id']}/reject", world.person, {"reason": "we use spaces"}
    )
    told = api.call("POST", "/learnings", world.person, {"text": "Staging is stg-eu-1"})[1]
    api.call("POST", f"/learnings/{theirs['id']}/approve", world.person, {})

    def listed(actor: Any, query: str = "") -> list[str]:
        status, body = api.call("GET", "/learnings" + query, actor)
        assert status == 200, body
        return [found["id"] for found in body["data"]]

    assert set(listed(world.agent)) == {mine["id"], theirs["id"], told["id"]}
    assert listed(world.agent, "?state=rejected") == []
    assert listed(world.other_agent, "?state=rejected") == [rejected["id"]]
    assert set(listed(world.person)) == {mine["id"], theirs["id"], told["id"], rejected["id"]}
    # another agent's proposal, or a rejection, is not found for an agent
    assert api.call("GET", f"/learnings/{mine['id']}", world.other_agent)[0] == 404
    assert api.call("GET", f"/learnings/{rejected['id']}/history", world.agent)[0] == 404
    # the person's reason is for persons, also on the agent's own rejected proposal
    own = api.call("GET", f"/learnings/{rejected['id']}", world.other_agent)[1]
    assert own["state"] == "rejected" and own["reason"] is None
    history = api.call("GET", f"/learnings/{rejected['id']}/history", world.other_agent)[1]
    assert [record["reason"] for record in history["data"]] == [None, None]
    person = api.call("GET", f"/learnings/{rejected['id']}", world.person)[1]
    assert person["reason"] == "we use spaces"
    # an active learning an agent proposed: another agent reads it without its run
    seen = api.call("GET", f"/learnings/{theirs['id']}", world.agent)[1]
    assert seen["state"] == "active" and seen["runId"] is None and seen["evidence"] is None


def test_persons_list_the_unreviewed_learnings_until_each_is_confirmed_or_retired(
    api: Api, world: World, wired: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    waiting = api.call("POST", "/learnings", world.agent, {"text": "Tickets close on Fridays"})[1]
    retired = retire_all(api, world, ["The old VPN gateway is vpn-2"])
    wired.admin.set_learning_approval(world.workspace_id, "none", confirmed=True)
    live = [
        api.call("POST", "/learnings", world.agent, {"text": text})[1]
        for text in ("Builds run on arm64", "Logs ship to Loki", "Deploys need a drain")
    ]
    assert all(found["state"] == "active" and found["decidedBy"] is None for found in live)
    mine = api.call("POST", "/learnings", world.person, {"text": "Use UTC in every log"})[1]
    newest_first = [found["id"] for found in reversed(live)]

    reads = Reads()
    reads.install(monkeypatch)
    status, page = api.call("GET", "/learnings?unreviewed=true", world.person)
    assert status == 200 and [found["id"] for found in page["data"]] == newest_first
    # the active state only: neither the proposed nor the retired learning is read
    assert not [key for key in reads.keys if waiting["id"] in key or retired[0] in key]
    assert mine["id"] not in [found["id"] for found in page["data"]]  # a person's: reviewed
    first = api.call("GET", "/learnings?unreviewed=1&state=active&limit=2", world.person)[1]
    assert [found["id"] for found in first["data"]] == newest_first[:2] and first["nextToken"]
    rest = api.call(
        "GET", f"/learnings?unreviewed=true&limit=2&nextToken={first['nextToken']}", world.person
    )[1]
    assert [found["id"] for found in rest["data"]] == newest_first[2:] and not rest["nextToken"]
    searched = api.call("GET", "/learnings?unreviewed=true&q=LOKI", world.person)[1]
    assert [found["id"] for found in searched["data"]] == [live[1]["id"]]

    # for persons: an agent is refused, and a state other than active makes no sense
    status, refused = api.call("GET", "/learnings?unreviewed=true", world.agent)
    assert (status, refused["error"]["code"]) == (403, "forbidden")
    assert "for persons" in refused["error"]["message"]
    status, bad = api.call("GET", "/learnings?unreviewed=true&state=proposed", world.person)
    assert (status, bad["error"]["code"]) == (400, "invalid_request")
    assert api.call("GET", "/learnings?unreviewed=maybe", world.person)[0] == 400
    assert api.call("GET", "/learnings?unreviewed=false", world.agent)[0] == 200

    # the list empties as persons confirm or retire each
    assert api.call("POST", f"/learnings/{live[0]['id']}/approve", world.person, {})[0] == 200
    path = f"/learnings/{live[1]['id']}/retire"
    assert api.call("POST", path, world.person, {"reason": "checked: wrong"})[0] == 200
    left = api.call("GET", "/learnings?unreviewed=true", world.person)[1]["data"]
    assert [found["id"] for found in left] == [live[2]["id"]]
    assert api.call("POST", f"/learnings/{live[2]['id']}/approve", world.person, {})[0] == 200
    assert api.call("GET", "/learnings?unreviewed=true", world.person)[1]["data"] == []
