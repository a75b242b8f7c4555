"""``make teardown`` and ``make teardown-cloudformation`` from anywhere: a fresh clone with
no ``.venv`` and no ``build/`` (standard library and the AWS CLI only,
``infra/awscli.py``; docs/operations.md#teardown).

``teardown_stage`` (the ``make deploy`` path) first checks everything it needs, changing
nothing: the account; chalice's deployed record of the stage (the checkout's
``.chalice/deployed/<stage>.json``, else the artifact bucket's copy, read with the
expected owner); that every resource in it is of a kind this module deletes; and that
the resources stack was made for this stage. Only then it deletes, in the order that
never leaves a stage serving without its alarms: what ``chalice deploy`` made (the
schedule, the queue trigger, the REST API, the functions: the stage stops serving),
the WAF stack, the resources stack (its data is retained), the deployed record, and the
operations stack (alarms, topic, dashboard) last. Each deletion takes "already gone" as
done, so a teardown stopped half-way is run again to finish. ``teardown_stack`` (the
one-stack path) checks the stack is a Pinework stack, then deletes it: its alarms go
with its functions in one stack deletion. Both print what was retained (table, bucket,
queues, the hash secret, log groups) and how to delete it for good.

Usage: ``python3 -m infra.stage_teardown stage --stage prod --stack pinework-prod
--region R --bucket B --account A --record .chalice/deployed/prod.json``;
``python3 -m infra.stage_teardown stack --stack pinework-prod --region R``.
Choices: docs/DECISIONS.md#releases-an-operator-can-trust-issue-44.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.awscli import AwsError, Stop, aws, aws_json, require_account

RETAINED_OUTPUTS = (
    "TableName",
    "BucketName",
    "HashSecretArn",
    "ReviewQueueName",
    "ReviewQueueUrl",
    "ReviewDeadLetterQueueName",
    "ReviewDeadLetterQueueUrl",
    "LifecycleQueueName",
    "LifecycleQueueUrl",
    "LifecycleDeadLetterQueueName",
    "LifecycleDeadLetterQueueUrl",
    "ReviewFanoutFailureQueueName",
)
"""The stack outputs that name what a stack deletion keeps (``infra/protection.py``'s
``RETAINED``); the functions', the heartbeat's and the access log's log groups are
kept too."""
IGNORED_RECORD_KINDS = frozenset({"log_group"})
"""Resources of a chalice record nothing deletes: chalice itself only removes a log
group's retention policy; the log groups are the resources stack's (retained)."""


@dataclass(frozen=True)
class Deletion:
    """One ``aws`` call that deletes a thing chalice made: ``what`` names it for the
    operator; ``calls`` run in order (an events rule loses its targets first)."""

    what: str
    calls: tuple[tuple[str, ...], ...]


def _rule_deletion(rule: str) -> Deletion:
    return Deletion(
        f"schedule {rule}",
        (
            ("events", "remove-targets", "--rule", rule, "--ids", "1"),
            ("events", "delete-rule", "--name", rule),
        ),
    )


def record_deletions(record: dict[str, Any]) -> list[Deletion]:
    """What deleting a chalice stage deletes, from its deployed record, in order: the
    schedules and queue triggers (nothing starts a function any more), the REST API
    (nothing serves), the functions, then their layers.

    Raises:
        Stop: a resource of a kind this module does not delete (nothing deleted yet).
    """
    order = {"cloudwatch_event": 0, "sqs_event": 0, "rest_api": 1, "lambda_function": 2}
    order["lambda_layer"] = 3
    found: list[tuple[int, Deletion]] = []
    unknown = []
    for resource in record.get("resources", []):
        kind = resource.get("resource_type")
        if kind in IGNORED_RECORD_KINDS:
            continue
        if kind == "cloudwatch_event":
            deletion = _rule_deletion(str(resource["rule_name"]))
        elif kind == "sqs_event":
            uuid = str(resource["event_uuid"])
            deletion = Deletion(
                f"queue trigger {uuid}",
                (("lambda", "delete-event-source-mapping", "--uuid", uuid),),
            )
        elif kind == "rest_api":
            api = str(resource["rest_api_id"])
            deletion = Deletion(
                f"REST API {api}", (("apigateway", "delete-rest-api", "--rest-api-id", api),)
            )
        elif kind == "lambda_function":
            arn = str(resource["lambda_arn"])
            deletion = Deletion(
                f"function {arn}", (("lambda", "delete-function", "--function-name", arn),)
            )
        elif kind == "lambda_layer":
            arn = str(resource["layer_version_arn"])
            name, version = arn.rsplit(":", 1)
            deletion = Deletion(
                f"layer {arn}",
                (
                    (
                        "lambda",
                        "delete-layer-version",
                        "--layer-name",
                        name,
                        "--version-number",
                        version,
                    ),
                ),
            )
        else:
            unknown.append(f"{resource.get('name')} ({kind})")
            continue
        found.append((order[str(kind)], deletion))
    if unknown:
        raise Stop(
            f"the deployed record holds resources this teardown does not delete: "
            f"{', '.join(unknown)}; nothing was deleted"
        )
    return [deletion for _, deletion in sorted(found, key=lambda pair: pair[0])]


def describe_stack(stack: str, region: str) -> dict[str, Any] | None:
    """``describe-stacks`` of one stack, or None when it does not exist."""
    try:
        answer = aws_json("cloudformation", "describe-stacks", "--stack-name", stack, region=region)
    except AwsError as error:
        if error.not_found:
            return None
        raise
    stacks = answer.get("Stacks", []) if isinstance(answer, dict) else []
    return stacks[0] if stacks else None


def outputs(stack: dict[str, Any] | None) -> dict[str, str]:
    """A described stack's ``{OutputKey: OutputValue}`` (empty for None)."""
    if stack is None:
        return {}
    return {item["OutputKey"]: item["OutputValue"] for item in stack.get("Outputs", [])}


