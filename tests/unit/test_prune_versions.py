"""Pruning SAM's Lambda versions (``infra/prune_versions.py``, docs/operations.md#versions):
the newest ``keep`` versions, every version an alias names and ``$LATEST`` stay; the
rest go, for each of the stack's three functions."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import boto3

from infra.prune_versions import function_names, main, prune


def code() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", "def handler(event, context):\n    return 1\n")
    return buffer.getvalue()


def deploy(client: Any, name: str, count: int) -> None:
    """A function with ``count`` published versions (each with other code)."""
    iam = boto3.client("iam", region_name="us-east-1")
    role = iam.create_role(RoleName=f"r-{name}", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    client.create_function(
        FunctionName=name,
        Runtime="python3.11",
        Role=role,
        Handler="app.handler",
        Code={"ZipFile": code()},
    )
    for number in range(count):
        client.update_function_code(FunctionName=name, ZipFile=code() + bytes([number]))
        client.publish_version(FunctionName=name, Description=str(number))


def versions(client: Any, name: str) -> list[str]:
    listed = client.list_versions_by_function(FunctionName=name)["Versions"]
    return [v["Version"] for v in listed if v["Version"] != "$LATEST"]


def test_old_versions_go_and_the_live_ones_and_the_newest_stay(aws: None, capsys: Any) -> None:
    client = boto3.client("lambda", region_name="us-east-1")
    names = function_names("pinework-x")
    assert names == [
        "pinework-x-api",
        "pinework-x-review-fanout",
        "pinework-x-review-worker",
        "pinework-x-lifecycle-worker",
    ]
    for name in names:
        deploy(client, name, 6)
    # live was moved back to version 2 (a rollback), with 5% on version 3
    client.create_alias(
        FunctionName=names[0],
        Name="live",
        FunctionVersion="2",
        RoutingConfig={"AdditionalVersionWeights": {"3": 0.05}},
    )
    assert prune(client, "pinework-x", keep=2, dry_run=True)[names[0]] == ["1", "4"]
    assert len(versions(client, names[0])) == 6  # a dry run deletes nothing
    done = prune(client, "pinework-x", keep=2)
    assert done[names[0]] == ["1", "4"]
    assert sorted(versions(client, names[0]), key=int) == ["2", "3", "5", "6"]
    assert sorted(versions(client, names[1]), key=int) == ["5", "6"]
    main(["--stack", "pinework-x", "--region", "us-east-1", "--keep", "2"])
    assert "deleted 0 versions" in capsys.readouterr().out  # nothing left to prune
