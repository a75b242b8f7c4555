"""Limits, names and versions of both deploy paths (docs/operations.md#deploy,
docs/issues.md): a stack and a Chalice stage of the same name share no
function, the API calls a published alias, concurrency is bounded, and every checkov
finding left standing says why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from chalicelib.settings import (
    DEFAULT_REVIEW_WORKER_MAX_CONCURRENCY,
    LIFECYCLE_QUEUE_NAME,
    LIFECYCLE_WORKER_MAX_CONCURRENCY,
    lifecycle_queue_name,
    review_worker_max_concurrency,
)
from infra import iam, template
from infra.deploy import (
    deployed_function_names,
    deployed_stage,
    name_rest_api,
    operations_parameters,
)


def substituted(expression: dict[str, Any], stack: str) -> str:
    """An ``Fn::Sub`` of ``${AWS::StackName}`` for a given stack name."""
    return str(expression["Fn::Sub"]).replace("${AWS::StackName}", stack)


def test_a_stack_and_a_chalice_stage_of_the_same_name_share_no_function_or_log_group() -> None:
    resources = template.package_fragment()["Resources"]
    one_stack = {
        substituted(resources[logical_id]["Properties"]["FunctionName"], "pinework-prod")
        for logical_id in template.CHALICE_FUNCTIONS.values()
    }
    assert one_stack == {
        "pinework-prod-api",
        "pinework-prod-review-fanout",
        "pinework-prod-review-worker",
        "pinework-prod-lifecycle-worker",
    }
    chalice = {
        str(name["Fn::Sub"]).replace("${ChaliceApp}", "pinework").replace("${ChaliceStage}", "prod")
        for name in template.chalice_function_names().values()
    }
    # chalice deploy --stage prod of app pinework, and a stack named pinework-prod
    assert chalice == {
        "pinework-prod",
        "pinework-prod-review_fanout",
        "pinework-prod-review_worker",
        "pinework-prod-lifecycle_worker",
    }
    assert not one_stack & chalice
    for prefix in iam.FUNCTIONS.values():
        group = resources[f"{prefix}LogGroup"]["Properties"]["LogGroupName"]
        assert group["Fn::Join"][1][1]["Fn::Sub"] in template.ONE_STACK_FUNCTION_NAMES.values()


def test_the_api_reserves_concurrency_only_when_asked_and_the_worker_is_capped() -> None:
    fragment = template.package_fragment()
    parameters, resources = fragment["Parameters"], fragment["Resources"]
    reserved = parameters["ApiReservedConcurrency"]
    assert reserved["Default"] == ""  # unreserved: deploys in accounts with low limits
    condition = fragment["Conditions"]["ApiConcurrencyReserved"]
    assert condition == {"Fn::Not": [{"Fn::Equals": [{"Ref": "ApiReservedConcurrency"}, ""]}]}
    assert resources["APIHandler"]["Properties"]["ReservedConcurrentExecutions"] == {
        "Fn::If": [
            "ApiConcurrencyReserved",
            {"Ref": "ApiReservedConcurrency"},
            {"Ref": "AWS::NoValue"},
        ]
    }
    cap = parameters["ReviewWorkerMaxConcurrency"]
    assert (cap["MinValue"], cap["Default"]) == (2, DEFAULT_REVIEW_WORKER_MAX_CONCURRENCY)
    trigger = resources["ReviewWorker"]["Properties"]["Events"]["ReviewWorkerSqsEventSource"]
    assert trigger["Properties"]["ScalingConfig"] == {
        "MaximumConcurrency": {"Ref": "ReviewWorkerMaxConcurrency"}
    }


def test_chalice_deploy_caps_the_worker_from_the_environment() -> None:
    from app import app

    worker = {source.name: source for source in app.event_sources}["review_worker"]
    assert worker.maximum_concurrency == DEFAULT_REVIEW_WORKER_MAX_CONCURRENCY
    assert review_worker_max_concurrency({"PINEWORK_REVIEW_WORKER_MAX_CONCURRENCY": "8"}) == 8
    with pytest.raises(ValueError, match="2 to 1000"):
        review_worker_max_concurrency({"PINEWORK_REVIEW_WORKER_MAX_CONCURRENCY": "1"})


def test_the_lifecycle_worker_reads_its_own_queue_one_job_at_a_time_two_at_once() -> None:
    from app import app

    sources = {source.name: source for source in app.event_sources}
    lifecycle, review = sources["lifecycle_worker"], sources["review_worker"]
    assert (lifecycle.queue, lifecycle.batch_size) == (LIFECYCLE_QUEUE_NAME, 1)
    assert lifecycle.queue != review.queue
    assert lifecycle.maximum_concurrency == LIFECYCLE_WORKER_MAX_CONCURRENCY == 2
    named = {"PINEWORK_LIFECYCLE_QUEUE_NAME": "pinework-prod-resources-lifecycle"}
    assert lifecycle_queue_name(named) == "pinework-prod-resources-lifecycle"
    trigger = template.package_fragment()["Resources"]["LifecycleWorker"]["Properties"]["Events"]
    assert trigger["LifecycleWorkerSqsEventSource"]["Properties"] == {
        "Queue": {"Fn::Sub": "${LifecycleQueue.Arn}"},
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "ScalingConfig": {"MaximumConcurrency": LIFECYCLE_WORKER_MAX_CONCURRENCY},
    }


def test_every_function_publishes_versions_under_the_live_alias() -> None:
    resources = template.package_fragment()["Resources"]
    for logical_id in template.CHALICE_FUNCTIONS.values():
        assert resources[logical_id]["Properties"]["AutoPublishAlias"] == "live"
    assert resources["RestAPI"]["Properties"]["Name"] == {"Ref": "AWS::StackName"}


def chalice_like_template() -> dict[str, Any]:
    """The parts of ``chalice package``'s SAM template ``finalize`` rewrites."""
    uri = {
        "Fn::Sub": "arn:${AWS::Partition}:apigateway:${AWS::Region}:lambda:path/2015-03-31/"
        "functions/${APIHandler.Arn}/invocations"
    }
    integration = {"x-amazon-apigateway-integration": {"uri": uri, "type": "aws_proxy"}}
    return {
        "Resources": {
            "RestAPI": {
                "Type": "AWS::Serverless::Api",
                "Properties": {
                    "DefinitionBody": {
                        "info": {"title": "pinework"},
                        "paths": {
                            "/a": {"get": json.loads(json.dumps(integration))},
                            "/b": {"post": json.loads(json.dumps(integration)), "parameters": []},
                        },
                    }
                },
            },
            "APIHandlerInvokePermission": {
                "Type": "AWS::Lambda::Permission",
                "Properties": {"FunctionName": {"Ref": "APIHandler"}},
            },
        }
    }


