"""Recall on stores of long technical memories through the HTTP API (
docs/DECISIONS.md#issue-40-bounded-recall): the fallback rate and p50/p95 recall time at
1,000 and 5,000 code-heavy facts of at most 480 characters, and on a store of 310
near-identical facts of about 330 characters. Targets (a quiet machine): no fallback,
p95 at most 1.5 s, and the near-identical store answered scored in under 2 s.

The facts are ``bench.technical_text.memories`` (the sources of MIT/BSD/Apache packages
of the project's virtual environment), the queries ``technical_text.tasks`` (a question,
a task of several clauses, a long task with a traceback, in turn). The local server is
started as ``make serve`` runs it (``bench.recall_scale.Server``), with shipped settings;
the facts are seeded straight into its DynamoDB with their MiniLM embeddings
(``recall_scale.seed``), and every recall is ``POST /memories/recall`` over one kept-alive
connection, the agents in turn. The server's request log lines give what the reranker
did in each recall (``recall_reranker``).

Embedding is the slow part (about 0.1-0.3 s a fact on a busy 2-core machine); vectors
are cached in ``--cache`` by text. ``--distinct N`` embeds at most N texts not cached yet and
gives the others the cached vectors in turn: the scorer's work per fact does not depend
on which vector a fact holds, so times hold, but rankings are not meaningful then.

Usage: ``.venv/bin/python bench/recall_long_text.py [--rounds 21] [--distinct 5000]
[--port 0 --dynamodb-port 0]``
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import boto3
import httpx

from bench import technical_text
from bench.recall_scale import REPO_ROOT, Agent, Server, recall, seed
from chalicelib import wiring

NEAR_QUERY = "Did the canary of the cache branch build pass on staging, and what was p95?"


def vectors_for(texts: list[str], distinct: int, cache: Path) -> list[bytes]:
    """MiniLM embeddings of ``texts``, cached by text; at most ``distinct`` are embedded
    now, and texts left without one get the cached ones in turn."""
    known: dict[str, bytes] = pickle.loads(cache.read_bytes()) if cache.exists() else {}
    missing = [text for text in texts if _key(text) not in known][:distinct]
    embedder = wiring.default_embedder()
    started = time.perf_counter()
    for start in range(0, len(missing), 64):
        batch = missing[start : start + 64]
        known.update(zip(map(_key, batch), embedder.embed(batch), strict=True))
        print(f"  embedded {start + len(batch):,}/{len(missing):,}", file=sys.stderr, flush=True)
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(pickle.dumps(known))
    if missing:
        print(f"embedded {len(missing):,} facts in {time.perf_counter() - started:.0f} s")
    own = [known[_key(text)] for text in texts if _key(text) in known]
    spare = iter(own * (len(texts) // max(len(own), 1) + 1))
    return [known.get(_key(text)) or next(spare) for text in texts]


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def percentile(values: list[float], share: float) -> float:
    """The ``share`` percentile (inclusive method)."""
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def log_fields(server: Server, seen: int) -> list[dict[str, str]]:
    """``recall_reranker``, ``recall_stopped_at`` and ``recall_scoring_ms`` of the request
    log lines after the first ``seen`` (JSON or text log format)."""
    found = []
    for line in list(server.output)[seen:]:
        if "recall_kind" not in line:
            continue
        found.append(
            {
                name: match.group(1)
                for name in ("recall_reranker", "recall_stopped_at", "recall_scoring_ms")
                if (match := re.search(rf"{name}['\"]?\s*[:=]\s*['\"]?([^'\",}}]+)", line))
            }
        )
    return found


def main() -> int:
    """Seed three agents, time their recalls, print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21, help="the first is a warm-up")
    parser.add_argument("--large", type=int, default=5000)
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--near", type=int, default=310)
    parser.add_argument("--distinct", type=int, default=5000)
    parser.add_argument(
        "--cache", type=Path, default=REPO_ROOT / ".pinework-local" / "long-text-vectors.pkl"
    )
    parser.add_argument("--port", type=int, default=0, help="the API's port (0: a free one)")
    parser.add_argument("--dynamodb-port", type=int, default=0)
    args = parser.parse_args()

    small, texts = technical_text.memories(args.small), technical_text.memories(args.large)
    near = technical_text.near_duplicates(args.near)
    small_vectors = vectors_for(small, args.distinct, args.cache)
    vectors = vectors_for(texts, args.distinct, args.cache)
    near_vectors = vectors_for(near, len(near), args.cache)
    queries = technical_text.tasks(small, args.rounds)

    with tempfile.TemporaryDirectory(prefix="recall-long-") as data_dir:
        server = Server(Path(data_dir))
        server.api_port = args.port or server.api_port
        server.dynamodb_port = args.dynamodb_port or server.dynamodb_port
        server.start()
        try:
            workspace_id = server.demo()["workspaceId"]
            agents = []
            stores = [
                (f"{args.small:,} long facts", small, small_vectors),
                (f"{args.large:,} long facts", texts, vectors),
                (f"{args.near} near-identical", near, near_vectors),
            ]
            client = boto3.client("dynamodb", endpoint_url=server.dynamodb, region_name="us-east-1")
            for name, store, store_vectors in stores:
                issued = server.create_agent(workspace_id, f"bench-{len(agents)}")
                agent = Agent(name, issued["id"], issued["token"], len(store))
                seed(client, workspace_id, agent, store_vectors, store)
                agents.append(agent)
            print(f"seeded {sum(a.facts for a in agents):,} facts; API {server.api}", flush=True)
            states = {agent.name: Counter[str]() for agent in agents}
            scoring: dict[str, list[float]] = {agent.name: [] for agent in agents}
            with httpx.Client(base_url=server.api, timeout=120) as http:
                for number, query in enumerate(queries):
                    for agent in agents if number % 2 == 0 else agents[::-1]:
                        seen = len(server.output)
                        asked = NEAR_QUERY if agent is agents[-1] else query
                        recall(http, agent, asked, keep=number > 0)
                        time.sleep(0.05)  # the log line is read by another thread
                        for fields in log_fields(server, seen) if number > 0 else []:
                            states[agent.name][
                                fields.get("recall_reranker")
                                or f"stopped at {fields.get('recall_stopped_at', '?')}"
                            ] += 1
                            if "recall_scoring_ms" in fields:
                                scoring[agent.name].append(float(fields["recall_scoring_ms"]))
                    print(f"  round {number + 1}/{len(queries)}", file=sys.stderr, flush=True)
        finally:
            server.stop()

    print(f"\n{len(queries) - 1} recalls per store (a warm-up round not counted), shipped settings")
    print(
        f"{'store':<22} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'fallback':>9} "
        f"{'kept median (max)':>18} {'scoring p50 ms':>14}  reranker (or where it stopped)"
    )
    for agent in agents:
        seconds = agent.seconds
        print(
            f"{agent.name:<22} {statistics.median(seconds) * 1000:>8.0f} "
            f"{percentile(seconds, 0.95) * 1000:>8.0f} {max(seconds) * 1000:>8.0f} "
            f"{agent.fallbacks / len(seconds):>9.0%} "
            f"{f'{statistics.median(agent.kept):.0f} ({max(agent.kept)})':>18} "
            f"{statistics.median(scoring[agent.name] or [0.0]):>14.0f}  "
            f"{dict(states[agent.name])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
