"""Recall time at scale through the HTTP API (docs/issues.md#issue-23-item-2): the target is
that an on-demand recall on an agent with 5,000 facts takes at most 3x one on an agent
with 100 facts (median of alternating runs in one process).

The real local server is started as ``make serve`` runs it (``python -m
infra.local_server``, its own free ports and a temporary data folder), two agents are
created in its demo workspace with ``pinework admin create-agent``, and their facts are
seeded straight into its embedded DynamoDB as the service stores them
(``infra.local_dynamodb.memory_items``: memory items, the recall index packed in
segments, and the index's marker). Texts are distinct (``capacity_units.fact_text``)
and each carries its own MiniLM embedding, computed here. Then ``POST
/api/v1/memories/recall`` is timed from this process over HTTP (``httpx``, one kept-alive
connection), alternating the small and the large agent (the order swapped each round),
one question per round about a fact both agents hold (``capacity_units.question``); the
first round is a warm-up and is not counted.

Last, the large agent's index marker is deleted, so its recalls read every fact item as
every recall did before the index (the path an agent from before the index still takes
until the backfill reaches it), and a few more rounds are timed: what the index changed.

Usage: ``.venv/bin/python bench/recall_scale.py [--small 100] [--large 5000]
[--rounds 15] [--before-rounds 5]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import _offline

REPO_ROOT = _offline.REPO_ROOT

import boto3  # noqa: E402
import httpx  # noqa: E402

from bench.capacity_units import fact_text, question  # noqa: E402
from chalicelib import wiring  # noqa: E402
from chalicelib.ids import IdFactory, SystemClock  # noqa: E402
from chalicelib.models.memory import Memory, MemoryKind  # noqa: E402
from chalicelib.storage.dynamodb import to_attributes  # noqa: E402
from chalicelib.storage.keys import recall_index_marker_key  # noqa: E402
from infra.local_dynamodb import memory_items, put_items  # noqa: E402
from infra.local_process import LocalServer  # noqa: E402

TABLE = "pinework-local"
"""The local server's table (``infra.local_server.TABLE``)."""
SEED_CHUNK = 5000


