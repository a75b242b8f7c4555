"""Rate limits where AWS gives them (docs/reference.md#14-operations): the stage throttle and
the optional WAF web ACL, in both deploy paths, read from the generated templates and
put on moto's API Gateway and WAF."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from chalicelib.api.http import error_response
from chalicelib.errors import STATUS_BY_CODE, RateLimited
from infra import access_logs, rate_limits
from infra.deploy import main
from infra.template import package_fragment, resources_stack

REPO = Path(__file__).resolve().parents[2]
REGION = "us-east-1"


def resolve(node: Any, values: dict[str, Any]) -> Any:
    """A template fragment with ``Ref`` and string ``Fn::Sub`` replaced from ``values``
    (parameters, pseudo parameters and ``Logical.Attribute`` names)."""
    if isinstance(node, list):
        return [resolve(item, values) for item in node]
    if not isinstance(node, dict):
        return node
    if set(node) == {"Ref"}:
        return values[node["Ref"]]
    if set(node) == {"Fn::Sub"}:
        return re.sub(r"\$\{([^}]+)\}", lambda match: str(values[match[1]]), node["Fn::Sub"])
    return {key: resolve(value, values) for key, value in node.items()}


def defaults(template: dict[str, Any]) -> dict[str, Any]:
    """The template's parameter defaults and the pseudo parameters of a stack ``pinework``."""
    return {
        **{name: spec.get("Default") for name, spec in template["Parameters"].items()},
        "AWS::StackName": "pinework",
        "AWS::Partition": "aws",
        "AWS::Region": REGION,
    }


def test_the_api_stage_throttles_every_route_with_the_parameters() -> None:
    template = package_fragment()
    settings = template["Resources"]["RestAPI"]["Properties"]["MethodSettings"]
    assert settings == [
        {
            "ResourcePath": "/*",
            "HttpMethod": "*",
            "ThrottlingRateLimit": {"Ref": "ApiThrottleRateLimit"},
            "ThrottlingBurstLimit": {"Ref": "ApiThrottleBurstLimit"},
        }
    ]
    parameters = template["Parameters"]
    assert parameters["ApiThrottleRateLimit"]["Default"] == 50
    assert parameters["ApiThrottleBurstLimit"]["Default"] == 100
    # The gateway responses are still there beside the throttle (a merge replaces keys).
    assert "THROTTLED" in template["Resources"]["RestAPI"]["Properties"]["GatewayResponses"]


def test_the_web_acl_exists_only_when_switched_on() -> None:
    template = package_fragment()
    switch = template["Parameters"]["WafRateLimiting"]
    assert switch["Default"] == "off" and switch["AllowedValues"] == ["off", "on"]
    assert template["Conditions"]["WafRateLimitingOn"] == {
        "Fn::Equals": [{"Ref": "WafRateLimiting"}, "on"]
    }
    waf = {
        name: resource
        for name, resource in template["Resources"].items()
        if resource.get("Type", "").startswith("AWS::WAFv2::")
    }
    assert set(waf) == {"RateLimitWebAcl", "RateLimitWebAclAssociation"}
    assert all(resource["Condition"] == "WafRateLimitingOn" for resource in waf.values())
    assert waf["RateLimitWebAcl"]["Properties"]["Scope"] == "REGIONAL"  # API Gateway's
    # The resources stack of make deploy holds no API, so no WAF either.
    assert not [r for r in resources_stack()["Resources"].values() if "WAFv2" in r["Type"]]


def aggregation(rule: dict[str, Any]) -> Any:
    """What a rate-based rule counts by: ``IP`` or the header names of its custom keys."""
    statement = rule["Statement"]["RateBasedStatement"]
    if statement["AggregateKeyType"] == "IP":
        return "IP"
    assert statement["AggregateKeyType"] == "CUSTOM_KEYS"
    return tuple(key["Header"]["Name"] for key in statement["CustomKeys"])


def test_the_rules_count_by_source_ip_and_by_each_credential_header() -> None:
    rules = package_fragment()["Resources"]["RateLimitWebAcl"]["Properties"]["Rules"]
    counted = {aggregation(rule): rule["Statement"]["RateBasedStatement"] for rule in rules}
    assert set(counted) == {"IP", ("Authorization",), ("X-Api-Key",)}
    assert counted["IP"]["Limit"] == {"Ref": "WafIpLimit"}
    assert counted[("Authorization",)]["Limit"] == {"Ref": "WafCredentialLimit"}
    assert counted[("X-Api-Key",)]["Limit"] == {"Ref": "WafCredentialLimit"}
    header = counted[("Authorization",)]["CustomKeys"][0]["Header"]
    assert header["TextTransformations"] == [{"Priority": 0, "Type": "NONE"}]  # tokens are exact
    assert len({rule["Priority"] for rule in rules}) == len(rules)


