"""The bearer-token lifecycle through the API and the admin service
(docs/reference.md#authentication, docs/reference.md#14-operations; docs/issues.md#issue-12): more
tokens per principal, listing without secrets, revoke -> 401 at once, rotation with a grace period
(on the injected clock), ``lastUsedAt`` written at most once an hour, and tokens stored before all
this still working."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.errors import InvalidRequest, NotFound
from chalicelib.ids import FixedClock, to_rfc3339
from tests.helpers import TABLE, Actor, Api, Faults, World


def status_of(api: Api, token: str) -> int:
    return api.call("GET", "/memories", Actor("any", token))[0]


def token_writes(faults: Faults) -> int:
    """UpdateItem calls on token items (the ``lastUsedAt`` writes)."""
    return sum(1 for name, body in faults.requests if name == "UpdateItem" and "TOKEN#" in body)


def test_an_agent_can_hold_several_tokens(api: Api, wired: wiring.Services, world: World) -> None:
    issued = wired.admin.issue_token(world.agent.id, "ci-runner")
    assert issued["principalId"] == world.agent.id and issued["principalKind"] == "agent"
    assert issued["id"].startswith("tok_") and issued["label"] == "ci-runner"
    assert status_of(api, issued["token"]) == 200
    assert status_of(api, world.agent.token) == 200
    person_token = wired.admin.issue_token(world.person.id)
    assert person_token["principalKind"] == "person"
    assert status_of(api, person_token["token"]) == 200


def test_issuing_checks_the_principal_and_label(wired: wiring.Services, world: World) -> None:
    for bad in ("wsp_01", "agt_01KAAAAAAAAAAAAAAAAAAAAAAA", "usr_nope", ""):
        with pytest.raises(InvalidRequest):
            wired.admin.issue_token(bad)
    for label in ("", " ", "x" * 101, "line\nbreak"):
        with pytest.raises(InvalidRequest):
            wired.admin.issue_token(world.agent.id, label)


def test_listing_shows_ids_prefixes_and_times_never_a_token_or_hash(
    api: Api, wired: wiring.Services, world: World, clock: FixedClock
) -> None:
    clock.set(clock.now() + timedelta(minutes=1))
    issued = wired.admin.issue_token(world.agent.id, "ci")
    clock.set(clock.now() + timedelta(minutes=5))
    assert status_of(api, issued["token"]) == 200
    listing = wired.admin.list_tokens(world.agent.id)
    assert [token["label"] for token in listing] == [None, "ci"]  # oldest first
    assert len({token["id"] for token in listing}) == 2
    by_id = {token["id"]: token for token in listing}
    shown = by_id[issued["id"]]
    assert shown["prefix"] == issued["token"][:8] and shown["prefix"].startswith("pwk_")
    assert shown["status"] == "active" and shown["expiresAt"] is None
    assert shown["lastUsedAt"] == to_rfc3339(clock.now())
    assert set(shown) == {
        "id",
        "principalKind",
        "principalId",
        "workspaceId",
        "prefix",
        "label",
        "createdAt",
        "lastUsedAt",
        "expiresAt",
        "rotatedTo",
        "status",
    }
    dumped = json.dumps(listing)
    for token in (issued["token"], world.agent.token):
        assert token not in dumped
        assert token[8:] not in dumped  # not even the secret part
        assert hashlib.sha256(token.encode()).hexdigest() not in dumped


def test_a_revoked_token_is_401_on_its_very_next_request(
    api: Api, wired: wiring.Services, world: World
) -> None:
    issued = wired.admin.issue_token(world.agent.id)
    assert status_of(api, issued["token"]) == 200
    revoked = wired.admin.revoke_token(issued["id"])
    assert revoked["id"] == issued["id"]
    status, body = api.call("GET", "/memories", Actor("x", issued["token"]))
    assert status == 401 and body["error"]["code"] == "unauthorized"
    assert "revoked" in body["error"]["message"]
    assert status_of(api, world.agent.token) == 200  # the agent's other token is untouched
    assert issued["id"] not in {token["id"] for token in wired.admin.list_tokens(world.agent.id)}
    with pytest.raises(NotFound):
        wired.admin.revoke_token(issued["id"])
    with pytest.raises(NotFound):
        wired.admin.revoke_token("tok_01KAAAAAAAAAAAAAAAAAAAAAAA")


def test_revoking_the_first_token_of_an_agent_locks_it_out(
    api: Api, wired: wiring.Services, world: World
) -> None:
    (first,) = wired.admin.list_tokens(world.agent.id)
    wired.admin.revoke_token(first["id"])
    assert status_of(api, world.agent.token) == 401
    status, body = api.call("POST", "/kv/recall", world.agent, {"key": "k"})
    assert status == 401 and body["error"]["code"] == "unauthorized"  # never anonymous


def test_a_rotated_token_works_until_its_grace_period_ends(
    api: Api, wired: wiring.Services, world: World, clock: FixedClock
) -> None:
    (old,) = wired.admin.list_tokens(world.agent.id)
    start = clock.now()
    rotated = wired.admin.rotate_token(old["id"])  # the default grace: 24 hours
    new_token = rotated["token"]["token"]
    previous = rotated["previous"]
    assert previous["id"] == old["id"] and previous["rotatedTo"] == rotated["token"]["id"]
    assert previous["expiresAt"] == to_rfc3339(start + timedelta(hours=24))
    assert previous["status"] == "expiring"
    assert status_of(api, new_token) == 200
    clock.set(start + timedelta(hours=23, minutes=59))
    assert status_of(api, world.agent.token) == 200  # still in its grace period
    listed = {token["id"]: token for token in wired.admin.list_tokens(world.agent.id)}
    assert listed[old["id"]]["status"] == "expiring"
    clock.set(start + timedelta(hours=24))
    status, body = api.call("GET", "/memories", world.agent)
    assert status == 401 and "rotated" in body["error"]["message"]
    assert status_of(api, new_token) == 200
    listed = {token["id"]: token for token in wired.admin.list_tokens(world.agent.id)}
    assert listed[old["id"]]["status"] == "expired"
    assert listed[rotated["token"]["id"]]["status"] == "active"


def test_a_token_is_rotated_once_and_grace_is_bounded(
    api: Api, wired: wiring.Services, world: World
) -> None:
    (old,) = wired.admin.list_tokens(world.agent.id)
    for hours in (-1, 721):
        with pytest.raises(InvalidRequest):
            wired.admin.rotate_token(old["id"], hours)
    rotated = wired.admin.rotate_token(old["id"], 0)  # no grace: the old one stops now
    assert status_of(api, world.agent.token) == 401
    with pytest.raises(InvalidRequest, match="rotate its replacement"):
        wired.admin.rotate_token(old["id"])
    again = wired.admin.rotate_token(rotated["token"]["id"], 1)
    assert status_of(api, rotated["token"]["token"]) == 200  # in its own grace period
    assert status_of(api, again["token"]["token"]) == 200
    assert len(wired.admin.list_tokens(world.agent.id)) == 3


def test_last_used_is_written_at_most_once_an_hour(
    api: Api, wired: wiring.Services, world: World, clock: FixedClock, faults: Faults
) -> None:
    start = clock.now()
    for _ in range(5):
        assert status_of(api, world.agent.token) == 200
    assert token_writes(faults) == 1
    clock.set(start + timedelta(minutes=59))
    for _ in range(5):
        assert status_of(api, world.agent.token) == 200
    assert token_writes(faults) == 1
    clock.set(start + timedelta(hours=1, minutes=1))
    for _ in range(3):
        assert status_of(api, world.agent.token) == 200
    assert token_writes(faults) == 2
    (listed,) = wired.admin.list_tokens(world.agent.id)
    assert listed["lastUsedAt"] == to_rfc3339(start + timedelta(hours=1, minutes=1))


def test_a_throttled_last_used_write_does_not_fail_the_request(
    api: Api, world: World, faults: Faults
) -> None:
    faults.fail("ThrottlingException", operation="UpdateItem", mentioning="TOKEN#")
    assert status_of(api, world.agent.token) == 200


def legacy_token(dynamodb: Any, world: World, principal_id: str, kind: str) -> str:
    """A token item as stored before docs/issues.md#issue-12: the hash and the principal, nothing
    else."""
    token = "pwk_" + "L" * 43 + principal_id[-4:]
    digest = hashlib.sha256(token.encode()).hexdigest()
    dynamodb.put_item(
        TableName=TABLE,
        Item={
            "pk": {"S": f"TOKEN#{digest}"},
            "sk": {"S": "TOKEN"},
            "entity": {"S": "token"},
            "principalKind": {"S": kind},
            "principalId": {"S": principal_id},
            "workspaceId": {"S": world.workspace_id},
        },
    )
    return token


def test_tokens_stored_before_the_lifecycle_keep_working_and_are_listed(
    api: Api, wired: wiring.Services, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    token = legacy_token(dynamodb, world, world.other_agent.id, "agent")
    assert status_of(api, token) == 200
    listing = wired.admin.list_tokens(world.other_agent.id)
    legacy = next(entry for entry in listing if entry["prefix"] is None)
    assert legacy["id"].startswith("tok_") and legacy["status"] == "active"
    assert legacy["createdAt"] == to_rfc3339(clock.now())  # when its agent was created
    assert legacy["lastUsedAt"] == to_rfc3339(clock.now())
    # The id sticks: a second listing shows the same one, and it revokes the token.
    again = wired.admin.list_tokens(world.other_agent.id)
    assert legacy["id"] in {entry["id"] for entry in again}
    wired.admin.revoke_token(legacy["id"])
    assert status_of(api, token) == 401


def test_a_stored_token_of_a_person_can_be_rotated_after_listing(
    api: Api, wired: wiring.Services, world: World, dynamodb: Any
) -> None:
    token = legacy_token(dynamodb, world, world.person.id, "person")
    legacy = next(e for e in wired.admin.list_tokens(world.person.id) if e["prefix"] is None)
    rotated = wired.admin.rotate_token(legacy["id"], 2)
    assert status_of(api, token) == 200
    assert status_of(api, rotated["token"]["token"]) == 200
    assert rotated["token"]["principalKind"] == "person"
