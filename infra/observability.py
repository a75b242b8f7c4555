"""CloudWatch alarms, their SNS topic and the operations dashboard of a stage
(docs/reference.md#14-operations), the same on both deploy paths:
``resources(targets)`` takes ``Targets``, the CloudFormation expressions of what it
watches. The one-stack path (``make deploy-cloudformation``) merges
``resources(stack_targets())`` into the packaged template (``infra/template.py``), where
the targets are ``Ref``/``Fn::GetAtt`` of the stack's own resources; the ``make deploy``
path deploys ``operations_stack()`` after ``chalice deploy``, where they are parameters.
Both also carry ``fanout_failure_destination()``: the nightly fan-out's asynchronous
invocation config, whose failures land in the fan-out failure queue that
``ReviewFanoutFailedAlarm`` watches.

Every alarm notifies ``AlarmTopic`` on ALARM and OK, names its runbook section of
docs/operations.md#alarms-and-runbook in its description, and reads per-stack names only:
the EMF namespace ``Pinework/<stack>`` and the stage's own functions, table, queues and
API. Thresholds and their reasons:
docs/DECISIONS.md#alarms-an-on-call-person-can-trust-issue-22-item-2.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra import access_logs, heartbeat, iam, rate_limits
from infra.parameters import HAS_KMS_KEY, KMS_KEY_ARN, checkov_skips, kms_condition, kms_parameter
from infra.protection import TABLE_NAME, kept_log_group

SERVICE = "pinework"
"""The ``service`` dimension of every EMF metric (``chalicelib.api.telemetry.SERVICE``)."""
NAMESPACE_PREFIX = "Pinework/"
"""A stage's EMF namespace is this and its stack's name (``PINEWORK_METRICS_NAMESPACE``)."""
FUNCTIONS = {
    "api_handler": "API",
    "review_fanout": "fan-out",
    "review_worker": "review worker",
    "lifecycle_worker": "lifecycle worker",
}
"""Chalice's function names, and how alarms and the dashboard name them."""
API_TIMEOUT_SECONDS = 28
"""The API function's timeout: below API Gateway's 29-second integration limit."""
FANOUT_TIMEOUT_SECONDS = 300
"""The nightly fan-out's timeout (the deploy paths set it from here)."""
WORKER_TIMEOUT_SECONDS = 600
"""The review worker's timeout (a batch of 10 agents, the Bedrock reviewer ~20 s each)."""
TIMEOUT_SECONDS = {
    "api_handler": API_TIMEOUT_SECONDS,
    "review_fanout": FANOUT_TIMEOUT_SECONDS,
    "review_worker": WORKER_TIMEOUT_SECONDS,
    "lifecycle_worker": WORKER_TIMEOUT_SECONDS,
}
"""Each function's Lambda timeout in seconds; its duration alarm fires at 80 % of it."""
DURATION_SHARE = 0.8
"""The share of a function's timeout above which its duration alarm fires."""
FANOUT_RETRIES = 2
"""Lambda's retries of a failed asynchronous fan-out before its event goes to the
failure queue (the most Lambda allows)."""
FANOUT_MAX_EVENT_AGE_SECONDS = 3600
"""An asynchronous fan-out event not run within an hour (throttled, retried) goes to
the failure queue instead of starting the reviews hours late."""
FANOUT_MISSED_HOURS = 26
"""The fan-out alarm fires when it was not invoked for this many hours (daily at
04:00 UTC, so from about 07:00 UTC on the day it missed)."""
REVIEW_AGE_SECONDS = 7200
"""The review queue's oldest message may be this old: reviews start at 04:00 UTC and
drain within minutes, so two hours means the worker is not keeping up."""
LIFECYCLE_AGE_SECONDS = 1800
"""The lifecycle queue's oldest message may be this old: a person's erasure or export is
taken within seconds (docs/reference.md#the-lifecycle-queue), so half an hour means the
lifecycle worker is failing or a flood of jobs outruns its two workers."""
API_5XX_COUNT = 5
"""5xx answers in five minutes that alarm at any traffic level."""
API_LATENCY_MS = 10_000
"""API Gateway's p99 latency alarm threshold (its integration limit is 29 s)."""
TABLE_OPERATIONS = (
    "BatchGetItem",
    "BatchWriteItem",
    "DeleteItem",
    "GetItem",
    "PutItem",
    "Query",
    "TransactWriteItems",
    "UpdateItem",
)
"""The DynamoDB operations the functions call (their roles' actions, ``infra/iam.py``;
``ConditionCheckItem`` is a part of ``TransactWriteItems``): an alarm reads at most 10
metrics, so it sums these, not read and write events of the table and 7 indexes."""
WAF_BLOCKED_PERIODS = 2
"""The WAF alarm fires when the web ACL blocked requests in this many of 3 five-minute
periods (a client kept over its limit, not one burst)."""
THROTTLE_PERIODS = 2
"""The stage-throttle alarm fires when the stage throttled requests in this many of 3
five-minute periods (sustained, not one burst the token bucket refused)."""
HEARTBEAT_MINUTES = 5
"""How often the heartbeat checks the API (an EventBridge rate)."""
HEARTBEAT_ROUTE = "/api/v1/openapi.json"
"""The route the heartbeat GETs: no credential, answered by the API function."""
HEARTBEAT_FAILED_PERIODS = 2
"""The heartbeat alarm fires when this many of 3 five-minute periods had no successful
check (one late schedule run does not page)."""
HEARTBEAT_LOG_DAYS = 14
"""Days the heartbeat function's log is kept (one line a check)."""
PERIOD = 300
RUNBOOK = "docs/operations.md"
"""Where each alarm's runbook section is (``Runbook: docs/operations.md#<anchor>``)."""
_CONFIG = Path(__file__).resolve().parent.parent / ".chalice" / "config.json"
ALARM_EMAIL = "AlarmEmail"
HAS_ALARM_EMAIL = "HasAlarmEmail"
CREATE_TOPIC_KEY = "CreateAlarmTopicKey"
PARAMETERS: dict[str, Any] = {
    ALARM_EMAIL: {
        "Type": "String",
        "Default": "",
        "AllowedPattern": r"^$|^[^@\s]+@[^@\s]+\.[^@\s]+$",
        "Description": "E-mail address subscribed to the alarm topic (it must confirm the "
        "subscription from the first message); empty: no subscription.",
    },
    KMS_KEY_ARN: kms_parameter(),
}
"""The parameters ``resources()`` needs in any template it is merged into."""
CONDITIONS: dict[str, Any] = {
    HAS_ALARM_EMAIL: {"Fn::Not": [{"Fn::Equals": [{"Ref": ALARM_EMAIL}, ""]}]},
    HAS_KMS_KEY: kms_condition(),
    CREATE_TOPIC_KEY: {"Fn::Not": [{"Condition": HAS_KMS_KEY}]},
}
"""The conditions ``resources()`` needs in any template it is merged into."""


