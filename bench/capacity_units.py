"""DynamoDB capacity units per call of each route a workload uses (docs/operations.md#cost):
the read and write units DynamoDB would charge (``infra/capacity.py``'s rules), per
call, for an agent holding 100 and 1,000 live facts, and the log bytes each call
writes (what CloudWatch Logs ingests).

The routes are called as a deployed stage runs them: the HTTP API through
``chalice.test.Client`` on ``app.py`` (bearer auth, the envelope, the log line and
EMF metrics included), the nightly review and its fan-out through the Lambda entry
points (``review_worker`` with an SQS event, ``review_fanout`` with the schedule's
event), all on in-process moto (DynamoDB, S3, SQS). Facts are seeded with
BatchWriteItem through a second client the meter does not watch; they carry the
process's MiniLM embedding as a save stores it. Each figure is the mean of
``--calls`` calls (different facts, sessions or keys).

Usage: ``.venv/bin/python bench/capacity_units.py [--sizes 100 1000] [--calls 3]``
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import _offline

REPO_ROOT = _offline.REPO_ROOT

import boto3  # noqa: E402
from chalice.test import Client  # noqa: E402
from moto import mock_aws  # noqa: E402

from chalicelib import wiring  # noqa: E402
from chalicelib.ids import IdFactory, SystemClock  # noqa: E402
from chalicelib.models.memory import Memory, MemoryKind  # noqa: E402
from chalicelib.settings import REVIEW_QUEUE_NAME, Settings  # noqa: E402
from infra.capacity import CapacityMeter, Tally, item_size  # noqa: E402
from infra.local_dynamodb import memory_items, put_items  # noqa: E402
from infra.tables import create_table  # noqa: E402

BUCKET = "pinework-bench-units"


def _words() -> list[str]:
    """The distinct lowercase words (4 letters or more) of docs/reference.md: English, so
    the facts tokenize and embed like real ones, and drawn at random so they rarely
    look alike to the review (no merges or conflicts inflate its figures)."""
    text = (REPO_ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    return sorted(set(re.findall(r"\b[a-z]{4,12}\b", text)))


WORDS = _words()


def fact_text(number: int) -> str:
    """A distinct fact of a realistic length (~90 characters, like the recall
    benchmark's facts)."""
    rng = random.Random(number)
    pick = [rng.choice(WORDS) for _ in range(8)]
    return (
        f"The {pick[0]} {pick[1]} service needs {pick[2]} {pick[3]} before {pick[4]}; "
        f"ask {pick[5]} about {pick[6]} {pick[7]}."
    )


def question(number: int) -> str:
    """A recall query about the words of one seeded fact (so a few facts match)."""
    pick = fact_text(number).split()
    return f"What does the {pick[1]} {pick[2]} service need before {pick[7]}?"


@dataclass
class Row:
    """One route's mean figures per call."""

    route: str
    read_units: float
    write_units: float
    requests: float
    log_bytes: float
    detail: str = ""
    """Units by table and index, and requests by operation (``--detail``)."""


class Bench:
    """One table seeded for one agent, the app on it, and the meter on its client."""

    def __init__(self, size: int, client: Any, seed: Any, s3: Any, sqs: Any) -> None:
        self.size = size
        self.table = f"units-{size}"
        create_table(seed, self.table)
        self.services = wiring.build_services(
            Settings(table_name=self.table, bucket_name=BUCKET, read_concurrency=1),
            client=client,
            s3=s3,
            sqs=sqs,
        )
        wiring.install(self.services)
        self.seed = seed
        self.meter = CapacityMeter(client, reader=seed)
        workspace = self.services.admin.create_workspace("bench")
        self.workspace_id = workspace.id
        issued = self.services.admin.create_agent(workspace.id, "bench")
        self.agent_id, self.token = issued.id, issued.token
        # Only a person edits a memory (docs/reference.md#4-states).
        self.person_token = self.services.admin.create_person(workspace.id, "ops@example.com").token

    def load(self, count: int) -> list[str]:
        """Seed ``count`` live facts (embedded as a save would) with BatchWriteItem."""
        ids = IdFactory(SystemClock())
        now = datetime.now(UTC)
        texts = [fact_text(number) for number in range(count)]
        embedder = wiring.default_embedder()
        vectors = [v for start in range(0, count, 64) for v in embedder.embed(texts[start:][:64])]
        items, fact_ids = [], []
        for text, embedding in zip(texts, vectors, strict=True):
            fact = Memory(
                embedding=embedding,
                id=ids.new("mem"),
                workspace_id=self.workspace_id,
                agent_id=self.agent_id,
                kind=MemoryKind.FACT,
                text=text,
                expires_at=now + timedelta(days=90),
                created_at=now,
                updated_at=now,
            )
            items.append(fact)
            fact_ids.append(fact.id)
        stored = memory_items(items)
        put_items(self.seed, self.table, stored)
        memory_part = stored[: len(items)]  # memory_items puts the memory items first
        self.fact_size = sum(item_size(item) for item in memory_part) / max(len(items), 1)
        # Unmetered reads merge the seeded segments into volumes, as the recalls of a
        # living store have (docs/issues.md#issue-23-item-2): each recall measured then
        # pays its own compactions only.
        for _ in range(8):
            self.services.recall._index.entries(self.agent_id, now)
        return fact_ids


def call(api: Client, method: str, path: str, token: str, body: Any = None) -> Any:
    """One request to ``/api/v1`` + path with the bearer token; asserts a 2xx answer."""
    response = api.http.request(
        method,
        "/api/v1" + path,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
        body=json.dumps(body) if body is not None else b"",
    )
    if response.status_code >= 300:
        raise RuntimeError(f"{method} {path}: {response.status_code} {response.body!r}")
    return json.loads(response.body) if response.body else None


class LogSink(io.TextIOBase):
    """Stands for stdout while the bench runs: Powertools writes each JSON log line and
    EMF record there (what CloudWatch Logs would ingest); the sink counts their UTF-8
    bytes and drops them. The bench's own table goes to ``sys.__stdout__``."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, text: str) -> int:
        """Count and drop."""
        self.bytes += len(text.encode("utf-8"))
        return len(text)


SINK = LogSink()
OUTPUT = sys.__stdout__
"""The bench's own output (the process's stdout; the logs go to ``SINK``)."""


def show(line: str) -> None:
    """Print one line of the bench's own output."""
    print(line, file=OUTPUT, flush=True)


