"""Parity of the embedded server's ``TransactWriteItems`` (``infra/moto_transactions.py``)
with stock moto (docs/issues.md#issue-16-item-4: a stand-in gets a parity test).

Each scenario runs the same transaction on a seeded table three ways: stock moto
in-process, the replacement in-process (as the embedded server runs it), and
through a real embedded server. The answer (success, or the error's code, message
and cancellation reasons) and the table's final items must be the same; a failure
anywhere leaves every item as it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb import dynamodb_backends

from infra import moto_transactions
from infra.local_dynamodb import EmbeddedAWS
from tests.helpers import embedded_client

REGION = "us-east-1"
SEED = [
    {"pk": {"S": "a"}, "sk": {"S": "1"}, "n": {"N": "1"}},
    {"pk": {"S": "a"}, "sk": {"S": "2"}, "n": {"N": "2"}, "tags": {"SS": ["x", "y"]}},
    {"pk": {"S": "b"}, "sk": {"S": "1"}, "text": {"S": "keep"}},
]
Op = dict[str, Any]


def put(pk: str, sk: str, **attributes: Any) -> Op:
    item = {"pk": {"S": pk}, "sk": {"S": sk}, **attributes}
    return {"Put": {"Item": item}}


def update(pk: str, sk: str, expression: str, **extra: Any) -> Op:
    key = {"pk": {"S": pk}, "sk": {"S": sk}}
    return {"Update": {"Key": key, "UpdateExpression": expression, **extra}}


def delete(pk: str, sk: str, **extra: Any) -> Op:
    return {"Delete": {"Key": {"pk": {"S": pk}, "sk": {"S": sk}}, **extra}}


def check(pk: str, sk: str, condition: str) -> Op:
    key = {"pk": {"S": pk}, "sk": {"S": sk}}
    return {"ConditionCheck": {"Key": key, "ConditionExpression": condition}}


VALID = [
    put("c", "1", text={"S": "new"}),
    update("a", "1", "SET n = n + :one", ExpressionAttributeValues={":one": {"N": "1"}}),
    delete("a", "2"),
]
"""Three writes that succeed together; the scenarios swap one for a failing op."""

FAILING: dict[str, Op] = {
    "condition": {
        "Put": {
            **put("b", "1", text={"S": "gone"})["Put"],
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    },
    "condition_all_old": delete(
        "b",
        "1",
        ConditionExpression="text = :other",
        ExpressionAttributeValues={":other": {"S": "other"}},
        ReturnValuesOnConditionCheckFailure="ALL_OLD",
    ),
    "malformed_update": update("a", "1", "SET n = n +"),
    "unknown_name": update(
        "a", "1", "SET #missing = :v", ExpressionAttributeValues={":v": {"N": "1"}}
    ),
    "item_too_large": put("d", "1", blob={"S": "x" * 410_000}),
    "key_type_mismatch": {"Put": {"Item": {"pk": {"N": "1"}, "sk": {"S": "1"}}}},
    "update_a_key": update("a", "1", "SET pk = :v", ExpressionAttributeValues={":v": {"S": "z"}}),
}


def scenarios() -> dict[str, list[Op]]:
    """Name -> the transaction's items."""
    found: dict[str, list[Op]] = {
        "success": [*VALID, check("b", "1", "attribute_exists(pk)")],
        "duplicate_item": [
            VALID[1],
            update("a", "1", "SET n = :v", ExpressionAttributeValues={":v": {"N": "9"}}),
        ],
        "update_creates_then_fails": [
            update("e", "1", "SET n = :v", ExpressionAttributeValues={":v": {"N": "5"}}),
            FAILING["malformed_update"],
        ],
        "failing_check_last": [*VALID, check("b", "1", "attribute_not_exists(pk)")],
    }
    for name, failing in FAILING.items():
        for position in range(len(VALID) + 1):
            # A failing op on an item VALID also touches would be a duplicate instead.
            others = [op for op in VALID if _key(op) != _key(failing)]
            found[f"{name}_at_{position}"] = [*others[:position], failing, *others[position:]]
    return found


def _key(op: Op) -> tuple[str, str]:
    ((_, body),) = op.items()
    key = body.get("Key") or body["Item"]
    return (str(key["pk"]), str(key["sk"]))


SCENARIOS = scenarios()


