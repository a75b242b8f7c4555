"""Recall through the index scores exactly as reading every fact (docs/issues.md#issue-23-item-1),
shown on the recall benchmark's development data (docs/reference.md#recall-benchmark: LoCoMo,
CC BY-NC 4.0, read where it lies, never copied into the repository).

On the embedded DynamoDB that ``make serve`` runs, one agent per conversation saves
its facts through ``MemoryService.save`` (so embeddings and index entries are written
as in production). Then, for every question of categories 1-4 with evidence and every
category-5 question, three things are computed at the real clock:

- **index, kept**: ``RecallService.recall`` (the production path: index entries,
  sentence stand-ins, the word pieces fetched for the second stage, the cut, the
  verification read); it counts the recall and logs it, as any recall does;
- **every fact, kept**: the facts from ``live_facts`` (unexpired), ``score_all``, the
  0.5 cut and ``within_budget``, as every recall did before the index;
- **both full rankings**: ``score_all`` on the index's entries (the candidates the
  service builds from them) and on the facts.

The kept lists and the full rankings are compared id by id and score by score (exact
equality). MRR over categories 1-4 is 1 / the rank of the first evidence fact in each
path's full ranking (0 when absent), as the benchmark's own README scores it.

Usage: ``.venv/bin/python bench/recall_index_parity.py [--data DIR] [--limit N]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import _offline

REPO_ROOT = _offline.REPO_ROOT

import boto3  # noqa: E402

from chalicelib import wiring  # noqa: E402
from chalicelib.limits import SCORE_CUTOFF  # noqa: E402
from chalicelib.models.principal import Principal, PrincipalKind  # noqa: E402
from chalicelib.models.requests import RecallRequest, SaveFactRequest  # noqa: E402
from chalicelib.services.recall.service import ScoredMemory, _entry_memory  # noqa: E402
from chalicelib.services.run_context import RunContext  # noqa: E402
from chalicelib.settings import Settings  # noqa: E402
from infra.local_dynamodb import embedded_for_bench  # noqa: E402
from infra.tables import create_table  # noqa: E402

DEFAULT_DATA = REPO_ROOT.parent / "shared" / "recall-eval" / "dev"
TABLE = "recall-index-parity"

Ranking = list[tuple[str, float | None]]


@dataclass
class Tally:
    """The comparison's counts and figures."""

    compared: int = 0
    kept_identical: int = 0
    ranking_identical: int = 0
    max_difference: float = 0.0
    fallbacks: Counter[str] = field(default_factory=Counter)
    reciprocal_ranks: dict[str, list[float]] = field(
        default_factory=lambda: {"index": [], "every fact": []}
    )
    kept_counts: list[int] = field(default_factory=list)
    seconds: dict[str, list[float]] = field(
        default_factory=lambda: {"recall()": [], "index ranking": [], "every fact": []}
    )
    mismatches: list[str] = field(default_factory=list)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSON-lines file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def ranking(scored: list[ScoredMemory]) -> Ranking:
    """Ids and scores, in order."""
    return [(item.memory.id, item.score) for item in scored]


def reciprocal_rank(ranked: Ranking, evidence: set[str]) -> float:
    """1 / the rank of the first evidence id (0 when none is ranked)."""
    for rank, (memory_id, _) in enumerate(ranked, start=1):
        if memory_id in evidence:
            return 1 / rank
    return 0.0


def largest_difference(first: Ranking, second: Ranking) -> float:
    """The largest |score difference| of one memory between two rankings (a memory in
    only one of them counts as 1)."""
    scores = dict(second)
    largest = 0.0
    for memory_id, score in first:
        if memory_id not in scores:
            return 1.0
        other = scores[memory_id]
        if score is not None and other is not None:
            largest = max(largest, abs(score - other))
        elif score != other:
            return 1.0
    return largest if len(first) == len(second) else 1.0


def save_conversations(
    services: wiring.Services, memories: list[dict[str, Any]]
) -> tuple[dict[str, Principal], dict[str, str]]:
    """One agent per conversation saving its facts; the agents and the dataset id of
    each saved memory id."""
    workspace = services.admin.create_workspace("recall-index-parity")
    agents: dict[str, Principal] = {}
    dataset_ids: dict[str, str] = {}
    for row in memories:
        agent = agents.get(row["conv"])
        if agent is None:
            issued = services.admin.create_agent(workspace.id, row["conv"])
            agent = Principal(kind=PrincipalKind.AGENT, id=issued.id, workspace_id=workspace.id)
            agents[row["conv"]] = agent
        saved = services.memories.save(agent, SaveFactRequest(text=row["text"]), RunContext())
        dataset_ids[saved.id] = row["id"]
    return agents, dataset_ids


