"""Upgrading a stack whose table has an older release's indexes, one GSI per stack update.

CloudFormation (like DynamoDB's ``UpdateTable``) creates or deletes at most one global
secondary index per update of a table, so a stack made by an older release cannot take a
template that adds two, or adds one and drops another. The table's indexes therefore
have levels (``infra.tables.indexes_at``): level 4 is the first release's four indexes,
each level up to ``infra.tables.ADDED_LEVEL`` adds the next index of
``INDEX_RELEASE_ORDER``, and each level after it drops the next of
``INDEX_RETIREMENT_ORDER`` (the first release's indexes, retired by
docs/issues.md#issue-23-item-2), up to ``FULL_LEVEL``, this release's. The template
carries a parameter ``TableIndexLevel`` (default ``FULL_LEVEL``) and a chain of
conditions ``TableIndexLevelAtLeast<k>`` (CloudFormation has no ``>=``), plus
``TableIndexLevelBelow<k>`` where an index or attribute exists only below a level;
``table_schema()`` wraps each index, and each attribute only some levels' keys use, in
``Fn::If`` on the condition of the levels it exists at. ``index_level`` reads the level
of an existing table from its index names, ``upgrade_steps`` lists the levels to deploy
one after the other, and the command line prints them for a stack:

    python -m infra.upgrade index-steps --stack NAME [--region R] [--phase add|drop|all]

prints e.g. ``6 7 8 9 10 11 12 13`` (``--phase add``: the additions only, ``6 7 8 9``;
``--phase drop``: the drops only; nothing when the table is at the full level, the stack
does not exist, or the stack uses an existing table). ``deploy-level --stack NAME``
prints the level to deploy the stack at together with new code while older code may
still run (every index added, none dropped yet), ``full-level`` the level of the current
release, ``add-indexes --table NAME`` and ``drop-indexes --table NAME`` add the missing
indexes to, and drop the retired ones from, a table the stack does not own
(``ExistingTableName``). ``make deploy`` deploys the resources stack once per addition,
then at ``deploy-level``, then the functions, then once per drop, so no running code
meets a missing index; ``make deploy-cloudformation`` deploys every step, then the full
level (docs/operations.md#upgrades). Choices:
docs/DECISIONS.md#data-protection-and-index-upgrades-issue-22-items-4-and-5.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

import boto3
from botocore.exceptions import ClientError

from chalicelib.release import RELEASE
from infra.tables import (
    ADDED_LEVEL,
    FIRST_RELEASE_INDEXES,
    FULL_LEVEL,
    INDEX_RELEASE_ORDER,
    add_missing_indexes,
    expand_end,
    index_definition,
    indexes_at,
    release_key,
    step_at,
    table_definition,
)

__all__ = [
    "ADDED_LEVEL",
    "FIRST_RELEASE_INDEXES",
    "FULL_LEVEL",
    "LEVELS",
    "PHASES",
    "TABLE_INDEX_LEVEL",
    "TABLE_RESOURCE",
    "at_index_level",
    "contract_steps",
    "deploy_level",
    "index_condition",
    "index_conditions",
    "index_level",
    "index_level_parameter",
    "index_steps",
    "level_condition",
    "main",
    "present_levels",
    "running_release",
    "stack_table",
    "table_schema",
    "upgrade_steps",
]

TABLE_INDEX_LEVEL = "TableIndexLevel"
"""The template parameter: the table's index level (``infra.tables.indexes_at``)."""
TABLE_RESOURCE = "MemoryTable"
"""The table's logical id in both templates."""
LEVELS = range(FIRST_RELEASE_INDEXES, FULL_LEVEL + 1)
"""Every level a table can be at: ``FIRST_RELEASE_INDEXES`` to ``FULL_LEVEL``."""
PHASES = ("all", "add", "drop")
"""``upgrade_steps``' phases: every step, the additions (levels up to ``ADDED_LEVEL``),
the drops (levels above it)."""
_CONDITION_PREFIX = "TableIndexLevel"


def _at_least(level: int) -> str:
    return f"{_CONDITION_PREFIX}AtLeast{level}"