@dataclass(frozen=True)
class Targets:
    """What a stage's alarms and dashboard watch, as CloudFormation expressions.

    Attributes:
        functions: Chalice's function name (``api_handler``, ``review_fanout``,
            ``review_worker``) -> its Lambda function name.
        table: the table's name.
        review_queue: the review queue's name.
        dead_letter_queue: the review dead-letter queue's name.
        lifecycle_queue: the lifecycle queue's name (erasures and exports).
        lifecycle_dead_letter_queue: its dead-letter queue's name.
        fanout_failure_queue: the name of the queue failed fan-outs land in.
        fanout_failure_queue_arn: that queue's ARN.
        api_name: the REST API's name (API Gateway's metrics are per ``ApiName``).
        api_stage: the API Gateway stage.
        namespace: the functions' EMF namespace (``PINEWORK_METRICS_NAMESPACE``).
        dashboard_name: the dashboard's name.
        api_url: the stage's base URL, ending in ``/`` (the heartbeat GETs
            ``HEARTBEAT_ROUTE`` under it).
        web_acl: the WAF web ACL's metric name (``AWS/WAFV2``'s ``WebACL``).
        waf_condition: the template's condition under which the web ACL exists (the
            WAF alarm is created only under it).
    """

    functions: Mapping[str, Any]
    table: Any
    review_queue: Any
    dead_letter_queue: Any
    lifecycle_queue: Any
    lifecycle_dead_letter_queue: Any
    fanout_failure_queue: Any
    fanout_failure_queue_arn: Any
    api_name: Any
    api_stage: Any
    namespace: Any
    dashboard_name: Any
    api_url: Any
    web_acl: Any
    waf_condition: str


def api_stage(stage: str = "prod") -> str:
    """The API Gateway stage of a Chalice stage (``.chalice/config.json``)."""
    config = json.loads(_CONFIG.read_text())
    value = config.get("stages", {}).get(stage, {}).get("api_gateway_stage")
    return str(value or config.get("api_gateway_stage", "api"))


def stack_targets(stage: str = "prod") -> Targets:
    """The targets of the one-stack path: the stack's own resources (Chalice's logical
    ids for the functions), the API named after the stack, ``Pinework/<stack>``."""
    return Targets(
        functions={
            "api_handler": {"Ref": "APIHandler"},
            "review_fanout": {"Ref": "ReviewFanout"},
            "review_worker": {"Ref": "ReviewWorker"},
            "lifecycle_worker": {"Ref": "LifecycleWorker"},
        },
        table=TABLE_NAME,
        review_queue={"Fn::GetAtt": ["ReviewQueue", "QueueName"]},
        dead_letter_queue={"Fn::GetAtt": ["ReviewDeadLetterQueue", "QueueName"]},
        lifecycle_queue={"Fn::GetAtt": ["LifecycleQueue", "QueueName"]},
        lifecycle_dead_letter_queue={"Fn::GetAtt": ["LifecycleDeadLetterQueue", "QueueName"]},
        fanout_failure_queue={"Fn::GetAtt": ["ReviewFanoutFailureQueue", "QueueName"]},
        fanout_failure_queue_arn={"Fn::GetAtt": ["ReviewFanoutFailureQueue", "Arn"]},
        api_name={"Ref": "AWS::StackName"},
        api_stage=api_stage(stage),
        namespace={"Fn::Sub": NAMESPACE_PREFIX + "${AWS::StackName}"},
        dashboard_name={"Fn::Sub": "${AWS::StackName}-operations"},
        api_url={
            "Fn::Sub": "https://${RestAPI}.execute-api.${AWS::Region}.${AWS::URLSuffix}/"
            + api_stage(stage)
            + "/"
        },
        web_acl={"Fn::Sub": rate_limits.WEB_ACL_NAME},
        waf_condition=rate_limits.WAF_CONDITION,
    )


OPERATIONS_PARAMETERS: dict[str, str] = {
    "ApiHandlerFunctionName": "The API function's name (chalice deploy: <app>-<stage>).",
    "ReviewFanoutFunctionName": "The fan-out function's name (<app>-<stage>-review_fanout).",
    "ReviewWorkerFunctionName": "The worker function's name (<app>-<stage>-review_worker).",
    "LifecycleWorkerFunctionName": "The lifecycle worker's name (<app>-<stage>-lifecycle_worker).",
    "TableName": "The table (the resources stack's output TableName).",
    "ReviewQueueName": "The review queue (output ReviewQueueName).",
    "ReviewDeadLetterQueueName": "The review dead-letter queue (output ReviewDeadLetterQueueName).",
    "LifecycleQueueName": "The lifecycle queue (output LifecycleQueueName).",
    "LifecycleDeadLetterQueueName": "The lifecycle dead-letter queue (output "
    "LifecycleDeadLetterQueueName).",
    "ReviewFanoutFailureQueueName": "The fan-out failure queue (output "
    "ReviewFanoutFailureQueueName).",
    "ReviewFanoutFailureQueueArn": "Its ARN (output ReviewFanoutFailureQueueArn).",
    "ApiName": "The REST API's name (make deploy names it <app>-<stage>).",
    "ApiStage": "The API Gateway stage (api_gateway_stage in .chalice/config.json).",
    "MetricsNamespace": "The functions' PINEWORK_METRICS_NAMESPACE (output MetricsNamespace).",
    "RestApiId": "The REST API's id (chalice deploy records it; the heartbeat calls it).",
}
"""The operations stack's parameters (besides ``AlarmEmail`` and ``KmsKeyArn``) and
where ``make deploy`` reads each (``infra/deploy.py``)."""


