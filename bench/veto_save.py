"""The cost of "vetoes stick" on an agent's save (docs/issues.md#issue-14-item-5), on the embedded
DynamoDB: one agent with 5,000 facts, 100 of them vetoed by a person.

Compared, per save of a new fact (median and 90th percentile of the check alone,
and its DynamoDB requests):

* **index** (what ``VetoGuard`` does): one BatchGetItem of the vetoed-text index
  entries (normalized text, duplicate key) and the marker; a GetItem per
  candidate, only when one matches;
* **naive**: read every archived fact of the agent from the status index and
  compare the text with each vetoed one (``is_duplicate``, embeddings included).

Also printed: the one-time filing of the agent's earlier vetoes (the first check
of an agent after the index was introduced), a refused save of a vetoed text,
and a whole ``MemoryService.save`` with the check. The embedder is a stand-in
that hashes text to a vector (MiniLM's cost is the same with or without the
check, and is measured in ``bench/recall_speed.py``).

Usage: ``.venv/bin/python bench/veto_save.py [--facts 5000] [--vetoed 100] [--saves 40]``
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from chalicelib import wiring  # noqa: E402
from chalicelib.errors import MemoryVetoed  # noqa: E402
from chalicelib.ids import FixedClock  # noqa: E402
from chalicelib.models.memory import VETOED, Memory, MemoryKind, MemoryStatus  # noqa: E402
from chalicelib.models.principal import Principal, PrincipalKind  # noqa: E402
from chalicelib.models.requests import SaveFactRequest  # noqa: E402
from chalicelib.services.memory.vetoes import VetoGuard  # noqa: E402
from chalicelib.services.recall.embedding import DIMENSIONS, FloatArray, encode  # noqa: E402
from chalicelib.services.review.sameness import is_duplicate, vector_of  # noqa: E402
from chalicelib.services.run_context import RunContext  # noqa: E402
from chalicelib.settings import Settings  # noqa: E402
from chalicelib.storage.dynamodb import DynamoDBTable  # noqa: E402
from chalicelib.storage.memories import DynamoDBMemoryRepository  # noqa: E402
from chalicelib.storage.vetoes import DynamoDBVetoIndex  # noqa: E402
from infra.local_dynamodb import embedded_for_bench, memory_items, put_items  # noqa: E402
from infra.tables import create_table  # noqa: E402

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
TABLE = "veto-bench"


class HashEmbedder:
    """A stand-in ``Embedder``: a unit vector seeded by the text's SHA-256."""

    def _vectors(self, texts: Sequence[str]) -> FloatArray:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            row = np.random.default_rng(seed).standard_normal(DIMENSIONS).astype(np.float32)
            rows.append(row / np.linalg.norm(row))
        return np.stack(rows)

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """Format-2 embeddings with no word pieces."""
        vectors = self._vectors(texts)
        return encode(vectors, [np.zeros((0, DIMENSIONS), dtype=np.float32)] * len(texts))

    def embed_matrix(self, texts: Sequence[str]) -> FloatArray:
        """Unit vectors."""
        return self._vectors(texts)

    def embed_query(self, text: str) -> tuple[FloatArray, FloatArray]:
        """The vector and no word pieces."""
        return self._vectors([text])[0], np.zeros((0, DIMENSIONS), dtype=np.float32)


def text_of(number: int) -> str:
    """A distinct, realistic-looking fact."""
    services = ("billing", "search", "orders", "payments", "auth", "media", "reports")
    return (
        f"The {services[number % 7]} worker {number} reads queue q-{number:05d} "
        f"and writes to bucket b-{number * 7 % 9973}"
    )


def load(client: Any, agent: Principal, facts: int, vetoed: int, embedder: HashEmbedder) -> None:
    """Write ``facts`` facts of the agent, the last ``vetoed`` of them vetoed, with
    BatchWriteItem (as if vetoed before the index existed)."""
    texts = [text_of(n) for n in range(facts)]
    embeddings = embedder.embed(texts)
    items = []
    for number, (text, embedding) in enumerate(zip(texts, embeddings, strict=True)):
        created = NOW - timedelta(days=60) + timedelta(seconds=number)
        is_vetoed = number >= facts - vetoed
        memory = Memory(
            id=f"mem_01KVETO{number:019d}",
            workspace_id=agent.workspace_id,
            agent_id=agent.id,
            kind=MemoryKind.FACT,
            text=text,
            embedding=embedding,
            expires_at=NOW + timedelta(days=30),
            status=MemoryStatus.ARCHIVED if is_vetoed else MemoryStatus.ACTIVE,
            archive_reason=VETOED if is_vetoed else None,
            archived_at=NOW - timedelta(days=1) if is_vetoed else None,
            saved_by_agent_id=agent.id,
            created_at=created,
            updated_at=created,
        )
        items.append(memory)
    put_items(client, TABLE, memory_items(items))