def level_condition(low: int, high: int) -> str | None:
    """The name of the condition that holds exactly at the levels ``low`` to ``high``
    (inclusive): ``TableIndexLevelAtLeast<low>`` when ``high`` is ``FULL_LEVEL``,
    ``TableIndexLevelBelow<high + 1>`` when ``low`` is ``FIRST_RELEASE_INDEXES``,
    ``TableIndexLevel<low>To<high>`` otherwise; None for every level (no condition).

    Raises:
        ValueError: not a non-empty range within ``LEVELS``.
    """
    if not FIRST_RELEASE_INDEXES <= low <= high <= FULL_LEVEL:
        raise ValueError(
            f"levels {low}..{high} are not a range within {FIRST_RELEASE_INDEXES}..{FULL_LEVEL}"
        )
    if low == FIRST_RELEASE_INDEXES and high == FULL_LEVEL:
        return None
    if high == FULL_LEVEL:
        return _at_least(low)
    if low == FIRST_RELEASE_INDEXES:
        return f"{_CONDITION_PREFIX}Below{high + 1}"
    return f"{_CONDITION_PREFIX}{low}To{high}"


def _condition_levels(name: str) -> range:
    """The levels at which this module's condition ``name`` holds (every one it defines)."""
    for low in LEVELS:
        for high in range(low, FULL_LEVEL + 1):
            if level_condition(low, high) == name:
                return range(low, high + 1)
    raise KeyError(name)


def _contiguous(levels: Iterable[int], what: str) -> range:
    """``levels`` as a range; ValueError naming ``what`` when empty or not contiguous."""
    found = sorted(set(levels))
    if not found or found != list(range(found[0], found[-1] + 1)):
        raise ValueError(
            f"{what} exists at levels {found}: not one range of levels, so no single "
            "template condition declares it"
        )
    return range(found[0], found[-1] + 1)


def present_levels(index_name: str) -> range:
    """The levels at which the table has ``index_name`` (``infra.tables.indexes_at``),
    e.g. ``range(5, 14)`` for ``byRoutineStatus``, ``range(4, 10)`` for ``byAgent``.

    Raises:
        ValueError: not an index of ``INDEX_RELEASE_ORDER``, or one present at levels
            that are not one range (``infra.tables`` would have to drop and re-add it).
    """
    if index_name not in INDEX_RELEASE_ORDER:
        raise ValueError(f"{index_name!r} is not an index of the table ({INDEX_RELEASE_ORDER})")
    return _contiguous(
        (level for level in LEVELS if index_name in indexes_at(level)), f"index {index_name!r}"
    )


def index_condition(index_name: str) -> str | None:
    """The name of the template condition under which ``index_name`` is part of the
    table (``level_condition`` of its ``present_levels``), e.g.
    ``TableIndexLevelAtLeast5`` for ``byRoutineStatus``, ``TableIndexLevelBelow10`` for
    ``byAgent``; None for an index present at every level.

    Raises:
        ValueError: as ``present_levels``.
    """
    levels = present_levels(index_name)
    return level_condition(levels[0], levels[-1])


def index_level_parameter() -> dict[str, Any]:
    """The ``TableIndexLevel`` parameter (Number, ``LEVELS``, default ``FULL_LEVEL``)."""
    return {
        "Type": "Number",
        "Default": FULL_LEVEL,
        "AllowedValues": list(LEVELS),
        "Description": "The table's index level: each level above the first release's "
        "adds or drops one index. Leave the default; only an upgrade of an older stack "
        "steps it one index per update (python -m infra.upgrade index-steps, "
        "docs/operations.md).",
    }


def _attribute_levels() -> tuple[dict[str, dict[str, Any]], dict[str, range | None]]:
    """Every attribute any level's table defines (first use in release order after the
    table's keys), and the levels at which a key uses it (None: the table's own key)."""
    definitions: dict[str, dict[str, Any]] = {}
    table_keys = [part["AttributeName"] for part in table_definition("unused")["KeySchema"]]
    for level in LEVELS:
        for attribute in table_definition("unused", level)["AttributeDefinitions"]:
            known = definitions.setdefault(attribute["AttributeName"], attribute)
            if known != attribute:
                raise ValueError(f"attribute {attribute} is {known} at another level")
    ordered = [*table_keys]
    for name in INDEX_RELEASE_ORDER:
        for part in index_definition(name)["KeySchema"]:
            if part["AttributeName"] not in ordered:
                ordered.append(part["AttributeName"])
    levels: dict[str, range | None] = {name: None for name in table_keys}
    for attribute_name in ordered[len(table_keys) :]:
        levels[attribute_name] = _contiguous(
            (
                level
                for name in INDEX_RELEASE_ORDER
                if attribute_name
                in (part["AttributeName"] for part in index_definition(name)["KeySchema"])
                for level in present_levels(name)
            ),
            f"attribute {attribute_name!r}",
        )
    return {name: definitions[name] for name in ordered}, levels


