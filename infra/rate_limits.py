"""Rate limits where AWS gives them (docs/reference.md#14-operations).

Two layers in front of the functions. API Gateway's stage throttle (every route and
method of the stage: ``ApiThrottleRateLimit`` requests a second, ``ApiThrottleBurstLimit``
at once) answers 429 ``THROTTLED``, which ``infra/gateway_responses.py`` puts in the
envelope with ``Retry-After``. An optional AWS WAF web ACL (``WafRateLimiting=on``)
counts requests over a trailing five minutes by source IP, by ``Authorization`` and by
``X-Api-Key``, and blocks a key over its limit with the same 429 ``rate_limited``
envelope. ``make package`` puts both in the template (``package_fragment``);
``make deploy``, where Chalice creates the API, sets the stage throttle with
``put_stage_throttling`` and deploys ``waf_stack()`` as a stack of its own after
``chalice deploy``. Choices:
docs/DECISIONS.md#rate-limits-where-aws-gives-them-issue-21-item-5
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from chalicelib.errors import STATUS_BY_CODE, RateLimited
from infra.parameters import checkov_skips

if TYPE_CHECKING:
    from mypy_boto3_apigateway import APIGatewayClient

DEFAULT_RATE_LIMIT = 50
"""Requests a second the stage passes on, all clients together (``ApiThrottleRateLimit``)."""
DEFAULT_BURST_LIMIT = 100
"""Requests the stage passes at once above the rate (``ApiThrottleBurstLimit``)."""
DEFAULT_WAF_IP_LIMIT = 3000
"""Requests one source IP may send in five minutes (``WafIpLimit``; 10 a second)."""
DEFAULT_WAF_CREDENTIAL_LIMIT = 1500
"""Requests one ``Authorization`` or ``X-Api-Key`` value may send in five minutes
(``WafCredentialLimit``; 5 a second)."""
WAF_WINDOW_SECONDS = 300
"""The trailing window WAF counts requests in."""
WAF_RETRY_AFTER_SECONDS = 60
"""``Retry-After`` of a WAF block: a key stays blocked until its count over the window
falls under the limit, so retrying after one second (the stage throttle's) would only
be blocked again."""
WEB_ACL_NAME = "${AWS::StackName}-rate-limits"
"""The web ACL's name and metric name (``Fn::Sub``; the WAF alarm's ``WebACL``)."""
WAF_CONDITION = "WafRateLimitingOn"
"""The condition the web ACL and its association are created under (package template)."""
RATE_LIMITED_BODY_KEY = "rate_limited"
"""The key of the envelope in the web ACL's ``CustomResponseBodies``."""
RATE_LIMITED_MESSAGE = (
    "Too many requests from this address or credential; retry after Retry-After seconds."
)
CREDENTIAL_HEADERS = ("Authorization", "X-Api-Key")
"""The headers a credential rule counts by, one rule each (a request without the
header is not counted by its rule, only by the IP rule)."""

THROTTLE_PARAMETERS: dict[str, Any] = {
    "ApiThrottleRateLimit": {
        "Type": "Number",
        "MinValue": 1,
        "Default": DEFAULT_RATE_LIMIT,
        "Description": "Requests a second the API stage passes on, all clients together; "
        "more are answered 429 rate_limited.",
    },
    "ApiThrottleBurstLimit": {
        "Type": "Number",
        "MinValue": 1,
        "Default": DEFAULT_BURST_LIMIT,
        "Description": "Requests the API stage passes at once above the rate (token bucket).",
    },
}
"""The stage throttle's parameters (package template)."""
WAF_LIMIT_PARAMETERS: dict[str, Any] = {
    "WafIpLimit": {
        "Type": "Number",
        "MinValue": 10,
        "Default": DEFAULT_WAF_IP_LIMIT,
        "Description": "Requests one source IP may send in 5 minutes (WAF rate-based rule).",
    },
    "WafCredentialLimit": {
        "Type": "Number",
        "MinValue": 10,
        "Default": DEFAULT_WAF_CREDENTIAL_LIMIT,
        "Description": "Requests one Authorization or X-Api-Key value may send in 5 minutes.",
    },
}
"""The web ACL's limits (both templates that hold it)."""
WAF_SWITCH_PARAMETER: dict[str, Any] = {
    "WafRateLimiting": {
        "Type": "String",
        "AllowedValues": ["off", "on"],
        "Default": "off",
        "Description": "on: an AWS WAF web ACL with per-IP and per-credential rate limits "
        "in front of the API stage (WAF is billed per web ACL, rule and request).",
    },
}
WAF_CONDITIONS: dict[str, Any] = {
    WAF_CONDITION: {"Fn::Equals": [{"Ref": "WafRateLimiting"}, "on"]},
}


