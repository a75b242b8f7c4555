"""Upgrading a stack whose table lacks the newest indexes, one GSI per stack update.

CloudFormation (like DynamoDB's ``UpdateTable``) creates at most one global secondary
index per update of a table, so a stack made by an older release cannot take a
template that adds two. The template therefore carries a parameter ``TableIndexLevel``
(how many of ``infra.tables.INDEX_RELEASE_ORDER`` the table has; default: all) and a
condition per index after the first release; ``table_schema()`` wraps each such index,
and each attribute only those indexes use, in ``Fn::If``. ``index_level`` reads the
level of an existing table from its index names, ``upgrade_steps`` lists the levels to
deploy one after the other, and the command line prints them for a stack:

    python -m infra.upgrade index-steps --stack NAME [--region R]

prints e.g. ``6 7`` (nothing when the table is complete, the stack does not exist, or
the stack uses an existing table); ``python -m infra.upgrade full-level`` prints the
level of the current release, and ``python -m infra.upgrade add-indexes --table NAME``
adds the missing indexes to a table the stack does not own (``ExistingTableName``). The
deploy targets deploy the stack once per printed level with ``TableIndexLevel=<level>``
before the normal deploy (docs/operations.md#upgrades). Choices:
docs/DECISIONS.md#data-protection-and-index-upgrades-issue-22-items-4-and-5.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

import boto3
from botocore.exceptions import ClientError

from infra.tables import (
    FIRST_RELEASE_INDEXES,
    INDEX_RELEASE_ORDER,
    add_missing_indexes,
    table_definition,
)

TABLE_INDEX_LEVEL = "TableIndexLevel"
"""The template parameter: how many indexes of ``INDEX_RELEASE_ORDER`` the table has."""
FULL_LEVEL = len(INDEX_RELEASE_ORDER)
"""Every index of this release."""
TABLE_RESOURCE = "MemoryTable"
"""The table's logical id in both templates."""


def index_condition(index_name: str) -> str:
    """The template condition under which ``index_name`` (one after the first release)
    is part of the table, e.g. ``TableHasByRoutineStatus``."""
    return f"TableHas{index_name[0].upper()}{index_name[1:]}"


def release_level(index_name: str) -> int:
    """The level (1-based position in ``INDEX_RELEASE_ORDER``) that added ``index_name``.

    Raises:
        ValueError: not an index of the table.
    """
    if index_name not in INDEX_RELEASE_ORDER:
        raise ValueError(f"{index_name!r} is not an index of the table ({INDEX_RELEASE_ORDER})")
    return INDEX_RELEASE_ORDER.index(index_name) + 1


def index_level_parameter() -> dict[str, Any]:
    """The ``TableIndexLevel`` parameter (Number, default ``FULL_LEVEL``)."""
    return {
        "Type": "Number",
        "Default": FULL_LEVEL,
        "AllowedValues": list(range(FIRST_RELEASE_INDEXES, FULL_LEVEL + 1)),
        "Description": "How many of the table's indexes, in release order, the stack "
        "declares. Leave the default; only an upgrade of an older stack steps it up one "
        "index per update (python -m infra.upgrade index-steps, docs/operations.md).",
    }


def index_conditions() -> dict[str, Any]:
    """One condition per index after the first release, chained so each holds at its own
    level and every level above (CloudFormation has no ``>=``):
    ``TableHas<last> = Equals(level, N)``, ``TableHas<k> = Or(Equals(level, k), TableHas<k+1>)``."""
    conditions: dict[str, Any] = {}
    later: str | None = None
    for level in range(FULL_LEVEL, FIRST_RELEASE_INDEXES, -1):
        name = index_condition(INDEX_RELEASE_ORDER[level - 1])
        equals = {"Fn::Equals": [{"Ref": TABLE_INDEX_LEVEL}, str(level)]}
        conditions[name] = equals if later is None else {"Fn::Or": [equals, {"Condition": later}]}
        later = name
    return dict(reversed(conditions.items()))


