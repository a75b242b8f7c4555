"""Upgrading an older stack one GSI per update (docs/operations.md#upgrades,
``infra/upgrade.py``): the indexes in release order and the retired ones in retirement
order, the level of a table read from its indexes, the levels to deploy (all, the
additions, the drops), the commands the deploy targets run and the order they run them
in, and the template at each level (valid, accepted by DynamoDB, one index added or
dropped against the level before, every index defined the same at every level)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import zipfile
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import boto3
import pytest

from chalicelib.release import RELEASE
from chalicelib.settings import REVIEW_QUEUE_NAME
from chalicelib.storage.keys import (
    BY_AGENT,
    BY_AGENT_KIND,
    BY_AGENT_STATUS,
    BY_ROUTINE_STATUS,
    BY_TOKEN_PRINCIPAL,
    BY_WORKSPACE,
    BY_WORKSPACE_SHARD,
    BY_WORKSPACE_STATUS,
    BY_WORKSPACE_STATUS_SHARD,
    RETIRED_MEMORY_INDEXES,
)
from infra import upgrade
from infra.iam_audit import Stack, resolve
from infra.tables import (
    ADDED_LEVEL,
    INDEX_RELEASE_ORDER,
    INDEX_RETIREMENT_ORDER,
    create_table,
    drop_retired_indexes,
    index_definition,
    indexes_at,
    table_definition,
)
from infra.template import resources_stack
from tests.helpers import REPO

FIRST_RELEASE = list(RETIRED_MEMORY_INDEXES)
LEVELS = range(len(FIRST_RELEASE), upgrade.FULL_LEVEL + 1)
ADDED = list(INDEX_RELEASE_ORDER)
"""The indexes at ``ADDED_LEVEL``: every addition, nothing dropped yet."""
FULL = [
    BY_ROUTINE_STATUS,
    BY_TOKEN_PRINCIPAL,
    BY_AGENT_KIND,
    BY_WORKSPACE_SHARD,
    BY_WORKSPACE_STATUS_SHARD,
]
"""The indexes of this release."""


def test_the_release_order_adds_every_index_then_the_first_release_ones_are_dropped() -> None:
    assert list(INDEX_RELEASE_ORDER) == [
        BY_AGENT,
        BY_AGENT_STATUS,
        BY_WORKSPACE,
        BY_WORKSPACE_STATUS,
        BY_ROUTINE_STATUS,  # docs/issues.md#issue-4
        BY_TOKEN_PRINCIPAL,  # docs/issues.md#issue-12
        BY_AGENT_KIND,  # docs/issues.md#issue-13
        BY_WORKSPACE_SHARD,  # docs/issues.md#issue-23-item-2
        BY_WORKSPACE_STATUS_SHARD,
    ]
    assert list(INDEX_RETIREMENT_ORDER) == FIRST_RELEASE  # docs/issues.md#issue-23-item-2
    names = [index["IndexName"] for index in table_definition("t")["GlobalSecondaryIndexes"]]
    assert names == FULL == indexes_at(upgrade.FULL_LEVEL)
    assert (upgrade.FIRST_RELEASE_INDEXES, ADDED_LEVEL, upgrade.FULL_LEVEL) == (4, 9, 13)
    assert upgrade.index_level_parameter()["Default"] == upgrade.FULL_LEVEL
    assert upgrade.index_level_parameter()["AllowedValues"] == list(range(4, 14))


@pytest.mark.parametrize(
    ("present", "level", "steps"),
    [
        (FIRST_RELEASE, 4, list(range(5, 14))),
        ([*FIRST_RELEASE, BY_ROUTINE_STATUS], 5, list(range(6, 14))),
        (ADDED[:7], 7, list(range(8, 14))),  # the release before this one
        (ADDED, 9, [10, 11, 12, 13]),  # every addition
        (ADDED[1:], 10, [11, 12, 13]),  # byAgent dropped
        (ADDED[3:], 12, [13]),
        (FULL, 13, []),
    ],
)
def test_the_level_is_the_set_of_a_release_and_the_steps_go_one_index_at_a_time(
    present: list[str], level: int, steps: list[int]
) -> None:
    assert upgrade.index_level(reversed(present)) == level  # the order read does not matter
    assert set(indexes_at(level)) == set(present)
    assert upgrade.upgrade_steps(present) == steps


@pytest.mark.parametrize(
    ("level", "added", "dropped"),
    [
        (4, [5, 6, 7, 8, 9], [10, 11, 12, 13]),
        (7, [8, 9], [10, 11, 12, 13]),
        (9, [], [10, 11, 12, 13]),
        (11, [], [12, 13]),
        (13, [], []),
    ],
)
def test_the_phases_split_the_steps_into_additions_and_drops(
    level: int, added: list[int], dropped: list[int]
) -> None:
    present = indexes_at(level)
    assert upgrade.upgrade_steps(present, "add") == added
    assert upgrade.upgrade_steps(present, "drop") == dropped
    assert upgrade.upgrade_steps(present, "all") == added + dropped
    assert all(step <= ADDED_LEVEL for step in added)
    with pytest.raises(ValueError, match="phase 'both'"):
        upgrade.upgrade_steps(present, "both")


@pytest.mark.parametrize(
    ("present", "named"),
    [
        ([*FIRST_RELEASE, BY_AGENT_KIND], "missing [], unexpected ['byAgentKind']"),  # 5, 6 missing
        ([*FIRST_RELEASE, "byColour"], "unexpected ['byColour']"),
        (FIRST_RELEASE[:3], "missing ['byWorkspaceStatus'], unexpected []"),
        ([*FULL, BY_AGENT], "level 13"),  # a dropped index back
        ([BY_AGENT, *ADDED[2:]], "missing ['byAgentStatus'], unexpected []"),  # out of order
    ],
)
def test_a_set_no_release_made_is_refused_with_what_differs(present: list[str], named: str) -> None:
    with pytest.raises(ValueError, match="not a release's") as refused:
        upgrade.index_level(present)
    assert named in str(refused.value)
    with pytest.raises(ValueError, match="not a release's"):
        upgrade.upgrade_steps(present, "drop")


def test_every_index_has_the_condition_of_exactly_its_levels() -> None:
    conditions = upgrade.index_conditions()
    for name, definition in conditions.items():
        # CloudFormation takes only an intrinsic function as a condition's definition.
        assert list(definition) in (["Fn::And"], ["Fn::Or"], ["Fn::Not"], ["Fn::Equals"]), name
    assert upgrade.index_condition(BY_ROUTINE_STATUS) == "TableIndexLevelAtLeast5"
    assert upgrade.index_condition(BY_AGENT) == "TableIndexLevelBelow10"
    assert upgrade.index_condition(BY_WORKSPACE_STATUS) == "TableIndexLevelBelow13"
    assert upgrade.present_levels(BY_AGENT) == range(4, 10)
    assert upgrade.level_condition(4, 13) is None
    assert upgrade.level_condition(6, 8) == "TableIndexLevel6To8"
    with pytest.raises(ValueError, match="not an index"):
        upgrade.index_condition("byColour")
    for level in LEVELS:
        # As CloudFormation evaluates them (the chain of Fn::Or, the Fn::Not of a level).
        holds = Stack(table="t", bucket="b", queue="q", index_level=level).conditions()
        for name in INDEX_RELEASE_ORDER:
            condition = upgrade.index_condition(name)
            assert condition in conditions
            assert holds[condition] == (name in indexes_at(level)), (name, level)


def table_at(level: int) -> dict[str, Any]:
    """The stack's table resource at ``level``, every expression evaluated (a test stack)."""
    rendered = upgrade.at_index_level(resources_stack()["Resources"]["MemoryTable"], level)
    stack = Stack(table="t", bucket="b", queue=REVIEW_QUEUE_NAME, index_level=level)
    properties: dict[str, Any] = resolve(rendered["Properties"], stack)
    return properties