def ordered(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items in key order (keys compared as their JSON text)."""
    return sorted(items, key=lambda item: json.dumps([item["pk"], item["sk"]], sort_keys=True))


Outcome = tuple[str, str, Any]


def create_keyed_table(client: Any, table: str) -> None:
    """A table keyed by ``pk`` (hash) and ``sk`` (range), both strings."""
    client.create_table(
        TableName=table,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def run(client: Any, table: str, items: list[Op]) -> tuple[Outcome, list[dict[str, Any]]]:
    """Seed ``table``, run the transaction; return its outcome and the final items."""
    create_keyed_table(client, table)
    for item in SEED:
        client.put_item(TableName=table, Item=item)
    sent = [{kind: {**body, "TableName": table}} for op in items for kind, body in op.items()]
    try:
        client.transact_write_items(TransactItems=sent)
        outcome: Outcome = ("ok", "", None)
    except ClientError as error:
        outcome = (
            error.response["Error"]["Code"],
            error.response["Error"]["Message"],
            error.response.get("CancellationReasons"),
        )
    scanned = client.scan(TableName=table, ConsistentRead=True)["Items"]
    return outcome, ordered(scanned)


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        yield boto3.client("dynamodb", region_name=REGION)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    embedded = EmbeddedAWS()
    yield embedded.start()
    embedded.stop()


def stock(client: Any, table: str, items: list[Op]) -> tuple[Outcome, list[dict[str, Any]]]:
    return run(client, table, items)


def replaced(client: Any, table: str, items: list[Op]) -> tuple[Outcome, list[dict[str, Any]]]:
    with moto_transactions.embedded_server_requests():
        return run(client, table, items)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_replacement_answers_and_leaves_the_table_as_stock_moto(
    name: str, in_process: Any, server: str
) -> None:
    expected = stock(in_process, f"stock-{name}", SCENARIOS[name])
    if expected[0][0] != "ok":  # atomic: a failed transaction changes no item
        assert expected[1] == ordered(SEED)
    assert replaced(in_process, f"replaced-{name}", SCENARIOS[name]) == expected
    assert run(embedded_client(server), f"server-{name}", SCENARIOS[name]) == expected


def test_the_scenarios_cover_success_cancellation_and_validation(in_process: Any) -> None:
    codes = {
        name: stock(in_process, f"cover-{name}", items)[0][0] for name, items in SCENARIOS.items()
    }
    assert codes["success"] == "ok"
    assert codes["condition_at_1"] == "TransactionCanceledException"
    assert codes["malformed_update_at_2"] == "ValidationException"
    assert codes["duplicate_item"] == "ValidationException"
    assert {codes[f"item_too_large_at_{n}"] for n in range(4)} != {"ok"}
    assert {codes[f"key_type_mismatch_at_{n}"] for n in range(4)} != {"ok"}
    # Every failing scenario leaves the seeded items exactly as they were.
    for name, items in SCENARIOS.items():
        if codes[name] != "ok":
            assert stock(in_process, f"seed-{name}", items)[1] == ordered(SEED)


def backend_table(name: str) -> Any:
    """moto's own ``Table`` object of the in-process backend."""
    return dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].tables[name]


def transact(client: Any, table: str, items: list[Op]) -> None:
    client.transact_write_items(
        TransactItems=[
            {kind: {**body, "TableName": table}} for op in items for kind, body in op.items()
        ]
    )


def test_a_failed_transaction_on_an_embedded_request_copies_no_table(in_process: Any) -> None:
    with moto_transactions.embedded_server_requests():
        outcome, _ = run(in_process, "copies", SCENARIOS["malformed_update_at_1"])
        table = backend_table("copies")
        with pytest.raises(ClientError):
            transact(in_process, "copies", SCENARIOS["condition_at_2"])
    assert outcome[0] == "ValidationException"
    assert backend_table("copies") is table  # stock moto would have put back a deep copy


def test_in_process_moto_after_an_embedded_server_is_stock(in_process: Any, server: str) -> None:
    run(embedded_client(server), "server-first", SCENARIOS["success"])
    outcome, items = run(in_process, "after-server", SCENARIOS["malformed_update_at_1"])
    assert outcome[0] == "ValidationException"
    assert items == ordered(SEED)
    table = backend_table("after-server")
    with pytest.raises(ClientError):
        transact(in_process, "after-server", SCENARIOS["condition_at_2"])
    # Stock moto restores a deep copy of the table: outside the server, no shortcut.
    assert backend_table("after-server") is not table


