"""The DynamoDB table, defined once (docs/issues.md#issue-2): used by the tests, the local
server and the deploy template (``infra/template.py``).

One table holds every item (single-table design; the access patterns are in
the README). Keys are strings built only by ``chalicelib/storage/keys.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chalicelib.storage.keys import (
    AGENT_KIND_INDEX_PARTITION,
    AGENT_KIND_PROJECTION,
    BY_AGENT_KIND,
    BY_ROUTINE_STATUS,
    BY_TOKEN_PRINCIPAL,
    KV_TTL_ATTRIBUTE,
    MEMORY_INDEXES,
    ROUTINE_INDEX_PARTITION,
    ROUTINE_INDEX_SORT,
    SORT_ATTRIBUTE,
    TOKEN_INDEX_PARTITION,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import TimeToLiveSpecificationTypeDef

INDEX_RELEASE_ORDER: tuple[str, ...] = (
    *MEMORY_INDEXES,
    BY_ROUTINE_STATUS,
    BY_TOKEN_PRINCIPAL,
    BY_AGENT_KIND,
)
"""The table's GSIs in the order releases added them: the four memory indexes of the
first release (created together with the table), then ``byRoutineStatus`` (the nightly
review, docs/issues.md#issue-4), ``byTokenPrincipal`` (tokens, docs/issues.md#issue-12) and
``byAgentKind`` (the dashboard, docs/issues.md#issue-13). A new index goes at the end:
a stack update adds one GSI at most (``infra/upgrade.py``)."""
FIRST_RELEASE_INDEXES = len(MEMORY_INDEXES)
"""How many of ``INDEX_RELEASE_ORDER`` every table has had since its creation."""


def table_definition(table_name: str) -> dict[str, Any]:
    """Return the ``CreateTable`` arguments for the table (on-demand billing).

    Args:
        table_name: the table's name, e.g. ``pinework-local``.
    """
    attributes = [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "S"},
        {"AttributeName": SORT_ATTRIBUTE, "AttributeType": "S"},
    ]
    indexes = []
    for index_name, partition_attribute in MEMORY_INDEXES.items():
        attributes.append({"AttributeName": partition_attribute, "AttributeType": "S"})
        indexes.append(
            {
                "IndexName": index_name,
                "KeySchema": [
                    {"AttributeName": partition_attribute, "KeyType": "HASH"},
                    {"AttributeName": SORT_ATTRIBUTE, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        )
    # Counts and pictures of the dashboard (docs/issues.md#issue-13): a few small attributes only.
    attributes.append({"AttributeName": AGENT_KIND_INDEX_PARTITION, "AttributeType": "S"})
    indexes.append(
        {
            "IndexName": BY_AGENT_KIND,
            "KeySchema": [
                {"AttributeName": AGENT_KIND_INDEX_PARTITION, "KeyType": "HASH"},
                {"AttributeName": SORT_ATTRIBUTE, "KeyType": "RANGE"},
            ],
            "Projection": {
                "ProjectionType": "INCLUDE",
                "NonKeyAttributes": list(AGENT_KIND_PROJECTION),
            },
        }
    )
    # Sparse: only live routines carry these attributes (the nightly fan-out,
    # docs/reference.md#9-review).
    attributes += [
        {"AttributeName": ROUTINE_INDEX_PARTITION, "AttributeType": "S"},
        {"AttributeName": ROUTINE_INDEX_SORT, "AttributeType": "S"},
    ]
    indexes.append(
        {
            "IndexName": BY_ROUTINE_STATUS,
            "KeySchema": [
                {"AttributeName": ROUTINE_INDEX_PARTITION, "KeyType": "HASH"},
                {"AttributeName": ROUTINE_INDEX_SORT, "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
    )
    # Sparse: only token items carry principalId (a principal's tokens, docs/issues.md#issue-12).
    attributes.append({"AttributeName": TOKEN_INDEX_PARTITION, "AttributeType": "S"})
    indexes.append(
        {
            "IndexName": BY_TOKEN_PRINCIPAL,
            "KeySchema": [{"AttributeName": TOKEN_INDEX_PARTITION, "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
        }
    )
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": attributes,
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": indexes,
    }


def time_to_live() -> TimeToLiveSpecificationTypeDef:
    """The table's TTL setting: ``expiresAtEpoch`` (epoch seconds), carried only by
    anonymous key-value entries (docs/reference.md#10-key-value), rotated tokens past their grace
    period, and dashboard sessions and sign-in codes (docs/reference.md#13-dashboard); memories are
    never deleted by TTL."""
    return {"AttributeName": KV_TTL_ATTRIBUTE, "Enabled": True}


def create_table(client: DynamoDBClient, table_name: str) -> bool:
    """Create the table unless it exists; wait until it is active; enable its TTL.

    Args:
        client: a boto3 DynamoDB client (real or moto).
        table_name: the table's name.

    Returns:
        True if the table was created, False if it already existed.
    """
    if table_name in client.list_tables()["TableNames"]:
        # A table made by an older version upgrades in place (new indexes, TTL).
        add_missing_indexes(client, table_name)
        _enable_time_to_live(client, table_name)
        return False
    client.create_table(**table_definition(table_name))
    client.get_waiter("table_exists").wait(TableName=table_name)
    _enable_time_to_live(client, table_name)
    return True


def _enable_time_to_live(client: DynamoDBClient, table_name: str) -> None:
    """Turn the TTL on unless it already is (a table made before docs/issues.md#issue-5 lacks
    it)."""
    described = client.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
    if described.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
        return
    client.update_time_to_live(TableName=table_name, TimeToLiveSpecification=time_to_live())


def add_missing_indexes(client: DynamoDBClient, table_name: str) -> list[str]:
    """Add every GSI of ``table_definition`` that the existing table lacks.

    DynamoDB creates one GSI per ``UpdateTable`` call, so they are added in turn,
    each waited for until the table is active again.

    Returns:
        The names of the indexes added.
    """
    definition = table_definition(table_name)
    described = client.describe_table(TableName=table_name)["Table"]
    present = {index["IndexName"] for index in described.get("GlobalSecondaryIndexes", [])}
    types = {item["AttributeName"]: item for item in definition["AttributeDefinitions"]}
    added = []
    for index in definition["GlobalSecondaryIndexes"]:
        if index["IndexName"] in present:
            continue
        names = [part["AttributeName"] for part in index["KeySchema"]]
        client.update_table(
            TableName=table_name,
            AttributeDefinitions=[types[name] for name in names],
            GlobalSecondaryIndexUpdates=[{"Create": index}],
        )
        client.get_waiter("table_exists").wait(TableName=table_name)
        added.append(index["IndexName"])
    return added