class Server(LocalServer):
    """The local server (``infra.local_process.LocalServer``) and what this bench asks
    of it: its URLs, and agents made with the admin CLI."""

    @property
    def api(self) -> str:
        """The API's base URL."""
        return f"http://127.0.0.1:{self.api_port}/api/v1"

    @property
    def dynamodb(self) -> str:
        """The embedded DynamoDB's endpoint."""
        return f"http://127.0.0.1:{self.dynamodb_port}"

    def create_agent(self, workspace_id: str, name: str) -> dict[str, str]:
        """``pinework admin create-agent`` against the server's DynamoDB: id and token."""
        executable = shutil.which("pinework", path=str(Path(sys.executable).parent))
        env = {**os.environ, "PINEWORK_DYNAMODB_ENDPOINT": self.dynamodb}
        done = subprocess.run(
            [
                executable or "pinework",
                *("admin", "create-agent", "--workspace", workspace_id, "--name", name, "--json"),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return dict(json.loads(done.stdout))


@dataclass
class Agent:
    """One seeded agent and its recall timings."""

    name: str
    id: str
    token: str
    facts: int
    seconds: list[float] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)
    fallbacks: int = 0


def seed(
    client: Any,
    workspace_id: str,
    agent: Agent,
    vectors: list[bytes],
    texts: list[str] | None = None,
) -> None:
    """Seed the agent's ``facts`` live facts, as the service stores them: ``texts``
    (default ``capacity_units.fact_text``) with ``vectors`` in the same order."""
    ids = IdFactory(SystemClock())
    now = datetime.now(UTC)
    for start in range(0, agent.facts, SEED_CHUNK):
        facts = [
            Memory(
                embedding=vectors[number],
                id=ids.new("mem"),
                workspace_id=workspace_id,
                agent_id=agent.id,
                kind=MemoryKind.FACT,
                text=fact_text(number) if texts is None else texts[number],
                expires_at=now + timedelta(days=90),
                created_at=now,
                updated_at=now,
            )
            for number in range(start, min(start + SEED_CHUNK, agent.facts))
        ]
        put_items(client, TABLE, memory_items(facts))


def recall(http: httpx.Client, agent: Agent, query: str, keep: bool) -> None:
    """One on-demand recall; with ``keep`` its time, kept count and fallback are kept."""
    started = time.perf_counter()
    response = http.post(
        "/memories/recall",
        json={"query": query},
        headers={"Authorization": f"Bearer {agent.token}"},
    )
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    body = response.json()
    if keep:
        agent.seconds.append(elapsed)
        agent.kept.append(len(body["memories"]))
        agent.fallbacks += body["fallback"] is not None


def alternate(http: httpx.Client, agents: list[Agent], rounds: int, first_question: int) -> None:
    """``rounds`` rounds of one recall per agent, the order swapped each round, a new
    question each round; the first round is a warm-up, not kept."""
    small = min(agent.facts for agent in agents)
    for number in range(rounds):
        query = question((first_question + number) * 37 % small)
        order = agents if number % 2 == 0 else agents[::-1]
        for agent in order:
            recall(http, agent, query, keep=number > 0)
        print(f"  round {number + 1}/{rounds} done", file=sys.stderr, flush=True)


def p90(values: list[float]) -> float:
    """The 90th percentile (inclusive method)."""
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[8]


def report(title: str, rows: list[Agent]) -> None:
    """A table of the agents' medians, p90s and kept counts."""
    print(f"\n{title}")
    print(
        f"{'agent':<26} {'facts':>6} {'n':>3} {'median ms':>10} {'p90 ms':>8} "
        f"{'kept (median, range)':>21} {'fallbacks':>9}"
    )
    for agent in rows:
        kept = f"{statistics.median(agent.kept):.0f} ({min(agent.kept)}-{max(agent.kept)})"
        print(
            f"{agent.name:<26} {agent.facts:>6,} {len(agent.seconds):>3} "
            f"{statistics.median(agent.seconds) * 1000:>10.1f} {p90(agent.seconds) * 1000:>8.1f} "
            f"{kept:>21} {agent.fallbacks:>9}"
        )


def main() -> int:
    """Start the server, seed, measure and print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=15, help="the first is a warm-up")
    parser.add_argument("--before-rounds", type=int, default=5, help="the first is a warm-up")
    args = parser.parse_args()

    started = time.perf_counter()
    embedder = wiring.default_embedder()
    texts = [fact_text(number) for number in range(args.large)]
    vectors = [v for start in range(0, len(texts), 64) for v in embedder.embed(texts[start:][:64])]
    print(f"embedded {len(texts):,} facts in {time.perf_counter() - started:.0f} s", flush=True)

    with tempfile.TemporaryDirectory(prefix="recall-scale-") as data_dir:
        server = Server(Path(data_dir))
        server.start()
        try:
            demo = server.demo()
            workspace_id = demo["workspaceId"]
            agents = []
            for name, facts in (("small", args.small), ("large", args.large)):
                issued = server.create_agent(workspace_id, f"bench-{name}")
                agents.append(Agent(f"{facts:,} facts", issued["id"], issued["token"], facts))
            client = boto3.client("dynamodb", endpoint_url=server.dynamodb, region_name="us-east-1")
            started = time.perf_counter()
            for agent in agents:
                seed(client, workspace_id, agent, vectors)
            print(
                f"seeded {sum(a.facts for a in agents):,} facts through {server.dynamodb} in "
                f"{time.perf_counter() - started:.0f} s; API {server.api}",
                flush=True,
            )
            with httpx.Client(base_url=server.api, timeout=120) as http:
                alternate(http, agents, args.rounds, 0)
                small, large = agents
                report(
                    f"through the recall index ({args.rounds - 1} rounds kept, alternating):",
                    agents,
                )
                ratio = statistics.median(large.seconds) / statistics.median(small.seconds)
                print(f"large / small (medians): {ratio:.2f}x (target: at most 3x)")

                # Without the marker the large agent's recalls read every fact item.
                client.delete_item(
                    TableName=TABLE, Key=to_attributes(recall_index_marker_key(large.id))
                )
                before_small = Agent(
                    f"{small.facts:,} facts (index)", small.id, small.token, small.facts
                )
                before_large = Agent(
                    f"{large.facts:,} facts (every fact)", large.id, large.token, large.facts
                )
                alternate(http, [before_small, before_large], args.before_rounds, args.rounds)
                report(
                    f"before the index: marker of the {large.facts:,}-fact agent deleted "
                    f"({args.before_rounds - 1} rounds kept, alternating):",
                    [before_small, before_large],
                )
                before = statistics.median(before_large.seconds)
                print(
                    f"large / small (medians): "
                    f"{before / statistics.median(before_small.seconds):.2f}x; "
                    f"every fact / index for the {large.facts:,}-fact agent: "
                    f"{before / statistics.median(large.seconds):.2f}x"
                )
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
