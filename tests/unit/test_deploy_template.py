"""The deploy artifacts read as an operator would (docs/issues.md#issue-12): API Gateway's own
errors in the envelope, names and ARNs from the stack, one least-privilege role per function,
and the files ``make deploy`` writes for ``chalice deploy``."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from chalice.config import Config
from moto import mock_aws

from chalicelib.errors import STATUS_BY_CODE
from chalicelib.services.lifecycle.requests import EXPORT_KEPT
from chalicelib.services.review.service import report_key
from chalicelib.settings import LIFECYCLE_QUEUE_NAME, REVIEW_QUEUE_NAME, Settings
from chalicelib.storage.keys import export_object
from infra import iam
from infra.deploy import configure_stage, deployed_rest_api, main, stack_outputs
from infra.gateway_responses import GATEWAY_MESSAGE, put_gateway_responses
from infra.protection import TABLE_NAME
from infra.template import FUNCTION_TIMEOUTS, package_fragment, resources_stack

REPO = Path(__file__).resolve().parents[2]
# Every response type of API Gateway REST APIs (its developer guide, "Gateway response types").
API_GATEWAY_RESPONSE_TYPES = {
    "ACCESS_DENIED": 403,
    "API_CONFIGURATION_ERROR": 500,
    "AUTHORIZER_CONFIGURATION_ERROR": 500,
    "AUTHORIZER_FAILURE": 500,
    "BAD_REQUEST_PARAMETERS": 400,
    "BAD_REQUEST_BODY": 400,
    "DEFAULT_4XX": None,
    "DEFAULT_5XX": None,
    "EXPIRED_TOKEN": 403,
    "INTEGRATION_FAILURE": 504,
    "INTEGRATION_TIMEOUT": 504,
    "INVALID_API_KEY": 403,
    "INVALID_SIGNATURE": 403,
    "MISSING_AUTHENTICATION_TOKEN": 403,
    "QUOTA_EXCEEDED": 429,
    "REQUEST_TOO_LARGE": 413,
    "RESOURCE_NOT_FOUND": 404,
    "THROTTLED": 429,
    "UNAUTHORIZED": 401,
    "UNSUPPORTED_MEDIA_TYPE": 415,
    "WAF_FILTERED": 403,
}


def rendered(template: str) -> dict[str, Any]:
    """A gateway response body as a client gets it (API Gateway's message substituted)."""
    body: dict[str, Any] = json.loads(
        template.replace(GATEWAY_MESSAGE, json.dumps('Gateway says "no"'))
    )
    return body


def test_every_gateway_response_is_the_envelope_with_its_codes_status() -> None:
    responses = package_fragment()["Resources"]["RestAPI"]["Properties"]["GatewayResponses"]
    assert set(responses) == set(API_GATEWAY_RESPONSE_TYPES)
    for response_type, response in responses.items():
        body = rendered(response["ResponseTemplates"]["application/json"])
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
        code, message = body["error"]["code"], body["error"]["message"]
        assert code in STATUS_BY_CODE and message, response_type
        headers = response["ResponseParameters"]["Headers"]
        assert headers["Content-Type"] == "'application/json'"
        if response_type.startswith("DEFAULT_"):
            assert "StatusCode" not in response  # a status here would override every 4XX/5XX
            continue
        assert response["StatusCode"] == str(STATUS_BY_CODE[code]), response_type
        assert ("Retry-After" in headers) == (response["StatusCode"] == "429")


def test_what_clients_meet_most_has_the_right_status_and_code() -> None:
    responses = package_fragment()["Resources"]["RestAPI"]["Properties"]["GatewayResponses"]

    def answer(response_type: str) -> tuple[str, str]:
        response = responses[response_type]
        code = rendered(response["ResponseTemplates"]["application/json"])["error"]["code"]
        return response["StatusCode"], code

    assert answer("MISSING_AUTHENTICATION_TOKEN") == ("404", "not_found")  # unknown route/method
    assert answer("REQUEST_TOO_LARGE") == ("413", "payload_too_large")
    assert answer("THROTTLED") == ("429", "rate_limited")
    assert answer("INTEGRATION_TIMEOUT") == ("504", "timeout")
    assert answer("INTEGRATION_FAILURE") == ("502", "bad_gateway")
    assert answer("UNAUTHORIZED") == ("401", "unauthorized")
    assert responses["THROTTLED"]["ResponseParameters"]["Headers"]["Retry-After"] == "'1'"


@pytest.fixture
def apigateway() -> Iterator[Any]:
    with mock_aws():
        yield boto3.client(
            "apigateway", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
        )


def test_make_deploy_puts_the_same_responses_on_the_deployed_api(apigateway: Any) -> None:
    api = apigateway.create_rest_api(name="pinework-prod")["id"]
    root = apigateway.get_resources(restApiId=api)["items"][0]["id"]
    apigateway.put_method(
        restApiId=api, resourceId=root, httpMethod="GET", authorizationType="NONE"
    )
    apigateway.put_integration(restApiId=api, resourceId=root, httpMethod="GET", type="MOCK")
    assert put_gateway_responses(apigateway, api, "api") == len(API_GATEWAY_RESPONSE_TYPES)
    put = {
        item["responseType"]: item
        for item in apigateway.get_gateway_responses(restApiId=api)["items"]
    }
    packaged = package_fragment()["Resources"]["RestAPI"]["Properties"]["GatewayResponses"]
    assert set(put) == set(packaged)
    for response_type, item in put.items():
        assert item.get("statusCode") == packaged[response_type].get("StatusCode")
        assert item["responseTemplates"] == packaged[response_type]["ResponseTemplates"]
        assert item["responseParameters"] == {
            f"gatewayresponse.header.{name}": value
            for name, value in packaged[response_type]["ResponseParameters"]["Headers"].items()
        }
    assert apigateway.get_deployments(restApiId=api)["items"]  # the stage was redeployed


def literal_strings(node: Any) -> Iterator[str]:
    """Every string of a template outside ``Fn::Sub`` (where ``${…}`` does the naming)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key != "Fn::Sub":
                yield from literal_strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from literal_strings(value)
    elif isinstance(node, str):
        yield node


@pytest.mark.parametrize("template", [package_fragment(), resources_stack()])
def test_no_resource_name_or_arn_is_fixed(template: dict[str, Any]) -> None:
    resources = template["Resources"]
    assert "BucketName" not in resources["LargeObjectBucket"]["Properties"]  # names are global
    assert resources["MemoryTable"]["Properties"]["TableName"] == {
        "Fn::Sub": "${AWS::StackName}-memories"
    }
    strings = list(literal_strings(resources))
    assert not [text for text in strings if text.startswith("arn:")]
    assert not [text for text in strings if "pinework-prod" in text or "pinework-local" in text]


def test_each_function_has_its_own_role_and_environment_from_the_stack() -> None:
    resources = package_fragment()["Resources"]
    for function, chalice_name in {
        "api_handler": "APIHandler",
        "review_fanout": "ReviewFanout",
        "review_worker": "ReviewWorker",
    }.items():
        prefix = iam.FUNCTIONS[function]
        properties = resources[chalice_name]["Properties"]
        assert properties["Role"] == {"Fn::GetAtt": [f"{prefix}Role", "Arn"]}
        assert properties["Environment"]["Variables"]["PINEWORK_TABLE_NAME"] == TABLE_NAME
        assert resources[f"{prefix}Role"]["Type"] == "AWS::IAM::Role"
    events = resources["ReviewWorker"]["Properties"]["Events"]["ReviewWorkerSqsEventSource"]
    assert events["Properties"]["Queue"] == {"Fn::Sub": "${ReviewQueue.Arn}"}


@pytest.mark.parametrize("function", sorted(iam.FUNCTIONS))
def test_logs_only_to_the_functions_own_log_group(function: str) -> None:
    logs = [
        grant for grant in iam.grants(function) if any(a.startswith("logs:") for a in grant.actions)
    ]
    assert len(logs) == 1 and logs[0].runtime
    assert logs[0].actions == ("logs:CreateLogStream", "logs:PutLogEvents")
    assert logs[0].resources == ({"Fn::GetAtt": [f"{iam.FUNCTIONS[function]}LogGroup", "Arn"]},)


@pytest.mark.parametrize("function", sorted(iam.FUNCTIONS))
def test_no_wildcard_action_and_no_unconditioned_wildcard_resource(function: str) -> None:
    for grant in iam.grants(function):
        assert all("*" not in action for action in grant.actions)
        for resource in grant.resources:
            text = json.dumps(resource)
            if text.endswith('/*"}') and "Bucket" not in text:
                assert grant.when is not None, grant.sid  # only Bedrock, through our profile


def test_only_the_review_worker_may_invoke_bedrock_and_only_with_the_bedrock_reviewer() -> None:
    for function in iam.FUNCTIONS:
        bedrock = [g for g in iam.grants(function) if "bedrock:InvokeModel" in g.actions]
        if function == "review_worker":
            assert bedrock and all(grant.condition for grant in bedrock)
        else:
            assert bedrock == []


@pytest.mark.parametrize("template", [package_fragment, resources_stack])
def test_review_reports_expire_after_the_default_review_retention(template: Any) -> None:
    (bucket,) = [
        resource["Properties"]
        for resource in template()["Resources"].values()
        if resource.get("Type") == "AWS::S3::Bucket"
    ]
    rules = {rule["Id"]: rule for rule in bucket["LifecycleConfiguration"]["Rules"]}
    reports = rules["ReviewReports"]
    assert (reports["Prefix"], reports["Status"]) == ("reviews/", "Enabled")
    assert report_key("wsp_1", "agt_1", "2026-11-29", "rvw_1").startswith(reports["Prefix"])
    assert reports["ExpirationInDays"] == Settings().review_retention_days == 365
    assert reports["NoncurrentVersionExpiration"] == {"NoncurrentDays": 1}
    with mock_aws():  # the rule in the S3 API's words is one S3 accepts (moto checks it)
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="reports")
        s3.put_bucket_lifecycle_configuration(
            Bucket="reports",
            LifecycleConfiguration={
                "Rules": [
                    {
                        "ID": reports["Id"],
                        "Status": reports["Status"],
                        "Filter": {"Prefix": reports["Prefix"]},
                        "Expiration": {"Days": reports["ExpirationInDays"]},
                        "NoncurrentVersionExpiration": reports["NoncurrentVersionExpiration"],
                    }
                ]
            },
        )
        (stored,) = s3.get_bucket_lifecycle_configuration(Bucket="reports")["Rules"]
        assert stored["Filter"] == {"Prefix": "reviews/"}


@pytest.mark.parametrize("template", [package_fragment, resources_stack])
def test_exports_expire_with_their_records(template: Any) -> None:
    (bucket,) = [
        resource["Properties"]
        for resource in template()["Resources"].values()
        if resource.get("Type") == "AWS::S3::Bucket"
    ]
    rules = {rule["Id"]: rule for rule in bucket["LifecycleConfiguration"]["Rules"]}
    exports = rules["Exports"]
    assert export_object("wsp_1", "exp_1").startswith(exports["Prefix"])
    assert exports["ExpirationInDays"] * 86400 == EXPORT_KEPT.total_seconds()
    assert exports["NoncurrentVersionExpiration"] == {"NoncurrentDays": 1}


def test_the_resources_stack_passes_cfn_lint(tmp_path: Path) -> None:
    path = tmp_path / "resources.json"
    path.write_text(json.dumps(resources_stack()))
    lint = shutil.which("cfn-lint", path=str(REPO / ".venv" / "bin")) or "cfn-lint"
    done = subprocess.run([lint, str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def description(**outputs: str) -> dict[str, Any]:
    """``aws cloudformation describe-stacks`` output of a resources stack."""
    values = {
        "TableName": "pinework-prod-resources-memories",
        "BucketName": "pinework-prod-resources-largeobjectbucket-1x2y3z",
        "HashSecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:HashSecret-Ab12Cd",
        "ReviewQueueName": REVIEW_QUEUE_NAME,
        "LifecycleQueueName": LIFECYCLE_QUEUE_NAME,
        "Reviewer": "rules",
        "BedrockModelId": "global.anthropic.claude-haiku-4-5-20251001-v1:0",
        "ChaliceStage": "prod",
        "ChaliceApp": "pinework",
        "MetricsNamespace": "Pinework/pinework-prod",
        **{
            f"{prefix}RoleArn": f"arn:aws:iam::111122223333:role/pinework-{prefix}Role-ABC"
            for prefix in iam.FUNCTIONS.values()
        },
        **outputs,
    }
    return {
        "Stacks": [{"Outputs": [{"OutputKey": k, "OutputValue": v} for k, v in values.items()]}]
    }


def test_make_deploy_writes_the_stage_chalice_deploys(tmp_path: Path) -> None:
    committed = json.loads((REPO / ".chalice" / "config.json").read_text())
    written = configure_stage(committed, "prod", stack_outputs(description()))
    (tmp_path / ".chalice").mkdir()
    (tmp_path / ".chalice" / "config.json").write_text(json.dumps(written))
    disk = json.loads((tmp_path / ".chalice" / "config.json").read_text())
    for function, prefix in iam.FUNCTIONS.items():
        config = Config("prod", function, {"project_dir": str(tmp_path)}, disk)
        assert config.manage_iam_role is False
        assert config.iam_role_arn == f"arn:aws:iam::111122223333:role/pinework-{prefix}Role-ABC"
        assert (
            config.environment_variables["PINEWORK_TABLE_NAME"]
            == "pinework-prod-resources-memories"
        )
        assert config.environment_variables["PINEWORK_BUCKET_NAME"].endswith("1x2y3z")
        assert config.environment_variables["PINEWORK_REVIEWER"] == "rules"
        assert config.environment_variables["OPENBLAS_NUM_THREADS"] == "1"  # kept
    worker = Config("prod", "review_worker", {"project_dir": str(tmp_path)}, disk)
    assert worker.lambda_timeout == 600  # kept
    assert disk["stages"]["local"] == committed["stages"]["local"]


def test_the_committed_prod_stage_cannot_be_chalice_deployed_by_hand() -> None:
    # Without make deploy's role ARNs Chalice stops before creating anything.
    from chalice.deploy.validate import validate_configuration

    disk = json.loads((REPO / ".chalice" / "config.json").read_text())
    from app import app

    config = Config("prod", None, {"project_dir": str(REPO), "chalice_app": app}, disk)
    with pytest.raises(ValueError, match="iam_role_arn"):
        validate_configuration(config)


def test_make_deploy_refuses_a_stack_of_another_stage_or_without_outputs() -> None:
    with pytest.raises(ValueError, match="no output"):
        configure_stage({}, "prod", {"TableName": "t"})
    with pytest.raises(ValueError, match="stage 'dev'"):
        configure_stage({}, "prod", stack_outputs(description(ChaliceStage="dev")))
    with pytest.raises(ValueError, match="app 'other'"):
        configure_stage(
            {"app_name": "pinework"}, "prod", stack_outputs(description(ChaliceApp="other"))
        )


def test_the_worker_reads_the_stacks_queue_in_chalice_deploy_and_at_run_time() -> None:
    from chalicelib.settings import lifecycle_queue_name, review_queue_name

    outputs = description(ReviewQueueName="q-1", LifecycleQueueName="l-1")
    written = configure_stage({}, "prod", stack_outputs(outputs))
    variables = written["stages"]["prod"]["environment_variables"]
    # make deploy runs chalice deploy with the same outputs in PINEWORK_REVIEW_QUEUE_NAME
    # and PINEWORK_LIFECYCLE_QUEUE_NAME
    assert review_queue_name(variables) == "q-1"
    assert review_queue_name({}) == REVIEW_QUEUE_NAME
    assert lifecycle_queue_name(variables) == "l-1"
    assert lifecycle_queue_name({}) == LIFECYCLE_QUEUE_NAME
    assert Settings.from_env(variables).lifecycle_queue_name == "l-1"


def test_the_rest_api_is_read_from_chalices_deployed_record(tmp_path: Path) -> None:
    deployed = tmp_path / ".chalice" / "deployed"
    deployed.mkdir(parents=True)
    (deployed / "prod.json").write_text(
        json.dumps(
            {
                "resources": [
                    {"name": "api_handler", "resource_type": "lambda_function"},
                    {"name": "rest_api", "resource_type": "rest_api", "rest_api_id": "abc123"},
                ]
            }
        )
    )
    assert deployed_rest_api(tmp_path, "prod") == "abc123"
    with pytest.raises(FileNotFoundError):
        deployed_rest_api(tmp_path, "dev")


def test_the_configure_step_builds_the_project_and_leaves_the_checkout_alone(
    tmp_path: Path,
) -> None:
    committed = (REPO / ".chalice" / "config.json").read_text()
    stack = tmp_path / "stack.json"
    stack.write_text(json.dumps(description()))
    project, deployed = tmp_path / "build" / "chalice" / "prod", tmp_path / "deployed"
    arguments = ["configure", "--stage", "prod", "--stack", str(stack)]
    arguments += ["--build-project", str(project), "--deployed", str(deployed)]
    main([*arguments, "--api-reserved-concurrency", "40"])
    assert (REPO / ".chalice" / "config.json").read_text() == committed
    written = json.loads((project / ".chalice" / "config.json").read_text())
    before = json.loads(committed)
    assert written["stages"]["local"] == before["stages"]["local"]
    assert {k: v for k, v in written.items() if k != "stages"} == {
        k: v for k, v in before.items() if k != "stages"
    }
    functions = written["stages"]["prod"]["lambda_functions"]
    assert functions["api_handler"]["reserved_concurrency"] == 40
    assert (project / "app.py").read_text() == (REPO / "app.py").read_text()
    assert (project / "chalicelib" / "settings.py").is_file()
    assert not list(project.glob("chalicelib/**/__pycache__"))
    assert (project / ".chalice" / "deployed").resolve() == deployed.resolve()
    main(arguments)  # again, without a reservation: it is removed
    again = json.loads((project / ".chalice" / "config.json").read_text())
    assert "reserved_concurrency" not in again["stages"]["prod"]["lambda_functions"]["api_handler"]
    with pytest.raises(ValueError, match="at least 1"):
        main([*arguments, "--api-reserved-concurrency", "0"])


def test_the_committed_config_holds_no_account_value_and_deploy_state_is_ignored() -> None:
    committed = (REPO / ".chalice" / "config.json").read_text()
    assert "arn:" not in committed and "iam_role_arn" not in committed
    paths = [
        ".chalice/deployed/prod.json",
        "build/chalice/prod",
        ".venv-checkov",
        ".venv-cfn-lint",
    ]
    ignored = subprocess.run(
        ["git", "check-ignore", *paths], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert ignored.stdout.split() == paths


def test_a_stage_missing_from_the_committed_config_starts_from_prod() -> None:
    committed = json.loads((REPO / ".chalice" / "config.json").read_text())
    written = configure_stage(
        committed, "staging", stack_outputs(description(ChaliceStage="staging"))
    )
    staging = written["stages"]["staging"]
    assert staging["lambda_memory_size"] == committed["stages"]["prod"]["lambda_memory_size"]
    assert staging["environment_variables"]["OPENBLAS_NUM_THREADS"] == "1"
    assert "staging" not in committed["stages"]


def test_the_timeouts_are_the_same_in_both_paths_and_the_api_ends_before_the_gateway() -> None:
    committed = json.loads((REPO / ".chalice" / "config.json").read_text())
    written = configure_stage(committed, "prod", stack_outputs(description()))
    resources = package_fragment()["Resources"]
    for function, logical_id in {
        "api_handler": "APIHandler",
        "review_fanout": "ReviewFanout",
        "review_worker": "ReviewWorker",
        "lifecycle_worker": "LifecycleWorker",
    }.items():
        chalice = written["stages"]["prod"]["lambda_functions"][function]["lambda_timeout"]
        assert (
            chalice == resources[logical_id]["Properties"]["Timeout"] == FUNCTION_TIMEOUTS[function]
        )
    assert FUNCTION_TIMEOUTS["api_handler"] < 29  # API Gateway's integration timeout
    # the review queue's visibility timeout covers the worker's (AWS: six times it)
    visibility = resources["ReviewQueue"]["Properties"]["VisibilityTimeout"]
    assert visibility >= 6 * FUNCTION_TIMEOUTS["review_worker"]
    # the lifecycle queue keeps the review queue's rules (docs/reference.md#the-lifecycle-queue)
    lifecycle = resources["LifecycleQueue"]["Properties"]
    assert lifecycle["VisibilityTimeout"] >= 6 * FUNCTION_TIMEOUTS["lifecycle_worker"]
    review = resources["ReviewQueue"]["Properties"]
    for key in ("VisibilityTimeout", "MessageRetentionPeriod"):
        assert lifecycle[key] == review[key]
    assert lifecycle["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": ["LifecycleDeadLetterQueue", "Arn"]},
        "maxReceiveCount": review["RedrivePolicy"]["maxReceiveCount"],
    }