def _attribute_condition(levels: range | None) -> str | None:
    return None if levels is None else level_condition(levels[0], levels[-1])


def index_conditions() -> dict[str, Any]:
    """The template conditions of the index levels, every one an intrinsic function
    (CloudFormation refuses a bare ``{"Condition": ...}`` as a definition): the chain
    ``TableIndexLevelAtLeast<FULL> = Equals(level, FULL)``,
    ``TableIndexLevelAtLeast<k> = Or(Equals(level, k), Condition AtLeast<k+1>)`` for
    every k above the first release's, then the conditions ``table_schema`` uses besides:
    ``TableIndexLevelBelow<k> = Not(Condition AtLeast<k>)`` and
    ``TableIndexLevel<a>To<b> = And(Condition AtLeast<a>, Not(Condition AtLeast<b+1>))``.

    Raises:
        ValueError: as ``table_schema``.
    """
    chain: dict[str, Any] = {}
    later: str | None = None
    for level in range(FULL_LEVEL, FIRST_RELEASE_INDEXES, -1):
        equals = {"Fn::Equals": [{"Ref": TABLE_INDEX_LEVEL}, str(level)]}
        chain[_at_least(level)] = (
            equals if later is None else {"Fn::Or": [equals, {"Condition": later}]}
        )
        later = _at_least(level)
    conditions = dict(reversed(chain.items()))
    _, attribute_levels = _attribute_levels()
    used = [index_condition(name) for name in INDEX_RELEASE_ORDER] + [
        _attribute_condition(levels) for levels in attribute_levels.values()
    ]
    for name in used:
        if name is None or name in conditions:
            continue
        levels = _condition_levels(name)
        below: dict[str, Any] = {"Fn::Not": [{"Condition": _at_least(levels[-1] + 1)}]}
        if levels[0] == FIRST_RELEASE_INDEXES:
            conditions[name] = below
        else:
            conditions[name] = {"Fn::And": [{"Condition": _at_least(levels[0])}, below]}
    return conditions


def _when(condition: str | None, value: Any) -> Any:
    """``value``, or ``value`` only under ``condition`` (``AWS::NoValue`` otherwise)."""
    if condition is None:
        return value
    return {"Fn::If": [condition, value, {"Ref": "AWS::NoValue"}]}


def table_schema() -> dict[str, Any]:
    """``AttributeDefinitions`` and ``GlobalSecondaryIndexes`` of the table resource:
    every index of ``INDEX_RELEASE_ORDER`` (``infra.tables.index_definition``, the same
    at every level), in that order, under ``index_condition``; every attribute a key
    uses, the table's keys first, unconditional when some key uses it at every level,
    else under the one condition of exactly the levels some key uses it at
    (CloudFormation refuses attribute definitions no key uses, and key attributes
    without a definition).

    Raises:
        ValueError: an index or attribute used at levels that are not one range (no
            single condition fits), or an attribute with two types.
    """
    attributes, levels = _attribute_levels()
    return {
        "AttributeDefinitions": [
            _when(_attribute_condition(levels[name]), attribute)
            for name, attribute in attributes.items()
        ],
        "GlobalSecondaryIndexes": [
            _when(index_condition(name), index_definition(name)) for name in INDEX_RELEASE_ORDER
        ],
    }


def at_index_level(node: Any, level: int) -> Any:
    """``node`` (a template or part of one) as CloudFormation sees it with
    ``TableIndexLevel=level``: the ``Fn::If`` on this module's conditions
    (``index_conditions``) evaluated, their ``AWS::NoValue`` dropped, and the parameter
    and those conditions removed from ``Parameters`` and ``Conditions``; every other
    intrinsic function is left as it is.

    Raises:
        ValueError: ``level`` not in ``LEVELS``.
    """
    if level not in LEVELS:
        raise ValueError(f"level {level} is not in {FIRST_RELEASE_INDEXES}..{FULL_LEVEL}")
    holds = {name: level in _condition_levels(name) for name in index_conditions()}
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
        for section, names in (("Parameters", {TABLE_INDEX_LEVEL}), ("Conditions", set(holds))):
            if isinstance(rendered.get(section), dict):
                rendered[section] = {
                    key: value for key, value in rendered[section].items() if key not in names
                }
    return rendered


