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
from pathlib import Path
from typing import Any

from chalicelib.release import RELEASE
from chalicelib.settings import (
    DEFAULT_BEDROCK_MODEL_ID,
    DEFAULT_REVIEW_RETENTION_DAYS,
    DEFAULT_REVIEW_WORKER_MAX_CONCURRENCY,
    LIFECYCLE_WORKER_MAX_CONCURRENCY,
)
from chalicelib.storage.keys import EXPORT_KEPT_DAYS, EXPORT_OBJECT_PREFIX
from infra import access_logs, iam, observability, protection, rate_limits, stage_settings
from infra.gateway_responses import NOT_FOUND_BODY as NOT_FOUND_BODY
from infra.gateway_responses import sam_gateway_responses
from infra.parameters import CREATE_TABLE, checkov_skips
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
    "lifecycle_worker": "LifecycleWorker",
}
"""Chalice's function names -> the logical ids ``chalice package`` gives them."""
ONE_STACK_FUNCTION_NAMES = {
    "api_handler": "${AWS::StackName}-api",
    "review_fanout": "${AWS::StackName}-review-fanout",
    "review_worker": "${AWS::StackName}-review-worker",
    "lifecycle_worker": "${AWS::StackName}-lifecycle-worker",
}
"""The Lambda names of ``make deploy-cloudformation`` (``Fn::Sub``): never one a Chalice
stage of the same name gives (``<app>-<stage>-review_fanout``), so a stack and a stage
called alike claim no function or log group of each other. Keep the stack name at most
50 characters (Lambda names stop at 64)."""
FUNCTION_TIMEOUTS = observability.TIMEOUT_SECONDS
"""Seconds each function may run, in both paths (the duration alarms read the same
table): the API's ends before API Gateway's 29 s integration timeout; the fan-out's is
sized to the number of agents and the worker's to a batch of Bedrock reviews
(docs/operations.md#deploy; measured in docs/DECISIONS.md, "Deploy paths, limits and
rollback")."""
ALIAS = "live"
"""The alias SAM publishes each function's versions under in the one-stack path
(``AutoPublishAlias``); API Gateway, the schedule and the queue trigger call it."""
API_RESERVED_CONCURRENCY = "ApiReservedConcurrency"
REVIEW_WORKER_MAX_CONCURRENCY = "ReviewWorkerMaxConcurrency"
LIMIT_PARAMETERS: dict[str, Any] = {
    API_RESERVED_CONCURRENCY: {
        "Type": "String",
        "Default": "",
        "AllowedPattern": "^$|^[1-9][0-9]{0,4}$",
        "Description": "Concurrent executions reserved for the API function (also its "
        "ceiling); empty: none reserved. Lambda refuses a reservation that leaves the "
        "account fewer than 100 unreserved.",
    },
    REVIEW_WORKER_MAX_CONCURRENCY: {
        "Type": "Number",
        "Default": DEFAULT_REVIEW_WORKER_MAX_CONCURRENCY,
        "MinValue": 2,
        "MaxValue": 1000,
        "Description": "Most review workers the review queue's trigger runs at once "
        "(SQS ScalingConfig.MaximumConcurrency, 2 to 1000).",
    },
}
"""The one-stack path's concurrency limits (docs/operations.md#deploy)."""
LIMIT_CONDITIONS: dict[str, Any] = {
    "ApiConcurrencyReserved": {
        "Fn::Not": [{"Fn::Equals": [{"Ref": API_RESERVED_CONCURRENCY}, ""]}]
    },
}
_NO_VPC = (
    "CKV_AWS_117",
    "No VPC: the functions reach only DynamoDB, S3, SQS and Bedrock, over their AWS "
    "endpoints with IAM; a VPC would add NAT or endpoints and nothing to protect.",
)
_ENVIRONMENT_KEY = (
    "CKV_AWS_173",
    "The environment holds resource names only, never a secret; Lambda encrypts it at "
    "rest with its AWS-managed key.",
)
FUNCTION_CHECKOV_SKIPS: dict[str, list[tuple[str, str]]] = {
    "api_handler": [
        _NO_VPC,
        _ENVIRONMENT_KEY,
        (
            "CKV_AWS_116",
            "Invoked synchronously by API Gateway: a dead-letter queue only applies to "
            "asynchronous invocations.",
        ),
        (
            "CKV_AWS_115",
            "Reserved concurrency is the ApiReservedConcurrency parameter, empty by "
            "default: Lambda refuses any reservation in accounts under 100 + its size "
            "(new accounts have 10); docs/operations.md#deploy.",
        ),
    ],
    "review_fanout": [
        _NO_VPC,
        _ENVIRONMENT_KEY,
        (
            "CKV_AWS_116",
            "Its failed asynchronous invocations go to the fan-out failure queue through "
            "an EventInvokeConfig OnFailure destination (with an alarm), not a DLQ.",
        ),
        (
            "CKV_AWS_115",
            "One scheduled invocation a day (and EventBridge's retries); a reservation "
            "would only cost accounts with low limits their deploy.",
        ),
    ],
    "review_worker": [
        _NO_VPC,
        _ENVIRONMENT_KEY,
        (
            "CKV_AWS_116",
            "Invoked by its SQS trigger: failed messages go to the review queue's "
            "dead-letter queue (redrive policy), which is alarmed.",
        ),
        (
            "CKV_AWS_115",
            "Its concurrency is capped on the trigger (ReviewWorkerMaxConcurrency, "
            "ScalingConfig.MaximumConcurrency), which, unlike a reservation, never "
            "throttles messages back into the queue.",
        ),
    ],
    "lifecycle_worker": [
        _NO_VPC,
        _ENVIRONMENT_KEY,
        (
            "CKV_AWS_116",
            "Invoked by its SQS trigger: failed messages go to the lifecycle queue's "
            "dead-letter queue (redrive policy), which is alarmed.",
        ),
        (
            "CKV_AWS_115",
            "Its concurrency is capped on the trigger (ScalingConfig.MaximumConcurrency "
            "2, LIFECYCLE_WORKER_MAX_CONCURRENCY), which, unlike a reservation, never "
            "throttles messages back into the queue.",
        ),
    ],
}
"""checkov's findings on the functions that stand, and why (docs/DECISIONS.md)."""
API_CHECKOV_SKIPS = [
    (
        "CKV_AWS_73",
        "X-Ray is off by default (PINEWORK_TRACING=on turns on the functions' tracing).",
    ),
    (
        "CKV_AWS_76",
        "The access log is the ApiAccessLogs parameter, off by default: it needs the "
        "account-wide API Gateway CloudWatch role, which a stack should not change; the "
        "API function writes one 'request' log line per request either way.",
    ),
    (
        "CKV_AWS_120",
        "No cache: every answer depends on the caller's credential and on data that "
        "changes with each write.",
    ),
]
"""checkov's findings on the REST API that stand, and why."""


