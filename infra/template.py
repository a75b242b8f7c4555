"""The CloudFormation of both deploy paths, from one set of definitions:
``package_fragment()`` is merged into ``chalice package``'s SAM template (the table,
bucket, review queues, a log group and a least-privilege role per function, the
functions' names, roles and environment, the worker's event source, the gateway
responses, the stage throttle and the optional WAF web ACL); ``resources_stack()`` is
the same storage, queues, log groups and roles as a stack of their own for ``make
deploy`` (``infra/deploy.py``). No name or ARN is
fixed here: every one comes from the stack (``<stack>-memories``, ``<stack>-reviews``,
``Ref``/``Fn::GetAtt``/``Fn::Sub``). Usage: ``python -m infra.template package`` or
``python -m infra.template resources`` (``waf``: the web ACL stack of ``make deploy``,
``infra/rate_limits.py``). Choices:
docs/DECISIONS.md#packaging-cold-start-and-iam-issue-12-deploy-iam-gateway-errors-queued-reviews
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from chalicelib.settings import DEFAULT_BEDROCK_MODEL_ID, REVIEW_QUEUE_NAME
from infra import iam, observability, protection, rate_limits
from infra.gateway_responses import NOT_FOUND_BODY as NOT_FOUND_BODY
from infra.gateway_responses import sam_gateway_responses
from infra.parameters import CREATE_TABLE
from infra.tables import table_definition, time_to_live

INFERENCE_PROFILE_PREFIXES = ("global", "us", "eu", "apac", "jp", "au", "ca", "us-gov")
"""The first dot-separated part of a cross-region inference profile's id."""
PARAMETERS: dict[str, Any] = {
    "Reviewer": {
        "Type": "String",
        "AllowedValues": ["rules", "bedrock"],
        "Default": "rules",
        "Description": "The nightly review's judgement (PINEWORK_REVIEWER): rules or bedrock.",
    },
    "BedrockModelId": {
        "Type": "String",
        "MinLength": 1,
        "Default": DEFAULT_BEDROCK_MODEL_ID,
        "Description": "Model or inference profile id of the bedrock reviewer "
        "(PINEWORK_BEDROCK_MODEL_ID); only the review worker may invoke it.",
    },
    "LogRetentionDays": {
        "Type": "Number",
        "Default": 30,
        "AllowedValues": [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731],
        "Description": "Days the functions' CloudWatch logs are kept.",
    },
    **protection.PARAMETERS,
}
_MODEL_PREFIX = {"Fn::Select": [0, {"Fn::Split": [".", {"Ref": "BedrockModelId"}]}]}
CONDITIONS: dict[str, Any] = {
    iam.USE_BEDROCK: {"Fn::Equals": [{"Ref": "Reviewer"}, "bedrock"]},
    "BedrockModelIsProfile": {
        "Fn::Or": [{"Fn::Equals": [_MODEL_PREFIX, prefix]} for prefix in INFERENCE_PROFILE_PREFIXES]
    },
    iam.BEDROCK_MODEL: {
        "Fn::And": [
            {"Condition": iam.USE_BEDROCK},
            {"Fn::Not": [{"Condition": "BedrockModelIsProfile"}]},
        ]
    },
    iam.BEDROCK_PROFILE: {
        "Fn::And": [{"Condition": iam.USE_BEDROCK}, {"Condition": "BedrockModelIsProfile"}]
    },
    **protection.CONDITIONS,
}
"""Which Bedrock statements the review worker's role gets (``infra/iam.py``), and the
data protection and index level conditions (``infra/protection.py``)."""
CHALICE_FUNCTIONS = {
    "api_handler": "APIHandler",
    "review_fanout": "ReviewFanout",
    "review_worker": "ReviewWorker",
}
"""Chalice's function names -> the logical ids ``chalice package`` gives them."""


def storage_resources(queue_name: Any) -> dict[str, Any]:
    """The table (with its TTL; unless ``ExistingTableName`` names another), the bucket
    with its TLS-only policy, the review queues and the fan-out's failure queue, all kept
    when the stack is deleted or they are replaced (``infra/protection.py``), and the
    optional backup plan.

    Args:
        queue_name: a CloudFormation expression of the review queue's name.
    """
    definition = table_definition("unused")
    table = {
        "TableName": {"Fn::Sub": "${AWS::StackName}-memories"},
        "BillingMode": definition["BillingMode"],
        "KeySchema": definition["KeySchema"],
        **protection.table_properties(),
        "TimeToLiveSpecification": time_to_live(),
    }
    return {
        "MemoryTable": {
            "Type": "AWS::DynamoDB::Table",
            "Condition": CREATE_TABLE,
            **protection.RETAINED,
            "Properties": table,
        },
        "LargeObjectBucket": {
            "Type": "AWS::S3::Bucket",
            **protection.RETAINED,
            "Properties": bucket_properties(),
        },
        **protection.bucket_policy(),
        **review_queue_resources(queue_name),
        **protection.backup_resources(),
    }