def test_finalize_points_the_api_at_the_alias() -> None:
    done = template.finalize(chalice_like_template())
    body = done["Resources"]["RestAPI"]["Properties"]["DefinitionBody"]
    uris = [
        body["paths"][path][method]["x-amazon-apigateway-integration"]["uri"]["Fn::Sub"]
        for path, method in (("/a", "get"), ("/b", "post"))
    ]
    assert all("${APIHandlerAliaslive}" in uri and "APIHandler.Arn" not in uri for uri in uris)
    permission = done["Resources"]["APIHandlerInvokePermission"]["Properties"]
    assert permission["FunctionName"] == {"Ref": "APIHandlerAliaslive"}
    assert body["info"]["title"] == {"Ref": "AWS::StackName"}
    with pytest.raises(ValueError, match="no API integration"):
        template.finalize(done)  # nothing left to point: chalice wrote something else


def test_every_checkov_skip_names_a_check_and_a_reason() -> None:
    resources = template.package_fragment()["Resources"]
    skipped = {
        logical_id: [skip["id"] for skip in resource["Metadata"]["checkov"]["skip"]]
        for logical_id, resource in resources.items()
        if "checkov" in resource.get("Metadata", {})
    }
    assert {"APIHandler", "ReviewFanout", "ReviewWorker", "RestAPI"} <= set(skipped)
    for resource in resources.values():
        for skip in resource.get("Metadata", {}).get("checkov", {}).get("skip", []):
            assert skip["id"].startswith("CKV_") and len(skip["comment"]) > 40


