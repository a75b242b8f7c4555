"""Review scale (docs/issues.md#issue-4, docs/reference.md#9-review): the time and the DynamoDB
requests of one agent's daily review with 1,000 and 10,000 facts, on the embedded DynamoDB.

Each size gets its own table. The facts are loaded with BatchWriteItem (items
built by the storage's own conversion, ``memory_to_item``) so the setup does
not dominate, and they are shaped so the plan is not empty:

* 2 % are near-copies of another fact (case and punctuation): ``merge``;
* 2 % have expired, half of them recalled 10 days ago: ``renew`` / ``archive``;
* 1 % are pairs that contradict each other, one with supporting ``evidence``:
  ``resolve_conflict``;
* yesterday's day log holds 5 durable lines (``!fact …``): ``lift``;
* the rest are distinct facts (random words), 40 days old, some recalled.

For each size it prints the dry run (plan only), the real review (plan, apply,
report to S3) and a second review (which must apply nothing): seconds (and of
those, the reviewer's judgement alone), DynamoDB requests by operation (a
botocore ``before-call`` hook), and actions. The rest of the time is the
embedded DynamoDB (moto), whose Query reads the whole table on every page.

With ``--workspace-agents 1 1000`` it measures instead one agent's review (100 facts,
dry run, as a nightly review's plan) in a workspace of 1 and of 1,000 agents, both in
one table (each other agent 20 facts of its own; with more than one agent, 5 of them
hold a copy of one of the reviewed agent's facts each): the look for facts other agents
hold reads the shared-facts index (docs/issues.md#issue-41-item-3), so the review's
DynamoDB requests must not grow with the workspace (target: time within 1.2x).

Usage: ``.venv/bin/python bench/review_scale.py [--sizes 1000 10000]``
``[--workspace-agents 1 1000]``
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import boto3

from chalicelib import wiring
from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.review import ReviewReport
from chalicelib.models.review_requests import RunReviewRequest
from chalicelib.services.review.rule_reviewer import Proposal, ReviewContext, RuleReviewer
from chalicelib.services.run_context import RunContext
from chalicelib.settings import Settings
from chalicelib.storage.dynamodb import to_attributes
from chalicelib.storage.keys import same_facts_marker_key
from chalicelib.storage.same_facts import same_fact_entry
from infra.local_dynamodb import embedded_for_bench, memory_items, put_items
from infra.tables import create_table

NOW = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)
"""The review's time: 04:00 UTC, so it reviews 2026-11-30."""
BUCKET = "pinework-bench"
T = TypeVar("T")


class TimedReviewer:
    """``RuleReviewer`` that adds the seconds each ``propose`` takes to ``seconds``."""

    name = RuleReviewer.name

    def __init__(self) -> None:
        self._inner = RuleReviewer()
        self.seconds = 0.0

    def propose(self, context: ReviewContext) -> Proposal:
        """Delegate and time."""
        started = time.perf_counter()
        try:
            return self._inner.propose(context)
        finally:
            self.seconds += time.perf_counter() - started


def vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    """Distinct pseudo-words (consonant-vowel syllables), so random facts rarely overlap."""
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(3)))
    return sorted(words)


def facts_for(agent: Principal, count: int, rng: random.Random) -> list[Memory]:
    """``count`` facts of the agent shaped as the module docstring says."""
    ids = IdFactory(FixedClock(NOW - timedelta(days=40)))
    words = vocabulary(rng)
    facts: list[Memory] = []

    def add(text: str, **changes: Any) -> Memory:
        created = changes.pop("created_at", NOW - timedelta(days=40))
        fact = Memory(
            id=ids.new("mem"),
            workspace_id=agent.workspace_id,
            agent_id=agent.id,
            kind=MemoryKind.FACT,
            text=text,
            expires_at=changes.pop("expires_at", NOW + timedelta(days=50)),
            created_at=created,
            updated_at=created,
            **changes,
        )
        facts.append(fact)
        return fact

    duplicates, expired, conflicts = count // 50, count // 50, count // 200
    plain = count - duplicates - expired - 2 * conflicts
    for number in range(plain):
        recalled = number % 3 == 0
        add(
            " ".join(rng.sample(words, 7)).capitalize(),
            recall_count=3 if recalled else 0,
            last_recalled_at=NOW - timedelta(days=5) if recalled else None,
        )
    for original in rng.sample(facts[:plain], duplicates):
        add(original.text.upper() + ".", created_at=NOW - timedelta(days=3))
    for number in range(expired):
        add(
            " ".join(rng.sample(words, 7)).capitalize(),
            expires_at=NOW - timedelta(days=2),
            last_recalled_at=NOW - timedelta(days=10) if number % 2 == 0 else None,
        )
    for _ in range(conflicts):
        subject = " ".join(rng.sample(words, 4))
        add(f"The {subject} is enabled", evidence=f"$ status {subject}\n{subject}: enabled")
        add(f"The {subject} is not enabled", created_at=NOW - timedelta(days=1))
    return facts


def load(client: Any, table: str, facts: list[Memory]) -> None:
    """Write the facts with BatchWriteItem, 25 a call, retrying unprocessed items."""
    put_items(client, table, memory_items(facts))


def measured(requests: Counter[str], call: Callable[[], T]) -> tuple[T, float, dict[str, int]]:
    """Run ``call`` once; return its result, seconds and the DynamoDB requests it made."""
    requests.clear()
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started, dict(requests)


