"""A fact's save cost with its recall embedding (docs/issues.md#issue-17: within 2x of before), on
one BLAS thread: the whole save through ``MemoryService`` on the embedded DynamoDB (moto on
loopback), with the process's MiniLM and with no embedding (storage only), and the
embedding alone. Texts are the recall benchmark's facts (docs/reference.md#recall-benchmark,
read only).

To compare two versions, run the same script with the other checkout first on the
path (``PYTHONPATH=/path/to/other/checkout``): it imports ``chalicelib`` and ``infra``
from wherever Python finds them first.

Usage: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/recall_save_cost.py [--data DIR]``
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO_ROOT))  # after PYTHONPATH: another checkout may come first

import boto3  # noqa: E402

import chalicelib  # noqa: E402
from chalicelib import wiring  # noqa: E402
from chalicelib.models.principal import Principal, PrincipalKind  # noqa: E402
from chalicelib.models.requests import SaveFactRequest  # noqa: E402
from chalicelib.services.recall.embedding import MiniLMEmbedder  # noqa: E402
from chalicelib.services.run_context import RunContext  # noqa: E402
from chalicelib.settings import Settings  # noqa: E402
from infra.local_dynamodb import EmbeddedAWS  # noqa: E402
from infra.tables import create_table  # noqa: E402

DEFAULT_DATA = REPO_ROOT / ".." / "shared" / "recall-eval" / "dev"


class NoEmbedding(MiniLMEmbedder):
    """Stores a fixed format-1 embedding: the save without the embedding's cost."""

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """A fixed sentence-only embedding per text."""
        return [b"\x01" + bytes(384)] * len(texts)


def timed(action: Callable[[str], object], texts: list[str]) -> tuple[float, float]:
    """Median and 90th-percentile milliseconds of ``action`` over ``texts`` (3 warm-ups)."""
    for text in texts[:3]:
        action(text)
    runs = []
    for text in texts:
        started = time.perf_counter()
        action(text)
        runs.append((time.perf_counter() - started) * 1000)
    runs.sort()
    return statistics.median(runs), runs[int(0.9 * (len(runs) - 1))]


def main() -> int:
    """Time the saves and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--facts", type=int, default=150)
    arguments = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    with (arguments.data / "memories.jsonl").open(encoding="utf-8") as lines:
        texts = [json.loads(line)["text"] for line in lines][: arguments.facts]
    print(f"chalicelib from {Path(chalicelib.__file__).parent}; load {os.getloadavg()[0]:.1f}")
    embedder = MiniLMEmbedder()
    embedding = timed(lambda text: embedder.embed([text]), texts)
    print(f"save-time embedding alone: median {embedding[0]:.1f} ms, p90 {embedding[1]:.1f} ms")
    server = EmbeddedAWS()
    client = boto3.client("dynamodb", endpoint_url=server.start(), region_name="us-east-1")
    try:
        for number, (name, used) in enumerate(
            (("with the MiniLM embedding", embedder), ("no embedding (storage)", NoEmbedding()))
        ):
            table = f"save-cost-{number}"
            create_table(client, table)
            services = wiring.build_services(
                Settings(table_name=table), client=client, embedder=used
            )
            workspace = services.admin.create_workspace("bench")
            issued = services.admin.create_agent(workspace.id, "bench")
            agent = Principal(kind=PrincipalKind.AGENT, id=issued.id, workspace_id=workspace.id)
            save = services.memories.save
            median, p90 = timed(
                lambda text, save=save, agent=agent: save(  # type: ignore[misc]
                    agent, SaveFactRequest(text=text), RunContext()
                ),
                texts,
            )
            print(
                f"fact save through MemoryService, {name:<26}: median {median:.1f} ms,"
                f" p90 {p90:.1f} ms"
            )
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