def test_a_waf_block_is_the_apps_own_429_rate_limited_answer() -> None:
    properties = package_fragment()["Resources"]["RateLimitWebAcl"]["Properties"]
    assert properties["DefaultAction"] == {"Allow": {}}
    app = error_response(
        RateLimited(rate_limits.RATE_LIMITED_MESSAGE, rate_limits.WAF_RETRY_AFTER_SECONDS)
    )
    for rule in properties["Rules"]:
        response = rule["Action"]["Block"]["CustomResponse"]
        assert response["ResponseCode"] == app.status_code == STATUS_BY_CODE["rate_limited"]
        assert response["ResponseHeaders"] == [
            {"Name": "Retry-After", "Value": app.headers["Retry-After"]}
        ]
        body = properties["CustomResponseBodies"][response["CustomResponseBodyKey"]]
        assert body == {"ContentType": "APPLICATION_JSON", "Content": app.body}
    assert json.loads(app.body)["error"]["code"] == RateLimited.code


def test_the_web_acl_is_associated_with_the_api_stage() -> None:
    association = package_fragment()["Resources"]["RateLimitWebAclAssociation"]["Properties"]
    assert association["WebACLArn"] == {"Fn::GetAtt": ["RateLimitWebAcl", "Arn"]}
    values = {"AWS::Partition": "aws", "AWS::Region": REGION, "RestAPI": "a1b2c3"}
    arn = resolve(association["ResourceArn"], {**values, "RestAPI.Stage": "api"})
    assert arn == "arn:aws:apigateway:us-east-1::/restapis/a1b2c3/stages/api"


@pytest.fixture
def aws() -> Iterator[dict[str, Any]]:
    """moto's API Gateway with a deployed REST API at stage ``api``, and WAF."""
    with mock_aws():
        credentials = {"aws_access_key_id": "x", "aws_secret_access_key": "x"}
        apigateway = boto3.client("apigateway", region_name=REGION, **credentials)
        api = apigateway.create_rest_api(name="pinework-prod")["id"]
        root = apigateway.get_resources(restApiId=api)["items"][0]["id"]
        apigateway.put_method(
            restApiId=api, resourceId=root, httpMethod="GET", authorizationType="NONE"
        )
        apigateway.put_integration(restApiId=api, resourceId=root, httpMethod="GET", type="MOCK")
        apigateway.create_deployment(restApiId=api, stageName="api")
        wafv2 = boto3.client("wafv2", region_name=REGION, **credentials)
        yield {"apigateway": apigateway, "wafv2": wafv2, "api": api}


def test_the_waf_stack_of_make_deploy_guards_the_deployed_stage(aws: dict[str, Any]) -> None:
    template = rate_limits.waf_stack()
    values = {**defaults(template), "RestApiId": aws["api"], "ApiStage": "api"}
    # botocore checks the web ACL against WAF's own API model (same shapes as the template).
    acl = aws["wafv2"].create_web_acl(
        **resolve(template["Resources"]["RateLimitWebAcl"], values)["Properties"]
    )
    association = template["Resources"]["RateLimitWebAclAssociation"]["Properties"]
    aws["wafv2"].associate_web_acl(
        WebACLArn=acl["Summary"]["ARN"], ResourceArn=resolve(association["ResourceArn"], values)
    )
    stage = aws["apigateway"].get_stage(restApiId=aws["api"], stageName="api")
    assert stage["webAclArn"] == acl["Summary"]["ARN"]
    stored = aws["wafv2"].get_web_acl(
        Name="pinework-rate-limits", Scope="REGIONAL", Id=acl["Summary"]["Id"]
    )["WebACL"]
    assert {aggregation(rule) for rule in stored["Rules"]} == {
        "IP",
        ("Authorization",),
        ("X-Api-Key",),
    }
    assert template["Resources"]["RateLimitWebAcl"] == {
        key: value
        for key, value in package_fragment()["Resources"]["RateLimitWebAcl"].items()
        if key != "Condition"
    }  # one definition for both paths


