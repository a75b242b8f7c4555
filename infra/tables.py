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
    RETIRED_MEMORY_INDEXES,
    ROUTINE_INDEX_PARTITION,
    ROUTINE_INDEX_SORT,
    SORT_ATTRIBUTE,
    TOKEN_INDEX_PARTITION,
    WORKSPACE_INDEX_PROJECTION,
    WORKSPACE_INDEXES,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import TimeToLiveSpecificationTypeDef

INDEX_RELEASE_ORDER: tuple[str, ...] = (
    *RETIRED_MEMORY_INDEXES,
    BY_ROUTINE_STATUS,
    BY_TOKEN_PRINCIPAL,
    BY_AGENT_KIND,
    *WORKSPACE_INDEXES,
)
"""Every GSI a release created, in the order releases added them: the four memory
indexes of the first release (created together with the table), then
``byRoutineStatus`` (the nightly review, docs/issues.md#issue-4), ``byTokenPrincipal``
(tokens, docs/issues.md#issue-12), ``byAgentKind`` (the dashboard, docs/issues.md#issue-13) and
the two sharded workspace indexes (docs/issues.md#issue-23-item-2). A new index goes at the
end: a stack update adds one GSI at most (``infra/upgrade.py``)."""
INDEX_RETIREMENT_ORDER: tuple[str, ...] = tuple(RETIRED_MEMORY_INDEXES)
"""The GSIs a release dropped, in the order they are dropped, one per stack update,
after every addition (docs/issues.md#issue-23-item-2: the first release's four indexes
projected every attribute; nothing reads them since)."""
FIRST_RELEASE_INDEXES = len(RETIRED_MEMORY_INDEXES)
"""How many of ``INDEX_RELEASE_ORDER`` every table has had since its creation."""
ADDED_LEVEL = len(INDEX_RELEASE_ORDER)
"""The level at which every index of ``INDEX_RELEASE_ORDER`` exists, before any drop."""
FULL_LEVEL = ADDED_LEVEL + len(INDEX_RETIREMENT_ORDER)
"""The level of this release: every addition, then every drop."""


def indexes_at(level: int) -> list[str]:
    """The GSIs of a table at ``level`` (``FIRST_RELEASE_INDEXES`` to ``FULL_LEVEL``), in
    release order: the first ``level`` additions, less the first ``level - ADDED_LEVEL``
    drops.

    Raises:
        ValueError: ``level`` out of that range.
    """
    if not FIRST_RELEASE_INDEXES <= level <= FULL_LEVEL:
        raise ValueError(f"level {level} is not in {FIRST_RELEASE_INDEXES}..{FULL_LEVEL}")
    dropped = set(INDEX_RETIREMENT_ORDER[: max(0, level - ADDED_LEVEL)])
    return [name for name in INDEX_RELEASE_ORDER[:level] if name not in dropped]


def _list_index(
    index_name: str, partition_attribute: str, projection: dict[str, Any]
) -> dict[str, Any]:
    return {
        "IndexName": index_name,
        "KeySchema": [
            {"AttributeName": partition_attribute, "KeyType": "HASH"},
            {"AttributeName": SORT_ATTRIBUTE, "KeyType": "RANGE"},
        ],
        "Projection": projection,
    }


def _index_definitions() -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Every index any release had, by name, and the type of each key attribute."""
    indexes: dict[str, dict[str, Any]] = {}
    # The first release's (retired, docs/issues.md#issue-23-item-2): every attribute projected.
    for index_name, partition_attribute in RETIRED_MEMORY_INDEXES.items():
        indexes[index_name] = _list_index(
            index_name, partition_attribute, {"ProjectionType": "ALL"}
        )
    # Sparse: only live routines carry these attributes (the nightly fan-out,
    # docs/reference.md#9-review).
    indexes[BY_ROUTINE_STATUS] = {
        "IndexName": BY_ROUTINE_STATUS,
        "KeySchema": [
            {"AttributeName": ROUTINE_INDEX_PARTITION, "KeyType": "HASH"},
            {"AttributeName": ROUTINE_INDEX_SORT, "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "ALL"},
    }
    # Sparse: only token items carry principalId (a principal's tokens, docs/issues.md#issue-12).
    indexes[BY_TOKEN_PRINCIPAL] = {
        "IndexName": BY_TOKEN_PRINCIPAL,
        "KeySchema": [{"AttributeName": TOKEN_INDEX_PARTITION, "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"},
    }
    # An agent's lists, counts and pictures: a few small attributes only
    # (docs/issues.md#issue-13, then every list of one agent).
    indexes[BY_AGENT_KIND] = _list_index(
        BY_AGENT_KIND,
        AGENT_KIND_INDEX_PARTITION,
        {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(AGENT_KIND_PROJECTION)},
    )
    # A workspace's lists, sharded by agent (docs/issues.md#issue-23-item-2): ids and kind.
    for index_name, partition_attribute in WORKSPACE_INDEXES.items():
        indexes[index_name] = _list_index(
            index_name,
            partition_attribute,
            {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(WORKSPACE_INDEX_PROJECTION)},
        )
    types = {"pk": "S", "sk": "S"}
    for index in indexes.values():
        for part in index["KeySchema"]:
            types[part["AttributeName"]] = "S"
    return indexes, types


def table_definition(table_name: str, level: int = FULL_LEVEL) -> dict[str, Any]:
    """Return the ``CreateTable`` arguments for the table (on-demand billing) with the
    indexes of ``level`` (``indexes_at``; default: this release's).

    Args:
        table_name: the table's name, e.g. ``pinework-local``.
        level: the index level; an older one only for tests and the upgrade template.
    """
    indexes, types = _index_definitions()
    chosen = [indexes[name] for name in indexes_at(level)]
    used = ["pk", "sk"]
    for index in chosen:
        for part in index["KeySchema"]:
            if part["AttributeName"] not in used:
                used.append(part["AttributeName"])
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": types[name]} for name in used
        ],
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": chosen,
    }


def index_definition(index_name: str) -> dict[str, Any]:
    """The ``GlobalSecondaryIndexes`` entry of any index a release had (retired ones
    included, for the upgrade template's earlier levels).

    Raises:
        KeyError: no release had it.
    """
    return _index_definitions()[0][index_name]


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
        # A table made by an older version upgrades in place (new indexes, the retired
        # ones dropped: the embedded table has no older code reading them, TTL).
        add_missing_indexes(client, table_name)
        drop_retired_indexes(client, table_name)
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
    present = _present_indexes(client, table_name)
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


def drop_retired_indexes(client: DynamoDBClient, table_name: str) -> list[str]:
    """Delete every index of ``INDEX_RETIREMENT_ORDER`` the table still has, one
    ``UpdateTable`` each, in that order (run once no earlier code reads them:
    docs/operations.md#upgrades).

    Returns:
        The names of the indexes dropped.
    """
    present = _present_indexes(client, table_name)
    dropped = []
    for name in INDEX_RETIREMENT_ORDER:
        if name not in present:
            continue
        client.update_table(
            TableName=table_name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": name}}]
        )
        client.get_waiter("table_exists").wait(TableName=table_name)
        dropped.append(name)
    return dropped


def _present_indexes(client: DynamoDBClient, table_name: str) -> set[str]:
    described = client.describe_table(TableName=table_name)["Table"]
    return {index["IndexName"] for index in described.get("GlobalSecondaryIndexes", [])}