def _when(level: int, value: Any) -> Any:
    """``value``, or ``value`` only when the table is at ``level`` or above."""
    if level <= FIRST_RELEASE_INDEXES:
        return value
    condition = index_condition(INDEX_RELEASE_ORDER[level - 1])
    return {"Fn::If": [condition, value, {"Ref": "AWS::NoValue"}]}


def table_schema() -> dict[str, Any]:
    """``AttributeDefinitions`` and ``GlobalSecondaryIndexes`` of the table resource, in
    release order, each index and each attribute only its indexes use conditional on
    ``TableIndexLevel`` (CloudFormation refuses attribute definitions no key uses)."""
    definition = table_definition("unused")
    indexes = {index["IndexName"]: index for index in definition["GlobalSecondaryIndexes"]}
    if set(indexes) != set(INDEX_RELEASE_ORDER):
        raise ValueError("infra.tables.INDEX_RELEASE_ORDER must name every index of the table")
    table_keys = {part["AttributeName"] for part in definition["KeySchema"]}
    needed_from: dict[str, int] = {}
    for name in INDEX_RELEASE_ORDER:
        for part in indexes[name]["KeySchema"]:
            needed_from.setdefault(part["AttributeName"], release_level(name))
    attributes = [
        attribute
        if attribute["AttributeName"] in table_keys
        else _when(needed_from[attribute["AttributeName"]], attribute)
        for attribute in definition["AttributeDefinitions"]
    ]
    return {
        "AttributeDefinitions": attributes,
        "GlobalSecondaryIndexes": [
            _when(release_level(name), indexes[name]) for name in INDEX_RELEASE_ORDER
        ],
    }


def at_index_level(node: Any, level: int) -> Any:
    """``node`` (a template or part of one) as CloudFormation sees it with
    ``TableIndexLevel=level``: the index conditions' ``Fn::If`` evaluated, their
    ``AWS::NoValue`` dropped, and the parameter and those conditions removed; every other
    intrinsic function is left as it is."""
    if not FIRST_RELEASE_INDEXES <= level <= FULL_LEVEL:
        raise ValueError(f"level {level} is not in {FIRST_RELEASE_INDEXES}..{FULL_LEVEL}")
    holds = {
        index_condition(name): release_level(name) <= level
        for name in INDEX_RELEASE_ORDER[FIRST_RELEASE_INDEXES:]
    }
    dropped = object()

    def walk(item: Any) -> Any:
        if isinstance(item, list):
            return [value for value in map(walk, item) if value is not dropped]
        if not isinstance(item, dict):
            return item
        branch = item.get("Fn::If")
        if len(item) == 1 and isinstance(branch, list) and branch[0] in holds:
            chosen = branch[1] if holds[branch[0]] else branch[2]
            return dropped if chosen == {"Ref": "AWS::NoValue"} else walk(chosen)
        found = {key: walk(value) for key, value in item.items()}
        return {key: value for key, value in found.items() if value is not dropped}

    rendered = walk(node)
    if isinstance(rendered, dict):
        for section, names in (("Parameters", [TABLE_INDEX_LEVEL]), ("Conditions", holds)):
            if isinstance(rendered.get(section), dict):
                rendered[section] = {
                    key: value for key, value in rendered[section].items() if key not in names
                }
    return rendered


def index_level(present_index_names: Iterable[str]) -> int:
    """The level of a table with these GSIs: the length of the longest prefix of
    ``INDEX_RELEASE_ORDER`` it has.

    Raises:
        ValueError: the indexes are not such a prefix (one missing before a later one, an
            unknown index, or fewer than the first release's), so no sequence of
            releases made them; the message names what differs.
    """
    present = set(present_index_names)
    level = 0
    while level < FULL_LEVEL and INDEX_RELEASE_ORDER[level] in present:
        level += 1
    unexpected = sorted(present - set(INDEX_RELEASE_ORDER[:level]))
    if unexpected or level < FIRST_RELEASE_INDEXES:
        missing = [name for name in INDEX_RELEASE_ORDER[:FULL_LEVEL] if name not in present]
        raise ValueError(
            f"the table's indexes {sorted(present)} are not a release's: expected the first "
            f"{FIRST_RELEASE_INDEXES} or more of {list(INDEX_RELEASE_ORDER)} in that order; "
            f"missing {missing}, unexpected {unexpected}"
        )
    return level