def deployed_project(tmp_path: Path, rest_api: str) -> Path:
    """A project whose ``chalice deploy`` of stage prod recorded ``rest_api``."""
    (tmp_path / ".chalice" / "deployed").mkdir(parents=True)
    config = tmp_path / ".chalice" / "config.json"
    config.write_text(json.dumps({"stages": {"prod": {"api_gateway_stage": "api"}}}))
    record = {"resources": [{"resource_type": "rest_api", "rest_api_id": rest_api}]}
    (tmp_path / ".chalice" / "deployed" / "prod.json").write_text(json.dumps(record))
    return config


def test_make_deploy_throttles_the_deployed_stage(
    aws: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    config = deployed_project(tmp_path, aws["api"])
    main(["throttle", "--stage", "prod", "--config", str(config), "--rate", "20", "--burst", "40"])
    stage = aws["apigateway"].get_stage(restApiId=aws["api"], stageName="api")
    assert stage["methodSettings"]["*/*"]["throttlingRateLimit"] == 20.0
    assert stage["methodSettings"]["*/*"]["throttlingBurstLimit"] == 40
    main(["throttle", "--stage", "prod", "--config", str(config)])  # the defaults
    stage = aws["apigateway"].get_stage(restApiId=aws["api"], stageName="api")
    assert stage["methodSettings"]["*/*"]["throttlingRateLimit"] == rate_limits.DEFAULT_RATE_LIMIT
    assert stage["methodSettings"]["*/*"]["throttlingBurstLimit"] == 100


def test_make_deploy_names_the_api_the_waf_stack_guards(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = deployed_project(tmp_path, "a1b2c3")
    main(["waf-parameters", "--stage", "prod", "--config", str(config)])
    assert capsys.readouterr().out.split() == ["RestApiId=a1b2c3", "ApiStage=api"]


def test_the_waf_stack_passes_cfn_lint(tmp_path: Path) -> None:
    path = tmp_path / "waf.json"
    path.write_text(json.dumps(rate_limits.waf_stack()))
    lint = shutil.which("cfn-lint", path=str(REPO / ".venv" / "bin")) or "cfn-lint"
    done = subprocess.run([lint, str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def _resources_description(tmp_path: Path, outputs: dict[str, str]) -> Path:
    """A ``describe-stacks`` answer of the resources stack with ``outputs``."""
    path = tmp_path / "resources.json"
    listed = [{"OutputKey": key, "OutputValue": value} for key, value in outputs.items()]
    path.write_text(json.dumps({"Stacks": [{"Outputs": listed}]}))
    return path


def test_make_deploy_points_the_stage_at_its_access_log_and_stops_it_when_off(
    aws: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    config = deployed_project(tmp_path, aws["api"])
    arn = "arn:aws:logs:us-east-1:123456789012:log-group:/aws/apigateway/pinework-prod-access"
    on = _resources_description(
        tmp_path, {"ApiAccessLogs": "on", "ApiAccessLogGroupArn": arn, "ApiThrottleRateLimit": "30"}
    )
    main(["throttle", "--stage", "prod", "--config", str(config), "--stack", str(on)])
    stage = aws["apigateway"].get_stage(restApiId=aws["api"], stageName="api")
    assert stage["accessLogSettings"] == {
        "destinationArn": arn,
        "format": access_logs.FORMAT,
    }
    assert stage["methodSettings"]["*/*"]["throttlingRateLimit"] == 30.0  # still set
    off = _resources_description(tmp_path, {"ApiAccessLogs": "off", "ApiAccessLogGroupArn": "none"})
    main(["throttle", "--stage", "prod", "--config", str(config), "--stack", str(off)])
    stage = aws["apigateway"].get_stage(restApiId=aws["api"], stageName="api")
    assert not stage.get("accessLogSettings")
    main(["throttle", "--stage", "prod", "--config", str(config), "--stack", str(off)])  # again
    assert (
        not aws["apigateway"]
        .get_stage(restApiId=aws["api"], stageName="api")
        .get("accessLogSettings")
    )


def test_the_resources_stack_gives_make_deploy_the_access_log_setting() -> None:
    stack = resources_stack()
    outputs = stack["Outputs"]
    assert outputs["ApiAccessLogs"] == {"Value": {"Ref": "ApiAccessLogs"}}
    condition, arn, otherwise = outputs["ApiAccessLogGroupArn"]["Value"]["Fn::If"]
    assert condition == access_logs.ACCESS_LOGS_ON and otherwise == "none"
    assert arn == access_logs.LOG_GROUP_ARN
    assert stack["Parameters"]["ApiAccessLogs"]["Default"] == "off"