def review_queue_resources(queue_name: Any) -> dict[str, Any]:
    """The review fan-out queue (docs/reference.md#9-review) with its dead-letter queue,
    and the fan-out's failure queue; all retained, encrypted (``infra/protection.py``)."""
    return {
        "ReviewDeadLetterQueue": {
            "Type": "AWS::SQS::Queue",
            **protection.RETAINED,
            "Properties": {
                "QueueName": {"Fn::Join": ["", [queue_name, "-dead"]]},
                "MessageRetentionPeriod": 1209600,
                **protection.queue_encryption(),
            },
        },
        "ReviewQueue": {
            "Type": "AWS::SQS::Queue",
            **protection.RETAINED,
            "Properties": {
                "QueueName": queue_name,
                # Six times the worker's 600 s timeout (.chalice/config.json; the
                # Bedrock reviewer may take ~20 s per agent, 10 agents a batch), as AWS
                # advises for Lambda sources; also longer than the review's 15-minute
                # claim lease, so a retry takes over the claim of a crashed review.
                "VisibilityTimeout": 3600,
                **protection.queue_encryption(),
                "RedrivePolicy": {
                    "deadLetterTargetArn": {"Fn::GetAtt": ["ReviewDeadLetterQueue", "Arn"]},
                    "maxReceiveCount": 5,
                },
            },
        },
        **protection.fanout_failure_queue(queue_name),
    }


def bucket_properties() -> dict[str, Any]:
    """The bucket (named by CloudFormation): private, encrypted (the customer-managed key
    when given), versioned, anonymous key-value values (``kv/anon/``) deleted two days
    after their write, when their 24-hour entry is long gone, and their old versions a
    day later; other old versions are kept ``protection.NONCURRENT_VERSION_DAYS``."""
    return {
        "PublicAccessBlockConfiguration": {
            "BlockPublicAcls": True,
            "BlockPublicPolicy": True,
            "IgnorePublicAcls": True,
            "RestrictPublicBuckets": True,
        },
        "BucketEncryption": protection.bucket_encryption(),
        "VersioningConfiguration": {"Status": "Enabled"},
        "LifecycleConfiguration": {
            "Rules": [
                {
                    "Id": "AnonymousKeyValueValues",
                    "Status": "Enabled",
                    "Prefix": "kv/anon/",
                    "ExpirationInDays": 2,
                    "NoncurrentVersionExpiration": {
                        "NoncurrentDays": protection.ANONYMOUS_NONCURRENT_DAYS
                    },
                },
                *protection.version_lifecycle_rules(),
                {
                    "Id": "AbortIncompleteUploads",
                    "Status": "Enabled",
                    "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1},
                },
            ]
        },
    }


def log_group_resources(function_names: dict[str, Any]) -> dict[str, Any]:
    """``<Function>LogGroup`` for every function, with the retention parameter; kept
    when the stack is deleted (the logs of an incident outlive a teardown).

    Args:
        function_names: Chalice's function name -> an expression of its Lambda name.
    """
    return {
        f"{iam.FUNCTIONS[function]}LogGroup": {
            "Type": "AWS::Logs::LogGroup",
            **protection.RETAINED,
            "Properties": {
                "LogGroupName": {"Fn::Join": ["", ["/aws/lambda/", name]]},
                "RetentionInDays": {"Ref": "LogRetentionDays"},
                **protection.log_group_encryption(),
            },
        }
        for function, name in function_names.items()
    }


def environment() -> dict[str, Any]:
    """The functions' environment variables that name the stack's resources."""
    return {
        "PINEWORK_TABLE_NAME": protection.TABLE_NAME,
        "PINEWORK_BUCKET_NAME": {"Ref": "LargeObjectBucket"},
        "PINEWORK_REVIEW_QUEUE_NAME": {"Fn::GetAtt": ["ReviewQueue", "QueueName"]},
        "PINEWORK_REVIEWER": {"Ref": "Reviewer"},
        "PINEWORK_BEDROCK_MODEL_ID": {"Ref": "BedrockModelId"},
    }


