"""Real input through the running local server (docs/issues.md#issue-2-item-14).

Loads one conversation of the recall benchmark (LoCoMo-derived, CC BY-NC 4.0,
docs/reference.md#recall-benchmark, never copied here) as one new agent's facts
through the HTTP API, asks that conversation's questions through
``POST /memories/recall``, and prints R@10, MRR, Hit@kept and kept counts
(the measures of docs/reference.md#recall-benchmark), plus the DynamoDB requests
made per save and per recall (counted by the embedded DynamoDB).

Ranks are those of the memories the recall returns (scores >= 0.5, best
first); an evidence fact it does not return counts as not found.

Usage: start ``make serve``, then ``.venv/bin/python bench/real_input.py [--conv conv-26|all]``
(``all``: every conversation, each its own agent, figures pooled and per category).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from chalicelib.settings import DEFAULT_LOCAL_DYNAMODB_ENDPOINT, Settings
from chalicelib.wiring import build_admin_service
from pinework.client import Client

DATA = Path(__file__).resolve().parents[2] / "shared" / "recall-eval" / "dev"


def request_counts(endpoint: str) -> Counter[str]:
    """The embedded DynamoDB's request counts by action."""
    return Counter(httpx.get(f"{endpoint}/_pinework/requests", timeout=10).json())


@dataclass
class Figures:
    """Per-question figures of the scored questions (categories 1-4 with evidence)."""

    category: list[int] = field(default_factory=list)
    recall_at_10: list[float] = field(default_factory=list)
    reciprocal: list[float] = field(default_factory=list)
    hits: list[float] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)
    adversarial_kept: list[int] = field(default_factory=list)
    facts: int = 0
    save_seconds: float = 0.0
    recall_seconds: float = 0.0
    fallbacks: int = 0


def run_conversation(
    conversation: str, args: argparse.Namespace, figures: Figures
) -> tuple[Counter[str], Counter[str], int]:
    """Load one conversation as a new agent's facts, ask its questions, add to
    ``figures``; returns the DynamoDB requests of the saves and of the recalls, and the
    number of recalls."""
    facts = [
        row
        for row in map(json.loads, (args.data / "memories.jsonl").open(encoding="utf-8"))
        if row["conv"] == conversation
    ]
    questions = [
        row
        for row in map(json.loads, (args.data / "queries.jsonl").open(encoding="utf-8"))
        if row["conv"] == conversation
    ]
    admin = build_admin_service(
        Settings(table_name="pinework-local", dynamodb_endpoint=args.dynamodb_endpoint)
    )
    workspace = admin.create_workspace(f"bench {conversation}")
    agent = admin.create_agent(workspace.id, f"{conversation} memory")

    with Client(args.api_url, agent.token) as client:
        before = request_counts(args.dynamodb_endpoint)
        started = time.perf_counter()
        id_of: dict[str, str] = {}
        for fact in facts:
            id_of[fact["id"]] = client.save_fact(fact["text"]).id
        figures.save_seconds += time.perf_counter() - started
        figures.facts += len(facts)
        after_saves = request_counts(args.dynamodb_endpoint)

        scored = [q for q in questions if q["evidence_ids"] and q["category"] != 5]
        adversarial = [q for q in questions if q["category"] == 5]
        started = time.perf_counter()
        for question in scored:
            result = client.recall(query=question["question"])
            figures.fallbacks += result.fallback is not None
            ranked = [item.memory.id for item in result.memories]
            evidence = {id_of[e] for e in question["evidence_ids"] if e in id_of}
            figures.category.append(int(question["category"]))
            figures.recall_at_10.append(len(evidence & set(ranked[:10])) / len(evidence))
            first = next((rank for rank, mid in enumerate(ranked, 1) if mid in evidence), None)
            figures.reciprocal.append(0.0 if first is None else 1.0 / first)
            figures.hits.append(1.0 if evidence & set(ranked) else 0.0)
            figures.kept.append(len(ranked))
        figures.recall_seconds += time.perf_counter() - started
        figures.adversarial_kept.extend(
            len(client.recall(query=q["question"]).memories) for q in adversarial
        )
        after_recalls = request_counts(args.dynamodb_endpoint)
    return after_saves - before, after_recalls - after_saves, len(scored) + len(adversarial)


def report(figures: Figures, members: list[bool], label: str) -> None:
    """One line of figures for the questions ``members``."""

    def chosen(values: list[float] | list[int]) -> list[float]:
        return [float(v) for v, keep in zip(values, members, strict=True) if keep]

    kept = sorted(chosen(figures.kept))
    print(
        f"{label:<12} {len(kept):>4}  R@10 {statistics.mean(chosen(figures.recall_at_10)):.3f}"
        f"  MRR {statistics.mean(chosen(figures.reciprocal)):.3f}"
        f"  Hit@kept {statistics.mean(chosen(figures.hits)):.3f}"
        f"  kept median {statistics.median(kept):g}, p90 {kept[int(0.9 * len(kept))]:g}"
    )


def main() -> None:
    """Load, ask, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conv", default="conv-26", help="a conversation, or all")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--api-url", default=os.environ.get("PINEWORK_API_URL", "http://127.0.0.1:8000")
    )
    parser.add_argument(
        "--dynamodb-endpoint",
        default=os.environ.get("PINEWORK_DYNAMODB_ENDPOINT", DEFAULT_LOCAL_DYNAMODB_ENDPOINT),
    )
    args = parser.parse_args()
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    conversations = [args.conv]
    if args.conv == "all":
        rows = map(json.loads, (args.data / "memories.jsonl").open(encoding="utf-8"))
        conversations = sorted({str(row["conv"]) for row in rows})
    figures = Figures()
    saves: Counter[str] = Counter()
    recalls: Counter[str] = Counter()
    recall_calls = 0
    for conversation in conversations:
        save_requests, recall_requests, calls = run_conversation(conversation, args, figures)
        saves += save_requests
        recalls += recall_requests
        recall_calls += calls
    print(
        f"conversations {', '.join(conversations)}: {figures.facts} facts saved, "
        f"{len(figures.kept)} questions scored, {figures.fallbacks} recalls fell back"
    )
    report(figures, [True] * len(figures.kept), "categories 1-4")
    for category in (1, 2, 3, 4):
        report(figures, [c == category for c in figures.category], f"category {category}")
    adversarial = figures.adversarial_kept
    if adversarial:
        print(
            f"category 5 ({len(adversarial)} questions): median kept "
            f"{statistics.median(adversarial):.0f}, keep nothing "
            f"{sum(k == 0 for k in adversarial) / len(adversarial):.0%}"
        )
    print(f"DynamoDB requests per save   {sum(saves.values()) / figures.facts:.2f}  {dict(saves)}")
    print(
        f"DynamoDB requests per recall {sum(recalls.values()) / recall_calls:.2f}  "
        f"{ {k: round(v / recall_calls, 2) for k, v in recalls.items()} }"
    )
    print(
        f"latency   save {1000 * figures.save_seconds / figures.facts:.1f} ms, "
        f"recall {1000 * figures.recall_seconds / max(1, len(figures.kept)):.1f} ms "
        "(HTTP, local server)"
    )


if __name__ == "__main__":
    main()