WEB_ACL_NAME = "WebAclName"
HAS_WEB_ACL = "HasWebAcl"
OPERATIONS_WAF_PARAMETERS: dict[str, Any] = {
    WEB_ACL_NAME: {
        "Type": "String",
        "Default": "",
        "AllowedPattern": "^[A-Za-z0-9_-]{0,128}$",
        "Description": "The WAF stack's web ACL (make deploy passes <stack>-waf-rate-limits "
        "while the stage has one); empty: no WAF alarm.",
    },
}
"""The operations stack's WAF parameter: the WAF alarm exists only when it is set."""


def operations_targets() -> Targets:
    """The targets of the operations stack: its parameters."""
    ref = {name: {"Ref": name} for name in OPERATIONS_PARAMETERS}
    return Targets(
        functions={
            function: ref[f"{iam.FUNCTIONS[function]}FunctionName"] for function in FUNCTIONS
        },
        table=ref["TableName"],
        review_queue=ref["ReviewQueueName"],
        dead_letter_queue=ref["ReviewDeadLetterQueueName"],
        lifecycle_queue=ref["LifecycleQueueName"],
        lifecycle_dead_letter_queue=ref["LifecycleDeadLetterQueueName"],
        fanout_failure_queue=ref["ReviewFanoutFailureQueueName"],
        fanout_failure_queue_arn=ref["ReviewFanoutFailureQueueArn"],
        api_name=ref["ApiName"],
        api_stage=ref["ApiStage"],
        namespace=ref["MetricsNamespace"],
        dashboard_name={"Ref": "AWS::StackName"},
        api_url={
            "Fn::Sub": "https://${RestApiId}.execute-api.${AWS::Region}.${AWS::URLSuffix}"
            "/${ApiStage}/"
        },
        web_acl={"Ref": WEB_ACL_NAME},
        waf_condition=HAS_WEB_ACL,
    )


def operations_stack() -> dict[str, Any]:
    """The stack ``make deploy`` creates after ``chalice deploy`` (``<stack>-operations``):
    the alarm topic (with its key and optional e-mail subscription), the alarms, the
    dashboard and the fan-out's failure destination, over the parameters'
    resources."""
    parameters: dict[str, Any] = {
        name: {"Type": "String", "MinLength": 1, "Description": description}
        for name, description in OPERATIONS_PARAMETERS.items()
    }
    parameters["ApiStage"]["Default"] = api_stage()
    parameters["ReviewFanoutFailureQueueArn"]["AllowedPattern"] = (
        "^arn:aws[a-z-]*:sqs:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+$"
    )
    targets = operations_targets()
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": "Pinework Memory: alarms, alarm topic and dashboard of a chalice "
        "deployed stage, and the nightly fan-out's failure destination",
        "Parameters": {
            **parameters,
            **OPERATIONS_WAF_PARAMETERS,
            **access_logs.PARAMETERS,
            **PARAMETERS,
        },
        "Conditions": {
            **CONDITIONS,
            **access_logs.CONDITIONS,
            HAS_WEB_ACL: {"Fn::Not": [{"Fn::Equals": [{"Ref": WEB_ACL_NAME}, ""]}]},
        },
        "Resources": {
            **resources(targets),
            **fanout_failure_destination(
                targets.functions["review_fanout"], targets.fanout_failure_queue_arn
            ),
        },
        "Outputs": {
            "AlarmTopicArn": {"Value": {"Ref": "AlarmTopic"}},
            "DashboardName": {"Value": {"Ref": "OperationsDashboard"}},
        },
    }


def fanout_failure_destination(
    function_ref: Any, queue_arn: Any, qualifier: str = "$LATEST"
) -> dict[str, Any]:
    """``ReviewFanoutInvokeConfig``: the fan-out's asynchronous invocations (EventBridge's
    04:00 UTC schedule) are retried twice, never run later than an hour, and then sent
    to the failure queue (the fan-out's role may ``sqs:SendMessage`` to it,
    ``infra/iam.py``).

    Args:
        function_ref: an expression of the fan-out function's name.
        queue_arn: an expression of the fan-out failure queue's ARN.
        qualifier: the version or alias the schedule invokes.
    """
    return {
        "ReviewFanoutInvokeConfig": {
            "Type": "AWS::Lambda::EventInvokeConfig",
            "Properties": {
                "FunctionName": function_ref,
                "Qualifier": qualifier,
                "MaximumRetryAttempts": FANOUT_RETRIES,
                "MaximumEventAgeInSeconds": FANOUT_MAX_EVENT_AGE_SECONDS,
                "DestinationConfig": {"OnFailure": {"Destination": queue_arn}},
            },
        }
    }