def index_level(present_index_names: Iterable[str]) -> int:
    """The level of a table with these GSIs: the one whose ``indexes_at`` is exactly
    that set (the order read does not matter).

    Raises:
        ValueError: no level has that set (an index missing before a later one, one
            dropped out of order, an unknown index, fewer than the first release's), so
            no sequence of releases made it; the message names the closest level and
            what is missing from and unexpected in the table relative to it.
    """
    present = set(present_index_names)
    for level in LEVELS:
        if set(indexes_at(level)) == present:
            return level
    closest = min(LEVELS, key=lambda level: (len(present ^ set(indexes_at(level))), level))
    expected = indexes_at(closest)
    missing = [name for name in expected if name not in present]
    unexpected = sorted(present - set(expected))
    raise ValueError(
        f"the table's indexes {sorted(present)} are not a release's: the closest is level "
        f"{closest} ({expected}); missing {missing}, unexpected {unexpected}"
    )


def upgrade_steps(
    present_index_names: Iterable[str], phase: str = "all", running: str | None = None
) -> list[int]:
    """The ``TableIndexLevel`` values to deploy one after the other, each adding or
    dropping one index, from the table's level + 1; empty when there is none.

    Args:
        present_index_names: the table's GSI names.
        phase: ``"all"``: every step to ``FULL_LEVEL`` (tests); ``"add"`` (expand, run
            by the deploys before the new code): up to ``infra.tables.expand_end`` of the
            table's level and ``running``; ``"drop"`` (contract, ``make contract``): the
            drops of this release or earlier from there, stopping at any other step.
        running: the deployed code's release (``running_release``); None: unknown, so
            the expand makes no drop.

    Raises:
        ValueError: as ``index_level``, or an unknown phase.
    """
    if phase not in PHASES:
        raise ValueError(f"phase {phase!r} is not one of {PHASES}")
    level = index_level(present_index_names)
    if phase == "all":
        return list(range(level + 1, FULL_LEVEL + 1))
    expanded = expand_end(level, running)
    if phase == "add":
        return list(range(level + 1, expanded + 1))
    steps = []
    # the contract follows a finished expand: from where the additions end
    for next_level in range(max(level, expand_end(level, None)) + 1, FULL_LEVEL + 1):
        step = step_at(next_level)
        if step.kind != "drop" or release_key(step.release) > release_key(RELEASE):
            break
        steps.append(next_level)
    return steps


def unreachable_additions(present_index_names: Iterable[str], running: str | None) -> list[str]:
    """The additions of this release or earlier that the expand cannot reach: they lie
    past a drop it may not make yet (the running code may read the dropped index).
    Empty when the expand reaches every one of them."""
    expanded = expand_end(index_level(present_index_names), running)
    return [
        step_at(level).index
        for level in range(expanded + 1, FULL_LEVEL + 1)
        if step_at(level).kind == "add"
        and release_key(step_at(level).release) <= release_key(RELEASE)
    ]


