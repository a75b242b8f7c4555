"""What one bulk action of 100 memories costs (docs/reference.md#bulk-actions,
docs/issues.md#issue-46-item-3): the time of archiving, tagging and undoing 100 facts
by ids and by a tag filter through ``BulkService``, on the embedded DynamoDB (moto),
median of ``--repeat`` runs (each on fresh facts). Times on a shared machine are noisy.

Usage: ``.venv/bin/python bench/bulk_actions.py [--count 100] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime

import _offline  # noqa: F401  (first: one BLAS thread, credentials, sys.path)
import boto3

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.models.bulk import BulkRequest
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import SaveFactRequest
from chalicelib.services.run_context import RunContext
from chalicelib.settings import Settings
from infra.local_dynamodb import embedded_for_bench
from infra.tables import create_table

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
TABLE = "bulk-bench"
BUCKET = "bulk-bench"


def main() -> None:
    """Save facts, then time each bulk action and its undo."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with embedded_for_bench() as endpoint:
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        create_table(client, TABLE)
        services = wiring.build_services(
            Settings(table_name=TABLE, bucket_name=BUCKET),
            clock=FixedClock(NOW),
            client=client,
            s3=s3,
        )
        workspace = services.admin.create_workspace("bench")
        agent = Principal(
            kind=PrincipalKind.AGENT,
            id=services.admin.create_agent(workspace.id, "bulk").id,
            workspace_id=workspace.id,
        )
        created = services.admin.create_person(workspace.id, "ops@example.com")
        person = services.auth.authenticate(f"Bearer {created.token}")
        times: dict[str, list[float]] = {}
        for run in range(args.repeat):
            tag = f"batch{run}"
            ids = [
                services.memories.save(
                    agent,
                    SaveFactRequest.model_validate({"text": f"Run {run} fact {n}", "tags": [tag]}),
                    RunContext(),
                ).id
                for n in range(args.count)
            ]
            cases = [
                ("tag by ids", {"action": "tag", "ids": ids, "tags": ["seen"]}),
                (
                    "archive by filter",
                    {
                        "action": "archive",
                        "filter": {"agentId": agent.id, "tag": [tag]},
                        "reason": "bench",
                    },
                ),
            ]
            for label, body in cases:
                started = time.perf_counter()
                result = services.bulk.apply(person, BulkRequest.model_validate(body))
                times.setdefault(label, []).append(time.perf_counter() - started)
                assert len(result.outcome.changed) == args.count, (label, result.outcome.skipped)
                started = time.perf_counter()
                _, undone = services.bulk.undo(person, str(result.id))
                times.setdefault(f"undo of {label}", []).append(time.perf_counter() - started)
                assert len(undone.changed) == args.count
        print(f"{'case':<28} {'memories':>8} {'median s':>9} {'ms each':>8}")
        for label, seconds in times.items():
            median = statistics.median(seconds)
            print(f"{label:<28} {args.count:>8} {median:>9.2f} {1000 * median / args.count:>8.1f}")


if __name__ == "__main__":
    main()