def measured(bench: Bench, route: str, action: Callable[[int], object], calls: int) -> Row:
    """Mean units, requests and log bytes of ``calls`` runs of ``action(n)``."""
    tallies: list[Tally] = []
    logged = SINK.bytes
    for number in range(calls):
        with bench.meter.measure() as tally:
            action(number)
        tallies.append(tally)
    log_bytes = SINK.bytes - logged
    targets: dict[str, list[float]] = {}
    operations: Counter[str] = Counter()
    for tally in tallies:
        operations.update(tally.requests)
        for target, (read, write) in tally.by_target.items():
            sums = targets.setdefault(target, [0.0, 0.0])
            sums[0] += read / calls
            sums[1] += write / calls
    detail = "; ".join(f"{t} {r:g}R/{w:g}W" for t, (r, w) in sorted(targets.items()))
    detail += " | " + " ".join(f"{op}={n / calls:g}" for op, n in sorted(operations.items()))
    return Row(
        route,
        sum(t.read_units for t in tallies) / calls,
        sum(t.write_units for t in tallies) / calls,
        sum(sum(t.requests.values()) for t in tallies) / calls,
        log_bytes / calls,
        detail,
    )


def api_rows(bench: Bench, api: Client, fact_ids: list[str], calls: int) -> list[Row]:
    """The HTTP routes' figures."""
    token = bench.token

    def save(n: int) -> object:
        return call(api, "POST", "/memories", token, {"text": f"Bench fact {n}: {fact_text(n)}"})

    def day_line(n: int) -> object:
        return call(api, "POST", "/memories/day", token, {"line": f"ran step {n} of the bench"})

    def run_start(n: int) -> object:
        body = {"resumed": False, "sessionId": f"bench-{bench.size}-{n}", "task": question(3 * n)}
        return call(api, "POST", "/memories/recall/start", token, body)

    def recall(n: int) -> object:
        body = {"query": question(3 * n + 1)}
        return call(api, "POST", "/memories/recall", token, body)

    def edit(n: int) -> object:
        body = {"text": f"{fact_text(n)} (edited)"}
        return call(api, "PATCH", f"/memories/{fact_ids[n]}", bench.person_token, body)

    def archive(n: int) -> object:
        body = {"reason": "no longer true after the migration"}
        return call(api, "POST", f"/memories/{fact_ids[-1 - n]}/archive", token, body)

    return [
        measured(bench, "save a fact (POST /memories)", save, calls),
        measured(bench, "day line, first of the day", day_line, 1),
        measured(bench, "day line, later (POST /memories/day)", lambda n: day_line(n + 1), calls),
        measured(bench, "run-start recall (POST /memories/recall/start)", run_start, calls),
        measured(bench, "on-demand recall (POST /memories/recall)", recall, calls),
        measured(
            bench,
            "list memories (GET /memories)",
            lambda n: call(api, "GET", "/memories", token),
            calls,
        ),
        measured(
            bench,
            "get one memory (GET /memories/{id})",
            lambda n: call(api, "GET", f"/memories/{fact_ids[n]}", token),
            calls,
        ),
        measured(bench, "edit, by a person (PATCH /memories/{id})", edit, calls),
        measured(bench, "archive (POST /memories/{id}/archive)", archive, calls),
        measured(
            bench,
            "kv remember (POST /kv/remember)",
            lambda n: call(
                api, "POST", "/kv/remember", token, {"key": f"k{n}", "value": "v" * 200}
            ),
            calls,
        ),
        measured(
            bench,
            "kv recall (POST /kv/recall)",
            lambda n: call(api, "POST", "/kv/recall", token, {"key": f"k{n}"}),
            calls,
        ),
    ]