def actions_of(report: ReviewReport) -> str:
    """``merge=20 renew=10 …`` of a plan."""
    kinds = Counter(action.action for action in report.plan.actions)
    return " ".join(f"{kind}={n}" for kind, n in sorted(kinds.items())) or "none"


def run_size(client: Any, s3: Any, requests: Counter[str], size: int) -> None:
    """Load one table with ``size`` facts and print the three reviews' figures."""
    table = f"review-{size}"
    create_table(client, table)
    clock = FixedClock(NOW - timedelta(days=1))
    reviewer = TimedReviewer()
    services = wiring.build_services(
        Settings(table_name=table, bucket_name=BUCKET),
        clock=clock,
        client=client,
        s3=s3,
        reviewer=reviewer,
    )
    workspace = services.admin.create_workspace("bench")
    issued = services.admin.create_agent(workspace.id, "bench")
    person = services.admin.create_person(workspace.id, "ops@example.com")
    agent = Principal(kind=PrincipalKind.AGENT, id=issued.id, workspace_id=workspace.id)
    operator = Principal(kind=PrincipalKind.PERSON, id=person.id, workspace_id=workspace.id)
    for number in range(5):
        line = f"!fact The bench release train number {number} leaves on Thursdays"
        services.day_log.append_day_line(agent, line, RunContext(task_key="BENCH-1"))
    clock.set(NOW)
    load(client, table, facts_for(agent, size, random.Random(size)))

    def run(dry_run: bool) -> ReviewReport:
        request = RunReviewRequest.model_validate({"agentId": agent.id, "dryRun": dry_run})
        return services.reviews.run_now(operator, request)

    for label, dry_run in (("dry run", True), ("review", False), ("rerun", False)):
        reviewer.seconds = 0.0
        report, seconds, calls = measured(requests, lambda d=dry_run: run(d))
        print(
            f"{size:>6}  {label:<8} {seconds:8.2f}  {reviewer.seconds:8.2f}  "
            f"{sum(calls.values()):>6}  "
            f"{len(report.plan.actions):>5}  {len(report.applied):>5}  {len(report.skipped):>4}  "
            f"{actions_of(report)}  {calls}",
            flush=True,
        )


def run_workspaces(client: Any, s3: Any, requests: Counter[str], sizes: list[int]) -> None:
    """One agent's dry-run review in workspaces of each of ``sizes`` agents, all in one
    table (so the embedded server's index queries, which read the whole table, cost the
    same for each); prints seconds (best of 3) and the DynamoDB requests of one run."""
    table = "review-workspaces"
    create_table(client, table)
    services = wiring.build_services(
        Settings(table_name=table, bucket_name=BUCKET),
        clock=FixedClock(NOW),
        client=client,
        s3=s3,
    )
    ids = IdFactory(FixedClock(NOW))
    reviewed: dict[int, tuple[Principal, Principal]] = {}
    stored: list[Memory] = []
    for agents in sizes:
        workspace = services.admin.create_workspace(f"bench-{agents}")
        person = services.admin.create_person(workspace.id, f"ops{agents}@example.com")
        operator = Principal(kind=PrincipalKind.PERSON, id=person.id, workspace_id=workspace.id)
        issued = services.admin.create_agent(workspace.id, "reviewed")
        agent = Principal(kind=PrincipalKind.AGENT, id=issued.id, workspace_id=workspace.id)
        reviewed[agents] = (agent, operator)
        mine = facts_for(agent, 100, random.Random(41))
        stored.extend(mine)
        rng = random.Random(agents)
        for number in range(agents - 1):
            # the other agents' facts and index entries, seeded as the store writes them
            other = Principal(
                kind=PrincipalKind.AGENT, id=ids.new("agt"), workspace_id=workspace.id
            )
            theirs = facts_for(other, 20, rng)
            if number < 5:
                theirs[0] = theirs[0].model_copy(update={"text": mine[number].text})
            stored.extend(theirs)
    entries = [
        to_attributes(same_fact_entry(fact))
        for fact in stored
        if fact.status is MemoryStatus.ACTIVE
    ]
    markers = [
        to_attributes(same_facts_marker_key(agent_id))
        for agent_id in sorted({fact.agent_id for fact in stored})
    ]
    put_items(client, table, memory_items(stored) + entries + markers)
    for agents, (agent, operator) in reviewed.items():

        def run(agent: Principal = agent, operator: Principal = operator) -> ReviewReport:
            request = RunReviewRequest.model_validate({"agentId": agent.id, "dryRun": True})
            return services.reviews.run_now(operator, request)

        timings = []
        for _ in range(3):
            report, seconds, calls = measured(requests, run)
            timings.append(seconds)
        shared = sum("held by" in note for note in report.plan.notes)
        print(
            f"{agents:>6}  {min(timings):8.2f}  {sum(calls.values()):>6}  {shared:>6}  {calls}",
            flush=True,
        )


def main() -> None:
    """Run and print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--workspace-agents", type=int, nargs="+", default=[])
    args = parser.parse_args()
    with embedded_for_bench() as endpoint:
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        requests: Counter[str] = Counter()

        def count(event_name: str, **_: Any) -> None:
            requests[event_name.rsplit(".", 1)[-1]] += 1

        client.meta.events.register("before-call.dynamodb", count)
        if args.workspace_agents:
            print("agents  seconds  DDB-req  shared  requests by operation")
            run_workspaces(client, s3, requests, args.workspace_agents)
            return
        print(
            "facts   run       seconds  reviewer  DDB-req  plan  applied  skip  actions  "
            "requests by operation"
        )
        for size in args.sizes:
            run_size(client, s3, requests, size)


if __name__ == "__main__":
    main()
