"""Real input through the running local server (docs/issues.md#issue-2-item-14).

Loads one conversation of the recall benchmark (LoCoMo-derived, CC BY-NC 4.0,
docs/reference.md#recall-benchmark, never copied here) as one new agent's facts
through the HTTP API, asks that conversation's questions through
``POST /memories/recall``, and prints R@10, MRR, Hit@kept and kept counts
(the measures of docs/reference.md#recall-benchmark), plus the DynamoDB requests
made per save and per recall (counted by the embedded DynamoDB).

Ranks are those of the memories the recall returns (scores >= 0.5, best
first); an evidence fact it does not return counts as not found.

Usage: start ``make serve``, then ``.venv/bin/python bench/real_input.py [--conv conv-26]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import Counter
from pathlib import Path

import httpx

from chalicelib.settings import DEFAULT_LOCAL_DYNAMODB_ENDPOINT, Settings
from chalicelib.wiring import build_admin_service
from pinework.client import Client

DATA = Path(__file__).resolve().parents[2] / "shared" / "recall-eval" / "dev"


def request_counts(endpoint: str) -> Counter[str]:
    """The embedded DynamoDB's request counts by action."""
    return Counter(httpx.get(f"{endpoint}/_pinework/requests", timeout=10).json())


def main() -> None:
    """Load, ask, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conv", default="conv-26")
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

    facts = [
        row
        for row in map(json.loads, (args.data / "memories.jsonl").open(encoding="utf-8"))
        if row["conv"] == args.conv
    ]
    questions = [
        row
        for row in map(json.loads, (args.data / "queries.jsonl").open(encoding="utf-8"))
        if row["conv"] == args.conv
    ]
    admin = build_admin_service(
        Settings(table_name="pinework-local", dynamodb_endpoint=args.dynamodb_endpoint)
    )
    workspace = admin.create_workspace(f"bench {args.conv}")
    agent = admin.create_agent(workspace.id, f"{args.conv} memory")

    with Client(args.api_url, agent.token) as client:
        before = request_counts(args.dynamodb_endpoint)
        started = time.perf_counter()
        id_of: dict[str, str] = {}
        for fact in facts:
            id_of[fact["id"]] = client.save_fact(fact["text"]).id
        save_seconds = time.perf_counter() - started
        after_saves = request_counts(args.dynamodb_endpoint)

        scored = [q for q in questions if q["evidence_ids"] and q["category"] != 5]
        adversarial = [q for q in questions if q["category"] == 5]
        recall_at_10, reciprocal, hits, kept = [], [], [], []
        started = time.perf_counter()
        for question in scored:
            result = client.recall(query=question["question"])
            ranked = [item.memory.id for item in result.memories]
            evidence = {id_of[e] for e in question["evidence_ids"] if e in id_of}
            recall_at_10.append(len(evidence & set(ranked[:10])) / len(evidence))
            first = next((rank for rank, mid in enumerate(ranked, 1) if mid in evidence), None)
            reciprocal.append(0.0 if first is None else 1.0 / first)
            hits.append(1.0 if evidence & set(ranked) else 0.0)
            kept.append(len(ranked))
        recall_seconds = time.perf_counter() - started
        adversarial_kept = [len(client.recall(query=q["question"]).memories) for q in adversarial]
        after_recalls = request_counts(args.dynamodb_endpoint)

    saves = after_saves - before
    recalls = after_recalls - after_saves
    recall_calls = len(scored) + len(adversarial)
    print(f"conversation {args.conv}: {len(facts)} facts saved, {len(scored)} questions scored")
    print(f"R@10      {statistics.mean(recall_at_10):.3f}")
    print(f"MRR       {statistics.mean(reciprocal):.3f}")
    print(f"Hit@kept  {statistics.mean(hits):.3f}")
    print(
        f"kept      median {statistics.median(kept):.0f}, p90 {sorted(kept)[int(0.9 * len(kept))]}"
    )
    if adversarial_kept:
        print(
            f"category 5 ({len(adversarial_kept)} questions): median kept "
            f"{statistics.median(adversarial_kept):.0f}, keep nothing "
            f"{sum(k == 0 for k in adversarial_kept) / len(adversarial_kept):.0%}"
        )
    print(f"DynamoDB requests per save   {sum(saves.values()) / len(facts):.2f}  {dict(saves)}")
    print(
        f"DynamoDB requests per recall {sum(recalls.values()) / recall_calls:.2f}  "
        f"{ {k: round(v / recall_calls, 2) for k, v in recalls.items()} }"
    )
    print(
        f"latency   save {1000 * save_seconds / len(facts):.1f} ms, "
        f"recall {1000 * recall_seconds / max(1, len(scored)):.1f} ms (HTTP, local server)"
    )


if __name__ == "__main__":
    main()