def package_fragment() -> dict[str, Any]:
    """What ``make package`` merges into Chalice's SAM template (see the module doc)."""
    names = {function: {"Fn::Sub": f"${{AWS::StackName}}-{function}"} for function in iam.FUNCTIONS}
    functions: dict[str, Any] = {
        CHALICE_FUNCTIONS[function]: {
            "DependsOn": [f"{iam.FUNCTIONS[function]}LogGroup"],
            "Properties": {
                "FunctionName": names[function],
                "Role": {"Fn::GetAtt": [f"{iam.FUNCTIONS[function]}Role", "Arn"]},
                "Environment": {"Variables": environment()},
            },
        }
        for function in iam.FUNCTIONS
    }
    worker = functions[CHALICE_FUNCTIONS["review_worker"]]["Properties"]
    worker["Events"] = {
        "ReviewWorkerSqsEventSource": {
            "Properties": {
                # Chalice writes {"Fn::Sub": "arn:…:<queue name>"}; a merge keeps the key
                # and replaces its value, so the ARN is given as a Fn::Sub too.
                "Queue": {"Fn::Sub": "${ReviewQueue.Arn}"},
                "FunctionResponseTypes": ["ReportBatchItemFailures"],
            }
        }
    }
    return {
        "Parameters": {
            **PARAMETERS,
            **rate_limits.package_parameters(),
            **observability.PARAMETERS,
        },
        "Conditions": {**CONDITIONS, **rate_limits.WAF_CONDITIONS, **observability.CONDITIONS},
        "Resources": {
            **storage_resources({"Fn::Sub": "${AWS::StackName}-reviews"}),
            **log_group_resources(names),
            **iam.role_resources(),
            **functions,
            # API Gateway's own answers in our envelope (SAM puts them in the API), and
            # the stage's throttle (infra/rate_limits.py).
            "RestAPI": {
                "Properties": {
                    "GatewayResponses": sam_gateway_responses(),
                    "MethodSettings": rate_limits.method_settings(),
                }
            },
            **rate_limits.package_resources(),  # the optional WAF web ACL
            **observability.resources(observability.stack_targets()),  # alarms, topic, dashboard
            **observability.fanout_failure_destination(
                {"Ref": "ReviewFanout"}, {"Fn::GetAtt": ["ReviewFanoutFailureQueue", "Arn"]}
            ),
        },
        "Outputs": {
            "TableName": {"Value": protection.TABLE_NAME},
            "BucketName": {"Value": {"Ref": "LargeObjectBucket"}},
            "ReviewQueueUrl": {"Value": {"Ref": "ReviewQueue"}},
            "ReviewDeadLetterQueueUrl": {"Value": {"Ref": "ReviewDeadLetterQueue"}},
            **protection.FANOUT_FAILURE_OUTPUTS,
        },
    }


def chalice_function_names() -> dict[str, Any]:
    """The Lambda names ``chalice deploy`` gives, from the ``ChaliceApp`` and
    ``ChaliceStage`` parameters: ``<app>-<stage>`` for the API handler,
    ``<app>-<stage>-<function>`` for the others."""
    return {
        function: {
            "Fn::Sub": "${ChaliceApp}-${ChaliceStage}"
            + ("" if function == "api_handler" else f"-{function}")
        }
        for function in iam.FUNCTIONS
    }


def resources_stack() -> dict[str, Any]:
    """The stack ``make deploy`` creates before ``chalice deploy`` (see the module doc)."""
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": "Pinework Memory: storage, queues and roles for chalice deploy",
        "Parameters": {
            **PARAMETERS,
            "ChaliceApp": {
                "Type": "String",
                "Default": "pinework",
                "Description": "app_name in .chalice/config.json (names the functions).",
            },
            "ChaliceStage": {
                "Type": "String",
                "AllowedPattern": "[A-Za-z0-9_-]+",
                "Description": "The Chalice stage deployed with these resources (names the "
                "functions and their log groups).",
            },
            "ReviewQueueName": {
                "Type": "String",
                "Default": REVIEW_QUEUE_NAME,
                "AllowedValues": [REVIEW_QUEUE_NAME],
                "Description": "The queue app.py's @app.on_sqs_message names (Chalice needs "
                "it when deploying).",
            },
        },
        "Conditions": CONDITIONS,
        "Resources": {
            **storage_resources({"Ref": "ReviewQueueName"}),
            **log_group_resources(chalice_function_names()),
            **iam.role_resources(),
        },
        "Outputs": {
            "TableName": {"Value": protection.TABLE_NAME},
            "BucketName": {"Value": {"Ref": "LargeObjectBucket"}},
            "ReviewQueueName": {"Value": {"Fn::GetAtt": ["ReviewQueue", "QueueName"]}},
            "Reviewer": {"Value": {"Ref": "Reviewer"}},
            "BedrockModelId": {"Value": {"Ref": "BedrockModelId"}},
            "ChaliceStage": {"Value": {"Ref": "ChaliceStage"}},
            **protection.FANOUT_FAILURE_OUTPUTS,
            **{
                f"{prefix}RoleArn": {"Value": {"Fn::GetAtt": [f"{prefix}Role", "Arn"]}}
                for prefix in iam.FUNCTIONS.values()
            },
        },
    }


def main(arguments: list[str] | None = None) -> None:
    """Print one of the two templates as JSON."""
    parser = argparse.ArgumentParser(description="Print a CloudFormation template.")
    parser.add_argument("kind", choices=["package", "resources", "waf", "operations"])
    parsed = parser.parse_args(arguments)
    template = {
        "package": package_fragment,
        "resources": resources_stack,
        "waf": rate_limits.waf_stack,
        "operations": observability.operations_stack,
    }[parsed.kind]()
    json.dump(template, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