TABLE_CHECKOV_SKIPS = [
    (
        "CKV_AWS_119",
        "Encrypted at rest either way: with DynamoDB's AWS-managed key aws/dynamodb by "
        "default (no key of ours to keep or lose), with the operator's customer-managed key "
        "when KmsKeyArn is set (docs/operations.md#data-protection-backup-and-restore).",
    )
]
"""checkov's findings on the table that stand, and why."""
BUCKET_CHECKOV_SKIPS = [
    (
        "CKV_AWS_18",
        "No server access logs: the bucket holds only the functions' own objects (review "
        "reports, large key-value values) written under their roles, every request is in "
        "the functions' logs, and a log bucket would be one more retained bucket to run; "
        "CloudTrail S3 data events give object-level audit where a company needs it "
        "(docs/operations.md#data-protection-backup-and-restore).",
    )
]
"""checkov's findings on the bucket that stand, and why."""
HASH_SECRET_CHECKOV_SKIPS = [
    (
        "CKV_AWS_149",
        "Encrypted with Secrets Manager's AWS-managed key: only the API function's role "
        "may read it (GetSecretValue on this ARN alone), and a customer key would add a "
        "KMS grant to every deploy without narrowing who reads it "
        "(docs/reference.md#keyed-hashes-of-personal-data).",
    )
]
"""checkov's findings on the hash secret that stand, and why."""