def resources(targets: Targets) -> dict[str, Any]:
    """The alarm topic and its policy, key and subscription, the alarms and the
    dashboard, the heartbeat and the WAF alarm, as CloudFormation resources (they need
    ``PARAMETERS`` and ``CONDITIONS`` in the template, and ``targets.waf_condition``)."""
    alarms = {
        **function_alarms(targets),
        **review_alarms(targets),
        **api_alarms(targets),
        **lifecycle_alarms(targets),
    }
    return {
        **topic_resources(),
        **alarms,
        **heartbeat_resources(targets),
        **waf_alarms(targets),
        **throttle_alarms(targets),
        "OperationsDashboard": {
            "Type": "AWS::CloudWatch::Dashboard",
            "Properties": {
                "DashboardName": targets.dashboard_name,
                "DashboardBody": {
                    "Fn::Sub": [
                        json.dumps(dashboard_body(sorted([*alarms, "ApiHeartbeatAlarm"]))),
                        _variables(targets),
                    ]
                },
            },
        },
    }


def topic_resources() -> dict[str, Any]:
    """``AlarmTopic`` encrypted with ``KmsKeyArn`` or, without it, ``AlarmTopicKey`` (a
    key of its own: CloudWatch cannot publish to a topic under the AWS-managed SNS key),
    a policy that lets only this stack's alarms and the account publish, and the
    e-mail subscription when ``AlarmEmail`` is set."""
    account = {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    alarms = {
        "aws:SourceArn": {
            "Fn::Sub": "arn:${AWS::Partition}:cloudwatch:${AWS::Region}:${AWS::AccountId}"
            ":alarm:${AWS::StackName}-*"
        }
    }
    root = {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}}
    cloudwatch = {"Service": "cloudwatch.amazonaws.com"}
    key_policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AccountAdministersTheKey",
                "Effect": "Allow",
                "Principal": root,
                "Action": "kms:*",
                "Resource": "*",
            },
            {
                "Sid": "CloudWatchAlarmsPublishToTheTopic",
                "Effect": "Allow",
                "Principal": cloudwatch,
                "Action": ["kms:Decrypt", "kms:GenerateDataKey*"],
                "Resource": "*",
                "Condition": {"StringEquals": account},
            },
        ],
    }
    topic_arn = {"Ref": "AlarmTopic"}
    return {
        "AlarmTopicKey": {
            "Type": "AWS::KMS::Key",
            "Condition": CREATE_TOPIC_KEY,
            "DeletionPolicy": "Delete",
            "UpdateReplacePolicy": "Delete",
            "Properties": {
                "Description": {"Fn::Sub": "${AWS::StackName}: the alarm topic's key"},
                "EnableKeyRotation": True,
                "PendingWindowInDays": 7,
                "KeyPolicy": key_policy,
            },
        },
        "AlarmTopic": {
            "Type": "AWS::SNS::Topic",
            "Properties": {
                "DisplayName": "Pinework Memory alarms",
                "KmsMasterKeyId": {
                    "Fn::If": [
                        HAS_KMS_KEY,
                        {"Ref": KMS_KEY_ARN},
                        {"Fn::GetAtt": ["AlarmTopicKey", "Arn"]},
                    ]
                },
            },
        },
        "AlarmTopicPolicy": {
            "Type": "AWS::SNS::TopicPolicy",
            "Properties": {
                "Topics": [topic_arn],
                "PolicyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "ThisStacksAlarmsPublish",
                            "Effect": "Allow",
                            "Principal": cloudwatch,
                            "Action": "sns:Publish",
                            "Resource": topic_arn,
                            "Condition": {"StringEquals": account, "ArnLike": alarms},
                        },
                        {
                            "Sid": "TheAccountManagesTheTopic",
                            "Effect": "Allow",
                            "Principal": root,
                            "Action": [
                                "sns:GetTopicAttributes",
                                "sns:SetTopicAttributes",
                                "sns:Subscribe",
                                "sns:ListSubscriptionsByTopic",
                                "sns:Publish",
                            ],
                            "Resource": topic_arn,
                        },
                    ],
                },
            },
        },
        "AlarmEmailSubscription": {
            "Type": "AWS::SNS::Subscription",
            "Condition": HAS_ALARM_EMAIL,
            "Properties": {
                "TopicArn": topic_arn,
                "Protocol": "email",
                "Endpoint": {"Ref": ALARM_EMAIL},
            },
        },
    }


def function_alarms(targets: Targets) -> dict[str, Any]:
    """Per function: any error, any throttle, and its duration above 80 % of its
    timeout (p99 of the API over two of three periods; the slowest run of the others)."""
    alarms: dict[str, Any] = {}
    for function, name in FUNCTIONS.items():
        prefix = iam.FUNCTIONS[function]
        anchor = function.replace("_", "-")
        dimensions = [{"Name": "FunctionName", "Value": targets.functions[function]}]
        timeout = TIMEOUT_SECONDS[function]
        alarms[f"{prefix}ErrorsAlarm"] = _alarm(
            f"The {name} function failed: an unhandled exception or a timeout (Lambda "
            f"Errors, one or more in 5 minutes). {_ERRORS[function]}",
            f"{anchor}-errors",
            _single("AWS/Lambda", "Errors", dimensions, "Sum"),
            threshold=0,
        )
        alarms[f"{prefix}ThrottlesAlarm"] = _alarm(
            f"Lambda refused to run the {name} function (Throttles, one or more in 5 "
            "minutes): its reserved concurrency or the account's concurrency is used up. "
            "First: the account's ConcurrentExecutions and the functions' reserved "
            "concurrency.",
            f"{anchor}-throttles",
            _single("AWS/Lambda", "Throttles", dimensions, "Sum"),
            threshold=0,
        )
        api = function == "api_handler"
        alarms[f"{prefix}DurationAlarm"] = _alarm(
            f"The {name} function ran for more than {DURATION_SHARE:.0%} of its "
            f"{timeout} s timeout ("
            + ("p99 Duration, 2 of 3 five-minute periods" if api else "its slowest run")
            + "); next it times out. First: the slowest invocations' REPORT lines and "
            "what they waited on.",
            f"{anchor}-duration",
            _single("AWS/Lambda", "Duration", dimensions, "p99" if api else "Maximum"),
            threshold=round(DURATION_SHARE * timeout * 1000, 3),
            periods=3 if api else 1,
            breaching=2 if api else 1,
        )
    return alarms


