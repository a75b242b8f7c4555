"""Shared checks of the stacks' alarms (tests/unit/test_observability_template.py,
tests/unit/test_heartbeat.py): the alarms of a template, and whether one fires on given
datapoints as CloudWatch evaluates it."""

from __future__ import annotations

from typing import Any

from infra import observability, template

PATHS = {
    "one stack": (template.package_fragment, observability.stack_targets),
    "operations stack": (observability.operations_stack, observability.operations_targets),
}


def alarms_of(template_body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The alarms' properties by logical id."""
    return {
        name: body["Properties"]
        for name, body in template_body["Resources"].items()
        if body.get("Type") == "AWS::CloudWatch::Alarm"
    }


def _expression(text: str) -> str:
    """A CloudWatch metric math expression as Python (``IF`` lazily, ``FILL``)."""
    while (start := text.find("IF(")) != -1:
        depth, parts, current = 0, [], ""
        for index in range(start + 3, len(text)):
            char = text[index]
            if char == "," and depth == 0:
                parts.append(current)
                current = ""
                continue
            if char == "(":
                depth += 1
            elif char == ")":
                if depth == 0:
                    break
                depth -= 1
            current += char
        parts.append(current)
        condition, then, otherwise = parts
        text = f"{text[:start]}(({then}) if ({condition}) else ({otherwise})){text[index + 1 :]}"
    return text.replace("FILL(", "_fill(")


def fires(properties: dict[str, Any], data: dict[str, list[float | None]]) -> bool:
    """Whether an alarm goes to ALARM on ``data`` (metric name -> its datapoints, one per
    period, the newest last; None: no datapoint), as CloudWatch evaluates it."""
    if "Metrics" in properties:
        series: dict[str, list[float | None]] = {}
        values: list[float | None] = []
        for item in properties["Metrics"]:
            if "MetricStat" in item:
                series[item["Id"]] = data.get(item["MetricStat"]["Metric"]["MetricName"], [])
            elif item["ReturnData"]:
                length = max(len(points) for points in series.values())
                code = _expression(item["Expression"])
                for period in range(length):
                    names = {key: points[period] for key, points in series.items()}
                    values.append(eval(code, {"_fill": lambda v, d: d if v is None else v}, names))
    else:
        values = data[properties["MetricName"]]
    compare = {
        "GreaterThanThreshold": lambda value: value > properties["Threshold"],
        "GreaterThanOrEqualToThreshold": lambda value: value >= properties["Threshold"],
        "LessThanThreshold": lambda value: value < properties["Threshold"],
    }[properties["ComparisonOperator"]]
    window = values[-properties["EvaluationPeriods"] :]
    missing = properties["TreatMissingData"]
    breaching = sum(
        (missing == "breaching") if value is None else compare(value) for value in window
    )
    return bool(breaching >= properties["DatapointsToAlarm"])
