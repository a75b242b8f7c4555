"""Recall through the HTTP API (docs/reference.md#8-recall, docs/issues.md#issue-3): cut-off,
budgets, counters, fallback, the block, run-start skips, the recall log, and write requests."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.services.recall import deadline
from chalicelib.services.recall.relevance import Candidate
from chalicelib.settings import Settings
from tests.helpers import START, TABLE, Api, World, forget_embedding


class KeywordScorer:
    """Scores 0.9 for texts containing the query's first word, 0.1 otherwise."""

    def score(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[float]:
        word = query.split()[0].lower()
        return [0.9 if word in c.text.lower() else 0.1 for c in candidates]


class FailingScorer:
    def score(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[float]:
        raise RuntimeError("model unavailable")


class SlowScorer:
    """Works in 10 ms batches for up to 10 s, checking the recall's deadline between them
    (as the default scorer does between its stages and batches); records each batch, the
    thread it ran on, and whether it answered."""

    def __init__(self) -> None:
        self.batches = 0
        self.threads: set[str] = set()
        self.answered = threading.Event()

    def score(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[float]:
        self.threads.add(threading.current_thread().name)
        for _ in range(1000):
            deadline.check("slow batch")
            time.sleep(0.01)
            self.batches += 1
        self.answered.set()
        return [1.0] * len(candidates)


class TiedScorer:
    """Scores every fact containing the query's first word ``score``, others 0."""

    def __init__(self, score: float) -> None:
        self.value = score

    def score(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[float]:
        word = query.split()[0].lower()
        return [self.value if word in c.text.lower() else 0.0 for c in candidates]


class CharacterTokens:
    """One token per character: makes token budgets easy to reason about."""

    def count(self, text: str) -> int:
        return len(text)


@pytest.fixture
def rewire(dynamodb: Any, clock: FixedClock) -> Iterator[Any]:
    """Install services with a chosen scorer / token counter / time budget."""

    def install(budget_ms: int = 2000, **parts: Any) -> wiring.Services:
        built = wiring.build_services(
            Settings(table_name=TABLE, recall_time_budget_ms=budget_ms),
            clock=clock,
            client=dynamodb,
            **parts,
        )
        wiring.install(built)
        return built

    yield install
    wiring.install(None)


def save(api: Api, world: World, text: str) -> str:
    status, body = api.call("POST", "/memories", world.agent, {"text": text})
    assert status == 201, body
    return str(body["id"])


def recall(api: Api, world: World, query: str | None = None, **headers: str) -> dict[str, Any]:
    body = {} if query is None else {"query": query}
    status, result = api.call("POST", "/memories/recall", world.agent, body, headers=headers)
    assert status == 200, result
    return dict(result)


def test_recall_keeps_relevant_facts_best_first_and_counts_them(api: Api, world: World) -> None:
    vpn = save(api, world, "The staging deploy needs the VPN turned on")
    save(api, world, "Lunch is at noon on Fridays")
    save(api, world, "Prod deploys go through the bastion host")
    result = recall(api, world, "How do I deploy to staging with the VPN?")
    ids = [item["memory"]["id"] for item in result["memories"]]
    assert ids[0] == vpn  # the model ranks the matching fact first
    assert all(item["score"] >= 0.5 for item in result["memories"])
    assert [s["score"] for s in result["memories"]] == sorted(
        [s["score"] for s in result["memories"]], reverse=True
    )
    assert result["fallback"] is None and result["object"] == "recall"
    counted = api.call("GET", f"/memories/{vpn}", world.agent)[1]
    assert counted["recallCount"] == 1 and counted["lastRecalledAt"] == "2026-11-30T12:00:00.000Z"
    listing = {
        m["id"]: m["recallCount"] for m in api.call("GET", "/memories", world.agent)[1]["data"]
    }
    assert sum(listing.values()) == len(ids)  # exactly the returned memories


def test_query_defaults_to_the_task(api: Api, world: World, rewire: Any) -> None:
    rewire(scorer=KeywordScorer())
    wanted = save(api, world, "PIN-42 needs a migration first")
    save(api, world, "unrelated")
    result = recall(api, world, **{"X-Pinework-Task": "PIN-42"})
    assert [m["memory"]["id"] for m in result["memories"]] == [wanted]
    status, body = api.call("POST", "/memories/recall", world.agent, {})
    assert (status, body["error"]["code"]) == (400, "invalid_request")
    status, body = api.call("POST", "/memories/recall", world.agent, {"query": "q" * 4001})
    assert (status, body["error"]["code"]) == (400, "invalid_request")
    assert recall(api, world, "q" * 4000)["memories"] == []


def test_nothing_relevant_is_empty_not_a_fallback(api: Api, world: World, rewire: Any) -> None:
    rewire(scorer=KeywordScorer())
    save(api, world, "The staging deploy needs the VPN")
    result = recall(api, world, "favourite colour of the office cat")
    assert result["memories"] == [] and result["fallback"] is None
    assert result["block"].startswith("--- MEMORY ---")


def test_expired_and_archived_facts_are_never_recalled(
    api: Api, world: World, clock: FixedClock, rewire: Any
) -> None:
    rewire(scorer=KeywordScorer())
    expiring = api.call(
        "POST", "/memories", world.agent, {"text": "deploy soon", "expiresAt": "2026-12-01"}
    )[1]["id"]
    archived = save(api, world, "deploy old")
    api.call("POST", f"/memories/{archived}/archive", world.agent, {"reason": "wrong"})
    live = save(api, world, "deploy now")
    assert {m["memory"]["id"] for m in recall(api, world, "deploy")["memories"]} == {
        expiring,
        live,
    }
    clock.set(START + timedelta(days=2))
    assert [m["memory"]["id"] for m in recall(api, world, "deploy")["memories"]] == [live]


@pytest.mark.parametrize("scorer", [FailingScorer(), SlowScorer()])
def test_scorer_failure_or_timeout_falls_back_to_newest(
    api: Api, world: World, clock: FixedClock, rewire: Any, scorer: Any
) -> None:
    rewire(budget_ms=100, scorer=scorer)
    first = save(api, world, "older fact")
    clock.set(START + timedelta(seconds=1))
    second = save(api, world, "newer fact")
    started = time.monotonic()
    result = recall(api, world, "anything")
    if isinstance(scorer, SlowScorer):
        # The scorer ran on the request's thread and stopped at its deadline: no batch
        # runs after the answer, and no scorer thread is left.
        assert time.monotonic() - started < 5
        done = scorer.batches
        time.sleep(0.1)
        assert scorer.batches == done < 1000 and not scorer.answered.is_set()
        assert scorer.threads == {threading.current_thread().name}
        assert not [t for t in threading.enumerate() if t.name.startswith("recall-scorer")]
    assert result["fallback"] == "newest"
    assert [m["memory"]["id"] for m in result["memories"]] == [second, first]
    assert all(m["score"] is None for m in result["memories"])


def save_deploy_facts(rewire: Any, world: World, clock: FixedClock, count: int) -> Any:
    """Save ``deploy 0`` … ``deploy {count-1}`` a millisecond apart through a service
    rewired with ``KeywordScorer`` (every one matches ``deploy``); return the services."""
    from chalicelib.models.requests import SaveFactRequest
    from chalicelib.services.run_context import RunContext

    built = rewire(scorer=KeywordScorer())
    agent = built.auth.authenticate(f"Bearer {world.agent.token}")
    for number in range(count):
        clock.set(START + timedelta(milliseconds=number))
        built.memories.save(agent, SaveFactRequest(text=f"deploy {number}"), RunContext())
    return built


def test_budgets_cap_count_and_tokens_whole_memories_best_first(
    api: Api, world: World, rewire: Any, dynamodb: Any, clock: FixedClock
) -> None:
    # 320 small facts (about 20 real tokens a line) and a failing scorer: the newest
    # facts, unscored, under the 300 cap.
    built = save_deploy_facts(rewire, world, clock, 320)
    rewire(scorer=FailingScorer(), tokens=built.recall._tokens)
    result = recall(api, world, "deploy")
    assert result["fallback"] == "newest" and len(result["memories"]) == 300
    assert result["memories"][0]["memory"]["text"] == "deploy 319"  # newest first


@pytest.mark.parametrize("score", [0.9, 0.5, 0.49996])
def test_at_most_40_scored_facts_ties_included(
    api: Api, world: World, rewire: Any, clock: FixedClock, score: float
) -> None:
    # 60 facts the scorer ties: at most 40 come back, the newest of the tie first; a
    # score just below the cut is never rounded up into it.
    save_deploy_facts(rewire, world, clock, 60)
    rewire(scorer=TiedScorer(score))
    result = recall(api, world, "deploy")
    texts = [m["memory"]["text"] for m in result["memories"]]
    if score < 0.5:
        assert texts == []
        return
    assert texts == [f"deploy {number}" for number in range(59, 19, -1)]
    assert {m["score"] for m in result["memories"]} == {score}
    assert result["fallback"] is None


def test_token_budget_skips_a_too_big_memory_and_keeps_smaller_ones(
    api: Api, world: World, rewire: Any, clock: FixedClock
) -> None:
    rewire(scorer=KeywordScorer(), tokens=CharacterTokens())
    # Each block line is "mem_<26> (YYYY-MM-DD) " (43 chars) + text.
    ids = []
    for number, size in enumerate([480] * 24 + [490, 100]):
        clock.set(START + timedelta(seconds=100 - number))  # first saved is newest-first last
        ids.append(save(api, world, "deploy" + "x" * (size - 6)))
    result = recall(api, world, "deploy")
    kept = [m["memory"]["id"] for m in result["memories"]]
    # 24 lines of 523 = 12,552 > 12,000: 22 fit (11,506); the 533-char one does not fit
    # in the 494 left, the 143-char one does.
    assert len(kept) == 23 and kept[-1] == ids[-1] and ids[-2] not in kept
    total = sum(43 + len(m["memory"]["text"]) for m in result["memories"])
    assert total <= 12_000


def test_block_lists_memories_then_the_day_log_newest_first(
    api: Api, world: World, clock: FixedClock
) -> None:
    clock.set(START - timedelta(days=1))
    api.call("POST", "/memories/day", world.agent, {"line": "yesterday's work"})
    clock.set(START - timedelta(days=2))
    api.call("POST", "/memories/day", world.agent, {"line": "too old"})
    clock.set(START)
    api.call("POST", "/memories/day", world.agent, {"line": "first today"})
    clock.set(START + timedelta(minutes=1))
    api.call("POST", "/memories/day", world.agent, {"line": "second today"})
    fact = save(api, world, "The staging deploy needs the VPN")
    block = recall(api, world, "staging deploy VPN")["block"].split("\n")
    assert block[0] == "--- MEMORY ---"
    assert block[1] == f"{fact} (2026-11-30) The staging deploy needs the VPN"
    assert block[2].startswith("--- DAY LOG")
    assert block[3:6] == [
        "2026-11-30 12:01 second today",
        "2026-11-30 12:00 first today",
        "2026-11-29 12:00 yesterday's work",
    ]
    assert block[-1] == "--- END MEMORY ---" and "too old" not in "\n".join(block)


def test_day_log_in_the_block_is_trimmed_oldest_first(
    api: Api, world: World, clock: FixedClock, rewire: Any
) -> None:
    rewire(tokens=CharacterTokens())
    for minute in range(30):
        clock.set(START + timedelta(minutes=minute))
        api.call("POST", "/memories/day", world.agent, {"line": f"{minute:02d} " + "w" * 90})
    block = recall(api, world, "anything")["block"].split("\n")
    day_lines = block[block.index(next(b for b in block if b.startswith("--- DAY"))) + 1 : -1]
    assert sum(len(line) for line in day_lines) <= 2000
    assert day_lines[0].startswith("2026-11-30 12:29 29")
    minutes = [int(line.split()[2]) for line in day_lines]
    assert minutes == sorted(minutes, reverse=True) and minutes[-1] > 0  # oldest dropped


def start(api: Api, world: World, **body: Any) -> dict[str, Any]:
    status, result = api.call("POST", "/memories/recall/start", world.agent, body)
    assert status == 200, result
    return dict(result)


def test_run_start_recall_and_its_skips(api: Api, world: World, clock: FixedClock) -> None:
    fact = save(api, world, "The staging deploy needs the VPN")
    first = start(api, world, sessionId="s1", resumed=False, task="staging deploy VPN")
    assert first["skipped"] is False and first["object"] == "recall_start"
    assert first["block"].startswith("--- MEMORY ---") and fact in first["block"]
    slash = start(api, world, sessionId="s1", resumed=True, slashCommand="/help")
    assert (slash["skipped"], slash["reason"], slash["block"]) == (True, "slash_command", None)
    resumed = start(api, world, sessionId="s1", resumed=True, message="staging VPN")
    assert (resumed["skipped"], resumed["reason"]) == (True, "resumed_session_recalled")
    assert api.call("GET", f"/memories/{fact}", world.agent)[1]["recallCount"] == 1
    fresh = start(api, world, sessionId="s1", resumed=False, task="staging VPN")
    assert fresh["skipped"] is False  # not resumed: always recalls
    clock.set(START + timedelta(hours=24, seconds=1))
    later = start(api, world, sessionId="s1", resumed=True, message="staging VPN deploy")
    assert later["skipped"] is False


def test_on_demand_recall_leaves_the_session_state_alone(api: Api, world: World) -> None:
    save(api, world, "The staging deploy needs the VPN")
    recall(api, world, "staging VPN", **{"X-Pinework-Session": "s2"})
    resumed = start(api, world, sessionId="s2", resumed=True, task="staging VPN")
    assert resumed["skipped"] is False


def test_run_start_needs_something_to_score_against(api: Api, world: World) -> None:
    for body in (
        {"sessionId": "s", "resumed": True},
        {"sessionId": "s", "resumed": True, "task": "  ", "message": ""},
    ):
        status, result = api.call("POST", "/memories/recall/start", world.agent, body)
        assert (status, result["error"]["code"]) == (400, "invalid_request")
    # Nothing was recorded: the session can still have its run-start recall.
    assert start(api, world, sessionId="s", resumed=True, task="deploy")["skipped"] is False
    blank_task = start(
        api, world, sessionId="t", resumed=False, task="   ", message="deploy staging"
    )
    assert blank_task["query"] == "deploy staging"


def test_invisible_text_is_blank_for_queries_and_slash_commands(api: Api, world: World) -> None:
    """Text of only controls, format marks and spaces has no content (``has_content``):
    an on-demand query of it is refused like a blank one, and such a ``slashCommand``
    is no command (the recall runs)."""
    save(api, world, "The staging deploy needs the VPN")
    for query in ("\u0000\u0001", "\u202e" * 4000, " \u200b\u2060 ", "\u3164\u115f\u034f"):
        status, body = api.call("POST", "/memories/recall", world.agent, {"query": query})
        assert (status, body["error"]["code"]) == (400, "invalid_request"), query
    # With the run's task header, a blank query is no query: the task is recalled for.
    status, body = api.call(
        "POST",
        "/memories/recall",
        world.agent,
        {"query": "\u200b"},
        headers={"X-Pinework-Task": "staging deploy"},
    )
    assert status == 200 and body["query"] == "staging deploy" and len(body["memories"]) == 1
    not_a_command = start(
        api, world, sessionId="z", resumed=False, task="staging deploy", slashCommand="\u200b"
    )
    assert not_a_command["skipped"] is False and len(not_a_command["memories"]) == 1
    status, log = api.call("GET", "/recalls", world.agent)
    assert [entry["kind"] for entry in log["data"]] == ["start", "on_demand"]


def test_run_start_needs_an_agent_and_a_session(api: Api, world: World) -> None:
    status, body = api.call(
        "POST", "/memories/recall/start", world.person, {"sessionId": "s", "resumed": False}
    )
    assert (status, body["error"]["code"]) == (403, "forbidden")
    status, body = api.call("POST", "/memories/recall/start", world.agent, {"resumed": True})
    assert (status, body["error"]["code"]) == (400, "invalid_request")
    status, body = api.call(
        "POST", "/memories/recall/start", world.agent, {"sessionId": "s", "resumed": "yes"}
    )
    assert (status, body["error"]["code"]) == (400, "invalid_request")
    status, body = api.call(
        "POST",
        "/memories/recall/start",
        world.agent,
        {"resumed": False, "task": "deploy"},
        headers={"X-Pinework-Session": "from-header"},
    )
    assert status == 200 and body["skipped"] is False


def test_run_start_checks_every_field_before_anything_happens(api: Api, world: World) -> None:
    save(api, world, "The staging deploy needs the VPN")
    long_text = "x" * 4001
    refused = [
        # resumed is required (docs/reference.md#7-http-api)
        ({"sessionId": "s", "task": "deploy"}, {}),
        ({"sessionId": "s", "resumed": None, "task": "deploy"}, {}),
        ({"sessionId": "s\u0000", "resumed": False, "task": "deploy"}, {}),
        ({"sessionId": "s\u00e9", "resumed": False, "task": "deploy"}, {}),
        ({"sessionId": "s" * 129, "resumed": False, "task": "deploy"}, {}),
        ({"sessionId": "a", "resumed": False, "task": "deploy"}, {"X-Pinework-Session": "b"}),
        ({"sessionId": "s", "resumed": False, "task": "deploy", "message": long_text}, {}),
        ({"sessionId": "s", "resumed": False, "slashCommand": long_text}, {}),
        # Not trimmed into another session (fresh-user finding: these became "x").
        ({"sessionId": "\u00a0x\u3000", "resumed": False, "task": "deploy"}, {}),
        ({"sessionId": "\tx\n", "resumed": False, "task": "deploy"}, {}),
        ({"sessionId": " " * 10 + "z" * 128, "resumed": False, "task": "deploy"}, {}),
        ({"sessionId": "   ", "resumed": False, "task": "deploy"}, {}),
        ({"sessionId": "", "resumed": False, "task": "deploy"}, {"X-Pinework-Session": "h"}),
        # A task with nothing to read is blank (fresh-user finding: it was scored).
        ({"sessionId": "s", "resumed": False, "task": "\u0000\u0001"}, {}),
        ({"sessionId": "s", "resumed": False, "message": "\u202e" * 40}, {}),
    ]
    for body, headers in refused:
        status, result = api.call(
            "POST", "/memories/recall/start", world.agent, body, headers=headers
        )
        assert (status, result["error"]["code"]) == (400, "invalid_request"), body
    # Nothing was counted or logged, and the same session in both places is fine.
    status, log = api.call("GET", "/recalls", world.agent)
    assert status == 200 and log["data"] == []
    status, body = api.call(
        "POST",
        "/memories/recall/start",
        world.agent,
        {"sessionId": "a", "resumed": False, "task": "staging deploy"},
        headers={"X-Pinework-Session": "a"},
    )
    assert status == 200 and len(body["memories"]) == 1


def test_a_person_is_refused_run_start_before_the_body_is_read(api: Api, world: World) -> None:
    status, body = api.call(
        "POST", "/memories/recall/start", world.person, {"agentId": world.agent.id}
    )
    assert (status, body["error"]["code"]) == (403, "forbidden")
    status, body = api.call("POST", "/memories/recall", world.person, {"agentId": world.agent.id})
    assert (status, body["error"]["code"]) == (400, "invalid_request")
    assert "X-Pinework-Task" not in body["error"]["message"]


def test_recall_log_shows_what_went_where(api: Api, world: World) -> None:
    fact = save(api, world, "The staging deploy needs the VPN")
    api.call(
        "POST",
        "/memories/recall/start",
        world.agent,
        {"sessionId": "s9", "resumed": False, "task": "staging VPN"},
        headers={"X-Pinework-Run": "run_7", "X-Pinework-Task": "PIN-7"},
    )
    status, body = api.call("GET", f"/recalls?agentId={world.agent.id}", world.person)
    assert status == 200
    (entry,) = body["data"]
    assert entry["object"] == "recall_log" and entry["kind"] == "start"
    assert (entry["sessionId"], entry["runId"], entry["taskKey"]) == ("s9", "run_7", "PIN-7")
    assert [m["memoryId"] for m in entry["memories"]] == [fact]
    assert entry["memories"][0]["score"] >= 0.5
    assert api.call("GET", "/recalls", world.agent)[1]["data"][0]["id"] == entry["id"]
    status, body = api.call("GET", f"/recalls?agentId={world.agent.id}", world.other_agent)
    assert (status, body["error"]["code"]) == (403, "memory_not_own")
    status, body = api.call("GET", "/recalls", world.person)
    assert (status, body["error"]["code"]) == (400, "memory_agent_required")


def test_a_recall_writes_one_transaction_and_one_update_per_counter_page(
    api: Api, world: World, rewire: Any, dynamodb: Any, clock: FixedClock
) -> None:
    """The log entry and the session claim in one transaction, then each counter page
    the returned memories fall on once, outside it (docs/reference.md#counting,
    docs/DECISIONS.md#recall-counters-off-the-transaction-issue-23-item-2)."""
    from chalicelib.storage.keys import recall_counter_page

    built = save_deploy_facts(rewire, world, clock, 320)
    # The saves left 320 loose index entries: reads pack them first (compactions are
    # their own transactions, docs/issues.md#issue-23-item-1), then a recall writes as below.
    for _ in range(3):
        built.recall._index.entries(world.agent.id, clock.now())
    # The workspace's learnings are filed by state once, on their first read, in a
    # transaction of its own (docs/reference.md#learning-states); a preview does it first.
    api.call("POST", "/memories/recall", world.agent, {"query": "deploy", "count": False})
    calls: list[str] = []

    def count(event_name: str, **_: Any) -> None:
        calls.append(event_name.rsplit(".", 1)[-1])

    dynamodb.meta.events.register("before-call.dynamodb", count)
    try:
        result = start(api, world, sessionId="w", resumed=True, task="deploy")
    finally:
        dynamodb.meta.events.unregister("before-call.dynamodb", count)
    writes = Counter(
        c
        for c in calls
        if c in {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}
    )
    # At most 40 scored facts (docs/reference.md#scoring), every one counted.
    assert len(result["memories"]) == 40
    pages = {recall_counter_page(item["memory"]["id"]) for item in result["memories"]}
    assert writes == {"TransactWriteItems": 1, "UpdateItem": len(pages)}, " ".join(calls)
    returned = {item["memory"]["id"] for item in result["memories"]}
    listed = api.call("GET", "/memories?limit=100", world.agent)[1]["data"]
    assert {m["recallCount"] for m in listed if m["id"] in returned} == {1}
    assert {m["recallCount"] for m in listed if m["id"] not in returned} <= {0}
    clock.set(START + timedelta(hours=1))
    second = api.call("POST", "/memories/recall", world.agent, {"query": "deploy"})[1]
    # The answer shows the counts including this recall: read before it counted them.
    shown = {item["memory"]["id"]: item["memory"]["recallCount"] for item in second["memories"]}
    assert {count for memory_id, count in shown.items() if memory_id in returned} == {2}
    assert {count for memory_id, count in shown.items() if memory_id not in returned} <= {1}
    again = api.call("GET", f"/memories/{next(iter(returned))}", world.agent)[1]
    assert again["recallCount"] == 2
    assert again["lastRecalledAt"] == "2026-11-30T13:00:00.000Z"


def test_counts_written_on_memory_items_by_earlier_versions_still_count(
    api: Api, world: World, dynamodb: Any
) -> None:
    from chalicelib.storage.keys import memory_key

    fact = save(api, world, "The staging deploy needs the VPN")
    dynamodb.update_item(
        TableName=TABLE,
        Key={k: {"S": v} for k, v in memory_key(fact).items()},
        UpdateExpression="SET recallCount = :n, lastRecalledAt = :t",
        ExpressionAttributeValues={":n": {"N": "5"}, ":t": {"S": "2020-01-01T00:00:00.000Z"}},
    )
    assert api.call("GET", f"/memories/{fact}", world.agent)[1]["recallCount"] == 5
    recalled = api.call("POST", "/memories/recall", world.agent, {"query": "staging deploy VPN"})
    assert [item["memory"]["id"] for item in recalled[1]["memories"]] == [fact]
    shown = api.call("GET", f"/memories/{fact}", world.agent)[1]
    assert shown["recallCount"] == 6 and shown["lastRecalledAt"] > "2020-01-01T00:00:00.000Z"


def test_facts_are_embedded_at_save_and_edit_and_old_ones_lazily(
    api: Api, world: World, wired: wiring.Services, dynamodb: Any
) -> None:
    from chalicelib.services.recall.embedding import SENTENCE_BYTES, TOKEN_BYTES
    from chalicelib.storage.keys import memory_key

    def stored_embedding(memory_id: str) -> bytes | None:
        item = dynamodb.get_item(
            TableName=TABLE, Key={k: {"S": v} for k, v in memory_key(memory_id).items()}
        )["Item"]
        return item["embedding"]["B"] if "embedding" in item else None

    fact = save(api, world, "The staging deploy needs the VPN")
    first = stored_embedding(fact)
    assert first is not None and (len(first) - SENTENCE_BYTES - 1) % TOKEN_BYTES == 0
    api.call("PATCH", f"/memories/{fact}", world.person, {"text": "Lunch is at noon"})
    assert stored_embedding(fact) not in (None, first)
    day = api.call("POST", "/memories/day", world.agent, {"line": "worked"})[1]
    assert stored_embedding(day["id"]) is None  # day rows are not scored
    # A fact stored before embeddings existed is embedded on the fly at recall.
    legacy = save(api, world, "Prod deploys need two approvals")
    forget_embedding(dynamodb, legacy)
    result = recall(api, world, "How many approvals does a prod deploy need?")
    assert result["memories"][0]["memory"]["id"] == legacy


class _CountingScorer:
    """A scorer that counts its calls, raising when told to."""

    def __init__(self, fails: bool = False) -> None:
        self.calls = 0
        self.fails = fails

    def score(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[float]:
        self.calls += 1
        if self.fails:
            raise RuntimeError("weights missing")
        return [1.0] * len(candidates)


@pytest.mark.parametrize("fails", [False, True], ids=["loads", "fails quietly"])
def test_warm_up_runs_the_scorer_once_and_stores_nothing(
    dynamodb: Any, clock: FixedClock, fails: bool
) -> None:
    scorer = _CountingScorer(fails)
    services = wiring.build_services(
        Settings(table_name=TABLE), clock=clock, client=dynamodb, scorer=scorer
    )
    before = dynamodb.scan(TableName=TABLE)["Count"]
    services.recall.warm_up()
    assert scorer.calls == 1
    assert dynamodb.scan(TableName=TABLE)["Count"] == before


def test_a_preview_answers_as_a_recall_and_counts_and_logs_nothing(api: Api, world: World) -> None:
    vpn = save(api, world, "The staging deploy needs the VPN turned on")
    save(api, world, "Lunch is at noon on Fridays")
    query = "How do I deploy to staging with the VPN?"
    status, preview = api.call(
        "POST", "/memories/recall", world.agent, {"query": query, "count": False}
    )
    assert status == 200, preview
    assert preview["recallId"] is None and preview["memories"][0]["memory"]["id"] == vpn
    assert preview["memories"][0]["memory"]["recallCount"] == 0
    assert vpn in preview["block"]
    assert api.call("GET", f"/memories/{vpn}", world.agent)[1]["recallCount"] == 0
    assert api.call("GET", "/recalls", world.agent)[1]["data"] == []
    status, refused = api.call(
        "POST", "/memories/recall", world.agent, {"query": query, "count": "no"}
    )
    assert (status, refused["error"]["code"]) == (400, "invalid_request")
    counted = recall(api, world, query)  # the same query, counted
    assert [m["memory"]["id"] for m in counted["memories"]] == [
        m["memory"]["id"] for m in preview["memories"]
    ]
    assert api.call("GET", f"/memories/{vpn}", world.agent)[1]["recallCount"] == 1


def test_a_query_of_ticket_keys_finds_the_facts_that_name_them(api: Api, world: World) -> None:
    vpn = save(api, world, "The staging deploy needs the VPN on (source: PIN-812)")
    uploader = save(api, world, "The uploader retries 5 times with backoff (PIN-42)")
    save(api, world, "Lunch is at noon on Fridays")
    assert recall(api, world, "PIN-999")["memories"] == []  # another ticket: nothing
    found = recall(api, world, "pin-42")
    assert [item["memory"]["id"] for item in found["memories"]] == [uploader]
    by_task = recall(api, world, None, **{"X-Pinework-Task": "PIN-812"})  # the default query
    assert [item["memory"]["id"] for item in by_task["memories"]] == [vpn]
    worded = recall(api, world, "How do I deploy to staging with the VPN?")
    assert worded["memories"][0]["memory"]["id"] == vpn
