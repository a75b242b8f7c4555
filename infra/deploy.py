"""``make deploy``: the ``chalice deploy`` path, with no hand steps and nothing written
into the checkout. After the resources stack (``python -m infra.template resources``) is
deployed, ``configure`` builds the project ``chalice deploy`` runs in under
``build/chalice/<stage>/`` (``app.py``, ``chalicelib/``, ``requirements.txt`` copied, and
a ``.chalice/config.json`` generated from the committed one and the stack's outputs:
the table, bucket, queue, reviewer and metrics namespace as environment variables, each
function's ``iam_role_arn``, timeout and the API's reserved concurrency), whose
``.chalice/deployed`` is a link to the checkout's git-ignored ``.chalice/deployed/`` so a
redeploy updates what the last one made. Then ``chalice deploy`` runs, ``name-api``
renames the REST API to ``<app>-<stage>`` (Chalice names every stage's API ``app_name``
on each deploy; API Gateway's metrics know an API by name and stage only),
``gateway-responses`` puts API Gateway's error answers in the envelope on the deployed
API and redeploys its stage (every time: Chalice replaces the API definition),
``throttle`` sets the stage's rate and burst limits and its access log (on or off, the
resources stack's ``ApiAccessLogs``: ``infra/access_logs.py``), ``waf-parameters`` prints the API
and stage the WAF stack (``python -m infra.template waf``) is put in front of, and
``operations-parameters`` what the operations stack (alarms, topic, dashboard; ``python
-m infra.template operations``) watches. ``output NAME`` prints one output of the
resources stack. Usage: ``python -m infra.deploy configure --stage prod --stack
build/resources-stack-prod.json``; ``python -m infra.deploy gateway-responses --stage
prod``; ``python -m infra.deploy throttle --stage prod --rate 50 --burst 100``.
Choices:
docs/DECISIONS.md#packaging-cold-start-and-iam-issue-12-deploy-iam-gateway-errors-queued-reviews,
docs/DECISIONS.md#rate-limits-where-aws-gives-them-issue-21-item-5,
docs/DECISIONS.md#deploy-paths-limits-and-rollback-issue-22-items-1-3-5-and-7
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import boto3

from chalicelib.release import RELEASE
from infra import iam, stage_settings
from infra.access_logs import ACCESS_LOGS, put_access_logs
from infra.gateway_responses import put_gateway_responses
from infra.rate_limits import DEFAULT_BURST_LIMIT, DEFAULT_RATE_LIMIT, put_stage_throttling
from infra.template import FUNCTION_TIMEOUTS

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / ".chalice" / "config.json"
DEPLOYED = REPO / ".chalice" / "deployed"
"""Where ``chalice deploy`` keeps what it made, per stage (git-ignored; ``make deploy``
copies each stage's record to the artifact bucket too)."""
PROJECT_FILES = ("app.py", "requirements.txt")
PROJECT_FOLDERS = ("chalicelib",)
"""What ``chalice deploy`` packages from the project (its app, its library, its pins)."""
TEMPLATE_STAGE = "prod"
"""The committed stage a stage absent from ``.chalice/config.json`` starts from."""
ENVIRONMENT_FROM_OUTPUTS = {
    "PINEWORK_TABLE_NAME": "TableName",
    "PINEWORK_BUCKET_NAME": "BucketName",
    "PINEWORK_REVIEW_QUEUE_NAME": "ReviewQueueName",
    "PINEWORK_LIFECYCLE_QUEUE_NAME": "LifecycleQueueName",
    "PINEWORK_REVIEWER": "Reviewer",
    "PINEWORK_BEDROCK_MODEL_ID": "BedrockModelId",
    "PINEWORK_METRICS_NAMESPACE": "MetricsNamespace",
    "PINEWORK_HASH_SECRET_ARN": "HashSecretArn",
}
"""Environment variable -> the resources stack's output that gives its value."""
SETTINGS_FROM_OUTPUTS = {
    variable: name for name, (variable, _, _) in stage_settings.KV_SETTINGS.items()
}
"""The key-value settings (``infra/stage_settings.py``): set from the outputs of that
name when the stack has them (a stack before 0.2.0 has none: the service's defaults)."""
OPERATIONS_FROM_OUTPUTS = (
    "TableName",
    "ReviewQueueName",
    "ReviewDeadLetterQueueName",
    "LifecycleQueueName",
    "LifecycleDeadLetterQueueName",
    "ReviewFanoutFailureQueueName",
    "ReviewFanoutFailureQueueArn",
    "MetricsNamespace",
)
"""The operations stack's parameters that are resources-stack outputs of the same name."""
OPERATIONS_FUNCTION_PARAMETERS = {
    function: f"{prefix}FunctionName" for function, prefix in iam.FUNCTIONS.items()
}
"""Chalice's function -> the operations stack's parameter of its Lambda name."""


def stack_outputs(description: dict[str, Any]) -> dict[str, str]:
    """``{OutputKey: OutputValue}`` of ``aws cloudformation describe-stacks`` output.

    Raises:
        ValueError: the description holds no stack, or not exactly one.
    """
    stacks = description.get("Stacks", [])
    if len(stacks) != 1:
        raise ValueError(f"expected one stack in the description, found {len(stacks)}")
    return {item["OutputKey"]: item["OutputValue"] for item in stacks[0].get("Outputs", [])}


def configure_stage(
    config: dict[str, Any],
    stage: str,
    outputs: dict[str, str],
    api_reserved_concurrency: int | None = None,
) -> dict[str, Any]:
    """``config`` with ``stage`` pointed at the resources stack's outputs: the config
    ``chalice deploy`` gets (never written over the committed one).

    The stage starts from the committed stage of that name, else from the committed
    ``prod`` stage (``TEMPLATE_STAGE``). Only the keys this owns change: the stage's
    ``manage_iam_role`` (false), the variables of ``ENVIRONMENT_FROM_OUTPUTS``, and in
    ``lambda_functions`` each function's ``iam_role_arn`` and ``lambda_timeout``
    (``FUNCTION_TIMEOUTS``), and the API's ``reserved_concurrency`` when one is given
    (None: the key is removed, the function's concurrency unreserved).

    Raises:
        ValueError: an output is missing, or the stack was made for another stage or app.
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
    app = config.get("app_name")
    if "ChaliceApp" in outputs and app is not None and outputs["ChaliceApp"] != app:
        raise ValueError(f"the resources stack was made for app {outputs['ChaliceApp']!r}")
    updated: dict[str, Any] = json.loads(json.dumps(config))
    stages = updated.setdefault("stages", {})
    if stage not in stages:
        stages[stage] = json.loads(json.dumps(stages.get(TEMPLATE_STAGE, {})))
    staged = stages[stage]
    staged["manage_iam_role"] = False
    variables = staged.setdefault("environment_variables", {})
    for variable, output in ENVIRONMENT_FROM_OUTPUTS.items():
        variables[variable] = outputs[output]
    for variable, output in SETTINGS_FROM_OUTPUTS.items():
        if output in outputs:
            variables[variable] = outputs[output]
    variables["PINEWORK_RELEASE"] = RELEASE  # what runs: the index steps read it
    functions = staged.setdefault("lambda_functions", {})
    for function, prefix in iam.FUNCTIONS.items():
        settings = functions.setdefault(function, {})
        settings["iam_role_arn"] = outputs[f"{prefix}RoleArn"]
        settings["lambda_timeout"] = FUNCTION_TIMEOUTS[function]
    if "ApiReservedConcurrency" in outputs:  # the stack keeps it between deploys
        api_reserved_concurrency = _reserved(outputs["ApiReservedConcurrency"])
    _reserve(functions["api_handler"], api_reserved_concurrency)
    return updated


def _reserve(api: dict[str, Any], concurrency: int | None) -> None:
    """Set (or, for None, remove) the API function's ``reserved_concurrency``."""
    if concurrency is None:
        api.pop("reserved_concurrency", None)
    else:
        api["reserved_concurrency"] = concurrency


def build_project(project: Path, config: dict[str, Any], deployed: Path = DEPLOYED) -> None:
    """Lay out the project ``chalice --project-dir`` deploys: the app's files copied from
    the checkout (stale copies replaced), ``config`` as its ``.chalice/config.json``, and
    ``.chalice/deployed`` a link to ``deployed`` (created if missing)."""
    project.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_FILES:
        shutil.copy2(REPO / name, project / name)
    for name in PROJECT_FOLDERS:
        shutil.rmtree(project / name, ignore_errors=True)
        shutil.copytree(
            REPO / name, project / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    chalice = project / ".chalice"
    chalice.mkdir(exist_ok=True)
    (chalice / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    deployed.mkdir(parents=True, exist_ok=True)
    link = chalice / "deployed"
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.is_dir():
        shutil.rmtree(link)
    link.symlink_to(deployed.resolve(), target_is_directory=True)


def deployed_record(project: Path, stage: str) -> dict[str, Any]:
    """What ``chalice deploy`` recorded in ``<project>/.chalice/deployed/<stage>.json``."""
    record: dict[str, Any] = json.loads(
        (project / ".chalice" / "deployed" / f"{stage}.json").read_text()
    )
    return record


def deployed_rest_api(project: Path, stage: str) -> str:
    """The REST API id ``chalice deploy`` recorded in ``.chalice/deployed/<stage>.json``.

    Raises:
        ValueError: no API is recorded for the stage.
    """
    for resource in deployed_record(project, stage).get("resources", []):
        if resource.get("resource_type") == "rest_api":
            return str(resource["rest_api_id"])
    raise ValueError(f"chalice deploy recorded no REST API for stage {stage!r}")


def deployed_function_names(project: Path, stage: str) -> dict[str, str]:
    """Chalice's function name -> the Lambda name ``chalice deploy`` recorded.

    Raises:
        ValueError: one of the functions is not recorded.
    """
    names = {
        str(resource["name"]): str(resource["lambda_arn"]).split(":")[6]
        for resource in deployed_record(project, stage).get("resources", [])
        if resource.get("resource_type") == "lambda_function"
    }
    missing = sorted(set(iam.FUNCTIONS) - set(names))
    if missing:
        raise ValueError(f"chalice deploy recorded no function {', '.join(missing)}")
    return {function: names[function] for function in iam.FUNCTIONS}


def api_name(config: dict[str, Any], stage: str) -> str:
    """The REST API's name after ``name-api``: ``<app>-<stage>`` (the API handler's
    Lambda name too)."""
    return f"{config['app_name']}-{stage}"


def deployed_stage(config: dict[str, Any], project: Path, stage: str) -> tuple[str, str]:
    """The REST API id and API Gateway stage ``chalice deploy`` made for ``stage``.

    Raises:
        ValueError: no API is recorded for the stage.
    """
    staged = config["stages"].get(stage) or config["stages"].get(TEMPLATE_STAGE, {})
    api_stage = str(staged.get("api_gateway_stage", config.get("api_gateway_stage", "api")))
    return deployed_rest_api(project, stage), api_stage


def operations_parameters(
    config: dict[str, Any], project: Path, stage: str, outputs: dict[str, str]
) -> dict[str, str]:
    """The operations stack's parameters (but ``AlarmEmail`` and ``KmsKeyArn``, which
    ``make deploy`` passes itself): names from the resources stack's outputs and from
    what ``chalice deploy`` recorded, the API's name and stage.

    Raises:
        ValueError: an output or a deployed function is missing.
    """
    missing = [name for name in OPERATIONS_FROM_OUTPUTS if name not in outputs]
    if missing:
        raise ValueError(f"the resources stack has no output {', '.join(missing)}")
    parameters = {name: outputs[name] for name in OPERATIONS_FROM_OUTPUTS}
    for function, name in deployed_function_names(project, stage).items():
        parameters[OPERATIONS_FUNCTION_PARAMETERS[function]] = name
    parameters["ApiName"] = api_name(config, stage)
    parameters["RestApiId"], parameters["ApiStage"] = deployed_stage(config, project, stage)
    # a resources stack from before the access log has no output: off
    parameters[ACCESS_LOGS] = outputs.get(ACCESS_LOGS, "off")
    return parameters


def name_rest_api(apigateway: Any, rest_api: str, name: str) -> None:
    """Rename the REST API (``UpdateRestApi`` of ``/name``); its stage is unchanged."""
    apigateway.update_rest_api(
        restApiId=rest_api, patchOperations=[{"op": "replace", "path": "/name", "value": name}]
    )


def _reserved(text: str | None) -> int | None:
    """``--api-reserved-concurrency`` or the stack's output: empty, absent or ``none``
    is None (unreserved).

    Raises:
        ValueError: not a whole number of at least 1 (0 would stop the API).
    """
    if not text or text == stage_settings.UNRESERVED:
        return None
    value = int(text)
    if value < 1:
        raise ValueError("the API's reserved concurrency is at least 1 (0 stops the API)")
    return value


def _configure(parsed: argparse.Namespace, config: dict[str, Any]) -> None:
    """``configure``: build the project ``chalice deploy`` runs in."""
    outputs = stack_outputs(json.loads(parsed.stack.read_text()))
    staged = configure_stage(
        config, parsed.stage, outputs, _reserved(parsed.api_reserved_concurrency)
    )
    project = parsed.build_project or REPO / "build" / "chalice" / parsed.stage
    build_project(project, staged, parsed.deployed)
    print(f"{project}: stage {parsed.stage} set from the resources stack")


def _output(parsed: argparse.Namespace, config: dict[str, Any]) -> None:
    """``output NAME``: one output of the resources stack."""
    outputs = stack_outputs(json.loads(parsed.stack.read_text()))
    if parsed.name not in outputs:
        raise SystemExit(f"the resources stack has no output {parsed.name}")
    print(outputs[parsed.name])


def _name_api(parsed: argparse.Namespace, config: dict[str, Any]) -> None:
    """``name-api``: the REST API named ``<app>-<stage>``."""
    rest_api, _ = deployed_stage(config, parsed.project, parsed.stage)
    name = api_name(config, parsed.stage)
    name_rest_api(boto3.client("apigateway"), rest_api, name)
    print(f"REST API {rest_api} named {name}")


def _gateway_responses(parsed: argparse.Namespace, config: dict[str, Any]) -> None:
    """``gateway-responses``: the envelope on API Gateway's own answers."""
    rest_api, api_stage = deployed_stage(config, parsed.project, parsed.stage)
    count = put_gateway_responses(boto3.client("apigateway"), rest_api, api_stage)
    print(f"{count} gateway responses set on {rest_api} and stage {api_stage} redeployed")


def _throttle(parsed: argparse.Namespace, config: dict[str, Any]) -> None:
    """``throttle``: the stage's default method throttle: ``--rate``/``--burst`` when
    given, else the resources stack's ``ApiThrottleRateLimit``/``ApiThrottleBurstLimit``
    outputs (``--stack``; kept between deploys), else the defaults; with ``--stack``,
    the stage's access log too (its ``ApiAccessLogGroupArn``, ``none``: off)."""
    rate, burst = parsed.rate, parsed.burst
    outputs: dict[str, str] = {}
    if parsed.stack is not None:
        outputs = stack_outputs(json.loads(parsed.stack.read_text()))
        if rate is None and "ApiThrottleRateLimit" in outputs:
            rate = float(outputs["ApiThrottleRateLimit"])
        if burst is None and "ApiThrottleBurstLimit" in outputs:
            burst = int(outputs["ApiThrottleBurstLimit"])
    rate = DEFAULT_RATE_LIMIT if rate is None else rate
    burst = DEFAULT_BURST_LIMIT if burst is None else burst
    rest_api, api_stage = deployed_stage(config, parsed.project, parsed.stage)
    apigateway = boto3.client("apigateway")
    put_stage_throttling(apigateway, rest_api, api_stage, rate, burst)
    print(f"stage {api_stage} of {rest_api}: {rate} requests/s, burst {burst}")
    if parsed.stack is not None:
        arn = outputs.get("ApiAccessLogGroupArn", "none")
        put_access_logs(apigateway, rest_api, api_stage, None if arn == "none" else arn)
        print(f"stage {api_stage} of {rest_api}: access log {arn}")


def _waf_parameters(parsed: argparse.Namespace, config: dict[str, Any]) -> None:
    """``waf-parameters``: ``RestApiId=… ApiStage=…`` for the WAF stack's deploy."""
    rest_api, api_stage = deployed_stage(config, parsed.project, parsed.stage)
    print(f"RestApiId={rest_api} ApiStage={api_stage}")


def _operations_parameters(parsed: argparse.Namespace, config: dict[str, Any]) -> None:
    """``operations-parameters``: ``Key=Value …`` for the operations stack's deploy."""
    outputs = stack_outputs(json.loads(parsed.stack.read_text()))
    parameters = operations_parameters(config, parsed.project, parsed.stage, outputs)
    print(" ".join(f"{key}={value}" for key, value in parameters.items()))


STEPS = {
    "configure": _configure,
    "output": _output,
    "name-api": _name_api,
    "gateway-responses": _gateway_responses,
    "throttle": _throttle,
    "waf-parameters": _waf_parameters,
    "operations-parameters": _operations_parameters,
}
"""The steps of ``make deploy`` this module runs, by name."""
NEEDS_STACK = {"configure", "output", "operations-parameters"}


def main(arguments: list[str] | None = None) -> None:
    """The steps around ``chalice deploy`` (see the module docstring)."""
    parser = argparse.ArgumentParser(description="Steps of make deploy.")
    parser.add_argument("step", choices=list(STEPS))
    parser.add_argument("name", nargs="?", help="output: the output's key")
    parser.add_argument("--stage", default="prod")
    parser.add_argument("--stack", type=Path, help="describe-stacks JSON of the resources stack")
    parser.add_argument("--config", type=Path, default=CONFIG, help="the committed config")
    parser.add_argument(
        "--build-project", type=Path, help="configure: where (build/chalice/<stage>)"
    )
    parser.add_argument("--deployed", type=Path, help="chalice's deployed records (tests)")
    parser.add_argument("--api-reserved-concurrency", default="", help="empty: unreserved")
    parser.add_argument("--rate", type=float, help="requests/s (default: the stack's)")
    parser.add_argument("--burst", type=int, help="default: the stack's")
    parsed = parser.parse_args(arguments)
    if parsed.step in NEEDS_STACK and parsed.stack is None:
        parser.error(f"{parsed.step} needs --stack")
    if parsed.step == "output" and parsed.name is None:
        parser.error("output needs the output's key")
    # chalice's deployed records: <project>/.chalice/deployed, the project being the
    # committed config's (the checkout, by default) unless --deployed names the folder
    if parsed.deployed is None:
        parsed.deployed = parsed.config.resolve().parent / "deployed"
    parsed.project = parsed.deployed.resolve().parent.parent
    STEPS[parsed.step](parsed, json.loads(parsed.config.read_text()))


if __name__ == "__main__":
    main()