def delete_stack(stack: str, region: str) -> bool:
    """Delete ``stack`` and wait until it is gone; False when it did not exist.

    Raises:
        AwsError: the deletion failed (the stack is left as CloudFormation left it).
    """
    if describe_stack(stack, region) is None:
        return False
    aws("cloudformation", "delete-stack", "--stack-name", stack, region=region)
    aws("cloudformation", "wait", "stack-delete-complete", "--stack-name", stack, region=region)
    return True


def _run_deletion(deletion: Deletion, region: str) -> bool:
    """Run one deletion's calls; False when the thing was already gone."""
    gone = False
    for call in deletion.calls:
        try:
            aws(*call, region=region)
        except AwsError as error:
            if not error.not_found:
                raise
            gone = True
    return not gone


def _read_record(record: Path, bucket: str, key: str, account: str, region: str) -> Any:
    """The deployed record: the checkout's file, else the bucket's copy (owner checked);
    None when neither exists."""
    if record.is_file():
        return json.loads(record.read_text())
    record.parent.mkdir(parents=True, exist_ok=True)
    try:
        aws(
            "s3",
            "cp",
            f"s3://{bucket}/{key}",
            str(record),
            "--expected-bucket-owner",
            account,
            region=region,
        )
    except AwsError as error:
        if error.not_found or "does not exist" in error.message or "(404)" in error.message:
            return None
        raise
    return json.loads(record.read_text()) if record.is_file() else None


def retained_message(kept: dict[str, str]) -> str:
    """What a teardown kept and how to delete it for good (docs/operations.md#teardown)."""
    lines = ["kept (retained data; docs/operations.md#teardown to delete it for good):"]
    lines += [f"  {name}: {value}" for name, value in kept.items() if name in RETAINED_OUTPUTS]
    lines.append(
        "  the functions' and the heartbeat's log groups (/aws/lambda/...), and with "
        "ApiAccessLogs=on the stage's access log (/aws/apigateway/...-access)"
    )
    if "HashSecretArn" in kept:
        lines.append(
            "  the hash secret costs $0.40 a month until deleted: aws secretsmanager "
            f"delete-secret --secret-id {kept['HashSecretArn']} --recovery-window-in-days 7"
        )
    return "\n".join(lines)


