"""The benches' seeding (``infra.local_dynamodb.put_items``): every item is put, more
than one ``BatchWriteItem`` holds, and what DynamoDB leaves unprocessed is sent again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from infra.local_dynamodb import BATCH_WRITE_ITEMS, put_items


@pytest.fixture
def dynamodb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="t",
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        )
        yield client


def test_every_item_is_put_across_requests(dynamodb: Any) -> None:
    count = 2 * BATCH_WRITE_ITEMS + 3
    put_items(dynamodb, "t", ({"pk": {"S": f"k{n}"}} for n in range(count)))
    assert dynamodb.scan(TableName="t", Select="COUNT")["Count"] == count


def test_what_dynamodb_leaves_unprocessed_is_sent_again() -> None:
    class Throttled:
        """A client that leaves the first request's last item unprocessed."""

        def __init__(self) -> None:
            self.requests: list[list[str]] = []

        def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:  # noqa: N803
            keys = [r["PutRequest"]["Item"]["pk"]["S"] for r in RequestItems["t"]]
            self.requests.append(keys)
            if len(self.requests) == 1:
                return {"UnprocessedItems": {"t": RequestItems["t"][-1:]}}
            return {"UnprocessedItems": {}}

    client = Throttled()
    put_items(client, "t", ({"pk": {"S": f"k{n}"}} for n in range(3)))
    assert client.requests == [["k0", "k1", "k2"], ["k2"]]