_ERRORS = {
    "api_handler": "Clients got 502 or 504. First: the API function's ERROR log lines "
    "and 'Task timed out' in Logs Insights.",
    "review_fanout": "Lambda retries it twice, then its event goes to the fan-out failure "
    "queue (ReviewFanoutFailedAlarm). First: the fan-out's ERROR log lines.",
    "review_worker": "A whole batch of reviews failed (a single review's failure is "
    "retried alone and does not count). First: the worker's ERROR log lines.",
    "lifecycle_worker": "A person's erasure or export crashed its invocation (a job that "
    "fails is retried alone and does not count). First: the lifecycle worker's ERROR "
    "log lines.",
}


def review_alarms(targets: Targets) -> dict[str, Any]:
    """The nightly review: the fan-out failed or did not run, the queue does not drain,
    a review dead-lettered, the table throttles."""
    fanout = [{"Name": "FunctionName", "Value": targets.functions["review_fanout"]}]
    return {
        "ReviewFanoutFailedAlarm": _alarm(
            "The nightly fan-out failed after Lambda's retries (or waited over an hour) and "
            "its event is in the fan-out failure queue: no review was enqueued for that "
            "night. First: read the message (its requestPayload is the event, "
            "responsePayload the error), fix, re-invoke the fan-out with the payload.",
            "review-fanout-failed",
            _single(
                "AWS/SQS",
                "ApproximateNumberOfMessagesVisible",
                _queue(targets.fanout_failure_queue),
                "Maximum",
            ),
            threshold=0,
        ),
        "ReviewFanoutMissedAlarm": _alarm(
            f"The nightly fan-out was not invoked for {FANOUT_MISSED_HOURS} hours (it runs "
            "at 04:00 UTC): its schedule rule is disabled or gone, or EventBridge cannot "
            "invoke it. On a new stage it shows until the first night. First: the rule's "
            "state and its FailedInvocations.",
            "review-fanout-missed",
            _single("AWS/Lambda", "Invocations", fanout, "Sum", period=3600),
            threshold=1,
            comparison="LessThanThreshold",
            periods=FANOUT_MISSED_HOURS,
            breaching=FANOUT_MISSED_HOURS,
            missing="breaching",
        ),
        "ReviewQueueAgeAlarm": _alarm(
            f"A review message has waited over {REVIEW_AGE_SECONDS // 3600} hours in the "
            "review queue (ApproximateAgeOfOldestMessage): the worker is not draining the "
            "night's reviews. First: the worker's errors, throttles and duration alarms, "
            "then its log.",
            "review-queue-age",
            _single(
                "AWS/SQS", "ApproximateAgeOfOldestMessage", _queue(targets.review_queue), "Maximum"
            ),
            threshold=REVIEW_AGE_SECONDS,
        ),
        "ReviewDeadLetterAlarm": _alarm(
            "A nightly review failed five times and waits in the dead-letter queue. First: "
            "the worker's 'review' log lines for its agent; fix, then redrive the queue.",
            "review-dead-letter",
            _single(
                "AWS/SQS",
                "ApproximateNumberOfMessagesVisible",
                _queue(targets.dead_letter_queue),
                "Maximum",
            ),
            threshold=0,
        ),
        "TableThrottleAlarm": _alarm(
            "DynamoDB throttled reads or writes of the table or its indexes in 2 of 3 "
            "five-minute periods (clients got 429 rate_limited after retries). First: "
            "which index and operation, and the table's consumed capacity.",
            "table-throttles",
            _throttle_metrics(targets.table),
            threshold=0,
            periods=3,
            breaching=2,
        ),
    }


def _throttle_metrics(table: Any) -> list[dict[str, Any]]:
    """The table's ``ThrottledRequests`` (a request counts once when the table or any of
    its indexes throttled it) of every operation in ``TABLE_OPERATIONS``, summed."""
    metrics = [
        _stat(
            f"op{number}",
            "AWS/DynamoDB",
            "ThrottledRequests",
            [{"Name": "TableName", "Value": table}, {"Name": "Operation", "Value": operation}],
            "Sum",
        )
        for number, operation in enumerate(TABLE_OPERATIONS)
    ]
    total = " + ".join(f"FILL({metric['Id']}, 0)" for metric in metrics)
    return [*metrics, _expression("throttled", total, "throttled requests")]


