"""``make deploy``: the ``chalice deploy`` path, with no hand steps. After the resources
stack (``python -m infra.template resources``) is deployed, ``configure`` writes its
outputs into the stage of ``.chalice/config.json`` (the table, bucket, queue and
reviewer variables, and each function's ``iam_role_arn``), ``chalice deploy`` runs,
``gateway-responses`` puts API Gateway's error answers in the envelope on the
deployed API and redeploys its stage (every time: Chalice replaces the API
definition), ``throttle`` sets the stage's rate and burst limits, and
``waf-parameters`` prints the API and stage the WAF stack (``python -m infra.template
waf``) is put in front of. Usage: ``python -m infra.deploy configure --stage prod
--stack build/stack-prod.json``; ``python -m infra.deploy gateway-responses --stage
prod``; ``python -m infra.deploy throttle --stage prod --rate 50 --burst 100``.
Choices:
docs/DECISIONS.md#packaging-cold-start-and-iam-issue-12-deploy-iam-gateway-errors-queued-reviews,
docs/DECISIONS.md#rate-limits-where-aws-gives-them-issue-21-item-5
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import boto3

from chalicelib.settings import REVIEW_QUEUE_NAME
from infra import iam
from infra.gateway_responses import put_gateway_responses
from infra.rate_limits import DEFAULT_BURST_LIMIT, DEFAULT_RATE_LIMIT, put_stage_throttling

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / ".chalice" / "config.json"
ENVIRONMENT_FROM_OUTPUTS = {
    "PINEWORK_TABLE_NAME": "TableName",
    "PINEWORK_BUCKET_NAME": "BucketName",
    "PINEWORK_REVIEW_QUEUE_NAME": "ReviewQueueName",
    "PINEWORK_REVIEWER": "Reviewer",
    "PINEWORK_BEDROCK_MODEL_ID": "BedrockModelId",
}
"""Environment variable -> the resources stack's output that gives its value."""


def stack_outputs(description: dict[str, Any]) -> dict[str, str]:
    """``{OutputKey: OutputValue}`` of ``aws cloudformation describe-stacks`` output.

    Raises:
        ValueError: the description holds no stack, or not exactly one.
    """
    stacks = description.get("Stacks", [])
    if len(stacks) != 1:
        raise ValueError(f"expected one stack in the description, found {len(stacks)}")
    return {item["OutputKey"]: item["OutputValue"] for item in stacks[0].get("Outputs", [])}


def configure_stage(config: dict[str, Any], stage: str, outputs: dict[str, str]) -> dict[str, Any]:
    """``config`` with ``stage`` pointed at the resources stack's outputs.

    Only the keys this owns change: the stage's ``manage_iam_role`` (false), the five
    environment variables of ``ENVIRONMENT_FROM_OUTPUTS``, and ``iam_role_arn`` of each
    function in ``lambda_functions``; everything else in the file is kept as it is.

    Raises:
        ValueError: an output is missing, the stack was made for another stage, or its
            queue is not the one ``app.py`` binds its worker to (``REVIEW_QUEUE_NAME``).
    """
    needed = [
        "ChaliceStage",
        *ENVIRONMENT_FROM_OUTPUTS.values(),
        *(f"{prefix}RoleArn" for prefix in iam.FUNCTIONS.values()),
    ]
    missing = [name for name in needed if name not in outputs]
    if missing:
        raise ValueError(f"the resources stack has no output {', '.join(missing)}")
    if outputs["ChaliceStage"] != stage:
        raise ValueError(
            f"the resources stack was made for stage {outputs['ChaliceStage']!r}, not {stage!r}"
        )
    if outputs["ReviewQueueName"] != REVIEW_QUEUE_NAME:
        raise ValueError(
            f"the stack's queue is {outputs['ReviewQueueName']!r}, but app.py's worker reads "
            f"{REVIEW_QUEUE_NAME!r}"
        )
    updated: dict[str, Any] = json.loads(json.dumps(config))
    staged = updated.setdefault("stages", {}).setdefault(stage, {})
    staged["manage_iam_role"] = False
    variables = staged.setdefault("environment_variables", {})
    for variable, output in ENVIRONMENT_FROM_OUTPUTS.items():
        variables[variable] = outputs[output]
    functions = staged.setdefault("lambda_functions", {})
    for function, prefix in iam.FUNCTIONS.items():
        functions.setdefault(function, {})["iam_role_arn"] = outputs[f"{prefix}RoleArn"]
    return updated


