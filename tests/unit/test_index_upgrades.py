"""Upgrading an older stack one GSI per update (docs/operations.md#upgrades,
``infra/upgrade.py``): the indexes in release order, the level of a table read from its
indexes, the levels to deploy, the command the deploy targets run, and the template at
each level (valid, accepted by DynamoDB, one index more than the level before)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import boto3
import pytest

from chalicelib.settings import REVIEW_QUEUE_NAME
from chalicelib.storage.keys import (
    BY_AGENT_KIND,
    BY_ROUTINE_STATUS,
    BY_TOKEN_PRINCIPAL,
    MEMORY_INDEXES,
)
from infra import upgrade
from infra.iam_audit import Stack, resolve
from infra.tables import INDEX_RELEASE_ORDER, table_definition
from infra.template import resources_stack
from tests.helpers import REPO

FIRST_RELEASE = list(MEMORY_INDEXES)
LEVELS = range(len(FIRST_RELEASE), upgrade.FULL_LEVEL + 1)


def test_the_release_order_is_every_index_of_the_table_oldest_first() -> None:
    assert list(INDEX_RELEASE_ORDER) == [
        *FIRST_RELEASE,
        BY_ROUTINE_STATUS,  # docs/issues.md#issue-4
        BY_TOKEN_PRINCIPAL,  # docs/issues.md#issue-12
        BY_AGENT_KIND,  # docs/issues.md#issue-13
    ]
    names = {index["IndexName"] for index in table_definition("t")["GlobalSecondaryIndexes"]}
    assert set(INDEX_RELEASE_ORDER) == names
    assert upgrade.FULL_LEVEL == 7
    assert upgrade.index_level_parameter()["Default"] == upgrade.FULL_LEVEL
    assert upgrade.index_level_parameter()["AllowedValues"] == [4, 5, 6, 7]


@pytest.mark.parametrize(
    ("present", "level", "steps"),
    [
        (FIRST_RELEASE, 4, [5, 6, 7]),
        ([*FIRST_RELEASE, BY_ROUTINE_STATUS], 5, [6, 7]),  # the last release added two more
        ([*FIRST_RELEASE, BY_ROUTINE_STATUS, BY_TOKEN_PRINCIPAL], 6, [7]),
        (list(INDEX_RELEASE_ORDER), 7, []),
    ],
)
def test_the_level_is_the_release_ordered_prefix_and_the_steps_climb_one_at_a_time(
    present: list[str], level: int, steps: list[int]
) -> None:
    assert upgrade.index_level(reversed(present)) == level  # the order read does not matter
    assert upgrade.upgrade_steps(present) == steps


@pytest.mark.parametrize(
    ("present", "named"),
    [
        ([*FIRST_RELEASE, BY_AGENT_KIND], "unexpected ['byAgentKind']"),  # 5 and 6 missing
        ([*FIRST_RELEASE, "byColour"], "unexpected ['byColour']"),
        (FIRST_RELEASE[:3], "missing ['byWorkspaceStatus'"),
    ],
)
def test_a_set_no_release_made_is_refused_with_what_differs(present: list[str], named: str) -> None:
    with pytest.raises(ValueError, match="not a release's") as refused:
        upgrade.index_level(present)
    assert named in str(refused.value)


def table_at(level: int) -> dict[str, Any]:
    """The stack's table resource at ``level``, every expression evaluated (a test stack)."""
    rendered = upgrade.at_index_level(resources_stack()["Resources"]["MemoryTable"], level)
    stack = Stack(table="t", bucket="b", queue=REVIEW_QUEUE_NAME, index_level=level)
    properties: dict[str, Any] = resolve(rendered["Properties"], stack)
    return properties


def index_names(properties: dict[str, Any]) -> list[str]:
    return [index["IndexName"] for index in properties["GlobalSecondaryIndexes"]]