def api_alarms(targets: Targets) -> dict[str, Any]:
    """API Gateway's 5xx count and rate, its p99 latency, and the recall fallback rate."""
    api = [
        {"Name": "ApiName", "Value": targets.api_name},
        {"Name": "Stage", "Value": targets.api_stage},
    ]
    service = [{"Name": "service", "Value": SERVICE}]
    return {
        "Api5xxCountAlarm": _alarm(
            f"The API answered {API_5XX_COUNT} or more requests with 5xx in 5 minutes (API "
            "Gateway's count: Lambda errors and timeouts included), at any traffic level. "
            "First: the API function's errors and the slowest-routes table.",
            "api-5xx",
            _single("AWS/ApiGateway", "5XXError", api, "Sum"),
            threshold=API_5XX_COUNT,
            comparison="GreaterThanOrEqualToThreshold",
        ),
        "Api5xxRateAlarm": _alarm(
            "More than 5% of API requests answered 5xx (API Gateway's count: Lambda "
            "errors and timeouts included), in 2 of 3 five-minute periods with 20+ "
            "requests. First: the API function's errors and which routes fail.",
            "api-5xx-rate",
            [
                _stat("errors", "AWS/ApiGateway", "5XXError", api, "Sum"),
                _stat("requests", "AWS/ApiGateway", "Count", api, "Sum"),
                _expression("rate", "IF(requests >= 20, 100 * errors / requests, 0)", "5xx %"),
            ],
            threshold=5,
            periods=3,
            breaching=2,
        ),
        "ApiLatencyAlarm": _alarm(
            f"The API's p99 latency was over {API_LATENCY_MS // 1000} s (API Gateway's "
            "Latency; it gives up at 29 s) in 2 of 3 five-minute periods. First: which "
            "routes are slow, and DynamoDB throttling.",
            "api-latency",
            _single("AWS/ApiGateway", "Latency", api, "p99"),
            threshold=API_LATENCY_MS,
            periods=3,
            breaching=2,
        ),
        "RecallFallbackRateAlarm": _alarm(
            "More than 10% of recalls fell back to the newest facts (scoring failed or ran "
            "past PINEWORK_RECALL_TIME_BUDGET_MS), 15 minutes in a row, 10+ recalls each. "
            "First: recall latency and the API function's duration.",
            "recall-fallback",
            [
                _stat("fallbacks", targets.namespace, "RecallFallback", service, "Sum"),
                _stat("recalls", targets.namespace, "RecallFallback", service, "SampleCount"),
                _expression(
                    "rate", "IF(recalls >= 10, 100 * fallbacks / recalls, 0)", "fallback %"
                ),
            ],
            threshold=10,
            periods=3,
            breaching=3,
        ),
    }


def waf_alarms(targets: Targets) -> dict[str, Any]:
    """``WafBlockedAlarm``: the web ACL blocked requests (``AWS/WAFV2``
    ``BlockedRequests`` of all its rules) in 2 of 3 five-minute periods; created only
    under ``targets.waf_condition`` (no web ACL, no alarm)."""
    dimensions = [
        {"Name": "WebACL", "Value": targets.web_acl},
        {"Name": "Region", "Value": {"Ref": "AWS::Region"}},
        {"Name": "Rule", "Value": "ALL"},
    ]
    alarm = _alarm(
        "The WAF web ACL blocked requests (429 rate_limited) in "
        f"{WAF_BLOCKED_PERIODS} of 3 five-minute periods: a source IP or credential stayed "
        "over its limit per five minutes. First: the web ACL's sampled requests (which "
        "rule, which IP or key), then raise WafIpLimit or WafCredentialLimit, or leave "
        "an abusive client blocked.",
        "waf-blocked",
        _single("AWS/WAFV2", "BlockedRequests", dimensions, "Sum"),
        threshold=0,
        periods=3,
        breaching=WAF_BLOCKED_PERIODS,
    )
    return {"WafBlockedAlarm": {**alarm, "Condition": targets.waf_condition}}


def throttle_alarms(targets: Targets) -> dict[str, Any]:
    """``ApiThrottledAlarm``: the stage throttle answered 429 (the access log's
    ``GatewayThrottled``, ``infra/access_logs.py``) in 2 of 3 five-minute periods;
    created only under ``ApiAccessLogsOn`` (no access log, nothing to count)."""
    alarm = _alarm(
        "API Gateway's stage throttle (ApiThrottleRateLimit requests a second, "
        "ApiThrottleBurstLimit at once, all clients together) or the account's answered "
        f"429 rate_limited in {THROTTLE_PERIODS} of 3 five-minute periods: clients are "
        "turned away before the function runs. First: which clients and routes in the "
        "access log, and the API's request rate.",
        "api-throttled",
        _single(
            targets.namespace,
            access_logs.THROTTLED_METRIC,
            [{"Name": "service", "Value": SERVICE}],
            "Sum",
        ),
        threshold=0,
        periods=3,
        breaching=THROTTLE_PERIODS,
    )
    return {"ApiThrottledAlarm": {**alarm, "Condition": access_logs.ACCESS_LOGS_ON}}