QUERIES: dict[str, dict[str, Any]] = {
    "whole partition": {"KeyConditionExpression": "pk = :pk"},
    "newest first, a page of 7": {
        "KeyConditionExpression": "pk = :pk",
        "ScanIndexForward": False,
        "Limit": 7,
    },
    "prefix": {"KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)"},
    "from a key on": {"KeyConditionExpression": "pk = :pk AND sk >= :low"},
    "between, filtered, projected": {
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
        "FilterExpression": "n > :three",
        "ProjectionExpression": "pk, sk, n",
    },
    "an index": {"IndexName": "byN", "KeyConditionExpression": "g = :g", "Limit": 5},
}


def pages(client: Any, table: str, query: dict[str, Any]) -> list[Any]:
    """Every page of a query, as DynamoDB answers it (items, counts, continuation)."""
    values = {
        ":pk": {"S": "P#1"},
        ":prefix": {"S": "A#"},
        ":low": {"S": "A#05"},
        ":high": {"S": "B#03"},
        ":three": {"N": "3"},
        ":g": {"S": "g"},
    }
    expression = " ".join(str(v) for v in query.values())
    request = {
        "TableName": table,
        **query,
        "ExpressionAttributeValues": {k: v for k, v in values.items() if k in expression},
    }
    found = []
    while True:
        response = client.query(**request)
        found.append((response["Items"], response["Count"], response.get("LastEvaluatedKey")))
        if "LastEvaluatedKey" not in response:
            return found
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def seeded_query_table(client: Any, table: str) -> None:
    client.create_table(
        TableName=table,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": name, "AttributeType": kind}
            for name, kind in (("pk", "S"), ("sk", "S"), ("g", "S"), ("n", "N"))
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "byN",
                "KeySchema": [
                    {"AttributeName": "g", "KeyType": "HASH"},
                    {"AttributeName": "n", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    for partition in range(3):
        for prefix in ("A", "B"):
            for number in range(12):
                item = {
                    "pk": {"S": f"P#{partition}"},
                    "sk": {"S": f"{prefix}#{number:02d}"},
                    "n": {"N": str(number)},
                    "g": {"S": "g"},
                    # Large enough that a partition spans several 1 MB pages.
                    "b": {"B": bytes(200_000 if number % 3 == 0 else 10)},
                }
                client.put_item(TableName=table, Item=item)


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_a_query_on_an_embedded_request_answers_as_stock_moto(name: str, in_process: Any) -> None:
    seeded_query_table(in_process, f"query-{len(name)}")
    expected = pages(in_process, f"query-{len(name)}", QUERIES[name])
    with moto_transactions.embedded_server_requests():
        assert pages(in_process, f"query-{len(name)}", QUERIES[name]) == expected
    if name == "whole partition":
        assert len(expected) > 1  # the pages and their continuation keys are compared too


def answer(response: dict[str, Any]) -> dict[str, Any]:
    """A Query's answer without its request metadata."""
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


@pytest.mark.parametrize("forward", [True, False])
def test_a_page_of_a_large_partition_hands_moto_a_bounded_walk(
    in_process: Any, monkeypatch: pytest.MonkeyPatch, forward: bool
) -> None:
    # A page of 3 (either direction, with its continuation) is given as many items beside
    # 30 or 600 others in its partition (docs/issues.md#issue-41-item-4), with the answers
    # of stock moto.
    handed: list[int] = []
    moto_transactions.install()
    walk = moto_transactions._partition_items

    def counted(table: Any) -> Any:
        found = walk(table)
        handed.append(len(found))
        return found

    monkeypatch.setattr(moto_transactions.Table, "all_items", counted)
    sizes = []
    for others in (30, 600):
        table = f"walk-{others}-{forward}"
        create_keyed_table(in_process, table)
        for number in range(others):
            for prefix in ("A", "L", "Z"):
                item = {"pk": {"S": "P"}, "sk": {"S": f"{prefix}#{number:04d}"}}
                in_process.put_item(TableName=table, Item=item)
        query = {
            "TableName": table,
            "KeyConditionExpression": "pk = :p AND sk BETWEEN :low AND :high",
            "ExpressionAttributeValues": {
                ":p": {"S": "P"},
                ":low": {"S": "L#"},
                ":high": {"S": "L#\U0010ffff"},
            },
            "Limit": 3,
            "ScanIndexForward": forward,
        }
        first = answer(in_process.query(**query))
        second = answer(in_process.query(**query, ExclusiveStartKey=first["LastEvaluatedKey"]))
        handed.clear()
        with moto_transactions.embedded_server_requests():
            assert answer(in_process.query(**query)) == first
            again = in_process.query(**query, ExclusiveStartKey=first["LastEvaluatedKey"])
            assert answer(again) == second
        sizes.append(list(handed))
    assert sizes[0] == sizes[1] == [4, 4]