def upgrade_steps(present_index_names: Iterable[str]) -> list[int]:
    """The ``TableIndexLevel`` values to deploy one after the other, each adding one
    index, ending at ``FULL_LEVEL``; empty when the table has every index.

    Raises:
        ValueError: as ``index_level``.
    """
    return list(range(index_level(present_index_names) + 1, FULL_LEVEL + 1))


def stack_table(cloudformation: Any, stack: str) -> str | None:
    """The name of the stack's own table, or None: no such stack, or no ``MemoryTable``
    in it (the stack uses an ``ExistingTableName``).

    Raises:
        ClientError: any other error of ``DescribeStackResource``.
    """
    try:
        detail = cloudformation.describe_stack_resource(
            StackName=stack, LogicalResourceId=TABLE_RESOURCE
        )["StackResourceDetail"]
    except ClientError as error:
        message = str(error.response.get("Error", {}).get("Message", ""))
        if error.response.get("Error", {}).get("Code") == "ValidationError" and (
            "does not exist" in message
        ):
            return None
        raise
    name = detail.get("PhysicalResourceId")
    return str(name) if name else None


def index_steps(cloudformation: Any, dynamodb: Any, stack: str) -> list[int]:
    """``upgrade_steps`` of the stack's table (empty when there is none to upgrade).

    Args:
        cloudformation: a boto3 CloudFormation client.
        dynamodb: a boto3 DynamoDB client of the same region.
        stack: the stack's name.
    """
    table = stack_table(cloudformation, stack)
    if table is None:
        return []
    try:
        described = dynamodb.describe_table(TableName=table)["Table"]
    except dynamodb.exceptions.ResourceNotFoundException:
        return []
    return upgrade_steps(
        index["IndexName"] for index in described.get("GlobalSecondaryIndexes", [])
    )


def main(arguments: list[str] | None = None) -> None:
    """``index-steps --stack NAME [--region R]``: the levels, space-separated, on one line
        (nothing when none); ``full-level``: ``FULL_LEVEL``; ``add-indexes --table NAME``: the
    indexes missing from a table the stack does not own, added one at a time
    (``infra.tables.add_missing_indexes``), their names printed."""
    parser = argparse.ArgumentParser(description="The table's index upgrade steps.")
    commands = parser.add_subparsers(dest="command", required=True)
    steps = commands.add_parser("index-steps", help="levels to deploy one at a time")
    steps.add_argument("--stack", required=True)
    steps.add_argument("--region")
    commands.add_parser("full-level", help="the TableIndexLevel of this release")
    adding = commands.add_parser("add-indexes", help="add missing GSIs to a table by name")
    adding.add_argument("--table", required=True)
    adding.add_argument("--region")
    parsed = parser.parse_args(arguments)
    if parsed.command == "full-level":
        sys.stdout.write(f"{FULL_LEVEL}\n")
        return
    session = boto3.session.Session(region_name=parsed.region)
    if parsed.command == "add-indexes":
        # A table the stack does not own (ExistingTableName): DynamoDB adds them one at a time.
        added = add_missing_indexes(session.client("dynamodb"), parsed.table)
        sys.stdout.write(" ".join(added) + "\n" if added else "")
        return
    levels = index_steps(session.client("cloudformation"), session.client("dynamodb"), parsed.stack)
    if levels:
        sys.stdout.write(" ".join(map(str, levels)) + "\n")


if __name__ == "__main__":
    main()