def heartbeat_resources(targets: Targets) -> dict[str, Any]:
    """The heartbeat: ``HeartbeatFunction`` (``infra/heartbeat.py`` inlined) run every
    ``HEARTBEAT_MINUTES`` by ``HeartbeatSchedule``, its role (its own log group, and
    ``PutMetricData`` into the stage's namespace only), and ``ApiHeartbeatAlarm``:
    fewer than one successful check in ``HEARTBEAT_FAILED_PERIODS`` of 3 five-minute
    periods, no data counting as failed."""
    name = {"Fn::Sub": "${AWS::StackName}-heartbeat"}
    log_group = "HeartbeatLogGroup"
    log_arn = {"Fn::GetAtt": [log_group, "Arn"]}
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                "Resource": log_arn,
            },
            {
                "Effect": "Allow",
                "Action": "cloudwatch:PutMetricData",
                "Resource": "*",
                "Condition": {"StringEquals": {"cloudwatch:namespace": targets.namespace}},
            },
        ],
    }
    skips = [
        ("CKV_AWS_117", "No VPC: it calls the stage's public URL and CloudWatch."),
        ("CKV_AWS_116", "Scheduled: a failed check is the alarm's signal, not a message."),
        ("CKV_AWS_115", "One run every five minutes; a reservation costs small accounts."),
        ("CKV_AWS_173", "The environment holds a URL and a namespace, never a secret."),
        ("CKV_AWS_272", "Its code is this template's own inline source."),
    ]
    return {
        log_group: kept_log_group(
            {"Fn::Sub": "/aws/lambda/${AWS::StackName}-heartbeat"}, HEARTBEAT_LOG_DAYS
        ),
        "HeartbeatRole": iam.lambda_role("heartbeat", policy),
        "HeartbeatFunction": {
            "Type": "AWS::Lambda::Function",
            "DependsOn": log_group,
            "Metadata": checkov_skips(skips),
            "Properties": {
                "FunctionName": name,
                "Description": f"Pinework Memory: GET {HEARTBEAT_ROUTE} every "
                f"{HEARTBEAT_MINUTES} minutes, publish {heartbeat.METRIC}",
                "Runtime": "python3.11",
                "Handler": "index.handler",
                "Code": {"ZipFile": Path(heartbeat.__file__).read_text()},
                "MemorySize": 128,
                "Timeout": heartbeat.TIMEOUT_SECONDS + 5,
                "Role": {"Fn::GetAtt": ["HeartbeatRole", "Arn"]},
                "TracingConfig": {"Mode": "PassThrough"},
                "Environment": {
                    "Variables": {
                        "PINEWORK_HEARTBEAT_URL": {
                            "Fn::Join": ["", [targets.api_url, HEARTBEAT_ROUTE.lstrip("/")]]
                        },
                        "PINEWORK_METRICS_NAMESPACE": targets.namespace,
                    }
                },
            },
        },
        "HeartbeatSchedule": {
            "Type": "AWS::Events::Rule",
            "Properties": {
                "Description": "Pinework Memory: the API heartbeat",
                "ScheduleExpression": f"rate({HEARTBEAT_MINUTES} minutes)",
                "State": "ENABLED",
                "Targets": [
                    {"Id": "heartbeat", "Arn": {"Fn::GetAtt": ["HeartbeatFunction", "Arn"]}}
                ],
            },
        },
        "HeartbeatPermission": {
            "Type": "AWS::Lambda::Permission",
            "Properties": {
                "Action": "lambda:InvokeFunction",
                "FunctionName": {"Ref": "HeartbeatFunction"},
                "Principal": "events.amazonaws.com",
                "SourceArn": {"Fn::GetAtt": ["HeartbeatSchedule", "Arn"]},
            },
        },
        "ApiHeartbeatAlarm": _alarm(
            f"No successful heartbeat (GET {HEARTBEAT_ROUTE} every {HEARTBEAT_MINUTES} "
            f"minutes answered 200) in {HEARTBEAT_FAILED_PERIODS} of 3 five-minute periods, "
            "no data counting as failed: the API is down for everyone, traffic or not, or "
            "the heartbeat itself stopped. First: GET the route yourself, then the "
            "heartbeat function's log and the API function's errors.",
            "api-heartbeat",
            _single(
                targets.namespace,
                heartbeat.METRIC,
                [{"Name": "service", "Value": SERVICE}],
                "Sum",
            ),
            threshold=1,
            comparison="LessThanThreshold",
            periods=3,
            breaching=HEARTBEAT_FAILED_PERIODS,
            missing="breaching",
        ),
    }


# The lifecycle queue's alarms, a block of their own (docs/issues.md#issue-41-item-2).
def lifecycle_alarms(targets: Targets) -> dict[str, Any]:
    """A person's erasures and exports: the lifecycle queue does not drain, a job
    dead-lettered (docs/reference.md#the-lifecycle-queue)."""
    return {
        "LifecycleQueueAgeAlarm": _alarm(
            f"An erasure or export has waited over {LIFECYCLE_AGE_SECONDS // 60} minutes in "
            "the lifecycle queue (ApproximateAgeOfOldestMessage): a person's request is "
            "not being run. First: the lifecycle worker's errors, throttles and duration "
            "alarms, then its 'lifecycle' log lines.",
            "lifecycle-queue-age",
            _single(
                "AWS/SQS",
                "ApproximateAgeOfOldestMessage",
                _queue(targets.lifecycle_queue),
                "Maximum",
            ),
            threshold=LIFECYCLE_AGE_SECONDS,
        ),
        "LifecycleDeadLetterAlarm": _alarm(
            "A person's erasure or export failed five times and waits in the lifecycle "
            "dead-letter queue. First: the lifecycle worker's 'lifecycle' log lines for its "
            "id; fix, then redrive the queue (an erasure resumes where it stopped).",
            "lifecycle-dead-letter",
            _single(
                "AWS/SQS",
                "ApproximateNumberOfMessagesVisible",
                _queue(targets.lifecycle_dead_letter_queue),
                "Maximum",
            ),
            threshold=0,
        ),
    }


def _queue(name: Any) -> list[dict[str, Any]]:
    return [{"Name": "QueueName", "Value": name}]


_FUNCTION_VARIABLES = {
    "api_handler": "ApiFunction",
    "review_fanout": "FanoutFunction",
    "review_worker": "WorkerFunction",
    "lifecycle_worker": "LifecycleFunction",
}


def _variables(targets: Targets) -> dict[str, Any]:
    """The ``Fn::Sub`` variables of the dashboard body."""
    return {
        "Namespace": targets.namespace,
        "ApiName": targets.api_name,
        "ApiStage": targets.api_stage,
        "TableName": targets.table,
        "ReviewQueueName": targets.review_queue,
        "DeadLetterQueueName": targets.dead_letter_queue,
        "FailureQueueName": targets.fanout_failure_queue,
        "LifecycleQueueName": targets.lifecycle_queue,
        "LifecycleDeadLetterQueueName": targets.lifecycle_dead_letter_queue,
        **{
            variable: targets.functions[function]
            for function, variable in _FUNCTION_VARIABLES.items()
        },
    }