def compare(
    services: wiring.Services, agent: Principal, query: dict[str, Any], tally: Tally
) -> tuple[Ranking, Ranking]:
    """One question through both paths; the tally updated; both full rankings."""
    recall = services.recall
    started = time.perf_counter()
    result = recall.recall(agent, RecallRequest(query=query["question"]), RunContext())
    tally.seconds["recall()"].append(time.perf_counter() - started)
    index_kept = [(item.memory.id, item.score) for item in result.memories]
    now = datetime.now(UTC)

    started = time.perf_counter()
    entries = recall._index.entries(agent.id, now)
    if entries is None:
        raise RuntimeError(f"agent {agent.id} has no complete recall index")
    facts = [_entry_memory(agent.workspace_id, agent.id, entry) for entry in entries]
    candidates = recall._index_candidates(agent.id, entries)
    index_scored, index_fallback = recall.score_all(query["question"], facts, now, candidates)
    tally.seconds["index ranking"].append(time.perf_counter() - started)

    started = time.perf_counter()
    facts = [
        fact
        for fact in recall._memories.live_facts(agent.id, recall_counts=False)
        if not fact.is_expired(now)
    ]
    every_scored, every_fallback = recall.score_all(query["question"], facts, now)
    passed = (
        every_scored
        if every_fallback is not None
        else [item for item in every_scored if (item.score or 0.0) >= SCORE_CUTOFF]
    )
    every_kept = [(item.memory.id, item.score) for item in recall.within_budget(passed)]
    tally.seconds["every fact"].append(time.perf_counter() - started)

    for name, fallback in (
        ("recall()", result.fallback),
        ("index ranking", index_fallback),
        ("every fact", every_fallback),
    ):
        if fallback is not None:
            tally.fallbacks[name] += 1
    index_ranked, every_ranked = ranking(index_scored), ranking(every_scored)
    tally.compared += 1
    tally.kept_counts.append(len(index_kept))
    tally.kept_identical += index_kept == every_kept
    tally.ranking_identical += index_ranked == every_ranked
    tally.max_difference = max(tally.max_difference, largest_difference(index_ranked, every_ranked))
    if index_kept != every_kept or index_ranked != every_ranked:
        tally.mismatches.append(
            f"{query['id']}: kept {len(index_kept)} vs {len(every_kept)}"
            f"{'' if index_kept == every_kept else ' (differ)'}, ranking "
            f"{'same' if index_ranked == every_ranked else 'differs'}"
        )
    return index_ranked, every_ranked


def main() -> int:
    """Save, compare and print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=0, help="compare at most this many")
    args = parser.parse_args()
    memories = read_jsonl(args.data / "memories.jsonl")
    queries = [
        query
        for query in read_jsonl(args.data / "queries.jsonl")
        if query["category"] == 5 or query["evidence_ids"]
    ]
    if args.limit:
        queries = queries[: args.limit]

    began = time.perf_counter()
    tally = Tally()
    by_category: dict[int, int] = Counter()
    with embedded_for_bench() as endpoint:
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
        create_table(client, TABLE)
        services = wiring.build_services(
            Settings(table_name=TABLE, read_concurrency=1), client=client
        )
        started = time.perf_counter()
        agents, dataset_ids = save_conversations(services, memories)
        print(
            f"saved {len(dataset_ids):,} facts of {len(agents)} conversations in "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )
        for number, query in enumerate(queries, start=1):
            index_ranked, every_ranked = compare(services, agents[query["conv"]], query, tally)
            by_category[query["category"]] += 1
            if query["category"] != 5:
                evidence = set(query["evidence_ids"])
                for name, ranked in (("index", index_ranked), ("every fact", every_ranked)):
                    named = [(dataset_ids[memory_id], score) for memory_id, score in ranked]
                    tally.reciprocal_ranks[name].append(reciprocal_rank(named, evidence))
            if number % 100 == 0:
                print(f"  {number}/{len(queries)} questions", file=sys.stderr, flush=True)
        layout = index_layout(services, agents)
    report(tally, by_category, layout)
    print(f"\nruntime {time.perf_counter() - began:.0f} s")
    return 0 if tally.kept_identical == tally.ranking_identical == tally.compared else 1


def index_layout(services: wiring.Services, agents: dict[str, Principal]) -> list[str]:
    """What each agent's index holds now: segments, loose entries, tombstones."""
    now = datetime.now(UTC)
    layout = []
    for conv, agent in agents.items():
        state = services.recall._index.read(agent.id, now)
        entries = sum(len(segment.entries) for segment in state.segments)
        layout.append(
            f"{conv}: {len(state.segments)} segments ({entries} entries), "
            f"{len(state.loose)} loose, {len(state.tombstones)} tombstones"
        )
    return layout


def report(tally: Tally, by_category: dict[int, int], layout: list[str]) -> None:
    """Print the comparison."""
    categories = ", ".join(f"{c}: {n}" for c, n in sorted(by_category.items()))
    print(f"\nquestions compared          {tally.compared} (by category {categories})")
    print(f"identical kept lists        {tally.kept_identical} / {tally.compared}")
    print(f"identical full rankings     {tally.ranking_identical} / {tally.compared}")
    print(f"max |score difference|      {tally.max_difference:.4g}")
    print(
        f"kept per recall             median {statistics.median(tally.kept_counts):.0f}, "
        f"mean {statistics.mean(tally.kept_counts):.1f}, max {max(tally.kept_counts)}"
    )
    print(f"fallbacks                   {dict(tally.fallbacks) or 'none'}")
    ranked = len(tally.reciprocal_ranks["index"])
    print(f"\nMRR over categories 1-4 ({ranked} questions):")
    for name, ranks in tally.reciprocal_ranks.items():
        print(f"  {name:<12} {statistics.mean(ranks) if ranks else 0.0:.4f}")
    print("\nmedian time per question:")
    for name, seconds in tally.seconds.items():
        print(f"  {name:<14} {statistics.median(seconds) * 1000:.1f} ms")
    print("\nindex at the end:")
    for line in layout:
        print(f"  {line}")
    if tally.mismatches:
        print(f"\nmismatches ({len(tally.mismatches)}, first 20):")
        for line in tally.mismatches[:20]:
            print(f"  {line}")


if __name__ == "__main__":
    sys.exit(main())