def deployed_rest_api(project: Path, stage: str) -> str:
    """The REST API id ``chalice deploy`` recorded in ``.chalice/deployed/<stage>.json``.

    Raises:
        ValueError: no API is recorded for the stage.
    """
    deployed = json.loads((project / ".chalice" / "deployed" / f"{stage}.json").read_text())
    for resource in deployed.get("resources", []):
        if resource.get("resource_type") == "rest_api":
            return str(resource["rest_api_id"])
    raise ValueError(f"chalice deploy recorded no REST API for stage {stage!r}")


def deployed_stage(config: dict[str, Any], project: Path, stage: str) -> tuple[str, str]:
    """The REST API id and API Gateway stage ``chalice deploy`` made for ``stage``.

    Raises:
        ValueError: no API is recorded for the stage.
    """
    api_stage = str(config["stages"][stage].get("api_gateway_stage", "api"))
    return deployed_rest_api(project, stage), api_stage


def _configure(parsed: argparse.Namespace, config: dict[str, Any]) -> None:
    """``configure``: write the resources stack's outputs into the stage."""
    outputs = stack_outputs(json.loads(parsed.stack.read_text()))
    parsed.config.write_text(
        json.dumps(configure_stage(config, parsed.stage, outputs), indent=2) + "\n"
    )
    print(f"{parsed.config}: stage {parsed.stage} set from the resources stack")


def _gateway_responses(parsed: argparse.Namespace, config: dict[str, Any]) -> None:
    """``gateway-responses``: the envelope on API Gateway's own answers."""
    rest_api, api_stage = deployed_stage(config, parsed.project, parsed.stage)
    count = put_gateway_responses(boto3.client("apigateway"), rest_api, api_stage)
    print(f"{count} gateway responses set on {rest_api} and stage {api_stage} redeployed")


def _throttle(parsed: argparse.Namespace, config: dict[str, Any]) -> None:
    """``throttle``: the stage's default method throttle."""
    rest_api, api_stage = deployed_stage(config, parsed.project, parsed.stage)
    put_stage_throttling(boto3.client("apigateway"), rest_api, api_stage, parsed.rate, parsed.burst)
    print(f"stage {api_stage} of {rest_api}: {parsed.rate} requests/s, burst {parsed.burst}")


def _waf_parameters(parsed: argparse.Namespace, config: dict[str, Any]) -> None:
    """``waf-parameters``: ``RestApiId=… ApiStage=…`` for the WAF stack's deploy."""
    rest_api, api_stage = deployed_stage(config, parsed.project, parsed.stage)
    print(f"RestApiId={rest_api} ApiStage={api_stage}")


STEPS = {
    "configure": _configure,
    "gateway-responses": _gateway_responses,
    "throttle": _throttle,
    "waf-parameters": _waf_parameters,
}
"""The steps of ``make deploy`` this module runs, by name."""


def main(arguments: list[str] | None = None) -> None:
    """The steps around ``chalice deploy`` (see the module docstring)."""
    parser = argparse.ArgumentParser(description="Steps of make deploy.")
    parser.add_argument("step", choices=list(STEPS))
    parser.add_argument("--stage", default="prod")
    parser.add_argument("--stack", type=Path, help="describe-stacks JSON (configure)")
    parser.add_argument("--config", type=Path, default=CONFIG)
    parser.add_argument("--rate", type=float, default=DEFAULT_RATE_LIMIT, help="requests/s")
    parser.add_argument("--burst", type=int, default=DEFAULT_BURST_LIMIT)
    parsed = parser.parse_args(arguments)
    if parsed.step == "configure" and parsed.stack is None:
        parser.error("configure needs --stack")
    parsed.project = parsed.config.resolve().parent.parent
    STEPS[parsed.step](parsed, json.loads(parsed.config.read_text()))


if __name__ == "__main__":
    main()
