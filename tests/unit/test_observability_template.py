"""The alarms and dashboard of the template (docs/issues.md#issue-12): they refer only to resources
of the stack, read the namespace and metric names the functions write, and name
nothing by a hard-coded ARN."""

from __future__ import annotations

import json
import re
from typing import Any

from chalicelib.api.telemetry import SERVICE
from chalicelib.settings import Settings
from infra import observability, template

CHALICE_IDS = {"APIHandler", "ReviewWorker", "ReviewFanout", "RestAPI"}
"""Logical ids that ``chalice package`` writes (build/package/sam.json)."""


def references(node: Any) -> set[str]:
    """Every logical id a fragment names through Ref, GetAtt or ``${…}`` in Fn::Sub."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref":
                found.add(value)
            elif key == "Fn::GetAtt":
                found.add(value[0])
            elif key == "Fn::Sub":
                found |= {ref.split(".")[0] for ref in re.findall(r"\$\{([^}]+)\}", value)}
            else:
                found |= references(value)
    elif isinstance(node, list):
        for item in node:
            found |= references(item)
    return {ref for ref in found if not ref.startswith("AWS::")}


def test_the_template_carries_three_alarms_a_topic_and_a_dashboard() -> None:
    resources = template.package_fragment()["Resources"]
    kinds = {name: body.get("Type") for name, body in resources.items()}
    alarms = [name for name, kind in kinds.items() if kind == "AWS::CloudWatch::Alarm"]
    assert sorted(alarms) == ["Api5xxRateAlarm", "RecallFallbackRateAlarm", "ReviewDeadLetterAlarm"]
    assert kinds["AlarmTopic"] == "AWS::SNS::Topic"
    assert kinds["OperationsDashboard"] == "AWS::CloudWatch::Dashboard"
    for name in alarms:
        properties = resources[name]["Properties"]
        assert properties["AlarmActions"] == [{"Ref": "AlarmTopic"}]
        assert properties["TreatMissingData"] == "notBreaching"
    assert references(observability.resources()) <= set(resources) | CHALICE_IDS


def test_the_alarms_read_what_the_functions_write() -> None:
    fallback = observability.resources()["RecallFallbackRateAlarm"]["Properties"]["Metrics"]
    for stat in fallback[:2]:
        metric = stat["MetricStat"]["Metric"]
        assert metric["Namespace"] == Settings().metrics_namespace
        assert metric["MetricName"] == "RecallFallback"
        assert metric["Dimensions"] == [{"Name": "service", "Value": SERVICE}]
    dead = observability.resources()["ReviewDeadLetterAlarm"]["Properties"]["Metrics"][0]
    dimension = dead["MetricStat"]["Metric"]["Dimensions"][0]
    assert dimension["Value"] == {"Fn::GetAtt": ["ReviewDeadLetterQueue", "QueueName"]}


def test_the_dashboard_body_is_json_once_substituted() -> None:
    body = observability.resources()["OperationsDashboard"]["Properties"]["DashboardBody"]
    text = re.sub(r"\$\{[^}]+\}", "x", body["Fn::Sub"])
    widgets = json.loads(text)["widgets"]
    assert len(widgets) >= 10
    assert "arn:aws" not in body["Fn::Sub"]
    titles = " ".join(widget["properties"]["title"] for widget in widgets)
    for topic in ("Requests by route", "Recall latency", "Review actions", "Alarms"):
        assert topic in titles