def test_each_level_adds_exactly_one_index_to_the_level_before() -> None:
    template = resources_stack()
    before = upgrade.at_index_level(template, LEVELS[0])
    assert index_names(before["Resources"]["MemoryTable"]["Properties"]) == FIRST_RELEASE
    for level in LEVELS[1:]:
        after = upgrade.at_index_level(template, level)
        old = before["Resources"]["MemoryTable"]["Properties"]
        new = after["Resources"]["MemoryTable"]["Properties"]
        assert index_names(new) == [*index_names(old), INDEX_RELEASE_ORDER[level - 1]]
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
        before = after
    assert upgrade.at_index_level(template, upgrade.FULL_LEVEL)["Resources"]["MemoryTable"][
        "Properties"
    ]["GlobalSecondaryIndexes"] == [
        {**index}
        for name in INDEX_RELEASE_ORDER
        for index in table_definition("t")["GlobalSecondaryIndexes"]
        if index["IndexName"] == name
    ]


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


@pytest.mark.parametrize("level", LEVELS)
def test_the_template_of_each_level_passes_cfn_lint(tmp_path: Path, level: int) -> None:
    path = tmp_path / f"resources-{level}.json"
    path.write_text(json.dumps(upgrade.at_index_level(resources_stack(), level)))
    lint = shutil.which("cfn-lint", path=str(REPO / ".venv" / "bin")) or "cfn-lint"
    done = subprocess.run([lint, str(path)], capture_output=True, text=True, check=False)
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


def test_the_command_prints_the_levels_of_an_older_stack(aws: None) -> None:
    create_stack("older", 5)
    assert printed("index-steps", "--stack", "older", "--region", "us-east-1") == "6 7\n"
    create_stack("current", upgrade.FULL_LEVEL)
    assert printed("index-steps", "--stack", "current", "--region", "us-east-1") == ""
    assert printed("full-level") == "7\n"


def test_the_command_prints_nothing_for_a_first_deploy_or_a_borrowed_table(aws: None) -> None:
    assert printed("index-steps", "--stack", "not-yet", "--region", "us-east-1") == ""
    cloudformation = boto3.client("cloudformation", region_name="us-east-1")
    queue = {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "q"}}
    cloudformation.create_stack(
        StackName="restored", TemplateBody=json.dumps({"Resources": {"ReviewQueue": queue}})
    )
    assert printed("index-steps", "--stack", "restored", "--region", "us-east-1") == ""


def test_a_stack_climbs_to_the_full_level_one_index_per_step(aws: None) -> None:
    create_stack("climbing", 4)
    client = boto3.client("dynamodb", region_name="us-east-1")
    cloudformation = boto3.client("cloudformation", region_name="us-east-1")
    steps = upgrade.index_steps(cloudformation, client, "climbing")
    assert steps == [5, 6, 7]
    for level in steps:  # what each deploy of TableIndexLevel=<level> does to the table
        (added,) = [
            index
            for index in table_at(level)["GlobalSecondaryIndexes"]
            if index["IndexName"] == INDEX_RELEASE_ORDER[level - 1]
        ]
        keys = {part["AttributeName"] for part in added["KeySchema"]}
        client.update_table(
            TableName="climbing-memories",
            AttributeDefinitions=[
                a for a in table_at(level)["AttributeDefinitions"] if a["AttributeName"] in keys
            ],
            GlobalSecondaryIndexUpdates=[{"Create": added}],
        )
        assert (
            upgrade.index_steps(cloudformation, client, "climbing")
            == steps[steps.index(level) + 1 :]
        )


def test_a_borrowed_table_gets_its_missing_indexes_by_name(aws: None) -> None:
    create_stack("restored", 5)  # (its table, used as an ExistingTableName)
    added = printed("add-indexes", "--table", "restored-memories", "--region", "us-east-1")
    assert set(added.split()) == {BY_TOKEN_PRINCIPAL, BY_AGENT_KIND}
    client = boto3.client("dynamodb", region_name="us-east-1")
    described = client.describe_table(TableName="restored-memories")["Table"]
    assert upgrade.index_level(i["IndexName"] for i in described["GlobalSecondaryIndexes"]) == 7
    assert printed("add-indexes", "--table", "restored-memories", "--region", "us-east-1") == ""
