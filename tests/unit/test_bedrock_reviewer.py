"""The Bedrock reviewer without AWS (docs/reference.md#9-review, docs/issues.md#issue-4-item-5b): a
real boto3
``bedrock-runtime`` client under botocore's Stubber, so every request and answer
is validated against the service model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from chalicelib.models.memory import Memory, MemoryStatus
from chalicelib.services.review.bedrock_reviewer import (
    TOOL_NAME,
    BedrockReviewer,
    converse_request,
    fact_batches,
)
from chalicelib.services.review.model_plan import tool_input_schema
from chalicelib.services.review.rule_reviewer import ReviewContext, RuleReviewer
from chalicelib.settings import DEFAULT_BEDROCK_MODEL_ID, Settings, SettingsError
from chalicelib.wiring import build_reviewer
from tests.helpers import NOW, fact

MODEL = "anthropic.claude-test-v1:0"
DAY = "2026-11-30"


def context(*facts: Memory, lines: tuple[str, ...] = ()) -> ReviewContext:
    newest_first = sorted(facts, key=lambda m: m.id, reverse=True)
    return ReviewContext("agt_1", DAY, NOW, newest_first, lines)


def answer(*actions: dict[str, Any], notes: tuple[str, ...] = ()) -> dict[str, Any]:
    """A Converse response whose one content block calls the review tool."""
    return tool_call({"actions": list(actions), "notes": list(notes)})


def tool_call(tool_input: Any, stop: str = "tool_use", name: str = TOOL_NAME) -> dict[str, Any]:
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "tu_1", "name": name, "input": tool_input}}],
            }
        },
        "stopReason": stop,
        "usage": {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120},
        "metrics": {"latencyMs": 900},
    }


EXPECTED = {
    "modelId": MODEL,
    "system": ANY,
    "messages": ANY,
    "toolConfig": {
        "tools": [
            {
                "toolSpec": {
                    "name": TOOL_NAME,
                    "description": ANY,
                    "inputSchema": {"json": tool_input_schema()},
                }
            }
        ],
        "toolChoice": {"tool": {"name": TOOL_NAME}},
    },
    "inferenceConfig": {"maxTokens": 4096, "temperature": 0.0},
}


@pytest.fixture
def bedrock() -> Iterator[tuple[Any, Stubber]]:
    """A real ``bedrock-runtime`` client (fake credentials) under a Stubber."""
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def reviewer(client: Any, **options: Any) -> BedrockReviewer:
    return BedrockReviewer(lambda: client, MODEL, **options)


def test_request_forces_the_one_review_tool_whose_schema_is_the_pydantic_plan(
    bedrock: tuple[Any, Stubber],
) -> None:
    client, stubber = bedrock
    stubber.add_response("converse", answer(), EXPECTED)
    proposal = reviewer(client).propose(context(fact(1, "CI runs on arm64")))
    assert proposal.actions == [] and proposal.notes == []
    schema = json.dumps(tool_input_schema())
    assert "$ref" not in schema and "$defs" not in schema
    kinds = {
        option["properties"]["action"]["const"]
        for option in tool_input_schema()["properties"]["actions"]["items"]["oneOf"]
    }
    assert kinds == {"merge", "renew", "replace", "archive", "lift", "resolve_conflict"}


def test_request_shows_live_facts_compactly_and_the_day_log() -> None:
    live = fact(
        2,
        "Staging uses db-2",
        run_id="run_9",
        evidence="psql: connected to db-2  " + "x" * 600,
        last_recalled_at=NOW - timedelta(days=1),
        version=7,
    )
    archived = fact(1, "Old", status=MemoryStatus.ARCHIVED, archive_reason="vetoed")
    review = context(live, archived, lines=("09:00 !fact CI runs on arm64",))
    (batch,) = fact_batches(review, 150, 40_000)
    request = converse_request(MODEL, review, batch, 1, 1)
    document = json.loads(request["messages"][0]["content"][0]["text"])
    (shown,) = document["facts"]
    assert shown["id"] == live.id and shown["runId"] == "run_9" and "version" not in shown
    assert shown["lastRecalledAt"] == "2026-11-30T04:00:00.000Z" and "expired" not in shown
    assert (
        shown["evidence"].startswith("psql: connected to db-2 x") and len(shown["evidence"]) == 300
    )
    assert document["dayLog"] == ["09:00 !fact CI runs on arm64"]
    assert document["now"] == "2026-12-01T04:00:00.000Z" and document["reviewedDate"] == DAY
    assert "submit_review_plan" in request["system"][0]["text"]
    assert (
        converse_request(MODEL, review, batch, 2, 2)["messages"][0]["content"][0]["text"].find(
            "arm64"
        )
        == -1
    )


def test_a_valid_plan_gets_its_versions_and_expiry_from_the_context(
    bedrock: tuple[Any, Stubber],
) -> None:
    client, stubber = bedrock
    keep = fact(3, "Deploys need the VPN on", version=4, recall_count=2)
    twin = fact(2, "deploys need the VPN on!", version=9)
    expired = fact(1, "Grafana is under ops/metrics", expires_at=NOW - timedelta(days=3))
    stubber.add_response(
        "converse",
        answer(
            {"action": "merge", "keepId": keep.id, "memoryIds": [twin.id], "reason": "same"},
            {"action": "renew", "memoryId": expired.id, "reason": "still used daily"},
            {"action": "lift", "text": "CI runs on arm64", "reason": "a durable decision"},
            notes=("looked fine",),
        ),
        EXPECTED,
    )
    lines = ("08:00 [PIN-4] !fact CI runs on arm64", "09:00 ran the tests")
    proposal = reviewer(client).propose(context(keep, twin, expired, lines=lines))
    merge, renew, lift = proposal.actions
    assert (merge.action, merge.keep_id, merge.memory_ids) == ("merge", keep.id, [twin.id])
    assert merge.expected_versions == {keep.id: 4, twin.id: 9}
    assert renew.expires_at == expired.expires_at + timedelta(days=90)
    assert renew.expected_versions == {expired.id: 1}
    assert (lift.text, lift.evidence, lift.supersedes) == ("CI runs on arm64", [lines[0]], None)
    assert proposal.notes == ["model: looked fine"]


def test_actions_on_unknown_foreign_archived_or_taken_memories_are_dropped(
    bedrock: tuple[Any, Stubber],
) -> None:
    client, stubber = bedrock
    live = fact(4, "The build cache lives in S3", expires_at=NOW - timedelta(days=1))
    other = fact(3, "The build cache lives in S3", agent_id="agt_2")
    gone = fact(2, "Old build cache", status=MemoryStatus.ARCHIVED, archive_reason="vetoed")
    second = fact(1, "The cache is warmed at boot")
    stubber.add_response(
        "converse",
        answer(
            {"action": "archive", "memoryId": "mem_01KMADEUPMADEUPMADEUPMADE", "reason": "x"},
            {"action": "archive", "memoryId": other.id, "reason": "x"},
            {"action": "merge", "keepId": live.id, "memoryIds": [gone.id], "reason": "x"},
            {"action": "merge", "keepId": second.id, "memoryIds": [second.id], "reason": "x"},
            {"action": "archive", "memoryId": live.id, "reason": "expired, unused"},
            {"action": "resolve_conflict", "keepId": second.id, "memoryId": live.id, "reason": "x"},
        ),
        EXPECTED,
    )
    proposal = reviewer(client).propose(context(live, other, gone, second))
    (archive,) = proposal.actions
    assert archive.memory_ids == [live.id] and archive.reason == "expired: expired, unused"
    unknown, foreign, archived, twice, taken = proposal.notes
    assert "dropped model action 1 (archive mem_01KMADEUP" in unknown
    assert "not one of the agent's facts" in unknown
    assert f"{other.id} is not one of the agent's facts" in foreign
    assert f"{gone.id} is not live (archived: vetoed)" in archived
    assert "names the same memory twice" in twice
    assert f"{live.id} is already part of another action" in taken


def test_lifts_must_be_copied_from_a_day_line_and_never_bring_back_a_vetoed_fact(
    bedrock: tuple[Any, Stubber],
) -> None:
    client, stubber = bedrock
    vetoed = fact(1, "The cache TTL is 300 seconds", status=MemoryStatus.ARCHIVED)
    vetoed = vetoed.model_copy(update={"archive_reason": "vetoed"})
    updated = fact(2, "Staging uses db-stg-1")
    lines = (
        "10:00 !fact the cache ttl is 300 seconds.",
        "10:05 [PIN-7] staging moved: Staging uses db-stg-2 since today",
    )
    stubber.add_response(
        "converse",
        answer(
            {"action": "lift", "text": "The cache TTL is 300 seconds", "reason": "x"},
            {"action": "lift", "text": "Prod uses db-prod-9", "reason": "made up"},
            {"action": "lift", "text": "10:05 [PIN-7] staging moved", "reason": "prefix"},
            {
                "action": "lift",
                "text": "Staging uses db-stg-2",
                "supersedes": updated.id,
                "reason": "the staging database moved",
            },
            {"action": "lift", "text": "staging uses DB-STG-2", "reason": "again"},
        ),
        EXPECTED,
    )
    proposal = reviewer(client).propose(context(vetoed, updated, lines=lines))
    (lift,) = proposal.actions
    # Another database is not "more of the same": the lift does not supersede the old
    # fact (docs/issues.md#issue-14: different details are an update a person decides).
    assert (lift.text, lift.supersedes, lift.memory_ids) == ("Staging uses db-stg-2", None, [])
    assert lift.expected_versions == {} and lift.evidence[0] == lines[1]
    veto, made_up, prefix, again, not_superseded = proposal.notes
    assert f"not lifted (a person vetoed: {vetoed.id})" in veto
    assert "not in the day log of 2026-11-30" in made_up and "not in the day log" in prefix
    assert "lifted by another action" in again
    assert f"does not supersede {updated.id}" in not_superseded
    assert "db-stg-2 ≠ db-stg-1" in not_superseded


def test_renew_replace_and_archive_need_expired_or_stale_facts(
    bedrock: tuple[Any, Stubber],
) -> None:
    client, stubber = bedrock
    fresh = fact(3, "Lunch is at noon", last_recalled_at=NOW - timedelta(days=2))
    old = fact(2, "The wiki moved to Notion", created_at=NOW - timedelta(days=60))
    newer = fact(1, "The wiki lives in Notion now")
    stubber.add_response(
        "converse",
        answer(
            {"action": "renew", "memoryId": fresh.id, "reason": "x"},
            {"action": "archive", "memoryId": fresh.id, "reason": "x"},
            {"action": "replace", "memoryId": old.id, "keepId": newer.id, "reason": "x"},
            {"action": "archive", "memoryId": old.id, "reason": "covered by the newer one"},
        ),
        EXPECTED,
    )
    proposal = reviewer(client).propose(context(fresh, old, newer))
    (archive,) = proposal.actions
    assert archive.memory_ids == [old.id] and archive.reason.startswith("stale: ")
    renew, archived, replace = proposal.notes
    assert "is not expired; only expired facts are renewed" in renew
    assert "neither expired nor stale" in archived
    assert "only expired facts are replaced" in replace


def test_malformed_actions_are_dropped_and_the_others_kept(
    bedrock: tuple[Any, Stubber],
) -> None:
    client, stubber = bedrock
    stale = fact(1, "Old fact", expires_at=NOW - timedelta(days=1))
    stubber.add_response(
        "converse",
        answer(
            {"action": "delete", "memoryId": stale.id, "reason": "x"},
            {"action": "archive", "memoryId": stale.id},
            {"action": "archive", "memoryId": stale.id, "reason": "x", "expectedVersions": {}},
            {"action": "merge", "keepId": stale.id, "memoryIds": stale.id, "reason": "x"},
            {"action": "archive", "memoryId": stale.id, "reason": "expired"},
        ),
        EXPECTED,
    )
    proposal = reviewer(client).propose(context(stale))
    (archive,) = proposal.actions
    assert archive.memory_ids == [stale.id]
    kind, missing, extra, wrong = proposal.notes
    assert kind.startswith("dropped model action 1 (delete): malformed:")
    assert "reason" in missing and "Field required" in missing
    assert "expectedVersions" in extra and "Extra inputs" in extra
    assert "memoryIds" in wrong


@pytest.mark.parametrize(
    "response",
    [
        tool_call({"plan": []}),
        tool_call(["not", "an", "object"]),
        tool_call({"actions": [], "notes": []}, stop="max_tokens"),
        tool_call({"actions": []}, name="some_other_tool"),
    ],
    ids=["not-a-plan", "not-an-object", "cut-at-max-tokens", "no-review-tool-call"],
)
def test_an_unusable_answer_falls_back_to_the_rule_reviewer(
    bedrock: tuple[Any, Stubber], response: dict[str, Any]
) -> None:
    client, stubber = bedrock
    stubber.add_response("converse", response, EXPECTED)
    review = context(fact(2, "Use pnpm, not npm"), fact(1, "use pnpm, not npm"))
    proposal = reviewer(client).propose(review)
    rules = RuleReviewer().propose(review)
    assert proposal.actions == rules.actions and [a.action for a in rules.actions] == ["merge"]
    assert proposal.notes[0].startswith(f"Bedrock ({MODEL}) could not review: ")
    assert proposal.notes[0].endswith("this plan is the rules-v2 reviewer's")


def test_throttling_falls_back_to_the_rule_reviewer(bedrock: tuple[Any, Stubber]) -> None:
    client, stubber = bedrock
    stubber.add_client_error(
        "converse",
        service_error_code="ThrottlingException",
        service_message="Too many requests, please wait before trying again.",
        http_status_code=429,
        expected_params=EXPECTED,
    )
    review = context(fact(1, "Old", expires_at=NOW - timedelta(days=1)))
    proposal = reviewer(client).propose(review)
    assert [a.action for a in proposal.actions] == ["archive"]
    assert proposal.notes == [
        f"Bedrock ({MODEL}) could not review: ThrottlingException: Too many requests, "
        "please wait before trying again.; this plan is the rules-v2 reviewer's"
    ]


def test_a_large_store_is_sent_in_capped_calls_expired_first(
    bedrock: tuple[Any, Stubber],
) -> None:
    client, stubber = bedrock
    facts = [fact(n, f"Fact number {n} about topic {n}") for n in range(1, 6)]
    facts[0] = fact(1, "Expired fact", expires_at=NOW - timedelta(days=1))
    for _ in range(2):
        stubber.add_response("converse", answer(), EXPECTED)
    review = context(*facts)
    proposal = reviewer(client, max_facts_per_call=2, max_calls=2).propose(review)
    assert proposal.notes == [
        "1 live facts were not shown to the model (at most 2 calls per review)"
    ]
    batches = fact_batches(review, 2, 40_000)
    assert [[shown["id"] for shown in batch] for batch in batches] == [
        [facts[0].id, facts[4].id],
        [facts[3].id, facts[2].id],
        [facts[1].id],
    ]
    assert [len(batch) for batch in fact_batches(review, 150, 1)] == [1, 1, 1, 1, 1]
    by_chars = fact_batches(review, 150, 400)
    assert len(by_chars) > 1 and sum(len(batch) for batch in by_chars) == 5
    assert all(sum(len(json.dumps(shown)) for shown in batch) <= 400 for batch in by_chars)


def test_no_call_starts_once_the_time_budget_is_spent(bedrock: tuple[Any, Stubber]) -> None:
    client, stubber = bedrock
    stubber.add_response("converse", answer(), EXPECTED)
    ticks = iter([0.0, 25.0])
    facts = [fact(n, f"Fact {n}") for n in range(1, 4)]
    proposal = reviewer(
        client, max_facts_per_call=1, time_budget_seconds=20, monotonic=lambda: next(ticks)
    ).propose(context(*facts))
    assert proposal.notes == [
        "2 live facts were not shown to the model (time budget of 20 s spent)"
    ]


def test_nothing_to_review_makes_no_call_and_builds_no_client() -> None:
    built: list[str] = []

    def factory() -> Any:
        built.append("client")
        raise AssertionError("no client should be built")

    archived = fact(1, "Old", status=MemoryStatus.ARCHIVED, archive_reason="expired")
    proposal = BedrockReviewer(factory, MODEL).propose(context(archived))
    assert (proposal.actions, proposal.notes, built) == ([], [], [])


def test_a_day_log_alone_is_still_reviewed_for_lifts(bedrock: tuple[Any, Stubber]) -> None:
    client, stubber = bedrock
    stubber.add_response(
        "converse", answer({"action": "lift", "text": "CI runs on arm64", "reason": "x"}), EXPECTED
    )
    proposal = reviewer(client).propose(context(lines=("08:00 CI runs on arm64 from now on",)))
    assert [(a.action, a.text) for a in proposal.actions] == [("lift", "CI runs on arm64")]


def test_the_setting_chooses_the_reviewer_and_builds_no_client_until_used() -> None:
    assert isinstance(build_reviewer(Settings.from_env({})), RuleReviewer)
    assert isinstance(
        build_reviewer(Settings.from_env({"PINEWORK_REVIEWER": "rules"})), RuleReviewer
    )
    chosen = build_reviewer(Settings.from_env({"PINEWORK_REVIEWER": "bedrock"}), bedrock=object())
    assert isinstance(chosen, BedrockReviewer)
    assert chosen.name == f"bedrock:{DEFAULT_BEDROCK_MODEL_ID}"
    named = Settings.from_env({"PINEWORK_REVIEWER": "bedrock", "PINEWORK_BEDROCK_MODEL_ID": MODEL})
    assert build_reviewer(named).name == f"bedrock:{MODEL}"
    with pytest.raises(SettingsError, match="PINEWORK_REVIEWER='llm': Input should be"):
        Settings.from_env({"PINEWORK_REVIEWER": "llm"})