def job_rows(bench: Bench, api: Client, fan_out_agents: int) -> list[Row]:
    """The nightly review of the agent (worker, one message) and the fan-out per agent."""
    today = datetime.now(UTC).date()

    def review_of(day: str) -> Callable[[int], object]:
        body = {"workspaceId": bench.workspace_id, "agentId": bench.agent_id, "date": day}
        event = api.events.generate_sqs_event(
            message_bodies=[json.dumps(body)], queue_name=REVIEW_QUEUE_NAME
        )

        def review(_: int) -> object:
            answer = api.lambda_.invoke("review_worker", event).payload
            if answer != {"batchItemFailures": []}:
                raise RuntimeError(f"review failed: {answer}")
            return answer

        return review

    rows = []
    for label, day in (("first", today - timedelta(days=1)), ("next", today)):
        started = time.perf_counter()
        row = measured(bench, f"nightly review, rules, {label} night", review_of(str(day)), 1)
        row.route += f" [{time.perf_counter() - started:.0f} s]"
        rows.append(row)
    for number in range(fan_out_agents - 1):  # plus the bench's own agent
        other = bench.services.admin.create_agent(bench.workspace_id, f"other-{number}")
        bench.services.routines.ensure_routine(bench.workspace_id, other.id)
    schedule = api.events.generate_cw_event(
        source="aws.events", detail_type="Scheduled Event", detail={}, resources=[]
    )
    schedule["time"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    fanned = measured(bench, "fan-out", lambda _: api.lambda_.invoke("review_fanout", schedule), 1)
    return [
        *rows,
        Row(
            f"fan-out, per agent ({fan_out_agents} agents)",
            fanned.read_units / fan_out_agents,
            fanned.write_units / fan_out_agents,
            fanned.requests / fan_out_agents,
            fanned.log_bytes / fan_out_agents,
        ),
    ]


def run_size(
    size: int, calls: int, fan_out_agents: int, aws: tuple[Any, ...], detail: bool
) -> list[Row]:
    """Seed one table with ``size`` facts and measure every route."""
    from app import app

    bench = Bench(size, *aws)
    with Client(app) as api:
        call(api, "POST", "/memories", bench.token, {"text": "The bench agent starts here"})
        fact_ids = bench.load(size - 1)
        rows = api_rows(bench, api, fact_ids, calls)
        rows += job_rows(bench, api, fan_out_agents)
    show(f"\n{size} live facts (mean fact item {bench.fact_size:.0f} B); per call:")
    show(f"{'route':<62} {'RRU':>7} {'WRU':>6} {'DDB req':>7} {'log B':>6}")
    for row in rows:
        show(
            f"{row.route:<62} {row.read_units:>7.1f} {row.write_units:>6.1f} "
            f"{row.requests:>7.1f} {row.log_bytes:>6.0f}"
        )
        if detail:
            show(f"    {row.detail}")
    bench.meter.close()
    return rows


def main() -> int:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--fan-out-agents", type=int, default=20)
    parser.add_argument("--detail", action="store_true", help="units by table/index per route")
    args = parser.parse_args()
    started = time.perf_counter()
    # The telemetry writes to the process's stdout (``sys.__stdout__``), whatever
    # ``sys.stdout`` is: both point at the sink while the bench runs.
    sys.stdout = sys.__stdout__ = SINK  # type: ignore[misc]
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        seed = boto3.client("dynamodb", region_name="us-east-1")
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        sqs = boto3.client("sqs", region_name="us-east-1")
        sqs.create_queue(QueueName=REVIEW_QUEUE_NAME)
        for size in args.sizes:
            run_size(size, args.calls, args.fan_out_agents, (client, seed, s3, sqs), args.detail)
    show(f"\n(run time {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
