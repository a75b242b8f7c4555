"""CloudWatch alarms and the operations dashboard of the stack
(docs/reference.md#14-operations), merged into the template by ``infra/template.py``:
``resources()`` returns resources that refer to the stack's own logical ids (Chalice's
functions and ``RestAPI``, the queues and the table), never a fixed name. The alarms
notify ``AlarmTopic`` and treat missing data as not breaching:
``Api5xxRateAlarm`` (over 5 % of API requests answered 5xx, from API Gateway's own
metrics), ``ReviewDeadLetterAlarm`` (any message in the review dead-letter queue) and
``RecallFallbackRateAlarm`` (over 10 % of recalls fell back to the newest facts, from
the ``RecallFallback`` EMF metric). Choices: docs/DECISIONS.md#logs-and-metrics-issue-12.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chalicelib.settings import Settings

NAMESPACE = str(Settings.model_fields["metrics_namespace"].default)
"""The EMF namespace the functions write to (``PINEWORK_METRICS_NAMESPACE``'s default)."""
SERVICE = "pinework"
"""The ``service`` dimension of every EMF metric (``chalicelib.api.telemetry.SERVICE``)."""
FUNCTIONS = {"APIHandler": "API", "ReviewWorker": "review worker", "ReviewFanout": "fan-out"}
"""Chalice's logical ids of the three functions, and how the dashboard names them."""
_CONFIG = Path(__file__).resolve().parent.parent / ".chalice" / "config.json"
PERIOD = 300


def api_name_and_stage(stage: str = "prod") -> tuple[str, str]:
    """The API Gateway name (Chalice's ``app_name``) and stage of a Chalice stage."""
    config = json.loads(_CONFIG.read_text())
    api_stage = config.get("stages", {}).get(stage, {}).get("api_gateway_stage")
    return str(config["app_name"]), str(api_stage or config.get("api_gateway_stage", "api"))


def resources(stage: str = "prod") -> dict[str, Any]:
    """The alarms, their SNS topic and the dashboard, as CloudFormation resources."""
    api_name, api_stage = api_name_and_stage(stage)
    api = [{"Name": "ApiName", "Value": api_name}, {"Name": "Stage", "Value": api_stage}]
    return {
        "AlarmTopic": {
            "Type": "AWS::SNS::Topic",
            "Properties": {"DisplayName": "Pinework Memory alarms"},
        },
        "Api5xxRateAlarm": _alarm(
            "More than 5% of API requests answered 5xx (API Gateway's count: Lambda "
            "errors and timeouts included), in 2 of 3 five-minute periods with 20+ requests.",
            [
                _stat("errors", "AWS/ApiGateway", "5XXError", api, "Sum"),
                _stat("requests", "AWS/ApiGateway", "Count", api, "Sum"),
                _expression("rate", "IF(requests >= 20, 100 * errors / requests, 0)", "5xx %"),
            ],
            threshold=5,
            periods=3,
            breaching=2,
        ),
        "ReviewDeadLetterAlarm": _alarm(
            "A nightly review failed five times and waits in the dead-letter queue; "
            "read the worker's 'review' log lines for its agent, fix, then redrive.",
            [
                _stat(
                    "depth",
                    "AWS/SQS",
                    "ApproximateNumberOfMessagesVisible",
                    [
                        {
                            "Name": "QueueName",
                            "Value": {"Fn::GetAtt": ["ReviewDeadLetterQueue", "QueueName"]},
                        }
                    ],
                    "Maximum",
                    returned=True,
                )
            ],
            threshold=0,
            periods=1,
            breaching=1,
        ),
        "RecallFallbackRateAlarm": _alarm(
            "More than 10% of recalls fell back to the newest facts (scoring failed or "
            "ran past PINEWORK_RECALL_TIME_BUDGET_MS), 15 minutes in a row, 10+ recalls each.",
            [
                _stat("fallbacks", NAMESPACE, "RecallFallback", _service(), "Sum"),
                _stat("recalls", NAMESPACE, "RecallFallback", _service(), "SampleCount"),
                _expression(
                    "rate", "IF(recalls >= 10, 100 * fallbacks / recalls, 0)", "fallback %"
                ),
            ],
            threshold=10,
            periods=3,
            breaching=3,
        ),
        "OperationsDashboard": {
            "Type": "AWS::CloudWatch::Dashboard",
            "Properties": {
                "DashboardName": {"Fn::Sub": "${AWS::StackName}-operations"},
                "DashboardBody": {"Fn::Sub": json.dumps(dashboard_body(api_name, api_stage))},
            },
        },
    }


def dashboard_body(api_name: str, api_stage: str) -> dict[str, Any]:
    """The dashboard's widgets (``${…}`` are ``Fn::Sub`` references to the stack)."""
    api = ["ApiName", api_name, "Stage", api_stage]
    service = ["service", SERVICE]
    widgets = [
        _graph(
            "API requests and errors (API Gateway)",
            [
                ["AWS/ApiGateway", "Count", *api, {"stat": "Sum"}],
                ["AWS/ApiGateway", "4XXError", *api, {"stat": "Sum"}],
                ["AWS/ApiGateway", "5XXError", *api, {"stat": "Sum"}],
            ],
        ),
        _graph(
            "API latency (API Gateway)",
            [
                ["AWS/ApiGateway", "Latency", *api, {"stat": "p50"}],
                ["AWS/ApiGateway", "Latency", *api, {"stat": "p99"}],
            ],
        ),
        _graph(
            "Requests by status",
            [[{"expression": _search("service,status", "Requests"), "id": "by_status"}]],
        ),
        _graph(
            "Requests by route and status",
            [[{"expression": _search("route,service,status", "Requests"), "id": "by_route"}]],
        ),
        _graph(
            "Recall latency (ms)",
            [
                [NAMESPACE, "RecallLatency", *service, {"stat": "p50"}],
                [NAMESPACE, "RecallLatency", *service, {"stat": "p99"}],
            ],
        ),
        _graph(
            "Recall: memories kept, fallback rate",
            [
                [NAMESPACE, "MemoriesKept", *service, {"stat": "Average"}],
                [NAMESPACE, "RecallFallback", *service, {"stat": "Average", "yAxis": "right"}],
            ],
        ),
        _graph(
            "Review actions by kind and outcome",
            [[{"expression": _search("action,outcome,service", "ReviewActions"), "id": "actions"}]],
        ),
        _graph(
            "Reviews by result; queue depth",
            [
                [{"expression": _search("result,service", "Reviews"), "id": "reviews"}],
                [NAMESPACE, "ReviewsEnqueued", *service, {"stat": "Sum"}],
                [
                    "AWS/SQS",
                    "ApproximateNumberOfMessagesVisible",
                    "QueueName",
                    "${ReviewQueue.QueueName}",
                    {"stat": "Maximum"},
                ],
                [
                    "AWS/SQS",
                    "ApproximateNumberOfMessagesVisible",
                    "QueueName",
                    "${ReviewDeadLetterQueue.QueueName}",
                    {"stat": "Maximum"},
                ],
            ],
        ),
        _graph(
            "Refused: day log full, secret in memory",
            [
                [NAMESPACE, "memory_day_full", *service, {"stat": "Sum"}],
                [NAMESPACE, "secret_in_memory", *service, {"stat": "Sum"}],
            ],
        ),
        _graph(
            "Lambda errors and throttles",
            [
                [
                    "AWS/Lambda",
                    metric,
                    "FunctionName",
                    f"${{{logical_id}}}",
                    {"stat": "Sum", "label": f"{name} {metric}"},
                ]
                for logical_id, name in FUNCTIONS.items()
                for metric in ("Errors", "Throttles")
            ],
        ),
        _graph(
            "Lambda duration p99 (ms)",
            [
                [
                    "AWS/Lambda",
                    "Duration",
                    "FunctionName",
                    f"${{{logical_id}}}",
                    {"stat": "p99", "label": name},
                ]
                for logical_id, name in FUNCTIONS.items()
            ],
        ),
        _graph(
            "DynamoDB throttling",
            [
                ["AWS/DynamoDB", metric, "TableName", "${MemoryTable}", {"stat": "Sum"}]
                for metric in ("ReadThrottleEvents", "WriteThrottleEvents")
            ],
        ),
        {
            "type": "alarm",
            "width": 12,
            "height": 4,
            "properties": {
                "title": "Alarms",
                "alarms": [
                    "${Api5xxRateAlarm.Arn}",
                    "${ReviewDeadLetterAlarm.Arn}",
                    "${RecallFallbackRateAlarm.Arn}",
                ],
            },
        },
        {
            "type": "log",
            "width": 24,
            "height": 8,
            "properties": {
                "title": "Slowest routes and their errors (request log lines, API function)",
                "region": "${AWS::Region}",
                "view": "table",
                "query": (
                    "SOURCE '/aws/lambda/${APIHandler}' | filter message = 'request' "
                    "| stats count(*) as requests, pct(latency_ms, 50) as p50_ms, "
                    "pct(latency_ms, 99) as p99_ms, sum(status >= 500) as errors_5xx, "
                    "sum(status = 429) as throttled by route | sort p99_ms desc | limit 20"
                ),
            },
        },
    ]
    return {"widgets": widgets}


def _service() -> list[dict[str, str]]:
    return [{"Name": "service", "Value": SERVICE}]


def _stat(
    metric_id: str,
    namespace: str,
    name: str,
    dimensions: list[dict[str, Any]],
    stat: str,
    *,
    returned: bool = False,
) -> dict[str, Any]:
    return {
        "Id": metric_id,
        "MetricStat": {
            "Metric": {"Namespace": namespace, "MetricName": name, "Dimensions": dimensions},
            "Period": PERIOD,
            "Stat": stat,
        },
        "ReturnData": returned,
    }


def _expression(metric_id: str, expression: str, label: str) -> dict[str, Any]:
    return {"Id": metric_id, "Expression": expression, "Label": label, "ReturnData": True}


def _alarm(
    description: str,
    metrics: list[dict[str, Any]],
    *,
    threshold: float,
    periods: int,
    breaching: int,
) -> dict[str, Any]:
    return {
        "Type": "AWS::CloudWatch::Alarm",
        "Properties": {
            "AlarmDescription": description,
            "Metrics": metrics,
            "ComparisonOperator": "GreaterThanThreshold",
            "Threshold": threshold,
            "EvaluationPeriods": periods,
            "DatapointsToAlarm": breaching,
            "TreatMissingData": "notBreaching",
            "AlarmActions": [{"Ref": "AlarmTopic"}],
            "OKActions": [{"Ref": "AlarmTopic"}],
        },
    }


def _search(dimensions: str, metric: str) -> str:
    return f"SEARCH('{{{NAMESPACE},{dimensions}}} MetricName=\"{metric}\"', 'Sum', {PERIOD})"


def _graph(title: str, metrics: list[list[Any]]) -> dict[str, Any]:
    return {
        "type": "metric",
        "width": 12,
        "height": 6,
        "properties": {
            "title": title,
            "region": "${AWS::Region}",
            "view": "timeSeries",
            "stacked": False,
            "period": PERIOD,
            "metrics": metrics,
        },
    }
