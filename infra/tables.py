"""The DynamoDB table, defined once (docs/issues.md#issue-2): used by the tests, the local
server and the deploy template (``infra/template.py``).

One table holds every item (single-table design; the access patterns are in
the README). Keys are strings built only by ``chalicelib/storage/keys.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from chalicelib.release import RELEASE
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


@dataclass(frozen=True)
class IndexStep:
    """One change of the table's GSIs: ``kind`` ``"add"`` or ``"drop"``, the index's
    name, and ``release``: the release whose deploy adds it (``"add"``) or whose
    contract step (``make contract``) drops it (``"drop"``). A drop also names
    ``retired_in``: the first release whose code no longer reads the index (its drop's
    ``release`` is the one after: expand, migrate, contract; docs/operations.md#upgrades)."""

    kind: Literal["add", "drop"]
    index: str
    release: str
    retired_in: str = ""


def release_key(version: str) -> tuple[int, ...]:
    """``"0.10.2"`` -> ``(0, 10, 2)``, so releases compare in order.

    Raises:
        ValueError: not dot-separated whole numbers.
    """
    return tuple(int(part) for part in version.split("."))


FIRST_RELEASE_INDEX_NAMES: tuple[str, ...] = tuple(RETIRED_MEMORY_INDEXES)
"""The four memory indexes every table has had since its creation (the first release)."""
INDEX_STEPS: tuple[IndexStep, ...] = (
    # The nightly review's (docs/issues.md#issue-4), the tokens'
    # (docs/issues.md#issue-12), the dashboard's (docs/issues.md#issue-13) and the two
    # sharded workspace indexes (docs/issues.md#issue-23-item-2).
    IndexStep("add", BY_ROUTINE_STATUS, "0.1.0"),
    IndexStep("add", BY_TOKEN_PRINCIPAL, "0.1.0"),
    IndexStep("add", BY_AGENT_KIND, "0.1.0"),
    *(IndexStep("add", name, "0.1.0") for name in WORKSPACE_INDEXES),
    # The first release's indexes projected every attribute; 0.1.0's code reads none
    # (docs/issues.md#issue-23-item-2), and 0.1.0's deploy dropped them.
    *(IndexStep("drop", name, "0.1.0", retired_in="0.1.0") for name in RETIRED_MEMORY_INDEXES),
    # A new index: IndexStep("add", NAME, RELEASE) at the end of its release's additions,
    # before the drops of that release. An index the code stops reading: keep it in the
    # grants of the release that stops (infra/releases.py keeps the previous release's
    # reads), and add IndexStep("drop", NAME, <the next release>, retired_in=RELEASE).
)
"""Every change of the GSIs, in the order releases make them: sorted by release, and
within a release every addition before every drop (a test checks it). Level ``k`` is the
first release's four indexes with the first ``k - FIRST_RELEASE_INDEXES`` steps made: a
stack update adds or drops one GSI at most (``infra/upgrade.py``)."""
INDEX_RELEASE_ORDER: tuple[str, ...] = (
    *FIRST_RELEASE_INDEX_NAMES,
    *(step.index for step in INDEX_STEPS if step.kind == "add"),
)
"""Every GSI a release created, in the order releases added them."""
INDEX_RETIREMENT_ORDER: tuple[str, ...] = tuple(
    step.index for step in INDEX_STEPS if step.kind == "drop"
)
"""The GSIs a release dropped (or will drop), in the order they are dropped."""
FIRST_RELEASE_INDEXES = len(FIRST_RELEASE_INDEX_NAMES)
"""How many of ``INDEX_RELEASE_ORDER`` every table has had since its creation."""
FULL_LEVEL = FIRST_RELEASE_INDEXES + len(INDEX_STEPS)
"""The level with every step made: a new stack's table (no older code reads it)."""


def step_at(level: int) -> IndexStep:
    """The step that takes a table from ``level - 1`` to ``level``.

    Raises:
        ValueError: ``level`` is not above the first release's.
    """
    if not FIRST_RELEASE_INDEXES < level <= FULL_LEVEL:
        raise ValueError(f"no step reaches level {level}")
    return INDEX_STEPS[level - FIRST_RELEASE_INDEXES - 1]


def expand_end(level: int, running: str | None, release: str = RELEASE) -> int:
    """The level a deploy of ``release`` climbs to from ``level`` before its code goes
    live (expand): every addition of ``release`` or earlier, and a drop of an earlier
    release only when the running code is known not to read it (``running``, the
    deployed release, at least the drop's ``retired_in``); it stops before the first
    step it may not make. Never below ``level``."""
    current = level
    while current < FULL_LEVEL:
        step = step_at(current + 1)
        if release_key(step.release) > release_key(release):
            break
        if step.kind == "drop" and (
            step.release == release
            or running is None
            or release_key(running) < release_key(step.retired_in)
        ):
            break
        current += 1
    return current


ADDED_LEVEL = expand_end(FIRST_RELEASE_INDEXES, None)
"""The level at which a first-release table has every addition and no drop (the climb
of a deploy while the running code's release is unknown)."""


def indexes_at(level: int) -> list[str]:
    """The GSIs of a table at ``level`` (``FIRST_RELEASE_INDEXES`` to ``FULL_LEVEL``), in
    release order: the first release's four with the first ``level -
    FIRST_RELEASE_INDEXES`` steps of ``INDEX_STEPS`` made.

    Raises:
        ValueError: ``level`` out of that range.
    """
    if not FIRST_RELEASE_INDEXES <= level <= FULL_LEVEL:
        raise ValueError(f"level {level} is not in {FIRST_RELEASE_INDEXES}..{FULL_LEVEL}")
    present = list(FIRST_RELEASE_INDEX_NAMES)
    for step in INDEX_STEPS[: level - FIRST_RELEASE_INDEXES]:
        if step.kind == "add":
            present.append(step.index)
        else:
            present.remove(step.index)
    return [name for name in INDEX_RELEASE_ORDER if name in present]


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
