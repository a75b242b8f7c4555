"""DynamoDB's transaction-conflict rule for the embedded server's clients
(``infra/transaction_conflicts.py``): what it refuses and what it lets through, on
in-process moto with a hand-moved clock; the transaction code of the app
(``DynamoDBTable.transact``) reads its answers as it reads DynamoDB's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from chalicelib.errors import Conflict
from chalicelib.storage.dynamodb import DynamoDBTable
from infra.tables import create_table
from infra.transaction_conflicts import TransactionConflicts

TABLE = "conflicts"


class Clock:
    """Seconds that move only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        made = boto3.client("dynamodb", region_name="us-east-1")
        create_table(made, TABLE)
        yield made


def put(pk: str) -> dict[str, Any]:
    return {"Put": {"TableName": TABLE, "Item": {"pk": {"S": pk}, "sk": {"S": "x"}}}}


def add_one(pk: str) -> dict[str, Any]:
    return {
        "TableName": TABLE,
        "Key": {"pk": {"S": pk}, "sk": {"S": "x"}},
        "UpdateExpression": "ADD n :one",
        "ExpressionAttributeValues": {":one": {"N": "1"}},
    }


def test_a_transaction_meeting_one_in_progress_is_cancelled_and_writes_nothing(
    client: Any,
) -> None:
    clock = Clock()
    conflicts = TransactionConflicts(client, hold_seconds=0.02, clock=clock)
    client.transact_write_items(TransactItems=[put("a"), put("b")])
    with pytest.raises(ClientError) as cancelled:
        client.transact_write_items(TransactItems=[put("c"), put("b")])
    assert cancelled.value.response["Error"]["Code"] == "TransactionCanceledException"
    reasons = [r["Code"] for r in cancelled.value.response["CancellationReasons"]]
    assert reasons == ["None", "TransactionConflict"]
    assert "Item" not in client.get_item(TableName=TABLE, Key=put("c")["Put"]["Item"])
    client.transact_write_items(TransactItems=[put("d")])  # other items: no conflict
    clock.now += 0.021  # the first transaction is done
    client.transact_write_items(TransactItems=[put("c"), put("b")])
    assert (conflicts.cancelled, conflicts.let_through) == (1, 3)


def test_a_single_write_meeting_a_transaction_is_refused_and_never_holds_an_item(
    client: Any,
) -> None:
    clock = Clock()
    conflicts = TransactionConflicts(client, hold_seconds=0.02, clock=clock)
    client.transact_write_items(TransactItems=[put("a")])
    with pytest.raises(ClientError) as refused:
        client.update_item(**add_one("a"))
    assert refused.value.response["Error"]["Code"] == "TransactionConflictException"
    client.update_item(**add_one("b"))
    client.update_item(**add_one("b"))  # atomic counters never conflict with each other
    client.transact_write_items(TransactItems=[put("b")])  # nor hold the item
    assert (conflicts.refused, conflicts.cancelled) == (1, 0)
    assert client.get_item(TableName=TABLE, Key=add_one("b")["Key"])["Item"]["pk"] == {"S": "b"}


def test_the_app_retries_a_conflicted_transaction_and_answers_conflict_past_its_attempts(
    client: Any,
) -> None:
    clock = Clock()
    conflicts = TransactionConflicts(client, hold_seconds=0.02, clock=clock)
    table = DynamoDBTable(client, TABLE)
    table.transact([put("a")])
    with pytest.raises(Conflict):
        table.transact([put("a")])  # the clock stands still: every attempt meets it
    assert conflicts.cancelled == 3
    conflicts.close()
    table.transact([put("a")])