def running_release(lambda_client: Any, function: str) -> str | None:
    """The release the deployed ``function`` (a name, or ``name:alias``) runs: its
    ``PINEWORK_RELEASE`` environment variable; ``UNNAMED_RELEASE`` for a function without
    one (the releases before 0.2.0 set none); None when there is no such function (a
    first deploy: nothing runs).

    Raises:
        ClientError: any other error of ``GetFunctionConfiguration``.
    """
    name, _, qualifier = function.partition(":")
    try:
        configuration = lambda_client.get_function_configuration(
            FunctionName=name, **({"Qualifier": qualifier} if qualifier else {})
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            return None
        raise
    variables = configuration.get("Environment", {}).get("Variables", {})
    return str(variables.get("PINEWORK_RELEASE") or UNNAMED_RELEASE)


UNNAMED_RELEASE = "0.0.0"
"""What a deployed function without ``PINEWORK_RELEASE`` runs: 0.1.0 or older, unknown,
so nothing is dropped on its account (the releases before 0.2.0 set none)."""


def contract_steps(present_index_names: Iterable[str], running: str | None) -> list[int]:
    """The drop levels ``make contract`` may deploy: the ``"drop"`` phase, after the
    check that no deployed version reads what it drops.

    Raises:
        ValueError: nothing is deployed, the deployed code is not this release (deploy
            it first), or a drop's index is read by it (``retired_in`` later than the
            running release); the message says which.
    """
    present = list(present_index_names)
    steps = upgrade_steps(present, "drop", running)
    if not steps:
        return []
    if running is None:
        raise ValueError(
            f"the deployed code's release is {running or 'unknown (no function)'}, not "
            f"{RELEASE}: make deploy this release first; nothing was dropped"
        )
    if release_key(running) < release_key(RELEASE):
        raise ValueError(
            f"the deployed code is release {running}, not {RELEASE}: make deploy this "
            "release first; nothing was dropped"
        )
    for level in steps:
        step = step_at(level)
        if release_key(running) < release_key(step.retired_in):
            raise ValueError(f"release {running} still reads {step.index}; nothing was dropped")
    return steps


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


def _stack_indexes(cloudformation: Any, dynamodb: Any, stack: str) -> list[str] | None:
    """The GSI names of the stack's own table; None when there is no stack, no table of
    its own, or its table does not exist."""
    table = stack_table(cloudformation, stack)
    if table is None:
        return None
    try:
        described = dynamodb.describe_table(TableName=table)["Table"]
    except dynamodb.exceptions.ResourceNotFoundException:
        return None
    return [index["IndexName"] for index in described.get("GlobalSecondaryIndexes", [])]


def index_steps(
    cloudformation: Any, dynamodb: Any, stack: str, phase: str = "all", running: str | None = None
) -> list[int]:
    """``upgrade_steps`` of the stack's table in ``phase`` (empty when there is none to
    upgrade: no stack, an ``ExistingTableName``, its table gone); ``"drop"`` runs
    ``contract_steps``' check.

    Args:
        cloudformation: a boto3 CloudFormation client.
        dynamodb: a boto3 DynamoDB client of the same region.
        stack: the stack's name.
        phase: as ``upgrade_steps``.
        running: the deployed code's release (``running_release``).

    Raises:
        ValueError: as ``upgrade_steps`` and ``contract_steps``; or (``"add"``) this
            release's additions lie past a drop the running code forbids.
        ClientError: as ``stack_table``.
    """
    present = _stack_indexes(cloudformation, dynamodb, stack)
    if present is None:
        if phase == "add":
            _check_borrowed_table(cloudformation, dynamodb, stack)
        return []
    if phase == "drop":
        return contract_steps(present, running)
    if phase == "add":
        blocked = unreachable_additions(present, running)
        if blocked:
            raise ValueError(
                f"this release adds {blocked} after a drop the running code "
                f"({running or 'unknown'}) may still read: deploy the release before this one "
                "first (infra/releases.py names its commit), then this one; nothing was changed"
            )
    return upgrade_steps(present, phase, running)


def _check_borrowed_table(cloudformation: Any, dynamodb: Any, stack: str) -> None:
    """Refuse a deploy whose stack uses an ``ExistingTableName`` lacking an index this
    release adds (no stack update adds it: ``add-indexes`` does).

    Raises:
        ValueError: the table lacks one; the message names the command to run first.
    """
    try:
        described = cloudformation.describe_stacks(StackName=stack)["Stacks"][0]
    except ClientError:
        return
    parameters = {
        item["ParameterKey"]: item.get("ParameterValue", "")
        for item in described.get("Parameters", [])
    }
    table = parameters.get("ExistingTableName", "")
    if not table:
        return
    try:
        found = dynamodb.describe_table(TableName=table)["Table"]
    except dynamodb.exceptions.ResourceNotFoundException:
        return
    present = {index["IndexName"] for index in found.get("GlobalSecondaryIndexes", [])}
    needed = [
        step_at(level).index
        for level in range(FIRST_RELEASE_INDEXES + 1, FULL_LEVEL + 1)
        if step_at(level).kind == "add"
    ]
    missing = [name for name in needed if name not in present]
    if missing:
        raise ValueError(
            f"the stack uses the table {table} (ExistingTableName), which lacks {missing}: "
            f"run `python -m infra.upgrade add-indexes --table {table}` first; nothing was "
            "deployed"
        )


def deploy_level(cloudformation: Any, dynamodb: Any, stack: str, running: str | None = None) -> int:
    """The ``TableIndexLevel`` to deploy the stack at together with new code while older
    code may still run: ``FULL_LEVEL`` when there is nothing to upgrade (no stack or no
    table yet: a first deploy creates every index at once; or the stack uses an
    ``ExistingTableName``), else where the expand ends (``infra.tables.expand_end``):
    nothing dropped that the running code may read, nothing dropped re-added.

    Args:
        cloudformation, dynamodb, stack, running: as ``index_steps``.

    Raises:
        ValueError: as ``index_level``.
        ClientError: as ``stack_table``.
    """
    present = _stack_indexes(cloudformation, dynamodb, stack)
    if present is None:
        return FULL_LEVEL
    return expand_end(index_level(present), running)


def main(arguments: list[str] | None = None) -> None:
    """The command line, one line on standard output:

    - ``index-steps --stack NAME [--region R] [--phase add|drop|all] [--function F]``:
      the levels, space-separated (nothing when none); ``F`` is the deployed API
      function (``name`` or ``name:alias``) whose ``PINEWORK_RELEASE`` says what runs;
    - ``full-level``: ``FULL_LEVEL``;
    - ``release``: this checkout's release;
    - ``deploy-level --stack NAME [--region R] [--function F]``: ``deploy_level``;
    - ``add-indexes --table NAME [--region R]``: the indexes missing from a table the
      stack does not own (``ExistingTableName``), added one at a time
      (``infra.tables.add_missing_indexes``), their names (nothing when none);
    - ``drop-indexes --table NAME --function F [--region R]``: the retired indexes of
      such a table this release's contract drops, after ``contract_steps``' check, one
      at a time, their names.

    Raises:
        SystemExit: bad arguments (argparse), or a check failed (its message).
        ClientError: as the functions named.
    """
    parser = argparse.ArgumentParser(description="The table's index upgrade steps.")
    commands = parser.add_subparsers(dest="command", required=True)
    steps = commands.add_parser("index-steps", help="levels to deploy one at a time")
    steps.add_argument("--stack", required=True)
    steps.add_argument("--region")
    steps.add_argument("--phase", choices=PHASES, default="all")
    steps.add_argument("--function", help="the deployed API function (name[:alias])")
    commands.add_parser("full-level", help="the TableIndexLevel of a new stack")
    commands.add_parser("release", help="this checkout's release")
    level = commands.add_parser(
        "deploy-level", help="the TableIndexLevel to deploy with new code, before the drops"
    )
    level.add_argument("--stack", required=True)
    level.add_argument("--region")
    level.add_argument("--function", help="the deployed API function (name[:alias])")
    adding = commands.add_parser("add-indexes", help="add missing GSIs to a table by name")
    adding.add_argument("--table", required=True)
    adding.add_argument("--region")
    dropping = commands.add_parser("drop-indexes", help="drop retired GSIs of a table by name")
    dropping.add_argument("--table", required=True)
    dropping.add_argument("--region")
    dropping.add_argument("--function", required=True, help="the deployed API function")
    parsed = parser.parse_args(arguments)
    if parsed.command in ("full-level", "release"):
        sys.stdout.write(f"{FULL_LEVEL if parsed.command == 'full-level' else RELEASE}\n")
        return
    session = boto3.session.Session(region_name=parsed.region)
    dynamodb = session.client("dynamodb")
    function = getattr(parsed, "function", None)
    running = running_release(session.client("lambda"), function) if function else None
    try:
        if parsed.command == "add-indexes":
            # A table the stack does not own (ExistingTableName): one index per UpdateTable.
            changed = add_missing_indexes(dynamodb, parsed.table)
        elif parsed.command == "drop-indexes":
            changed = _drop_by_name(dynamodb, parsed.table, running)
        else:
            cloudformation = session.client("cloudformation")
            if parsed.command == "deploy-level":
                found = deploy_level(cloudformation, dynamodb, parsed.stack, running)
                sys.stdout.write(f"{found}\n")
                return
            levels = index_steps(cloudformation, dynamodb, parsed.stack, parsed.phase, running)
            changed = [str(level) for level in levels]
    except ValueError as error:
        sys.stderr.write(f"{error}\n")
        raise SystemExit(1) from error
    sys.stdout.write(" ".join(changed) + "\n" if changed else "")


def _drop_by_name(dynamodb: Any, table: str, running: str | None) -> list[str]:
    """``drop-indexes``: the contract's drops on a table by name, one ``UpdateTable``
    each, after ``contract_steps``' check; their names.

    Raises:
        ValueError: as ``contract_steps``.
    """
    described = dynamodb.describe_table(TableName=table)["Table"]
    present = [index["IndexName"] for index in described.get("GlobalSecondaryIndexes", [])]
    dropped = []
    for level in contract_steps(present, running):
        name = step_at(level).index
        dynamodb.update_table(
            TableName=table, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": name}}]
        )
        dynamodb.get_waiter("table_exists").wait(TableName=table)
        dropped.append(name)
    return dropped


if __name__ == "__main__":
    main()
