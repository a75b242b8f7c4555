"""The API stage's access log, which is where the stage throttle's rejections can be
counted (docs/operations.md#api-throttled). A REST API's ``AWS/ApiGateway`` metrics have
no 429 of their own (a throttled request is one more ``4XXError``, like the app's 404s),
and the app never sees a request the stage throttled; the access log line of such a
request has ``responseType`` ``THROTTLED`` (``$context.error.responseType``, empty when
the function answered, its own 429s included). A metric filter on that field publishes
``GatewayThrottled`` into the stage's namespace, and ``ApiThrottledAlarm``
(``infra/observability.py``) watches it.

API Gateway writes access logs to CloudWatch Logs only when the account's API Gateway
settings name a CloudWatch role, an account-wide setting a stack should not change, so
the log and the alarm are the parameter ``ApiAccessLogs`` (``off`` by default; kept
between deploys, ``API_ACCESS_LOGS``). The one stack sets the log on its ``RestAPI``;
``make deploy``'s resources stack holds the log group and filter, and
``infra/deploy.py throttle`` points chalice's stage at it. Choices:
docs/DECISIONS.md#issue-44-stage-throttle-waf-and-heartbeat-alarms.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from infra.protection import kept_log_group

if TYPE_CHECKING:
    from mypy_boto3_apigateway import APIGatewayClient

ACCESS_LOGS = "ApiAccessLogs"
"""The parameter: ``on`` writes the stage's access log (and alarms on throttles)."""
ACCESS_LOGS_ON = "ApiAccessLogsOn"
"""The condition of the log group, its metric filter and the throttle alarm."""
LOG_GROUP = "ApiAccessLogGroup"
THROTTLED_METRIC = "GatewayThrottled"
"""The metric the filter publishes: requests the stage throttle answered 429."""
SERVICE = "pinework"
"""The metric's ``service`` dimension, a literal of every line (as the EMF metrics')."""
LOG_DAYS = 30
"""Days the access log is kept."""
FORMAT = json.dumps(
    {
        "service": SERVICE,
        "requestId": "$context.requestId",
        "time": "$context.requestTime",
        "ip": "$context.identity.sourceIp",
        "method": "$context.httpMethod",
        "resource": "$context.resourcePath",
        "status": "$context.status",
        "responseType": "$context.error.responseType",
        "latencyMs": "$context.responseLatency",
    },
    separators=(",", ":"),
)
"""One JSON line a request (API Gateway substitutes the ``$context`` variables)."""
THROTTLED_PATTERN = '{ $.responseType = "THROTTLED" }'
"""The metric filter's pattern: the stage's (or the account's) throttle answered."""

PARAMETERS: dict[str, Any] = {
    ACCESS_LOGS: {
        "Type": "String",
        "AllowedValues": ["off", "on"],
        "Default": "off",
        "Description": "on: the API stage writes an access log and the stack alarms when "
        "its throttle rejects clients (needs the account's API Gateway CloudWatch role: "
        "aws apigateway get-account).",
    },
}
CONDITIONS: dict[str, Any] = {ACCESS_LOGS_ON: {"Fn::Equals": [{"Ref": ACCESS_LOGS}, "on"]}}
LOG_GROUP_ARN: dict[str, Any] = {
    "Fn::Sub": "arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}"
    ":log-group:${" + LOG_GROUP + "}"
}
"""The log group's ARN as API Gateway takes it (no ``:*``)."""


def resources(namespace: Any) -> dict[str, Any]:
    """``ApiAccessLogGroup`` and ``ApiThrottledMetricFilter``, under ``ApiAccessLogsOn``.

    Args:
        namespace: an expression of the stage's metric namespace.
    """
    conditioned = {"Condition": ACCESS_LOGS_ON}
    return {
        LOG_GROUP: {
            **kept_log_group({"Fn::Sub": "/aws/apigateway/${AWS::StackName}-access"}, LOG_DAYS),
            **conditioned,
        },
        "ApiThrottledMetricFilter": {
            "Type": "AWS::Logs::MetricFilter",
            **conditioned,
            "Properties": {
                "LogGroupName": {"Ref": LOG_GROUP},
                "FilterPattern": THROTTLED_PATTERN,
                "MetricTransformations": [
                    {
                        "MetricNamespace": namespace,
                        "MetricName": THROTTLED_METRIC,
                        "MetricValue": "1",
                        "Unit": "Count",
                        "Dimensions": [{"Key": "service", "Value": "$.service"}],
                    }
                ],
            },
        },
    }


def stage_setting() -> dict[str, Any]:
    """The SAM API's ``AccessLogSetting``: the log when ``ApiAccessLogs`` is on."""
    setting = {"DestinationArn": LOG_GROUP_ARN, "Format": FORMAT}
    return {"Fn::If": [ACCESS_LOGS_ON, setting, {"Ref": "AWS::NoValue"}]}


def outputs() -> dict[str, Any]:
    """The resources stack's outputs ``make deploy`` reads: the setting and the log
    group's ARN (``none`` when off: an output cannot be empty)."""
    return {
        ACCESS_LOGS: {"Value": {"Ref": ACCESS_LOGS}},
        "ApiAccessLogGroupArn": {"Value": {"Fn::If": [ACCESS_LOGS_ON, LOG_GROUP_ARN, "none"]}},
    }


def put_access_logs(
    apigateway: APIGatewayClient, rest_api_id: str, stage: str, log_group_arn: str | None
) -> None:
    """Point a deployed stage's access log at ``log_group_arn`` in ``FORMAT``, or,
    given None, stop the stage's access log if it has one (``make deploy``).

    Args:
        apigateway: a boto3 ``apigateway`` client.
        rest_api_id: the API's id (``chalice deploy`` records it).
        stage: the API Gateway stage.
        log_group_arn: the resources stack's ``ApiAccessLogGroupArn``, or None.
    """
    if log_group_arn is None:
        if apigateway.get_stage(restApiId=rest_api_id, stageName=stage).get("accessLogSettings"):
            apigateway.update_stage(
                restApiId=rest_api_id,
                stageName=stage,
                patchOperations=[{"op": "remove", "path": "/accessLogSettings"}],
            )
        return
    apigateway.update_stage(
        restApiId=rest_api_id,
        stageName=stage,
        patchOperations=[
            {"op": "replace", "path": "/accessLogSettings/destinationArn", "value": log_group_arn},
            {"op": "replace", "path": "/accessLogSettings/format", "value": FORMAT},
        ],
    )
