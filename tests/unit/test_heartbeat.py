"""The API heartbeat (docs/operations.md#api-heartbeat): the function publishes 1 when
the stage answers its OpenAPI document and 0 when it does not (moto's CloudWatch, a
local HTTP server); both deploy paths run it every five minutes, inline, with a role
that may only log and publish into the stage's namespace; its alarm fires on failed
checks and on no data, so an outage alarms without traffic."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from app import app
from infra import heartbeat, observability, template
from tests.alarm_checks import PATHS, alarms_of, fires

NAMESPACE = "Pinework/pinework-test"


class _Stage(BaseHTTPRequestHandler):
    """Answers GET with ``self.server.answer`` (status, body)."""

    def do_GET(self) -> None:
        status, body = self.server.answer  # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def stage() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _published() -> list[float]:
    """How many Heartbeat datapoints ``NAMESPACE`` holds and their sum (moto's CloudWatch)."""
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    now = datetime.now(UTC)
    metric = {
        "Namespace": NAMESPACE,
        "MetricName": heartbeat.METRIC,
        "Dimensions": [{"Name": "service", "Value": heartbeat.SERVICE}],
    }
    answer = cloudwatch.get_metric_data(
        MetricDataQueries=[
            {"Id": stat.lower(), "MetricStat": {"Metric": metric, "Period": 60, "Stat": stat}}
            for stat in ("SampleCount", "Sum")
        ],
        StartTime=now - timedelta(minutes=5),
        EndTime=now + timedelta(minutes=5),
    )
    results = {result["Id"]: result["Values"] for result in answer["MetricDataResults"]}
    return [sum(results["samplecount"]), sum(results["sum"])]


def _run(monkeypatch: pytest.MonkeyPatch, url: str) -> dict[str, Any]:
    monkeypatch.setenv("PINEWORK_HEARTBEAT_URL", url)
    monkeypatch.setenv("PINEWORK_METRICS_NAMESPACE", NAMESPACE)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    return heartbeat.handler({"source": "aws.events"}, None)


@mock_aws
def test_an_answering_stage_publishes_one(
    stage: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    stage.answer = (200, json.dumps({"openapi": "3.1.0", "paths": {}}).encode())  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{stage.server_address[1]}/api/api/v1/openapi.json"
    assert _run(monkeypatch, url) == {"ok": True, "url": url}
    assert _published() == [1, 1]  # one datapoint, value 1


@pytest.mark.parametrize(
    "answer",
    [
        (502, b'{"error":{"code":"bad_gateway","message":"x"}}'),  # the function crashed
        (429, b'{"error":{"code":"rate_limited","message":"x"}}'),  # the stage throttled it
        (200, b"<html>not the document</html>"),  # something else answers the URL
        (200, b'{"error":{"code":"not_found"}}'),
    ],
)
@mock_aws
def test_a_failing_stage_publishes_zero(
    stage: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch, answer: tuple[int, bytes]
) -> None:
    stage.answer = answer  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{stage.server_address[1]}/api/api/v1/openapi.json"
    assert _run(monkeypatch, url)["ok"] is False
    assert _published() == [1, 0]  # one datapoint, value 0


@mock_aws
def test_an_unreachable_stage_publishes_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stage)
    port = server.server_address[1]
    server.server_close()  # nothing listens there now
    assert _run(monkeypatch, f"http://127.0.0.1:{port}/api/api/v1/openapi.json")["ok"] is False
    assert _published() == [1, 0]


def test_the_route_it_calls_is_the_apps_and_needs_no_credential() -> None:
    assert "GET" in app.routes[observability.HEARTBEAT_ROUTE]
    route = app.routes[observability.HEARTBEAT_ROUTE]["GET"]
    assert route.authorizer is None and not route.api_key_required


@pytest.mark.parametrize("path", sorted(PATHS))
def test_both_paths_run_it_every_five_minutes_inline_with_a_narrow_role(path: str) -> None:
    build, targets_of = PATHS[path]
    resources = build()["Resources"]
    targets = targets_of()
    function = resources["HeartbeatFunction"]["Properties"]
    source = function["Code"]["ZipFile"]
    assert source == Path(heartbeat.__file__).read_text()
    assert len(source.encode()) <= 4096  # CloudFormation's inline code limit
    assert function["Handler"] == "index.handler"
    assert function["Timeout"] > heartbeat.TIMEOUT_SECONDS
    variables = function["Environment"]["Variables"]
    assert variables["PINEWORK_METRICS_NAMESPACE"] == targets.namespace
    assert variables["PINEWORK_HEARTBEAT_URL"] == {
        "Fn::Join": ["", [targets.api_url, "api/v1/openapi.json"]]
    }
    url = targets.api_url["Fn::Sub"]
    assert url.startswith("https://${") and url.endswith("/")
    assert ".execute-api.${AWS::Region}.${AWS::URLSuffix}/" in url
    schedule = resources["HeartbeatSchedule"]["Properties"]
    assert schedule["ScheduleExpression"] == "rate(5 minutes)"
    assert schedule["Targets"][0]["Arn"] == {"Fn::GetAtt": ["HeartbeatFunction", "Arn"]}
    permission = resources["HeartbeatPermission"]["Properties"]
    assert permission["SourceArn"] == {"Fn::GetAtt": ["HeartbeatSchedule", "Arn"]}
    assert permission["Principal"] == "events.amazonaws.com"
    (policy,) = resources["HeartbeatRole"]["Properties"]["Policies"]
    statements = policy["PolicyDocument"]["Statement"]
    assert {json.dumps(s["Action"]) for s in statements} == {
        '["logs:CreateLogStream", "logs:PutLogEvents"]',
        '"cloudwatch:PutMetricData"',
    }
    for statement in statements:
        if statement["Resource"] == "*":
            assert statement["Condition"] == {
                "StringEquals": {"cloudwatch:namespace": targets.namespace}
            }
        else:
            assert statement["Resource"] == {"Fn::GetAtt": ["HeartbeatLogGroup", "Arn"]}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_its_alarm_fires_on_failed_checks_and_on_silence_not_on_one_late_run(path: str) -> None:
    alarm = alarms_of(PATHS[path][0]())["ApiHeartbeatAlarm"]
    targets = PATHS[path][1]()
    assert alarm["Namespace"] == targets.namespace
    assert alarm["MetricName"] == heartbeat.METRIC
    assert alarm["Dimensions"] == [{"Name": "service", "Value": heartbeat.SERVICE}]
    assert alarm["TreatMissingData"] == "breaching"
    assert alarm["AlarmActions"] == [{"Ref": "AlarmTopic"}]
    healthy: list[float | None] = [1, 1, 1]
    assert not fires(alarm, {heartbeat.METRIC: healthy})
    assert not fires(alarm, {heartbeat.METRIC: [1, None, 2]})  # a run landed late
    assert not fires(alarm, {heartbeat.METRIC: [1, 0, 1]})  # one failed check
    assert fires(alarm, {heartbeat.METRIC: [1, 0, 0]})  # the API stopped answering
    assert fires(alarm, {heartbeat.METRIC: [None, None, None]})  # no traffic, no checks
    assert fires(alarm, {heartbeat.METRIC: [0, None, 1]})  # a failed check, then none
    assert fires(alarm, {heartbeat.METRIC: [None, 1, None]})  # two runs missing


def test_the_one_stack_calls_its_own_api_and_the_operations_stack_chalices() -> None:
    one = observability.stack_targets().api_url["Fn::Sub"]
    assert one.startswith("https://${RestAPI}.") and one.endswith(f"/{observability.api_stage()}/")
    operations = observability.operations_targets().api_url["Fn::Sub"]
    assert operations.startswith("https://${RestApiId}.") and operations.endswith("/${ApiStage}/")
    assert "RestApiId" in observability.operations_stack()["Parameters"]
    assert "RestAPI" in template.package_fragment()["Resources"]