def naive_check(
    memories: DynamoDBMemoryRepository, agent: Principal, text: str, embedding: bytes
) -> None:
    """Read every archived fact of the agent and compare with each vetoed one."""
    after = None
    while True:
        page = memories.list_memories(
            workspace_id=agent.workspace_id,
            agent_id=agent.id,
            status="archived",
            kind="fact",
            limit=500,
            after_id=after,
        )
        for memory in page.memories:
            if memory.archive_reason == VETOED and is_duplicate(
                text, memory.text, vector_of(embedding), vector_of(memory.embedding)
            ):
                raise MemoryVetoed(memory.id)
        if page.continue_after is None:
            return
        after = page.continue_after


def timed(requests: Counter[str], call: Callable[[], object]) -> tuple[float, int]:
    """Seconds and DynamoDB requests of one call (``MemoryVetoed`` counts as done)."""
    requests.clear()
    started = time.perf_counter()
    with contextlib.suppress(MemoryVetoed):
        call()
    return time.perf_counter() - started, sum(requests.values())


def summary(label: str, runs: list[tuple[float, int]]) -> None:
    """One line: median and p90 milliseconds, requests per call."""
    seconds = sorted(run[0] for run in runs)
    p90 = seconds[min(len(seconds) - 1, round(0.9 * len(seconds)) - 1)]
    print(
        f"{label:<44} median {statistics.median(seconds) * 1000:8.1f} ms   "
        f"p90 {p90 * 1000:8.1f} ms   requests {runs[0][1]}"
    )


def main() -> None:
    """Load, measure, print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--facts", type=int, default=5000)
    parser.add_argument("--vetoed", type=int, default=100)
    parser.add_argument("--saves", type=int, default=40)
    args = parser.parse_args()
    with embedded_for_bench() as endpoint:
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
        requests: Counter[str] = Counter()
        client.meta.events.register(
            "before-call.dynamodb",
            lambda event_name, **_: requests.update([event_name.rsplit(".", 1)[-1]]),
        )
        create_table(client, TABLE)
        embedder = HashEmbedder()
        services = wiring.build_services(
            Settings(table_name=TABLE, bucket_name="veto-bench"),
            clock=FixedClock(NOW),
            client=client,
            embedder=embedder,
        )
        workspace = services.admin.create_workspace("bench")
        issued = services.admin.create_agent(workspace.id, "bench")
        agent = Principal(kind=PrincipalKind.AGENT, id=issued.id, workspace_id=workspace.id)
        load(client, agent, args.facts, args.vetoed, embedder)
        print(f"{args.facts} facts, {args.vetoed} of them vetoed, embedded DynamoDB (moto)")
        table = DynamoDBTable(client, TABLE)
        memories = DynamoDBMemoryRepository(table)
        guard = VetoGuard(memories, DynamoDBVetoIndex(table))
        fresh = [f"The cron job {n} rotates the logs of host h-{n}" for n in range(args.saves)]
        vetoed_text = text_of(args.facts - 1)
        embedded = dict(
            zip([*fresh, vetoed_text], embedder.embed([*fresh, vetoed_text]), strict=True)
        )

        def check(text: str) -> Callable[[], object]:
            return lambda: guard.check(agent.workspace_id, agent.id, text, embedded[text])

        summary("index: first check (files the earlier vetoes)", [timed(requests, check(fresh[0]))])
        summary("index: check of a new fact", [timed(requests, check(t)) for t in fresh])
        summary(
            "index: check of a vetoed text (refused)", [timed(requests, check(vetoed_text))] * 1
        )
        summary(
            "naive: check of a new fact (reads the archive)",
            [
                timed(requests, lambda t=t: naive_check(memories, agent, t, embedded[t]))
                for t in fresh[: max(3, args.saves // 8)]
            ],
        )

        def save(text: str) -> Callable[[], object]:
            return lambda: services.memories.save(agent, SaveFactRequest(text=text), RunContext())

        summary(
            "whole save (MemoryService.save) with the index",
            [
                timed(requests, save(f"The deploy key {n} is rotated by job j-{n}"))
                for n in range(args.saves)
            ],
        )


if __name__ == "__main__":
    main()