def storage_resources(queue_name: Any) -> dict[str, Any]:
    """The table (with its TTL; unless ``ExistingTableName`` names another), the bucket
    with its TLS-only policy, the review queues, the lifecycle queues
    (``<stack>-lifecycle``) and the fan-out's failure queue, all kept
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
        "OnDemandThroughput": stage_settings.on_demand_throughput(),
    }
    return {
        "MemoryTable": {
            "Type": "AWS::DynamoDB::Table",
            "Condition": CREATE_TABLE,
            **protection.RETAINED,
            "Metadata": checkov_skips(TABLE_CHECKOV_SKIPS),
            "Properties": table,
        },
        "LargeObjectBucket": {
            "Type": "AWS::S3::Bucket",
            **protection.RETAINED,
            "Metadata": checkov_skips(BUCKET_CHECKOV_SKIPS),
            "Properties": bucket_properties(),
        },
        **protection.bucket_policy(),
        # The keyed digests' secret (docs/reference.md#keyed-hashes-of-personal-data): made
        # here, never shown; kept with the table, whose e-mail claims it keys.
        "HashSecret": {
            "Type": "AWS::SecretsManager::Secret",
            **protection.RETAINED,
            "Metadata": checkov_skips(HASH_SECRET_CHECKOV_SKIPS),
            "Properties": {
                "Description": {
                    "Fn::Sub": "Pinework ${AWS::StackName}: keyed digests of personal data"
                },
                "GenerateSecretString": {
                    "SecretStringTemplate": '{"previous": []}',
                    "GenerateStringKey": "current",
                    "PasswordLength": 64,
                    "ExcludePunctuation": True,
                },
            },
        },
        **review_queue_resources(queue_name),
        **lifecycle_queue_resources({"Fn::Sub": "${AWS::StackName}-lifecycle"}),
        **protection.backup_resources(),
    }


def review_queue_resources(queue_name: Any) -> dict[str, Any]:
    """The review fan-out queue (docs/reference.md#9-review) with its dead-letter queue,
    and the fan-out's failure queue; all retained, encrypted (``infra/protection.py``)."""
    return {
        **_worker_queue("Review", queue_name),
        **protection.fanout_failure_queue(queue_name),
    }


def lifecycle_queue_resources(queue_name: Any) -> dict[str, Any]:
    """The queue of a person's erasures and exports (docs/reference.md#the-lifecycle-queue)
    with its dead-letter queue, under the review queue's rules; retained, encrypted."""
    return _worker_queue("Lifecycle", queue_name)


def _worker_queue(prefix: str, queue_name: Any) -> dict[str, Any]:
    """``<prefix>Queue`` and ``<prefix>DeadLetterQueue`` (its name adds ``-dead``)."""
    return {
        f"{prefix}DeadLetterQueue": {
            "Type": "AWS::SQS::Queue",
            **protection.RETAINED,
            "Properties": {
                "QueueName": {"Fn::Join": ["", [queue_name, "-dead"]]},
                "MessageRetentionPeriod": 1209600,
                **protection.queue_encryption(),
            },
        },
        f"{prefix}Queue": {
            "Type": "AWS::SQS::Queue",
            **protection.RETAINED,
            "Properties": {
                "QueueName": queue_name,
                # Six times the workers' 600 s timeout (.chalice/config.json; the
                # Bedrock reviewer may take ~20 s per agent, 10 agents a batch), as AWS
                # advises for Lambda sources; also longer than the review's 15-minute
                # claim lease (the worker itself runs at most 600 s), so a retry takes
                # over the claim of a crashed review or erasure.
                "VisibilityTimeout": 3600,
                # SQS's most (not its 4-day default): a night's reviews, an erasure or an
                # export outlast an outage of the worker; QUEUE_WAIT_BOUND assumes it.
                "MessageRetentionPeriod": 1209600,
                **protection.queue_encryption(),
                "RedrivePolicy": {
                    "deadLetterTargetArn": {"Fn::GetAtt": [f"{prefix}DeadLetterQueue", "Arn"]},
                    "maxReceiveCount": 5,
                },
            },
        },
    }


def bucket_properties() -> dict[str, Any]:
    """The bucket (named by CloudFormation): private, encrypted (the customer-managed key
    when given), versioned, anonymous key-value values (``kv/anon/``) deleted two days
    after their write, when their 24-hour entry is long gone, and their old versions a
    day later; review reports (``reviews/``) deleted ``DEFAULT_REVIEW_RETENTION_DAYS``
    after their last write and their old versions a day later (docs/reference.md#retention:
    fixed, not a parameter; an operator who changes ``PINEWORK_REVIEW_RETENTION_DAYS``
    changes this rule too); a person's exports (``exports/``) deleted 7 days after their
    write; other old versions are kept
    ``protection.NONCURRENT_VERSION_DAYS``."""
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
                {
                    # Reads refuse a review past PINEWORK_REVIEW_RETENTION_DAYS at once;
                    # this removes its report (and a dry run's) from the bucket.
                    "Id": "ReviewReports",
                    "Status": "Enabled",
                    "Prefix": "reviews/",
                    "ExpirationInDays": DEFAULT_REVIEW_RETENTION_DAYS,
                    "NoncurrentVersionExpiration": {"NoncurrentDays": 1},
                },
                {
                    # A person's export files (docs/reference.md#exports-for-a-person): 7 days,
                    # as their records; older versions (rewritten by a retry) a day later.
                    "Id": "Exports",
                    "Status": "Enabled",
                    "Prefix": EXPORT_OBJECT_PREFIX,
                    "ExpirationInDays": EXPORT_KEPT_DAYS,
                    "NoncurrentVersionExpiration": {"NoncurrentDays": 1},
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
        "PINEWORK_LIFECYCLE_QUEUE_NAME": {"Fn::GetAtt": ["LifecycleQueue", "QueueName"]},
        "PINEWORK_REVIEWER": {"Ref": "Reviewer"},
        "PINEWORK_BEDROCK_MODEL_ID": {"Ref": "BedrockModelId"},
        "PINEWORK_METRICS_NAMESPACE": {"Fn::Sub": "Pinework/${AWS::StackName}"},
        "PINEWORK_HASH_SECRET_ARN": {"Ref": "HashSecret"},
        **stage_settings.kv_environment(),
        # What runs (docs/operations.md#releases): the index steps read it.
        "PINEWORK_RELEASE": RELEASE,
    }


def package_fragment() -> dict[str, Any]:
    """What ``make package`` merges into Chalice's SAM template (see the module doc);
    ``finalize`` then points the API's integration at the ``live`` alias."""
    names = {
        function: {"Fn::Sub": ONE_STACK_FUNCTION_NAMES[function]} for function in iam.FUNCTIONS
    }
    functions: dict[str, Any] = {
        CHALICE_FUNCTIONS[function]: {
            "DependsOn": [f"{iam.FUNCTIONS[function]}LogGroup"],
            "Metadata": checkov_skips(FUNCTION_CHECKOV_SKIPS[function]),
            "Properties": {
                "FunctionName": names[function],
                "Role": {"Fn::GetAtt": [f"{iam.FUNCTIONS[function]}Role", "Arn"]},
                "Environment": {"Variables": environment()},
                "Timeout": FUNCTION_TIMEOUTS[function],
                "AutoPublishAlias": ALIAS,
            },
        }
        for function in iam.FUNCTIONS
    }
    api = functions[CHALICE_FUNCTIONS["api_handler"]]["Properties"]
    api["ReservedConcurrentExecutions"] = {
        "Fn::If": [
            "ApiConcurrencyReserved",
            {"Ref": API_RESERVED_CONCURRENCY},
            {"Ref": "AWS::NoValue"},
        ]
    }
    for function, queue, cap in (
        ("review_worker", "ReviewQueue", {"Ref": REVIEW_WORKER_MAX_CONCURRENCY}),
        ("lifecycle_worker", "LifecycleQueue", LIFECYCLE_WORKER_MAX_CONCURRENCY),
    ):
        logical_id = CHALICE_FUNCTIONS[function]
        functions[logical_id]["Properties"]["Events"] = {
            f"{logical_id}SqsEventSource": {
                "Properties": {
                    # Chalice writes {"Fn::Sub": "arn:…:<queue name>"}; a merge keeps the
                    # key and replaces its value, so the ARN is given as a Fn::Sub too.
                    "Queue": {"Fn::Sub": f"${{{queue}.Arn}}"},
                    "FunctionResponseTypes": ["ReportBatchItemFailures"],
                    "ScalingConfig": {"MaximumConcurrency": cap},
                }
            }
        }
    fragment: dict[str, Any] = {
        "Parameters": {
            **PARAMETERS,
            **stage_settings.parameters(),
            **LIMIT_PARAMETERS,
            **rate_limits.package_parameters(),
            **access_logs.PARAMETERS,
            **observability.PARAMETERS,
        },
        "Conditions": {
            **CONDITIONS,
            **stage_settings.conditions(),
            **LIMIT_CONDITIONS,
            **rate_limits.WAF_CONDITIONS,
            **access_logs.CONDITIONS,
            **observability.CONDITIONS,
        },
        "Resources": {
            **storage_resources({"Fn::Sub": "${AWS::StackName}-reviews"}),
            **log_group_resources(names),
            **iam.role_resources(),
            **functions,
            # API Gateway's own answers in our envelope (SAM puts them in the API), the
            # stage's throttle (infra/rate_limits.py), and the stack's name as the API's
            # (API Gateway's metrics know an API by name and stage only).
            "RestAPI": {
                "Metadata": checkov_skips(API_CHECKOV_SKIPS),
                "Properties": {
                    "Name": {"Ref": "AWS::StackName"},
                    "GatewayResponses": sam_gateway_responses(),
                    "MethodSettings": rate_limits.method_settings(),
                    "AccessLogSetting": access_logs.stage_setting(),
                },
            },
            **rate_limits.package_resources(),  # the optional WAF web ACL
            # the optional access log, which counts the stage throttle's 429s
            **access_logs.resources({"Fn::Sub": "Pinework/${AWS::StackName}"}),
            **observability.resources(observability.stack_targets()),  # alarms, topic, dashboard
            # The schedule invokes the fan-out's alias, so its failures are configured there.
            **_fanout_destination_on_alias(),
        },
        "Outputs": {
            "TableName": {"Value": protection.TABLE_NAME},
            "BucketName": {"Value": {"Ref": "LargeObjectBucket"}},
            "HashSecretArn": {"Value": {"Ref": "HashSecret"}},
            "ReviewQueueUrl": {"Value": {"Ref": "ReviewQueue"}},
            "ReviewDeadLetterQueueUrl": {"Value": {"Ref": "ReviewDeadLetterQueue"}},
            "LifecycleQueueUrl": {"Value": {"Ref": "LifecycleQueue"}},
            "LifecycleDeadLetterQueueUrl": {"Value": {"Ref": "LifecycleDeadLetterQueue"}},
            **protection.FANOUT_FAILURE_OUTPUTS,
            "ApiName": {"Value": {"Ref": "AWS::StackName"}},
            "MetricsNamespace": {"Value": {"Fn::Sub": "Pinework/${AWS::StackName}"}},
        },
    }
    return fragment


_FUNCTION_ARN = "${APIHandler.Arn}"
_FUNCTION_ALIAS = "${APIHandlerAlias" + ALIAS + "}"


def finalize(template: dict[str, Any]) -> dict[str, Any]:
    """Chalice's merged SAM template with the REST API calling the API function's
    ``live`` alias: every integration ``uri`` of the swagger body and the invoke
    permission name ``APIHandler.Alias`` (SAM's reference to the alias
    ``AutoPublishAlias`` makes) instead of the function itself, and the swagger's
    ``info.title`` is the stack's name (as ``RestAPI``'s ``Name``). The schedule and the
    queue trigger, declared on the functions, target the alias through SAM already.

    Raises:
        ValueError: the template has no integration or no permission to rewrite (a
            chalice version that writes them otherwise).
    """
    done: dict[str, Any] = json.loads(json.dumps(template))
    resources = done["Resources"]
    body = resources["RestAPI"]["Properties"]["DefinitionBody"]
    rewritten = 0
    for methods in body.get("paths", {}).values():
        for method in methods.values():
            integration = (
                method.get("x-amazon-apigateway-integration", {})
                if isinstance(method, dict)
                else {}
            )
            uri = integration.get("uri", {})
            if isinstance(uri, dict) and _FUNCTION_ARN in str(uri.get("Fn::Sub", "")):
                uri["Fn::Sub"] = uri["Fn::Sub"].replace(_FUNCTION_ARN, _FUNCTION_ALIAS)
                rewritten += 1
    permission = resources.get("APIHandlerInvokePermission", {}).get("Properties", {})
    if not rewritten or permission.get("FunctionName") != {"Ref": "APIHandler"}:
        raise ValueError("no API integration or invoke permission of APIHandler to point at")
    permission["FunctionName"] = {"Ref": f"APIHandlerAlias{ALIAS}"}
    body.setdefault("info", {})["title"] = {"Ref": "AWS::StackName"}
    return done


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


NAMESPACE = "Pinework/${ChaliceApp}-${ChaliceStage}"
"""The chalice stage's metric namespace (``Fn::Sub`` in the resources stack)."""


def resources_stack() -> dict[str, Any]:
    """The stack ``make deploy`` creates before ``chalice deploy`` (see the module doc)."""
    stack: dict[str, Any] = {
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
                "Default": "",
                "AllowedPattern": "^$|^[A-Za-z0-9_-]{1,75}$",
                "Description": "The review queue's name (its dead-letter queue adds -dead); "
                "empty: <stack>-reviews. Stages deployed before this release keep "
                "pinework-reviews (CHANGELOG.md).",
            },
            **stage_settings.parameters(),
            # Applied by chalice and infra/deploy.py, kept here between deploys and
            # given back as outputs (infra/stage_settings.py).
            **rate_limits.THROTTLE_PARAMETERS,
            **LIMIT_PARAMETERS,
            # the access log infra/deploy.py throttle points chalice's stage at
            **access_logs.PARAMETERS,
        },
        "Conditions": {
            **CONDITIONS,
            **stage_settings.conditions(),
            **LIMIT_CONDITIONS,
            **access_logs.CONDITIONS,
            "ReviewQueueNamed": {"Fn::Not": [{"Fn::Equals": [{"Ref": "ReviewQueueName"}, ""]}]},
        },
        "Resources": {
            **storage_resources(
                {
                    "Fn::If": [
                        "ReviewQueueNamed",
                        {"Ref": "ReviewQueueName"},
                        {"Fn::Sub": "${AWS::StackName}-reviews"},
                    ]
                }
            ),
            **log_group_resources(chalice_function_names()),
            **iam.role_resources(),
            **access_logs.resources({"Fn::Sub": NAMESPACE}),
        },
        "Outputs": {
            "TableName": {"Value": protection.TABLE_NAME},
            "BucketName": {"Value": {"Ref": "LargeObjectBucket"}},
            "HashSecretArn": {"Value": {"Ref": "HashSecret"}},
            "ReviewQueueName": {"Value": {"Fn::GetAtt": ["ReviewQueue", "QueueName"]}},
            "ReviewDeadLetterQueueName": {
                "Value": {"Fn::GetAtt": ["ReviewDeadLetterQueue", "QueueName"]}
            },
            "LifecycleQueueName": {"Value": {"Fn::GetAtt": ["LifecycleQueue", "QueueName"]}},
            "LifecycleDeadLetterQueueName": {
                "Value": {"Fn::GetAtt": ["LifecycleDeadLetterQueue", "QueueName"]}
            },
            "MetricsNamespace": {"Value": {"Fn::Sub": NAMESPACE}},
            **access_logs.outputs(),
            "ChaliceApp": {"Value": {"Ref": "ChaliceApp"}},
            "Reviewer": {"Value": {"Ref": "Reviewer"}},
            "BedrockModelId": {"Value": {"Ref": "BedrockModelId"}},
            "ChaliceStage": {"Value": {"Ref": "ChaliceStage"}},
            **stage_settings.kv_outputs(),
            **{name: {"Value": {"Ref": name}} for name in stage_settings.CHALICE_SETTINGS},
            # An output's value cannot be empty: "none" is no reservation.
            API_RESERVED_CONCURRENCY: {
                "Value": {
                    "Fn::If": [
                        "ApiConcurrencyReserved",
                        {"Ref": API_RESERVED_CONCURRENCY},
                        stage_settings.UNRESERVED,
                    ]
                }
            },
            **protection.FANOUT_FAILURE_OUTPUTS,
            **{
                f"{prefix}RoleArn": {"Value": {"Fn::GetAtt": [f"{prefix}Role", "Arn"]}}
                for prefix in iam.FUNCTIONS.values()
            },
        },
    }
    return stack


