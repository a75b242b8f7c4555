"""An index Query on the embedded server costs what its index partition holds, not what
the table holds (``infra/moto_transactions.py``, docs/issues.md#issue-41-item-1): the
time of one Query of an index partition of ``--items`` items, in a table that also
holds ``--others`` and then ten times as many items in other index partitions.

Each case is a fresh in-memory embedded server (``make serve``'s DynamoDB) with one
table (``pk``/``sk``, a GSI ``byOwner`` on ``owner``/``sk``), seeded with
BatchWriteItem; the figure is the median of ``--repeat`` Queries of the one partition
(all its pages). The target: the 10x case within 1.2 times the 1x case. Times on a
shared machine are noisy.

Usage: ``.venv/bin/python bench/index_query_scale.py [--items 50] [--others 2000]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import boto3

from infra.local_dynamodb import embedded_for_bench, put_items

TABLE = "index-query-scale"


def create(client: Any) -> None:
    """The bench's table: hash ``pk``, range ``sk``, GSI ``byOwner`` (owner, sk)."""
    client.create_table(
        TableName=TABLE,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "owner")
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "byOwner",
                "KeySchema": [
                    {"AttributeName": "owner", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def one_case(items: int, others: int, repeat: int) -> float:
    """Median seconds of a Query of the partition of ``items`` items beside ``others``."""
    with embedded_for_bench() as endpoint:
        # The server's moto state is the process's: start each case from nothing.
        urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"))
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
        create(client)
        seeded = [
            {"pk": {"S": f"T#{n}"}, "sk": {"S": f"{n:06d}"}, "owner": {"S": "target"}}
            for n in range(items)
        ] + [
            {"pk": {"S": f"O#{n}"}, "sk": {"S": f"{n:06d}"}, "owner": {"S": f"other{n % 97}"}}
            for n in range(others)
        ]
        put_items(client, TABLE, seeded)
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            found = sum(
                page["Count"]
                for page in client.get_paginator("query").paginate(
                    TableName=TABLE,
                    IndexName="byOwner",
                    KeyConditionExpression="#o = :o",
                    ExpressionAttributeNames={"#o": "owner"},
                    ExpressionAttributeValues={":o": {"S": "target"}},
                )
            )
            times.append(time.perf_counter() - started)
            assert found == items, found
        return statistics.median(times)


def main() -> None:
    """Print the two cases' medians and their ratio."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--items", type=int, default=50, help="items in the queried partition")
    parser.add_argument("--others", type=int, default=2000, help="items elsewhere (1x case)")
    parser.add_argument("--repeat", type=int, default=15, help="Queries per case")
    args = parser.parse_args()
    single = one_case(args.items, args.others, args.repeat)
    tenfold = one_case(args.items, 10 * args.others, args.repeat)
    print(f"{'others':>8} {'median s':>9}")
    print(f"{args.others:>8} {single:>9.4f}")
    print(f"{10 * args.others:>8} {tenfold:>9.4f}")
    print(f"10x/1x time {tenfold / single:.2f}x")


if __name__ == "__main__":
    main()