def dashboard_body(alarms: list[str]) -> dict[str, Any]:
    """The dashboard's widgets: ``${…}`` are the variables of ``_variables`` or the
    stack's (``${AWS::Region}``, ``${<alarm>.Arn}`` of each of ``alarms``)."""
    api = ["ApiName", "${ApiName}", "Stage", "${ApiStage}"]
    namespace = "${Namespace}"
    service = ["service", SERVICE]
    functions = [(f"${{{_FUNCTION_VARIABLES[f]}}}", name) for f, name in FUNCTIONS.items()]
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
                [namespace, "RecallLatency", *service, {"stat": "p50"}],
                [namespace, "RecallLatency", *service, {"stat": "p99"}],
            ],
        ),
        _graph(
            "Recall: memories kept, fallback rate",
            [
                [namespace, "MemoriesKept", *service, {"stat": "Average"}],
                [namespace, "RecallFallback", *service, {"stat": "Average", "yAxis": "right"}],
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
                [namespace, "ReviewsEnqueued", *service, {"stat": "Sum"}],
                *[
                    [
                        "AWS/SQS",
                        "ApproximateNumberOfMessagesVisible",
                        "QueueName",
                        f"${{{queue}}}",
                        {"stat": "Maximum"},
                    ]
                    for queue in ("ReviewQueueName", "DeadLetterQueueName", "FailureQueueName")
                ],
            ],
        ),
        _graph(
            "Nightly fan-out runs; oldest review message (s)",
            [
                [
                    "AWS/Lambda",
                    "Invocations",
                    "FunctionName",
                    "${FanoutFunction}",
                    {"stat": "Sum", "label": "fan-out runs"},
                ],
                [
                    "AWS/SQS",
                    "ApproximateAgeOfOldestMessage",
                    "QueueName",
                    "${ReviewQueueName}",
                    {"stat": "Maximum", "yAxis": "right"},
                ],
            ],
        ),
        _graph(
            "Erasures and exports: lifecycle queue depth and oldest message (s)",
            [
                *[
                    [
                        "AWS/SQS",
                        "ApproximateNumberOfMessagesVisible",
                        "QueueName",
                        f"${{{queue}}}",
                        {"stat": "Maximum"},
                    ]
                    for queue in ("LifecycleQueueName", "LifecycleDeadLetterQueueName")
                ],
                [
                    "AWS/SQS",
                    "ApproximateAgeOfOldestMessage",
                    "QueueName",
                    "${LifecycleQueueName}",
                    {"stat": "Maximum", "yAxis": "right"},
                ],
            ],
        ),
        _graph(
            "Refused: day log full, secret in memory",
            [
                [namespace, "memory_day_full", *service, {"stat": "Sum"}],
                [namespace, "secret_in_memory", *service, {"stat": "Sum"}],
            ],
        ),
        _graph(
            "Lambda errors and throttles",
            [
                [
                    "AWS/Lambda",
                    metric,
                    "FunctionName",
                    value,
                    {"stat": "Sum", "label": f"{name} {metric}"},
                ]
                for value, name in functions
                for metric in ("Errors", "Throttles")
            ],
        ),
        _graph(
            "Lambda duration p99 (ms)",
            [
                ["AWS/Lambda", "Duration", "FunctionName", value, {"stat": "p99", "label": name}]
                for value, name in functions
            ],
        ),
        _graph(
            "DynamoDB throttling",
            [
                ["AWS/DynamoDB", metric, "TableName", "${TableName}", {"stat": "Sum"}]
                for metric in ("ReadThrottleEvents", "WriteThrottleEvents")
            ],
        ),
        {
            "type": "alarm",
            "width": 24,
            "height": 6,
            "properties": {
                "title": "Alarms",
                "alarms": [f"${{{alarm}.Arn}}" for alarm in alarms],
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
                    "SOURCE '/aws/lambda/${ApiFunction}' | filter message = 'request' "
                    "| stats count(*) as requests, pct(latency_ms, 50) as p50_ms, "
                    "pct(latency_ms, 99) as p99_ms, sum(status >= 500) as errors_5xx, "
                    "sum(status = 429) as throttled by route | sort p99_ms desc | limit 20"
                ),
            },
        },
    ]
    return {"widgets": widgets}


def _stat(
    metric_id: str, namespace: Any, name: str, dimensions: list[dict[str, Any]], stat: str
) -> dict[str, Any]:
    """One metric of a metric math alarm (not the value it watches)."""
    return {
        "Id": metric_id,
        "MetricStat": {
            "Metric": {"Namespace": namespace, "MetricName": name, "Dimensions": dimensions},
            "Period": PERIOD,
            "Stat": stat,
        },
        "ReturnData": False,
    }


def _expression(metric_id: str, expression: str, label: str) -> dict[str, Any]:
    return {"Id": metric_id, "Expression": expression, "Label": label, "ReturnData": True}


def _single(
    namespace: Any, name: str, dimensions: list[dict[str, Any]], stat: str, period: int = PERIOD
) -> dict[str, Any]:
    """The properties of an alarm on one metric (``stat``: a statistic or ``pNN``)."""
    statistic = "ExtendedStatistic" if stat.startswith("p") else "Statistic"
    return {
        "Namespace": namespace,
        "MetricName": name,
        "Dimensions": dimensions,
        "Period": period,
        statistic: stat,
    }


def _alarm(
    description: str,
    anchor: str,
    metric: dict[str, Any] | list[dict[str, Any]],
    *,
    threshold: float,
    comparison: str = "GreaterThanThreshold",
    periods: int = 1,
    breaching: int = 1,
    missing: str = "notBreaching",
) -> dict[str, Any]:
    """An alarm on one metric (``_single``'s properties) or a metric math list."""
    watched = {"Metrics": metric} if isinstance(metric, list) else metric
    return {
        "Type": "AWS::CloudWatch::Alarm",
        "Properties": {
            "AlarmDescription": f"{description} Runbook: {RUNBOOK}#{anchor}",
            **watched,
            "ComparisonOperator": comparison,
            "Threshold": threshold,
            "EvaluationPeriods": periods,
            "DatapointsToAlarm": breaching,
            "TreatMissingData": missing,
            "AlarmActions": [{"Ref": "AlarmTopic"}],
            "OKActions": [{"Ref": "AlarmTopic"}],
        },
    }


def _search(dimensions: str, metric: str) -> str:
    return f"SEARCH('{{${{Namespace}},{dimensions}}} MetricName=\"{metric}\"', 'Sum', {PERIOD})"


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
