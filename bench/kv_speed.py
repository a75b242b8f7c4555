"""Key-value meta-tools latency (docs/issues.md#issue-5): ``remember``/``recall`` through
``KvService`` against a plain DynamoDB PutItem/GetItem of the same item, on the embedded server.

Usage: ``.venv/bin/python bench/kv_speed.py [iterations]`` (default 300).

What is compared, per call, median and p95 over the iterations:

* remember (a small object value, the seed's research target) vs a plain
  ``PutItem`` of the item ``remember`` writes; target ratio <= 1.3;
* recall vs a plain strongly consistent ``GetItem`` of that item; target <= 1.3;
* a 1 MB value (stored in S3): remember/recall vs a plain S3 PutObject/GetObject
  of the same bytes plus the plain DynamoDB write/read of the pointer item.

Both sides use the same boto3 clients and the same embedded moto server (one
request at a time, loopback HTTP), so the ratio is the service's own overhead:
validation, serialization, the secret check, and the S3 pointer logic.
"""

from __future__ import annotations

import logging
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")

from chalicelib.services.kv.json_text import stringify  # noqa: E402
from chalicelib.services.kv.service import KvScope  # noqa: E402
from chalicelib.settings import Settings  # noqa: E402
from chalicelib.storage.dynamodb import to_attributes  # noqa: E402
from chalicelib.storage.keys import kv_key  # noqa: E402
from chalicelib.wiring import build_services, dynamodb_client, s3_client  # noqa: E402
from infra.local_dynamodb import EmbeddedAWS  # noqa: E402
from infra.tables import create_table  # noqa: E402

TABLE = "pinework-bench"
BUCKET = "pinework-bench"
TARGET = {"ticker": "AAPL", "cik": "0000320193", "since": "2026-08-10", "notes": "Q3 filing"}


def timed(
    ours: Callable[[], Any], plain: Callable[[], Any], iterations: int
) -> tuple[list[float], list[float]]:
    """Run both operations ``iterations`` times, interleaved so drift hits both alike
    (after 20 warm-ups each); seconds per call."""
    for _ in range(20):
        ours()
        plain()
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(iterations):
        for operation, bucket in ((ours, samples[0]), (plain, samples[1])):
            start = time.perf_counter()
            operation()
            bucket.append(time.perf_counter() - start)
    return samples


def summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    return f"median {statistics.median(samples) * 1000:7.3f} ms  p95 {p95 * 1000:7.3f} ms"


def compare(name: str, samples: tuple[list[float], list[float]], target: float | None) -> None:
    ours, plain = samples
    ratio = statistics.median(ours) / statistics.median(plain)
    verdict = "" if target is None else ("  OK" if ratio <= target else f"  OVER {target}")
    print(f"{name:<34} {summary(ours)}")
    print(f"{'  plain':<34} {summary(plain)}")
    print(f"{'  ratio (median)':<34} {ratio:7.3f}{verdict}")


def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    aws = EmbeddedAWS()
    endpoint = aws.start()
    try:
        settings = Settings(
            table_name=TABLE,
            bucket_name=BUCKET,
            dynamodb_endpoint=endpoint,
            s3_endpoint=endpoint,
        )
        dynamodb = dynamodb_client(settings)
        s3 = s3_client(settings)
        create_table(dynamodb, TABLE)
        s3.create_bucket(Bucket=BUCKET)
        kv = build_services(settings, client=dynamodb, s3=s3).kv
        scope = KvScope("byok", "0" * 64)
        run(kv, scope, dynamodb, s3, iterations)
    finally:
        aws.stop()


def run(kv: Any, scope: KvScope, dynamodb: Any, s3: Any, iterations: int) -> None:
    stored = stringify(TARGET)
    item = {
        **kv_key(scope.name, "target"),
        "entity": "kv",
        "valueBytes": len(stored.encode()),
        "storedValue": stored,
    }
    plain_key = to_attributes(kv_key("byok#plain", "target"))
    plain_item = to_attributes({**item, **kv_key("byok#plain", "target")})
    print(f"embedded server, {iterations} calls each, value {len(stored)} bytes\n")

    put_plain = lambda: dynamodb.put_item(  # noqa: E731
        TableName=TABLE, Item=plain_item, ReturnValues="ALL_OLD"
    )
    get_plain = lambda: dynamodb.get_item(  # noqa: E731
        TableName=TABLE, Key=plain_key, ConsistentRead=True
    )
    compare(
        "remember (small object)",
        timed(lambda: kv.remember(scope, "target", TARGET), put_plain, iterations),
        1.3,
    )
    compare(
        "recall (small object)",
        timed(lambda: kv.recall(scope, "target"), get_plain, iterations),
        1.3,
    )

    big = "0123456789abcdef" * (1024 * 1024 // 16)
    big_iterations = max(20, iterations // 10)
    pointer = to_attributes(
        {**kv_key("byok#plain", "big"), "entity": "kv", "valueBytes": len(big), "objectKey": "b"}
    )
    pointer_key = to_attributes(kv_key("byok#plain", "big"))
    data = big.encode()

    def plain_big_put() -> None:
        s3.put_object(Bucket=BUCKET, Key="kv/keep/plain/b", Body=data)
        dynamodb.put_item(TableName=TABLE, Item=pointer, ReturnValues="ALL_OLD")

    def plain_big_get() -> None:
        dynamodb.get_item(TableName=TABLE, Key=pointer_key, ConsistentRead=True)
        s3.get_object(Bucket=BUCKET, Key="kv/keep/plain/b")["Body"].read()

    print(f"\n1 MB value (S3), {big_iterations} calls each\n")
    compare(
        "remember (1 MB)",
        timed(lambda: kv.remember(scope, "big", big), plain_big_put, big_iterations),
        None,
    )
    compare(
        "recall (1 MB)",
        timed(lambda: kv.recall(scope, "big"), plain_big_get, big_iterations),
        None,
    )


if __name__ == "__main__":
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    main()
