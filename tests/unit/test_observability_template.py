"""The alarms, topic and dashboard of both deploy paths (docs/operations.md#alarms-and-runbook):
the same alarms in the packaged template and the operations stack, each reading only
the stage's own names and naming its runbook section, alarm windows CloudWatch accepts,
and the 5xx and missed-fan-out alarms evaluated on sample data."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from chalicelib.api.telemetry import SERVICE
from infra import access_logs, iam, observability, parameters, template
from infra.observability import Targets
from tests.alarm_checks import PATHS, alarms_of, fires
from tests.helpers import anchors

REPO = Path(__file__).resolve().parents[2]
CHALICE_IDS = {"APIHandler", "ReviewWorker", "ReviewFanout", "RestAPI"}
"""Logical ids that ``chalice package`` writes (build/package/sam.json)."""
ISSUE_ALARMS = {
    # per function: errors, throttles, duration near the timeout
    *(
        f"{prefix}{kind}Alarm"
        for prefix in iam.FUNCTIONS.values()
        for kind in ("Errors", "Throttles", "Duration")
    ),
    "ReviewFanoutFailedAlarm",  # the nightly fan-out's failure destination is not empty
    "ReviewFanoutMissedAlarm",  # the nightly fan-out did not run
    "TableThrottleAlarm",  # DynamoDB throttled requests
    "ReviewQueueAgeAlarm",  # SQS oldest-message age
    "ReviewDeadLetterAlarm",
    "Api5xxCountAlarm",  # 5xx at any traffic level
    "Api5xxRateAlarm",
    "ApiLatencyAlarm",  # p99 latency
    "RecallFallbackRateAlarm",
    "ApiHeartbeatAlarm",  # no successful synthetic check: an outage with no traffic
    "WafBlockedAlarm",  # the WAF web ACL blocks clients (only with a web ACL)
    "ApiThrottledAlarm",  # the stage throttle answers 429 (only with the access log)
    # the lifecycle queue (docs/issues.md#issue-41-item-2): oldest message, dead letters
    "LifecycleQueueAgeAlarm",
    "LifecycleDeadLetterAlarm",
}
CONDITIONAL_ALARMS = {"WafBlockedAlarm": "the web ACL", "ApiThrottledAlarm": "the access log"}
AWS_NAMESPACES = ["AWS/Lambda", "AWS/SQS", "AWS/DynamoDB", "AWS/ApiGateway", "AWS/WAFV2"]


def references(node: Any) -> set[str]:
    """Every logical id or parameter a fragment names through Ref, GetAtt or ``${…}`` in
    Fn::Sub (both forms; a two-argument Fn::Sub's own variables excluded)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref":
                found.add(value)
            elif key == "Fn::GetAtt":
                found.add(value[0])
            elif key == "Fn::Sub":
                text, variables = (value, {}) if isinstance(value, str) else value
                names = {ref.split(".")[0] for ref in re.findall(r"\$\{([^}!]+)\}", text)}
                found |= (names - set(variables)) | references(variables)
            elif key == "Fn::If":
                found |= references(value[1:])
            else:
                found |= references(value)
    elif isinstance(node, list):
        for item in node:
            found |= references(item)
    return {ref for ref in found if not ref.startswith("AWS::")}


def conditions_named(node: Any) -> set[str]:
    """Every condition a fragment names (``Condition`` keys and ``Fn::If``)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Condition" and isinstance(value, str):
                found.add(value)
            elif key == "Fn::If":
                found.add(value[0])
                found |= conditions_named(value[1:])
            else:
                found |= conditions_named(value)
    elif isinstance(node, list):
        for item in node:
            found |= conditions_named(item)
    return found


def watched_metrics(properties: dict[str, Any]) -> list[dict[str, Any]]:
    """Every metric an alarm reads, as ``{"Namespace", "MetricName", "Dimensions"}``."""
    if "Metrics" in properties:
        return [
            item["MetricStat"]["Metric"] for item in properties["Metrics"] if "MetricStat" in item
        ]
    return [{key: properties[key] for key in ("Namespace", "MetricName", "Dimensions")}]


@pytest.mark.parametrize("path", sorted(PATHS))
def test_both_paths_carry_every_alarm_of_the_issue_the_topic_and_the_dashboard(path: str) -> None:
    body = PATHS[path][0]()
    resources = body["Resources"]
    assert set(alarms_of(body)) == ISSUE_ALARMS
    kinds = {name: resource.get("Type") for name, resource in resources.items()}
    assert kinds["AlarmTopic"] == "AWS::SNS::Topic"
    assert kinds["OperationsDashboard"] == "AWS::CloudWatch::Dashboard"
    assert kinds["ReviewFanoutInvokeConfig"] == "AWS::Lambda::EventInvokeConfig"
    for properties in alarms_of(body).values():
        assert properties["AlarmActions"] == [{"Ref": "AlarmTopic"}]
        assert properties["OKActions"] == [{"Ref": "AlarmTopic"}]
    for name in ("AlarmEmail", parameters.KMS_KEY_ARN):
        assert body["Parameters"][name]["Default"] == ""
    assert body["Conditions"][parameters.HAS_KMS_KEY] == parameters.kms_condition()


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_alarm_reads_the_stages_own_names(path: str) -> None:
    build, targets_of = PATHS[path]
    targets: Targets = targets_of()
    queues = [
        targets.review_queue,
        targets.dead_letter_queue,
        targets.fanout_failure_queue,
        targets.lifecycle_queue,
        targets.lifecycle_dead_letter_queue,
    ]
    expected = {
        "TableName": [targets.table],
        "QueueName": queues,
        "FunctionName": list(targets.functions.values()),
        "ApiName": [targets.api_name],
        "Stage": [targets.api_stage],
        "Operation": list(observability.TABLE_OPERATIONS),
        "service": [SERVICE],
        "WebACL": [targets.web_acl],
        "Region": [{"Ref": "AWS::Region"}],
        "Rule": ["ALL"],
    }
    for name, properties in alarms_of(build()).items():
        for metric in watched_metrics(properties):
            assert metric["Namespace"] in AWS_NAMESPACES or metric["Namespace"] == (
                targets.namespace
            ), name
            assert metric["Dimensions"], name
            for dimension in metric["Dimensions"]:
                assert dimension["Value"] in expected[dimension["Name"]], (name, dimension)
    if path == "one stack":
        assert targets.namespace == {"Fn::Sub": "Pinework/${AWS::StackName}"}
        assert targets.api_name == {"Ref": "AWS::StackName"}
    else:
        declared = build()["Parameters"]
        fields = [*targets.functions.values(), targets.table, *queues, targets.api_name]
        for value in [*fields, targets.api_stage, targets.namespace]:
            assert set(value) == {"Ref"} and value["Ref"] in declared


def test_the_recall_fallback_alarm_reads_what_the_functions_write() -> None:
    targets = observability.stack_targets()
    fallback = observability.api_alarms(targets)["RecallFallbackRateAlarm"]["Properties"]
    for metric in watched_metrics(fallback):
        assert metric["Namespace"] == targets.namespace
        assert metric["MetricName"] == "RecallFallback"
        assert metric["Dimensions"] == [{"Name": "service", "Value": SERVICE}]
    assert observability.SERVICE == SERVICE


def test_every_alarm_names_its_own_runbook_section() -> None:
    documented = anchors("docs/operations.md")
    seen: dict[str, str] = {}
    for name, properties in alarms_of(observability.operations_stack()).items():
        description = properties["AlarmDescription"]
        assert len(description) <= 1024, name  # CloudWatch's limit
        found = re.findall(r"Runbook: docs/operations\.md#([\w-]+)$", description)
        assert len(found) == 1, name
        assert found[0] in documented, (name, found[0])
        assert found[0] not in seen, (name, seen.get(found[0]))
        seen[found[0]] = name
        assert "First:" in description, name  # what to do first


def test_a_few_5xx_at_low_traffic_fire_the_count_alarm_not_only_the_rate() -> None:
    alarms = alarms_of(observability.operations_stack())
    count, rate = alarms["Api5xxCountAlarm"], alarms["Api5xxRateAlarm"]
    outage = {"5XXError": [0, 6, 6], "Count": [6, 6, 6]}  # every request fails, 6 in 5 min
    assert fires(count, outage)
    assert not fires(rate, outage)  # the rate alarm waits for 20 requests a period
    assert fires(count, {"5XXError": [None, None, 5]})
    assert not fires(count, {"5XXError": [4, 4, 4]})
    busy = {"5XXError": [30, 30, 30], "Count": [100, 100, 100]}
    assert fires(rate, busy) and fires(count, busy)


def test_the_missed_fanout_alarm_fires_the_day_it_did_not_run_and_never_otherwise() -> None:
    missed = alarms_of(observability.operations_stack())["ReviewFanoutMissedAlarm"]
    assert missed["Period"] == 3600 and missed["TreatMissingData"] == "breaching"
    # Hourly datapoints over 4 days; the fan-out runs once at 04:00 UTC (hour 4 of a day),
    # sometimes a little late (still in the 04:00 hour).
    days = 4
    hourly: list[float | None] = [1.0 if hour % 24 == 4 else None for hour in range(24 * days)]
    for now in range(30, len(hourly) + 1):  # every hour from 06:00 of day 2 on
        assert not fires(missed, {"Invocations": hourly[:now]}), now
    skipped = [None if hour == 24 * 2 + 4 else value for hour, value in enumerate(hourly)]
    alarm_hours = [
        now for now in range(30, len(skipped) + 1) if fires(missed, {"Invocations": skipped[:now]})
    ]
    # the third day's run missing: the alarm fires from 07:00 UTC that day (the 26th
    # empty hour ends at 06:59), until the next day's run
    assert alarm_hours == list(range(24 * 2 + 7, 24 * 3 + 5))


def test_alarm_windows_and_math_are_what_cloudwatch_accepts() -> None:
    for name, properties in alarms_of(observability.operations_stack()).items():
        items = properties.get("Metrics", [])
        periods = [item["MetricStat"]["Period"] for item in items if "MetricStat" in item]
        period = properties.get("Period") or periods[0]
        assert period % 60 == 0 and all(other == period for other in periods), name
        window = period * properties["EvaluationPeriods"]
        assert window <= (86_400 if period < 3600 else 604_800), name  # PutMetricAlarm
        assert 1 <= properties["DatapointsToAlarm"] <= properties["EvaluationPeriods"], name
        if items:
            assert len(periods) <= 10, name  # a metric math alarm reads at most 10 metrics
            assert [item["ReturnData"] for item in items].count(True) == 1, name
    missed = alarms_of(observability.operations_stack())["ReviewFanoutMissedAlarm"]
    assert missed["Period"] * missed["EvaluationPeriods"] > 86_400  # longer than the schedule


def test_duration_alarms_fire_at_four_fifths_of_each_timeout() -> None:
    alarms = alarms_of(observability.operations_stack())
    for function, prefix in iam.FUNCTIONS.items():
        threshold = alarms[f"{prefix}DurationAlarm"]["Threshold"]
        assert threshold == pytest.approx(0.8 * observability.TIMEOUT_SECONDS[function] * 1000)
    assert observability.API_TIMEOUT_SECONDS < 29  # API Gateway's integration limit
    # both deploy paths set the timeouts the alarms are computed from
    assert template.FUNCTION_TIMEOUTS == observability.TIMEOUT_SECONDS


def test_the_table_alarm_sums_every_operation_the_roles_may_call() -> None:
    actions = {
        action.removeprefix("dynamodb:")
        for function in iam.FUNCTIONS
        for grant in iam.grants(function)
        for action in grant.actions
        if action.startswith("dynamodb:")
    }
    # ConditionCheckItem is allowed for the checks inside TransactWriteItems
    called = (actions - {"ConditionCheckItem"}) | {"TransactWriteItems"}
    assert set(observability.TABLE_OPERATIONS) == called
    throttle = alarms_of(observability.operations_stack())["TableThrottleAlarm"]
    assert fires(throttle, {"ThrottledRequests": [0, 3, 1]})
    assert not fires(throttle, {"ThrottledRequests": [None, None, 2]})  # one short burst


@pytest.mark.parametrize(
    "path",
    [
        "one stack",
        "operations stack",
    ],
)
def test_every_reference_resolves_in_its_own_template(path: str) -> None:
    body = PATHS[path][0]()
    known = set(body["Resources"]) | set(body["Parameters"])
    if path == "one stack":
        known |= CHALICE_IDS
    assert references(body["Resources"]) <= known
    assert references(body.get("Outputs", {})) <= known
    assert conditions_named(body["Resources"]) <= set(body["Conditions"])
    assert conditions_named(body["Conditions"]) <= set(body["Conditions"])


def test_the_operations_stack_refers_to_nothing_but_its_parameters() -> None:
    body = observability.operations_stack()
    assert references(body["Resources"]) <= set(body["Resources"]) | set(body["Parameters"])
    assert conditions_named(body["Resources"]) <= set(body["Conditions"])


@pytest.mark.parametrize(
    ("value", "allowed"),
    [
        ("", True),
        ("arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab", True),
        ("arn:aws-us-gov:kms:us-gov-west-1:111122223333:key/1234abcd-12ab", True),
        ("arn:aws:kms:eu-west-1:111122223333:alias/aws/sns", False),  # CloudWatch cannot use it
        ("1234abcd-12ab-34cd-56ef-1234567890ab", False),
    ],
)
def test_the_kms_key_parameter_takes_a_key_arn_or_nothing(value: str, allowed: bool) -> None:
    pattern = parameters.kms_parameter()["AllowedPattern"]
    assert bool(re.fullmatch(pattern, value)) is allowed


def test_the_topic_is_encrypted_and_only_this_stacks_alarms_publish() -> None:
    resources = observability.topic_resources()
    topic = resources["AlarmTopic"]["Properties"]
    assert topic["KmsMasterKeyId"] == {
        "Fn::If": ["HasKmsKey", {"Ref": "KmsKeyArn"}, {"Fn::GetAtt": ["AlarmTopicKey", "Arn"]}]
    }
    key = resources["AlarmTopicKey"]
    assert key["Condition"] == observability.CREATE_TOPIC_KEY
    assert observability.CONDITIONS[observability.CREATE_TOPIC_KEY] == {
        "Fn::Not": [{"Condition": "HasKmsKey"}]
    }
    assert key["Properties"]["EnableKeyRotation"] is True
    statements = {s["Sid"]: s for s in key["Properties"]["KeyPolicy"]["Statement"]}
    cloudwatch = statements["CloudWatchAlarmsPublishToTheTopic"]
    assert cloudwatch["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    assert set(cloudwatch["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey*"}
    assert cloudwatch["Condition"]["StringEquals"] == {
        "aws:SourceAccount": {"Ref": "AWS::AccountId"}
    }
    policy = resources["AlarmTopicPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    publishers = [s["Principal"] for s in policy if "sns:Publish" in json.dumps(s["Action"])]
    assert publishers == [
        {"Service": "cloudwatch.amazonaws.com"},
        {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}},
    ]
    assert policy[0]["Condition"]["StringEquals"] == {
        "aws:SourceAccount": {"Ref": "AWS::AccountId"}
    }
    assert (
        ":alarm:${AWS::StackName}-*"
        in policy[0]["Condition"]["ArnLike"]["aws:SourceArn"]["Fn::Sub"]
    )
    subscription = resources["AlarmEmailSubscription"]
    assert subscription["Condition"] == "HasAlarmEmail"
    assert subscription["Properties"]["Protocol"] == "email"
    assert subscription["Properties"]["Endpoint"] == {"Ref": "AlarmEmail"}
    pattern = observability.PARAMETERS["AlarmEmail"]["AllowedPattern"]
    assert re.fullmatch(pattern, "") and re.fullmatch(pattern, "ops@example.com")
    assert not re.fullmatch(pattern, "ops")


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_failed_fanout_lands_in_the_failure_queue(path: str) -> None:
    build, targets_of = PATHS[path]
    targets = targets_of()
    config = build()["Resources"]["ReviewFanoutInvokeConfig"]["Properties"]
    assert config["FunctionName"] == targets.functions["review_fanout"]
    # what the 04:00 schedule invokes: the one stack's published alias, Chalice's $LATEST
    assert config["Qualifier"] == ("live" if path == "one stack" else "$LATEST")
    assert config["MaximumRetryAttempts"] == 2
    assert config["DestinationConfig"] == {
        "OnFailure": {"Destination": targets.fanout_failure_queue_arn}
    }
    failed = alarms_of(build())["ReviewFanoutFailedAlarm"]
    assert failed["Dimensions"] == [{"Name": "QueueName", "Value": targets.fanout_failure_queue}]


@pytest.mark.parametrize("path", sorted(PATHS))
def test_the_dashboard_reads_the_stages_names_and_lists_every_alarm(path: str) -> None:
    body = PATHS[path][0]()
    text, variables = body["Resources"]["OperationsDashboard"]["Properties"]["DashboardBody"][
        "Fn::Sub"
    ]
    assert "arn:aws" not in text and "Pinework" not in text
    named = set(re.findall(r"\$\{([^}]+)\}", text))
    # every alarm the stack always has (a conditional one may not exist to be listed)
    alarms = {name for name in alarms_of(body) if "Condition" not in body["Resources"][name]}
    assert alarms == ISSUE_ALARMS - set(CONDITIONAL_ALARMS)
    assert named == set(variables) | {"AWS::Region"} | {f"{alarm}.Arn" for alarm in alarms}
    widgets = json.loads(re.sub(r"\$\{[^}]+\}", "x", text))["widgets"]
    listed = next(w for w in widgets if w["type"] == "alarm")["properties"]["alarms"]
    assert len(listed) == len(alarms)
    titles = " ".join(widget["properties"]["title"] for widget in widgets)
    for topic in ("Requests by route", "Recall latency", "Review actions", "fan-out", "Alarms"):
        assert topic in titles


def test_the_operations_stack_passes_cfn_lint(tmp_path: Path) -> None:
    path = tmp_path / "operations.json"
    path.write_text(json.dumps(observability.operations_stack()))
    lint = shutil.which("cfn-lint", path=str(REPO / ".venv" / "bin")) or "cfn-lint"
    done = subprocess.run([lint, str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_make_deploy_prints_the_operations_stack(capsys: pytest.CaptureFixture[str]) -> None:
    template.main(["operations"])
    printed = capsys.readouterr().out
    assert json.loads(printed) == observability.operations_stack()
    # make deploy uploads it through the artifact bucket: CloudFormation's limit is 1 MB
    assert len(printed.encode()) < 1_000_000
    deploy = subprocess.run(
        ["make", "-n", "deploy", "AWS_ACCOUNT=123456789012"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (line,) = [
        line
        for line in deploy.splitlines()
        if "deploy --stack-name pinework-prod-operations " in line
    ]
    assert "--s3-bucket pinework-artifacts-123456789012-" in line


@pytest.mark.parametrize("path", sorted(PATHS))
def test_the_waf_and_throttle_alarms_exist_only_with_what_they_count(path: str) -> None:
    body = PATHS[path][0]()
    targets: Targets = PATHS[path][1]()
    resources = body["Resources"]
    waf = resources["WafBlockedAlarm"]
    assert waf["Condition"] == targets.waf_condition
    if path == "one stack":  # the web ACL's own condition, and its name
        assert resources["RateLimitWebAcl"]["Condition"] == waf["Condition"]
        acl = resources["RateLimitWebAcl"]["Properties"]
        assert acl["VisibilityConfig"]["MetricName"] == targets.web_acl == acl["Name"]
    else:  # make deploy passes the WAF stack's web ACL, or nothing
        assert body["Conditions"][waf["Condition"]] == {
            "Fn::Not": [{"Fn::Equals": [{"Ref": "WebAclName"}, ""]}]
        }
        assert body["Parameters"]["WebAclName"]["Default"] == ""
    properties = waf["Properties"]
    assert (properties["Namespace"], properties["MetricName"]) == ("AWS/WAFV2", "BlockedRequests")
    assert properties["Statistic"] == "Sum" and properties["Threshold"] == 0
    assert properties["TreatMissingData"] == "notBreaching"
    assert properties["AlarmActions"] == [{"Ref": "AlarmTopic"}]
    assert {d["Name"]: d["Value"] for d in properties["Dimensions"]} == {
        "WebACL": targets.web_acl,
        "Region": {"Ref": "AWS::Region"},
        "Rule": "ALL",
    }
    assert not fires(properties, {"BlockedRequests": [None, 40, None]})  # one burst
    assert fires(properties, {"BlockedRequests": [12, None, 3]})  # kept over its limit

    throttled = resources["ApiThrottledAlarm"]
    assert throttled["Condition"] == access_logs.ACCESS_LOGS_ON
    assert body["Conditions"][access_logs.ACCESS_LOGS_ON] == {
        "Fn::Equals": [{"Ref": "ApiAccessLogs"}, "on"]
    }
    assert body["Parameters"]["ApiAccessLogs"]["Default"] == "off"
    properties = throttled["Properties"]
    assert properties["Namespace"] == targets.namespace
    assert properties["MetricName"] == access_logs.THROTTLED_METRIC
    assert properties["Dimensions"] == [{"Name": "service", "Value": SERVICE}]
    assert properties["Threshold"] == 0 and properties["TreatMissingData"] == "notBreaching"
    assert properties["AlarmActions"] == [{"Ref": "AlarmTopic"}]
    assert not fires(properties, {access_logs.THROTTLED_METRIC: [None, 7, None]})
    assert fires(properties, {access_logs.THROTTLED_METRIC: [3, 9, None]})


def _access_line(response_type: str, status: str) -> dict[str, Any]:
    """The access log line API Gateway writes for a request (its ``$context`` filled)."""
    values = {
        "$context.requestId": "r-1",
        "$context.requestTime": "07/Dec/2026:03:00:00 +0000",
        "$context.identity.sourceIp": "203.0.113.9",
        "$context.httpMethod": "POST",
        "$context.resourcePath": "/api/v1/recalls",
        "$context.status": status,
        "$context.error.responseType": response_type,
        "$context.responseLatency": "3",
    }
    text = access_logs.FORMAT
    for variable in sorted(values, key=len, reverse=True):
        text = text.replace(variable, values[variable])
    line: dict[str, Any] = json.loads(text)
    return line


def _matches(pattern: str, line: dict[str, Any]) -> bool:
    """CloudWatch Logs' ``{ $.field = "value" }`` pattern on a JSON line."""
    found = re.fullmatch(r'\{ \$\.(\w+) = "([^"]*)" \}', pattern)
    assert found, pattern
    return line.get(found.group(1)) == found.group(2)


@pytest.mark.parametrize("build", [template.package_fragment, template.resources_stack])
def test_the_access_log_counts_the_stage_throttles_429s_not_the_apps(build: Any) -> None:
    resources = build()["Resources"]
    log_group = resources[access_logs.LOG_GROUP]
    metric_filter = resources["ApiThrottledMetricFilter"]
    assert log_group["Condition"] == metric_filter["Condition"] == access_logs.ACCESS_LOGS_ON
    properties = metric_filter["Properties"]
    assert properties["LogGroupName"] == {"Ref": access_logs.LOG_GROUP}
    (transformation,) = properties["MetricTransformations"]
    assert transformation["MetricName"] == access_logs.THROTTLED_METRIC
    namespace = {"Fn::Sub": "Pinework/${AWS::StackName}"}
    if build is template.resources_stack:
        namespace = {"Fn::Sub": "Pinework/${ChaliceApp}-${ChaliceStage}"}
        assert build()["Outputs"]["MetricsNamespace"]["Value"] == namespace
    assert transformation["MetricNamespace"] == namespace
    pattern = properties["FilterPattern"]
    throttled = _access_line("THROTTLED", "429")
    assert _matches(pattern, throttled)
    assert throttled["service"] == SERVICE
    assert transformation["Dimensions"] == [{"Key": "service", "Value": "$.service"}]
    assert not _matches(pattern, _access_line("", "429"))  # the app's own rate_limited
    assert not _matches(pattern, _access_line("", "200"))
    assert not _matches(pattern, _access_line("MISSING_AUTHENTICATION_TOKEN", "404"))


def test_the_one_stacks_api_writes_the_access_log_only_when_on() -> None:
    api = template.package_fragment()["Resources"]["RestAPI"]["Properties"]
    condition, setting, otherwise = api["AccessLogSetting"]["Fn::If"]
    assert condition == access_logs.ACCESS_LOGS_ON and otherwise == {"Ref": "AWS::NoValue"}
    assert setting["Format"] == access_logs.FORMAT
    assert "$context.requestId" in setting["Format"]  # API Gateway requires it
    assert setting["DestinationArn"]["Fn::Sub"].endswith(":log-group:${ApiAccessLogGroup}")
