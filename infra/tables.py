"""The DynamoDB table, defined once (issue 2): used by the tests, the local
server and the deploy template (``infra/template.py``).

One table holds every item (single-table design; the access patterns are in
the README). Keys are strings built only by ``chalicelib/storage/keys.py``.
"""

from __future__ import annotations

from typing import Any

from chalicelib.storage.keys import MEMORY_INDEXES, SORT_ATTRIBUTE


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


def create_table(client: Any, table_name: str) -> bool:
    """Create the table unless it exists; wait until it is active.

    Args:
        client: a boto3 DynamoDB client (real or moto).
        table_name: the table's name.

    Returns:
        True if the table was created, False if it already existed.
    """
    if table_name in client.list_tables()["TableNames"]:
        return False
    client.create_table(**table_definition(table_name))
    client.get_waiter("table_exists").wait(TableName=table_name)
    return True