def teardown_stage(
    stage: str, stack: str, region: str, bucket: str, account: str, record: Path
) -> list[str]:
    """Delete ``make deploy``'s stage (see the module doc).

    Args:
        stage: the Chalice stage.
        stack: the stacks' prefix (``<stack>-resources``, ``-operations``, ``-waf``).
        region: the stage's region.
        bucket: the artifact bucket (its ``<stack>/chalice-deployed/<stage>.json``).
        account: the account expected to own the bucket.
        record: the checkout's deployed record of the stage (read, then removed).

    Returns:
        What was deleted, in order, for the operator.

    Raises:
        Stop: a check failed; nothing was deleted.
        AwsError: a deletion failed; what is left still has its alarms (run again).
    """
    require_account(account)
    resources = describe_stack(f"{stack}-resources", region)
    made_for = outputs(resources).get("ChaliceStage")
    if resources is not None and made_for != stage:
        raise Stop(
            f"{stack}-resources was made for stage {made_for!r}, not {stage!r}: check STACK "
            "and STAGE; nothing was deleted"
        )
    key = f"{stack}/chalice-deployed/{stage}.json"
    found = _read_record(record, bucket, key, account, region)
    if found is None and resources is not None:
        raise Stop(
            f"no record of what chalice deployed for {stage} ({record} or s3://{bucket}/{key}):"
            " the functions would be left behind; nothing was deleted"
        )
    deletions = record_deletions(found) if found is not None else []
    kept = outputs(resources)
    done = []
    for deletion in deletions:
        done.append(deletion.what + ("" if _run_deletion(deletion, region) else " (was gone)"))
    for suffix in ("-waf", "-resources"):
        if delete_stack(f"{stack}{suffix}", region):
            done.append(f"stack {stack}{suffix}")
    if found is not None:
        aws("s3", "rm", f"s3://{bucket}/{key}", "--expected-bucket-owner", account, region=region)
        record.unlink(missing_ok=True)
        done.append(f"deployed record {key}")
    # The alarms go last: until here something of the stage may still run.
    if delete_stack(f"{stack}-operations", region):
        done.append(f"stack {stack}-operations")
    if kept:
        done.append(retained_message(kept))
    return done


def teardown_stack(stack: str, region: str) -> list[str]:
    """Delete ``make deploy-cloudformation``'s stack after checking it is one (its
    outputs name an API and a table); nothing when it does not exist.

    Raises:
        Stop: the stack is not a Pinework one-stack deployment; nothing was deleted.
        AwsError: the deletion failed.
    """
    described = describe_stack(stack, region)
    if described is None:
        return [f"no stack {stack}: nothing to delete"]
    kept = outputs(described)
    if not {"ApiName", "TableName"} <= set(kept):
        raise Stop(
            f"{stack} is not a make deploy-cloudformation stack (no ApiName and TableName "
            "outputs): for make deploy's stages run make teardown; nothing was deleted"
        )
    delete_stack(stack, region)
    return [f"stack {stack}", retained_message(kept)]


def main(arguments: list[str] | None = None) -> None:
    """``stage …`` (``teardown_stage``) or ``stack …`` (``teardown_stack``); a ``Stop`` or
    a failed deletion prints its message and exits 1."""
    parser = argparse.ArgumentParser(description="Tear down a stage or a one-stack deploy.")
    commands = parser.add_subparsers(dest="command", required=True)
    stage = commands.add_parser("stage", help="make deploy's stage")
    stage.add_argument("--stage", required=True)
    stage.add_argument("--stack", required=True)
    stage.add_argument("--region", required=True)
    stage.add_argument("--bucket", required=True)
    stage.add_argument("--account", default="")
    stage.add_argument("--record", type=Path, required=True)
    one = commands.add_parser("stack", help="make deploy-cloudformation's stack")
    one.add_argument("--stack", required=True)
    one.add_argument("--region", required=True)
    parsed = parser.parse_args(arguments)
    try:
        if parsed.command == "stage":
            done = teardown_stage(
                parsed.stage,
                parsed.stack,
                parsed.region,
                parsed.bucket,
                parsed.account,
                parsed.record,
            )
        else:
            done = teardown_stack(parsed.stack, parsed.region)
    except Stop as stop:
        sys.stderr.write(f"{stop}\n")
        raise SystemExit(1) from stop
    except AwsError as error:
        sys.stderr.write(
            f"{error}\nstopped: what is left of the stage keeps its alarms (the operations "
            "stack goes last); fix the cause and run the teardown again to finish\n"
        )
        raise SystemExit(1) from error
    sys.stdout.write("".join(f"deleted {line}\n" for line in done if "\n" not in line))
    sys.stdout.write("".join(f"{line}\n" for line in done if "\n" in line))


if __name__ == "__main__":
    main()