def package_parameters() -> dict[str, Any]:
    """The parameters the package template gains: throttle, WAF switch, WAF limits."""
    return {**THROTTLE_PARAMETERS, **WAF_SWITCH_PARAMETER, **WAF_LIMIT_PARAMETERS}


def method_settings() -> list[dict[str, Any]]:
    """The ``MethodSettings`` of the API's stage: the throttle parameters on every
    resource and method."""
    return [
        {
            "ResourcePath": "/*",
            "HttpMethod": "*",
            "ThrottlingRateLimit": {"Ref": "ApiThrottleRateLimit"},
            "ThrottlingBurstLimit": {"Ref": "ApiThrottleBurstLimit"},
        }
    ]


def rate_limited_body() -> str:
    """The body of a WAF block: the envelope the app's own ``rate_limited`` answers
    carry (``chalicelib.api.http.error_response``)."""
    error = RateLimited(RATE_LIMITED_MESSAGE, WAF_RETRY_AFTER_SECONDS)
    return json.dumps(
        {"error": {"code": error.code, "message": error.message}},
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _block_over_limit() -> dict[str, Any]:
    """A rule action: block with 429, the envelope and ``Retry-After``."""
    return {
        "Block": {
            "CustomResponse": {
                "ResponseCode": STATUS_BY_CODE[RateLimited.code],
                "CustomResponseBodyKey": RATE_LIMITED_BODY_KEY,
                "ResponseHeaders": [{"Name": "Retry-After", "Value": str(WAF_RETRY_AFTER_SECONDS)}],
            }
        }
    }


def _visibility(metric: str) -> dict[str, Any]:
    """CloudWatch metrics and sampled requests under ``<stack>-<metric>``."""
    return {
        "SampledRequestsEnabled": True,
        "CloudWatchMetricsEnabled": True,
        "MetricName": {"Fn::Sub": f"${{AWS::StackName}}-{metric}"},
    }


def rate_based_rule(name: str, priority: int, limit: str, key: dict[str, Any]) -> dict[str, Any]:
    """One rate-based rule of the web ACL.

    Args:
        name: the rule's name (and its metric's suffix).
        priority: its place in the web ACL (lowest first).
        limit: the parameter holding its limit per ``WAF_WINDOW_SECONDS``.
        key: the rate-based statement's aggregation (``AggregateKeyType`` and
            ``CustomKeys``).
    """
    statement = {"Limit": {"Ref": limit}, "EvaluationWindowSec": WAF_WINDOW_SECONDS, **key}
    return {
        "Name": name,
        "Priority": priority,
        "Statement": {"RateBasedStatement": statement},
        "Action": _block_over_limit(),
        "VisibilityConfig": _visibility(name),
    }


def _header_key(header: str) -> dict[str, Any]:
    """Aggregate by one header's exact value (a credential is case-sensitive)."""
    transformations = [{"Priority": 0, "Type": "NONE"}]
    return {
        "AggregateKeyType": "CUSTOM_KEYS",
        "CustomKeys": [{"Header": {"Name": header, "TextTransformations": transformations}}],
    }


def rules() -> list[dict[str, Any]]:
    """The per-IP rule, then one per credential header."""
    by_ip = rate_based_rule("per-ip", 0, "WafIpLimit", {"AggregateKeyType": "IP"})
    by_credential = [
        rate_based_rule(
            f"per-{header.lower()}", priority, "WafCredentialLimit", _header_key(header)
        )
        for priority, header in enumerate(CREDENTIAL_HEADERS, start=1)
    ]
    return [by_ip, *by_credential]


def web_acl() -> dict[str, Any]:
    """The ``AWS::WAFv2::WebACL`` (REGIONAL, as API Gateway stages need): allow what no
    rule blocks."""
    return {
        "Type": "AWS::WAFv2::WebACL",
        # checkov's finding that stands (make package runs it), and why
        "Metadata": checkov_skips(
            [
                (
                    "CKV_AWS_192",
                    "The web ACL only rate-limits; the API runs Python, no Java or Log4j, "
                    "and AWS's managed rule groups are billed per ACL.",
                )
            ]
        ),
        "Properties": {
            "Name": {"Fn::Sub": WEB_ACL_NAME},
            "Scope": "REGIONAL",
            "Description": "Pinework Memory: per-IP and per-credential rate limits",
            "DefaultAction": {"Allow": {}},
            "Rules": rules(),
            "CustomResponseBodies": {
                RATE_LIMITED_BODY_KEY: {
                    "ContentType": "APPLICATION_JSON",
                    "Content": rate_limited_body(),
                }
            },
            "VisibilityConfig": {
                **_visibility("rate-limits"),
                "MetricName": {"Fn::Sub": WEB_ACL_NAME},
            },
        },
    }


def web_acl_association(rest_api: str, stage: str) -> dict[str, Any]:
    """The ``AWS::WAFv2::WebACLAssociation`` of ``RateLimitWebAcl`` with an API stage.

    Args:
        rest_api: what names the REST API's id in ``Fn::Sub`` (``RestAPI``, ``RestApiId``).
        stage: what names its stage in ``Fn::Sub`` (``RestAPI.Stage``, ``ApiStage``).
    """
    arn = f"arn:${{AWS::Partition}}:apigateway:${{AWS::Region}}::/restapis/${{{rest_api}}}"
    return {
        "Type": "AWS::WAFv2::WebACLAssociation",
        "Properties": {
            "ResourceArn": {"Fn::Sub": f"{arn}/stages/${{{stage}}}"},
            "WebACLArn": {"Fn::GetAtt": ["RateLimitWebAcl", "Arn"]},
        },
    }


def package_resources() -> dict[str, Any]:
    """The web ACL and its association with ``chalice package``'s ``RestAPI`` stage,
    both only under ``WafRateLimitingOn``."""
    conditioned = {"Condition": WAF_CONDITION}
    return {
        "RateLimitWebAcl": {**web_acl(), **conditioned},
        "RateLimitWebAclAssociation": {
            **web_acl_association("RestAPI", "RestAPI.Stage"),
            **conditioned,
        },
    }


def waf_stack() -> dict[str, Any]:
    """The stack ``make deploy`` puts in front of the API ``chalice deploy`` created
    (deployed only with ``WAF_RATE_LIMITING=on``; deleted otherwise)."""
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": "Pinework Memory: WAF rate limits in front of the chalice deploy API",
        "Parameters": {
            "RestApiId": {
                "Type": "String",
                "AllowedPattern": "[a-z0-9]+",
                "Description": "The REST API chalice deploy created (python -m infra.deploy "
                "waf-parameters reads it from .chalice/deployed).",
            },
            "ApiStage": {
                "Type": "String",
                "AllowedPattern": "[A-Za-z0-9_-]+",
                "Description": "Its stage (api_gateway_stage in .chalice/config.json).",
            },
            **WAF_LIMIT_PARAMETERS,
        },
        "Resources": {
            "RateLimitWebAcl": web_acl(),
            "RateLimitWebAclAssociation": web_acl_association("RestApiId", "ApiStage"),
        },
        "Outputs": {"WebAclArn": {"Value": {"Fn::GetAtt": ["RateLimitWebAcl", "Arn"]}}},
    }


def put_stage_throttling(
    apigateway: APIGatewayClient, rest_api_id: str, stage: str, rate: float, burst: int
) -> None:
    """Set the default method throttle of a deployed stage (``make deploy``; stage
    settings apply at once and outlast later deployments).

    Args:
        apigateway: a boto3 ``apigateway`` client.
        rest_api_id: the API's id (``chalice deploy`` records it).
        stage: the API Gateway stage (``api_gateway_stage``).
        rate: requests a second, all clients together.
        burst: requests at once above the rate.
    """
    apigateway.update_stage(
        restApiId=rest_api_id,
        stageName=stage,
        patchOperations=[
            {"op": "replace", "path": "/*/*/throttling/rateLimit", "value": str(rate)},
            {"op": "replace", "path": "/*/*/throttling/burstLimit", "value": str(burst)},
        ],
    )