def _fanout_destination_on_alias() -> dict[str, Any]:
    """The fan-out's failure destination on the ``live`` alias the schedule invokes
    (created after the alias SAM publishes)."""
    config = observability.fanout_failure_destination(
        {"Ref": "ReviewFanout"},
        {"Fn::GetAtt": ["ReviewFanoutFailureQueue", "Arn"]},
        qualifier=ALIAS,
    )
    for body in config.values():
        body["DependsOn"] = [f"ReviewFanoutAlias{ALIAS}"]
    return config


def main(arguments: list[str] | None = None) -> None:
    """Print a template as JSON: ``package`` (the fragment ``chalice package`` merges),
    ``resources``, ``operations`` and ``waf`` (the stacks of ``make deploy``); or
    ``finalize PATH``: rewrite chalice's merged template at PATH in place (``finalize``)."""
    parser = argparse.ArgumentParser(description="Print a CloudFormation template.")
    parser.add_argument("kind", choices=["package", "resources", "operations", "waf", "finalize"])
    parser.add_argument("path", nargs="?", type=Path, help="finalize: the merged sam.json")
    parsed = parser.parse_args(arguments)
    if parsed.kind == "finalize":
        if parsed.path is None:
            parser.error("finalize needs the template's path")
        finalized = finalize(json.loads(parsed.path.read_text()))
        parsed.path.write_text(json.dumps(finalized, indent=2) + "\n")
        sys.stdout.write(f"{parsed.path}: the API calls the {ALIAS} alias\n")
        return
    template = {
        "package": package_fragment,
        "resources": resources_stack,
        "operations": observability.operations_stack,
        "waf": rate_limits.waf_stack,
    }[parsed.kind]()
    json.dump(template, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
