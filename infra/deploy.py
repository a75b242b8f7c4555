"""``make deploy``: the ``chalice deploy`` path, with no hand steps. After the resources
stack (``python -m infra.template resources``) is deployed, ``configure`` writes its
outputs into the stage of ``.chalice/config.json`` (the table, bucket, queue and
reviewer variables, and each function's ``iam_role_arn``), ``chalice deploy`` runs,
and ``gateway-responses`` puts API Gateway's error answers in the envelope on the
deployed API and redeploys its stage (every time: Chalice replaces the API
definition). Usage: ``python -m infra.deploy configure --stage prod --stack
build/stack-prod.json``; ``python -m infra.deploy gateway-responses --stage prod``.
 Choices:
docs/DECISIONS.md#packaging-cold-start-and-iam-issue-12-deploy-iam-gateway-errors-queued-reviews
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


def main(arguments: list[str] | None = None) -> None:
    """The two steps around ``chalice deploy`` (see the module docstring)."""
    parser = argparse.ArgumentParser(description="Steps of make deploy.")
    parser.add_argument("step", choices=["configure", "gateway-responses"])
    parser.add_argument("--stage", default="prod")
    parser.add_argument("--stack", type=Path, help="describe-stacks JSON (configure)")
    parser.add_argument("--config", type=Path, default=CONFIG)
    parsed = parser.parse_args(arguments)
    config = json.loads(parsed.config.read_text())
    if parsed.step == "configure":
        if parsed.stack is None:
            parser.error("configure needs --stack")
        outputs = stack_outputs(json.loads(parsed.stack.read_text()))
        parsed.config.write_text(
            json.dumps(configure_stage(config, parsed.stage, outputs), indent=2) + "\n"
        )
        print(f"{parsed.config}: stage {parsed.stage} set from the resources stack")
        return
    project = parsed.config.resolve().parent.parent
    api_stage = config["stages"][parsed.stage].get("api_gateway_stage", "api")
    rest_api = deployed_rest_api(project, parsed.stage)
    count = put_gateway_responses(boto3.client("apigateway"), rest_api, api_stage)
    print(f"{count} gateway responses set on {rest_api} and stage {api_stage} redeployed")


if __name__ == "__main__":
    main()
