"""Recall speed (docs/issues.md#issue-3): recall over 1,000 and 10,000 live facts of one agent on
the embedded DynamoDB, as a ratio to listing the same facts, with the DynamoDB
requests each makes; and the default scorer alone on 10,000 facts as a ratio to
rank-bm25 on the same texts.

Facts are loaded with BatchWriteItem (items built by the storage's own
conversion), so the setup does not dominate the run. Texts are drawn from the
recall benchmark's facts (docs/reference.md#recall-benchmark, read only) with a running
number so they are distinct.

Usage: ``.venv/bin/python bench/recall_speed.py [--sizes 1000 10000] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
from rank_bm25 import BM25Okapi

from chalicelib import wiring
from chalicelib.ids import IdFactory, SystemClock
from chalicelib.models.memory import Memory, MemoryKind
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import ListQuery, RecallRequest
from chalicelib.services.recall.lexical import LexicalScorer
from chalicelib.services.recall.relevance import Candidate, RelevanceScorer
from chalicelib.services.run_context import RunContext
from chalicelib.settings import Settings
from infra.local_dynamodb import embedded_for_bench, memory_items, put_items
from infra.tables import create_table

DATA = Path(__file__).resolve().parents[2] / "shared" / "recall-eval" / "dev"


def texts(count: int) -> list[str]:
    """``count`` distinct fact texts from the benchmark's facts."""
    source = [json.loads(line)["text"] for line in (DATA / "memories.jsonl").open(encoding="utf-8")]
    return [f"{source[n % len(source)]} (#{n})" for n in range(count)]


def load(client: Any, table: str, agent: Principal, count: int, embedder: Any) -> None:
    """Write ``count`` live facts (embedded as a save would) with BatchWriteItem."""
    ids = IdFactory(SystemClock())
    now = datetime.now(UTC)
    items = []
    corpus = texts(count)
    embeddings = embedded(corpus, embedder)
    for text, embedding in zip(corpus, embeddings, strict=True):
        fact = Memory(
            embedding=embedding,
            id=ids.new("mem"),
            workspace_id=agent.workspace_id,
            agent_id=agent.id,
            kind=MemoryKind.FACT,
            text=text,
            expires_at=now + timedelta(days=90),
            created_at=now,
            updated_at=now,
        )
        items.append(fact)
    put_items(client, table, memory_items(items))


def embedded(corpus: list[str], embedder: Any) -> list[bytes]:
    """Embeddings of the texts, in batches (what each save computes one at a time)."""
    return [
        vector
        for start in range(0, len(corpus), 64)
        for vector in embedder.embed(corpus[start : start + 64])
    ]


def timed(repeat: int, call: Any) -> float:
    """Median seconds of ``repeat`` calls (after one warm-up)."""
    call()
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def list_all(services: wiring.Services, agent: Principal) -> int:
    """List every active fact through the service, 500 a page (the comparison)."""
    token = None
    seen = 0
    while True:
        query = ListQuery.model_validate(
            {"kind": "fact", "limit": "500", **({"nextToken": token} if token else {})}
        )
        page = services.memories.list(agent, query)
        seen += len(page.memories)
        if page.continue_after is None:
            return seen
        from chalicelib.services.paging import encode_next_token

        token = encode_next_token(page.continue_after)


def main() -> None:
    """Run and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with embedded_for_bench() as endpoint:
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
        requests: Counter[str] = Counter()

        def count(event_name: str, **_: Any) -> None:
            requests[event_name.rsplit(".", 1)[-1]] += 1

        client.meta.events.register("before-call.dynamodb", count)
        question = "What did Caroline say about the LGBTQ support group and her painting?"
        print("facts   recall_s  list_s  ratio  requests/recall  kept")
        for size in args.sizes:
            table = f"speed-{size}"
            create_table(client, table)
            services = wiring.build_services(
                Settings(table_name=table, recall_time_budget_ms=60_000), client=client
            )
            workspace = services.admin.create_workspace("speed")
            issued = services.admin.create_agent(workspace.id, "speed")
            agent = Principal(kind=PrincipalKind.AGENT, id=issued.id, workspace_id=workspace.id)
            load(client, table, agent, size, wiring.default_embedder())
            ask = RecallRequest(query=question)
            recall_seconds = timed(
                args.repeat, lambda a=agent, s=services, q=ask: s.recall.recall(a, q, RunContext())
            )
            list_seconds = timed(args.repeat, lambda a=agent, s=services: list_all(s, a))
            requests.clear()
            result = services.recall.recall(agent, RecallRequest(query=question), RunContext())
            per_recall = dict(requests)
            print(
                f"{size:>6}  {recall_seconds:8.3f}  {list_seconds:6.3f}  "
                f"{recall_seconds / list_seconds:5.2f}  "
                f"{sum(per_recall.values()):>3} {per_recall}  {len(result.memories)}"
            )

    corpus = texts(10_000)
    now = datetime.now(UTC)
    candidates = [
        Candidate(text, now, embedding)
        for text, embedding in zip(corpus, embedded(corpus, wiring.default_embedder()), strict=True)
    ]
    scorer = RelevanceScorer(wiring.default_embedder())
    ours = timed(args.repeat, lambda: scorer.score(question, candidates, now))
    query_only = timed(args.repeat, lambda: wiring.default_embedder().embed_matrix([question]))
    lexical = LexicalScorer()
    cold = timed(args.repeat, lambda: lexical.score(question, corpus))
    tokenized_query = question.lower().split()

    def rank_bm25() -> None:
        BM25Okapi([text.lower().split() for text in corpus]).get_scores(tokenized_query)

    theirs = timed(args.repeat, rank_bm25)
    print(
        f"scoring 10,000 facts (stored embeddings): default scorer {1000 * ours:.1f} ms, "
        f"lexical scorer {1000 * cold:.1f} ms, rank-bm25 {1000 * theirs:.1f} ms; "
        f"rank-bm25 / default = {theirs / ours:.1f}x, rank-bm25 / lexical = {theirs / cold:.1f}x"
    )
    print(
        f"  of the default scorer's {1000 * ours:.1f} ms, embedding the query (one MiniLM "
        f"forward pass, independent of the store) takes {1000 * query_only:.1f} ms; the "
        f"per-fact part takes {1000 * (ours - query_only):.1f} ms "
        f"(rank-bm25 / per-fact part = {theirs / max(ours - query_only, 1e-9):.1f}x)"
    )


if __name__ == "__main__":
    main()