def test_a_new_chalice_stage_names_its_queue_after_its_stack_and_an_old_one_keeps_its_own() -> None:
    stack = template.resources_stack()
    parameter = stack["Parameters"]["ReviewQueueName"]
    assert parameter["Default"] == ""
    name = stack["Resources"]["ReviewQueue"]["Properties"]["QueueName"]
    assert name == {
        "Fn::If": [
            "ReviewQueueNamed",
            {"Ref": "ReviewQueueName"},
            {"Fn::Sub": "${AWS::StackName}-reviews"},
        ]
    }
    import re

    # make deploy passes no ReviewQueueName unless asked, so an existing stack keeps its
    # previous value (pinework-reviews in earlier releases): aws cloudformation deploy
    # sends UsePreviousValue for every parameter it is not given.
    assert re.fullmatch(parameter["AllowedPattern"], "pinework-reviews")
    assert stack["Outputs"]["MetricsNamespace"]["Value"] == {
        "Fn::Sub": "Pinework/${ChaliceApp}-${ChaliceStage}"
    }


def record(path: Path) -> Path:
    """A chalice deployed record with the three functions and the API."""
    deployed = path / ".chalice" / "deployed"
    deployed.mkdir(parents=True)
    arn = "arn:aws:lambda:us-east-1:111122223333:function:"
    (deployed / "prod.json").write_text(
        json.dumps(
            {
                "resources": [
                    {
                        "name": "api_handler",
                        "resource_type": "lambda_function",
                        "lambda_arn": f"{arn}pinework-prod",
                    },
                    {
                        "name": "review_fanout",
                        "resource_type": "lambda_function",
                        "lambda_arn": f"{arn}pinework-prod-review_fanout",
                    },
                    {
                        "name": "review_worker",
                        "resource_type": "lambda_function",
                        "lambda_arn": f"{arn}pinework-prod-review_worker",
                    },
                    {
                        "name": "lifecycle_worker",
                        "resource_type": "lambda_function",
                        "lambda_arn": f"{arn}pinework-prod-lifecycle_worker",
                    },
                    {"name": "rest_api", "resource_type": "rest_api", "rest_api_id": "abc123"},
                ]
            }
        )
    )
    return path


def test_the_operations_stack_gets_the_names_chalice_deployed(tmp_path: Path) -> None:
    project = record(tmp_path)
    outputs = {
        "TableName": "t",
        "ReviewQueueName": "q",
        "ReviewDeadLetterQueueName": "q-dead",
        "LifecycleQueueName": "l",
        "LifecycleDeadLetterQueueName": "l-dead",
        "ReviewFanoutFailureQueueName": "f",
        "ReviewFanoutFailureQueueArn": "arn:aws:sqs:us-east-1:111122223333:f",
        "MetricsNamespace": "Pinework/pinework-prod",
    }
    config = {"app_name": "pinework", "stages": {"prod": {"api_gateway_stage": "api"}}}
    parameters = operations_parameters(config, project, "prod", outputs)
    assert parameters["ApiHandlerFunctionName"] == "pinework-prod"
    assert parameters["ReviewWorkerFunctionName"] == "pinework-prod-review_worker"
    assert parameters["LifecycleWorkerFunctionName"] == "pinework-prod-lifecycle_worker"
    assert (parameters["LifecycleQueueName"], parameters["LifecycleDeadLetterQueueName"]) == (
        "l",
        "l-dead",
    )
    assert (parameters["ApiName"], parameters["ApiStage"]) == ("pinework-prod", "api")
    assert parameters["MetricsNamespace"] == "Pinework/pinework-prod"
    from infra import observability

    expected = getattr(observability, "OPERATIONS_PARAMETERS", None)
    if expected is not None:  # the operations stack's own list (infra/observability.py)
        # and the access log's switch, a parameter of the operations stack of its own
        assert set(parameters) == set(expected) | {"ApiAccessLogs"}
    assert parameters["ApiAccessLogs"] == "off"  # a resources stack without the output
    assert parameters["RestApiId"] == deployed_stage(config, project, "prod")[0]
    on = operations_parameters(config, project, "prod", {**outputs, "ApiAccessLogs": "on"})
    assert on["ApiAccessLogs"] == "on"
    with pytest.raises(ValueError, match="no output"):
        operations_parameters(config, project, "prod", {"TableName": "t"})
    assert (
        deployed_function_names(project, "prod")["review_fanout"] == "pinework-prod-review_fanout"
    )


def test_make_deploy_renames_the_api_chalice_named_after_the_app() -> None:
    with mock_aws():
        apigateway = boto3.client(
            "apigateway", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
        )
        api = apigateway.create_rest_api(name="pinework")["id"]
        name_rest_api(apigateway, api, "pinework-prod")
        assert apigateway.get_rest_api(restApiId=api)["name"] == "pinework-prod"