def index_names(properties: dict[str, Any]) -> list[str]:
    return [index["IndexName"] for index in properties["GlobalSecondaryIndexes"]]


def by_name(items: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    return {item[key]: item for item in items}


def test_each_level_adds_or_drops_exactly_one_index_of_the_level_before() -> None:
    template = resources_stack()
    before = upgrade.at_index_level(template, LEVELS[0])
    assert index_names(before["Resources"]["MemoryTable"]["Properties"]) == FIRST_RELEASE
    for level in LEVELS[1:]:
        after = upgrade.at_index_level(template, level)
        old = before["Resources"]["MemoryTable"]["Properties"]
        new = after["Resources"]["MemoryTable"]["Properties"]
        if level <= ADDED_LEVEL:
            assert index_names(new) == [*index_names(old), INDEX_RELEASE_ORDER[level - 1]]
        else:
            retired = INDEX_RETIREMENT_ORDER[level - ADDED_LEVEL - 1]
            assert index_names(new) == [name for name in index_names(old) if name != retired]
        assert index_names(new) == indexes_at(level)
        # An index kept is the same, so CloudFormation changes nothing of it.
        kept = set(index_names(old)) & set(index_names(new))
        assert {
            name: by_name(new["GlobalSecondaryIndexes"], "IndexName")[name] for name in kept
        } == {name: by_name(old["GlobalSecondaryIndexes"], "IndexName")[name] for name in kept}
        rest = {
            k: v
            for k, v in new.items()
            if k not in ("GlobalSecondaryIndexes", "AttributeDefinitions")
        }
        assert rest == {
            k: v
            for k, v in old.items()
            if k not in ("GlobalSecondaryIndexes", "AttributeDefinitions")
        }
        others = {k: v for k, v in after["Resources"].items() if k != "MemoryTable"}
        assert others == {k: v for k, v in before["Resources"].items() if k != "MemoryTable"}
        assert no_level_parts(after)
        before = after
    full = upgrade.at_index_level(template, upgrade.FULL_LEVEL)["Resources"]["MemoryTable"]
    assert (
        full["Properties"]["GlobalSecondaryIndexes"]
        == (table_definition("t")["GlobalSecondaryIndexes"])
    )


def no_level_parts(rendered: dict[str, Any]) -> bool:
    """The rendered template has neither the parameter nor any level condition."""
    return upgrade.TABLE_INDEX_LEVEL not in rendered["Parameters"] and not (
        set(upgrade.index_conditions()) & set(rendered["Conditions"])
    )


@pytest.mark.parametrize("level", LEVELS)
def test_each_level_is_the_table_definition_of_that_level(level: int) -> None:
    properties = table_at(level)
    definition = table_definition("t", level)
    assert properties["GlobalSecondaryIndexes"] == definition["GlobalSecondaryIndexes"]
    # Exactly the attributes some key uses (CloudFormation refuses any other, and any
    # key attribute without a definition).
    assert by_name(properties["AttributeDefinitions"], "AttributeName") == by_name(
        definition["AttributeDefinitions"], "AttributeName"
    )
    for name in indexes_at(level):
        assert by_name(properties["GlobalSecondaryIndexes"], "IndexName")[name] == (
            index_definition(name)
        )


@pytest.mark.parametrize("level", LEVELS)
def test_dynamodb_accepts_the_table_of_each_level(aws: None, level: int) -> None:
    # DynamoDB (and moto) refuse an attribute definition no key schema uses.
    properties = table_at(level)
    client = boto3.client("dynamodb", region_name="us-east-1")
    client.create_table(
        TableName=f"level-{level}",
        BillingMode="PAY_PER_REQUEST",
        KeySchema=properties["KeySchema"],
        AttributeDefinitions=properties["AttributeDefinitions"],
        GlobalSecondaryIndexes=properties["GlobalSecondaryIndexes"],
    )
    described = client.describe_table(TableName=f"level-{level}")["Table"]
    present = [index["IndexName"] for index in described["GlobalSecondaryIndexes"]]
    assert upgrade.index_level(present) == level


def cfn_lint(path: Path) -> subprocess.CompletedProcess[str]:
    lint = shutil.which("cfn-lint", path=str(REPO / ".venv" / "bin")) or "cfn-lint"
    return subprocess.run([lint, str(path)], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("level", LEVELS)
def test_the_template_of_each_level_passes_cfn_lint(tmp_path: Path, level: int) -> None:
    path = tmp_path / f"resources-{level}.json"
    path.write_text(json.dumps(upgrade.at_index_level(resources_stack(), level)))
    done = cfn_lint(path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_template_with_its_level_conditions_passes_cfn_lint(tmp_path: Path) -> None:
    # Every condition defined is used (W8001) and every Fn::If names a defined one.
    path = tmp_path / "resources.json"
    path.write_text(json.dumps(resources_stack()))
    done = cfn_lint(path)
    assert done.returncode == 0, done.stdout + done.stderr


def printed(*arguments: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        upgrade.main(list(arguments))
    return out.getvalue()


def create_stack(name: str, level: int) -> None:
    """A stack whose table has the indexes of ``level`` (as a stack of that release)."""
    properties = table_at(level)
    properties["TableName"] = f"{name}-memories"
    for unsupported in ("SSESpecification", "DeletionProtectionEnabled"):
        properties.pop(unsupported)
    template = {
        "Resources": {"MemoryTable": {"Type": "AWS::DynamoDB::Table", "Properties": properties}}
    }
    cloudformation = boto3.client("cloudformation", region_name="us-east-1")
    cloudformation.create_stack(StackName=name, TemplateBody=json.dumps(template))


def create_borrowing_stack(name: str) -> None:
    """A stack without a table of its own (an ``ExistingTableName`` stack)."""
    cloudformation = boto3.client("cloudformation", region_name="us-east-1")
    queue = {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{name}-q"}}
    cloudformation.create_stack(
        StackName=name, TemplateBody=json.dumps({"Resources": {"ReviewQueue": queue}})
    )


def table_level(table: str) -> int:
    client = boto3.client("dynamodb", region_name="us-east-1")
    described = client.describe_table(TableName=table)["Table"]
    return upgrade.index_level(i["IndexName"] for i in described["GlobalSecondaryIndexes"])


def steps(stack: str, *phase: str) -> str:
    return printed("index-steps", "--stack", stack, "--region", "us-east-1", *phase)


def test_the_command_prints_the_levels_of_an_older_stack(aws: None) -> None:
    create_stack("older", 5)
    assert steps("older") == "6 7 8 9 10 11 12 13\n"
    assert steps("older", "--phase", "all") == "6 7 8 9 10 11 12 13\n"
    assert steps("older", "--phase", "add") == "6 7 8 9\n"  # what runs is unknown: no drop
    with pytest.raises(SystemExit):  # the contract needs to know what runs
        steps("older", "--phase", "drop")
    older = indexes_at(5)
    assert upgrade.upgrade_steps(older, "drop", RELEASE) == [10, 11, 12, 13]
    assert upgrade.contract_steps(older, RELEASE) == [10, 11, 12, 13]
    create_stack("dropping", 11)  # a make deploy stopped between two drops
    assert steps("dropping", "--phase", "add") == ""
    assert upgrade.contract_steps(indexes_at(11), RELEASE) == [12, 13]
    create_stack("current", upgrade.FULL_LEVEL)
    for phase in ("all", "add", "drop"):
        assert steps("current", "--phase", phase) == ""
    assert printed("full-level") == "13\n"
    with pytest.raises(SystemExit):
        printed("index-steps", "--stack", "older", "--phase", "both")


def test_the_command_prints_nothing_for_a_first_deploy_or_a_borrowed_table(aws: None) -> None:
    assert steps("not-yet") == ""
    create_borrowing_stack("restored")
    assert steps("restored") == ""
    assert steps("restored", "--phase", "drop") == ""


def deploy_level(stack: str) -> str:
    return printed("deploy-level", "--stack", stack, "--region", "us-east-1")


def test_the_deploy_level_keeps_every_index_older_code_may_read(aws: None) -> None:
    create_stack("added", ADDED_LEVEL)  # after the additions of make deploy
    assert deploy_level("added") == "9\n"
    create_stack("older", 5)  # (make deploy adds first: 9 then too, never a drop)
    assert deploy_level("older") == "9\n"
    create_stack("dropping", 11)  # nothing dropped is added back
    assert deploy_level("dropping") == "11\n"
    create_stack("current", upgrade.FULL_LEVEL)
    assert deploy_level("current") == "13\n"


def test_the_deploy_level_of_a_first_deploy_or_a_borrowed_table_is_the_full_level(
    aws: None,
) -> None:
    assert deploy_level("not-yet") == "13\n"
    create_borrowing_stack("restored")
    assert deploy_level("restored") == "13\n"
    create_stack("emptied", 5)
    boto3.client("dynamodb", region_name="us-east-1").delete_table(TableName="emptied-memories")
    assert deploy_level("emptied") == "13\n"
    assert steps("emptied") == ""


def apply_step(client: Any, table: str, level: int) -> None:
    """What a deploy of ``TableIndexLevel=<level>`` does to a table at ``level - 1``."""
    old = by_name(table_at(level - 1)["GlobalSecondaryIndexes"], "IndexName")
    new = by_name(table_at(level)["GlobalSecondaryIndexes"], "IndexName")
    (changed,) = set(old) ^ set(new)  # one index per update
    if changed in new:
        keys = {part["AttributeName"] for part in new[changed]["KeySchema"]}
        client.update_table(
            TableName=table,
            AttributeDefinitions=[
                a for a in table_at(level)["AttributeDefinitions"] if a["AttributeName"] in keys
            ],
            GlobalSecondaryIndexUpdates=[{"Create": new[changed]}],
        )
    else:
        client.update_table(
            TableName=table, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": changed}}]
        )


def test_a_stack_climbs_to_the_full_level_one_index_per_step(aws: None) -> None:
    create_stack("climbing", 4)
    client = boto3.client("dynamodb", region_name="us-east-1")
    cloudformation = boto3.client("cloudformation", region_name="us-east-1")
    all_steps = upgrade.index_steps(cloudformation, client, "climbing")
    assert all_steps == list(range(5, 14))
    for level in all_steps:
        apply_step(client, "climbing-memories", level)
        assert table_level("climbing-memories") == level
        assert (
            upgrade.index_steps(cloudformation, client, "climbing")
            == all_steps[all_steps.index(level) + 1 :]
        )
    assert table_level("climbing-memories") == upgrade.FULL_LEVEL


def test_a_borrowed_table_gets_its_missing_indexes_then_loses_the_retired_by_name(
    aws: None,
) -> None:
    create_stack("restored", 5)  # (its table, used as an ExistingTableName)
    added = printed("add-indexes", "--table", "restored-memories", "--region", "us-east-1")
    assert added.split() == FULL[1:]
    assert table_level("restored-memories") == ADDED_LEVEL
    assert printed("add-indexes", "--table", "restored-memories", "--region", "us-east-1") == ""
    client = boto3.client("dynamodb", region_name="us-east-1")
    with pytest.raises(ValueError, match="make deploy this release first"):
        upgrade._drop_by_name(client, "restored-memories", "0.1.0")  # older code runs
    assert table_level("restored-memories") == ADDED_LEVEL  # nothing dropped
    dropped = upgrade._drop_by_name(client, "restored-memories", RELEASE)
    assert dropped == list(INDEX_RETIREMENT_ORDER)
    assert table_level("restored-memories") == upgrade.FULL_LEVEL
    assert upgrade._drop_by_name(client, "restored-memories", RELEASE) == []


def test_a_table_with_every_addition_reaches_the_full_level_by_its_drops(aws: None) -> None:
    client = boto3.client("dynamodb", region_name="us-east-1")
    client.create_table(**table_definition("added", ADDED_LEVEL))
    assert table_level("added") == ADDED_LEVEL
    assert drop_retired_indexes(client, "added") == list(INDEX_RETIREMENT_ORDER)
    assert table_level("added") == upgrade.FULL_LEVEL
    assert drop_retired_indexes(client, "added") == []


def test_an_embedded_first_release_table_is_upgraded_to_exactly_this_releases_indexes(
    aws: None,
) -> None:
    client = boto3.client("dynamodb", region_name="us-east-1")
    client.create_table(**table_definition("first", 4))
    assert create_table(client, "first") is False  # added, then dropped, one at a time
    described = client.describe_table(TableName="first")["Table"]
    assert sorted(i["IndexName"] for i in described["GlobalSecondaryIndexes"]) == sorted(
        indexes_at(upgrade.FULL_LEVEL)
    )
    assert create_table(client, "first") is False  # nothing left to do
    assert table_level("first") == upgrade.FULL_LEVEL


def recipe(target: str) -> list[str]:
    """The command lines of a Makefile target, in order."""
    lines = (REPO / "Makefile").read_text().splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith(f"{target}:"))
    found = []
    for line in lines[start + 1 :]:
        if line and not line.startswith(("\t", "ifeq", "else", "endif")):
            break
        found.append(line)
    return found


def first(lines: list[str], *words: str) -> int:
    return next(n for n, line in enumerate(lines) if all(word in line for word in words))


def test_make_deploy_adds_deploys_the_functions_and_never_drops() -> None:
    lines = recipe("deploy")
    adds = first(lines, "index-steps", "--phase add")
    resources = first(lines, "deploy-level", "--stack $(STACK)-resources")
    functions = first(lines, "chalice", " deploy --stage")
    assert adds < resources < functions
    assert "--phase drop" not in " ".join(lines)  # the contract is make contract's
    assert "full-level" not in " ".join(lines)  # older code still runs at that deploy
    for number in (adds, resources):
        assert "--function $(CHALICE_API)" in lines[number]  # what runs decides the drops
    assert "$(RESOURCES_DEPLOY) TableIndexLevel=$$level || exit 1; done" in lines[adds]
    contract = recipe("contract")
    step = first(contract, "index-steps", "--phase drop")
    assert "--function $(CHALICE_API)" in contract[step]
    assert "$(RESOURCES_DEPLOY) TableIndexLevel=$$level || exit 1; done" in contract[step]


def test_make_deploy_cloudformation_expands_then_deploys_at_the_deploy_level() -> None:
    lines = recipe("deploy-cloudformation")
    steps_line = first(lines, "index-steps")
    assert "--phase add --function $(ONE_STACK_API)" in lines[steps_line]
    assert steps_line < first(lines, "TableIndexLevel=$$($(PY) -m infra.upgrade deploy-level")
    assert "full-level" not in " ".join(lines) and "--phase drop" not in " ".join(lines)
    contract = recipe("contract-cloudformation")
    assert "--phase drop --function $(ONE_STACK_API)" in contract[first(contract, "index-steps")]


def test_the_expand_drops_only_what_the_running_code_no_longer_reads() -> None:
    # 0.1.0's drops are overdue for 0.2.0; code before 0.2.0 names no release: no drop
    assert upgrade.upgrade_steps(indexes_at(5), "add", upgrade.UNNAMED_RELEASE) == [6, 7, 8, 9]
    assert upgrade.upgrade_steps(indexes_at(5), "add", None) == [6, 7, 8, 9]
    assert upgrade.upgrade_steps(indexes_at(5), "add", RELEASE) == list(range(6, 14))
    with pytest.raises(ValueError, match="make deploy this release first"):
        upgrade.contract_steps(indexes_at(9), upgrade.UNNAMED_RELEASE)
    with pytest.raises(ValueError, match="unknown"):
        upgrade.contract_steps(indexes_at(9), None)
    assert upgrade.contract_steps(indexes_at(13), None) == []  # nothing to drop: no check


def test_the_running_release_is_read_from_the_deployed_function(aws: None) -> None:
    client = boto3.client("lambda", region_name="us-east-1")
    role = boto3.client("iam", region_name="us-east-1").create_role(
        RoleName="r", AssumeRolePolicyDocument="{}"
    )["Role"]["Arn"]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", "")
    for name, variables in (("old", {}), ("new", {"PINEWORK_RELEASE": "0.2.0"})):
        client.create_function(
            FunctionName=name,
            Runtime="python3.11",
            Role=role,
            Handler="app.handler",
            Code={"ZipFile": buffer.getvalue()},
            Environment={"Variables": variables},
        )
    assert upgrade.running_release(client, "old") == upgrade.UNNAMED_RELEASE
    assert upgrade.running_release(client, "new") == "0.2.0"
    assert upgrade.running_release(client, "absent") is None
