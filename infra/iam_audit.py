"""Hold the roles of ``infra/iam.py`` against recorded AWS calls (``infra/aws_calls.py``):
``permissions`` maps one call to the IAM actions and resource ARNs it needs (a
transaction's operations one by one, a batch per table, a Query on its index, S3 by
object, SQS by queue, Bedrock by model or inference profile); ``resolve`` evaluates a
policy's CloudFormation intrinsic functions for a ``Stack``; ``Audit`` lists the calls
a function's policy does not allow (``denied``) and the grants no call used
(``unused``). Policies only ``Allow``: a ``Deny``, ``NotAction`` or ``NotResource`` is
refused rather than half-understood. Choices:
docs/DECISIONS.md#packaging-cold-start-and-iam-issue-12-deploy-iam-gateway-errors-queued-reviews
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from chalicelib.settings import LIFECYCLE_QUEUE_NAME
from infra import iam, stage_settings, template, upgrade
from infra.aws_calls import AwsCall
from infra.parameters import BACKUP_PLAN, EXISTING_TABLE_NAME, KMS_KEY_ARN

ACCOUNT = "123456789012"
"""moto's account id (the tests' and the local server's)."""
_GEO_PREFIXES = ("global.", "us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.")
"""Model ids with these prefixes are cross-region inference profiles."""


@dataclass(frozen=True)
class Permission:
    """One IAM permission a call needs.

    Attributes:
        function: the Lambda function that made the call.
        action: ``service:Action``.
        resource: the ARN.
        context: condition keys of the request (``bedrock:InferenceProfileArn``).
    """

    function: str
    action: str
    resource: str
    context: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return f"{self.function}: {self.action} on {self.resource}"


@dataclass(frozen=True)
class Stack:
    """The values a template's expressions take in one environment.

    Attributes:
        table: the table's name. bucket: the bucket's name. queue: the review queue's
        name. lifecycle_queue: the lifecycle queue's name. region, account: where they
        are. reviewer, model: the parameters ``Reviewer`` and ``BedrockModelId``.
        log_groups: function -> log group name.
        kms_key, existing_table, index_level: the parameters ``KmsKeyArn``,
        ``ExistingTableName`` and ``TableIndexLevel`` (``infra/protection.py``).
        hash_secret: the hash secret's name (its ARN adds a random suffix, which the
        ``HashSecret`` reference matches with ``-*``).
    """

    table: str
    bucket: str
    queue: str
    lifecycle_queue: str = LIFECYCLE_QUEUE_NAME
    region: str = "us-east-1"
    account: str = ACCOUNT
    reviewer: str = "bedrock"
    model: str = "anthropic.claude-test-v1:0"
    log_groups: dict[str, str] = field(
        default_factory=lambda: {name: f"/aws/lambda/{name}" for name in iam.FUNCTIONS}
    )
    kms_key: str = ""
    existing_table: str = ""
    index_level: int = upgrade.FULL_LEVEL
    hash_secret: str = "pinework-hash-secret"

    def refs(self) -> dict[str, str]:
        """``Ref`` values: parameters, pseudo parameters, resources."""
        return {
            "AWS::Region": self.region,
            "AWS::AccountId": self.account,
            "AWS::Partition": "aws",
            "AWS::StackName": "pinework-test",
            "MemoryTable": self.table,
            "LargeObjectBucket": self.bucket,
            "ReviewQueue": f"https://sqs.{self.region}.amazonaws.com/{self.account}/{self.queue}",
            "LifecycleQueue": (
                f"https://sqs.{self.region}.amazonaws.com/{self.account}/{self.lifecycle_queue}"
            ),
            "Reviewer": self.reviewer,
            "BedrockModelId": self.model,
            "HashSecret": (
                f"arn:aws:secretsmanager:{self.region}:{self.account}:secret:{self.hash_secret}-*"
            ),
            KMS_KEY_ARN: self.kms_key,
            EXISTING_TABLE_NAME: self.existing_table,
            BACKUP_PLAN: "off",
            upgrade.TABLE_INDEX_LEVEL: str(self.index_level),
            # the operator's settings at their defaults (infra/stage_settings.py)
            **{name: str(spec["Default"]) for name, spec in stage_settings.parameters().items()},
        }

    def attributes(self) -> dict[str, str]:
        """``Fn::GetAtt`` values, as ``Resource.Attribute``."""
        found = {
            "MemoryTable.Arn": f"arn:aws:dynamodb:{self.region}:{self.account}:table/{self.table}",
            "LargeObjectBucket.Arn": f"arn:aws:s3:::{self.bucket}",
            "ReviewQueue.Arn": f"arn:aws:sqs:{self.region}:{self.account}:{self.queue}",
            "ReviewQueue.QueueName": self.queue,
            "LifecycleQueue.Arn": (
                f"arn:aws:sqs:{self.region}:{self.account}:{self.lifecycle_queue}"
            ),
            "LifecycleQueue.QueueName": self.lifecycle_queue,
            "ReviewFanoutFailureQueue.Arn": (
                f"arn:aws:sqs:{self.region}:{self.account}:{self.queue}-fanout-failed"
            ),
        }
        for function, prefix in iam.FUNCTIONS.items():
            found[f"{prefix}LogGroup.Arn"] = (
                f"arn:aws:logs:{self.region}:{self.account}:log-group:{self.log_groups[function]}:*"
            )
        return found

    def conditions(self) -> dict[str, bool]:
        """The template's conditions (``infra.template.CONDITIONS``), evaluated."""
        return {name: bool(resolve(expression, self)) for name, expression in _CONDITIONS.items()}


_NO_VALUE = object()
_CONDITIONS = {**template.CONDITIONS, **stage_settings.conditions()}
"""The conditions the roles and the table read."""


def resolve(node: Any, stack: Stack) -> Any:
    """Evaluate the CloudFormation intrinsic functions in ``node`` for ``stack``.

    Raises:
        KeyError: a ``Ref``, attribute or condition ``stack`` does not know.
        ValueError: an intrinsic function this resolver does not implement.
    """
    if isinstance(node, list):
        return [
            value for value in (resolve(item, stack) for item in node) if value is not _NO_VALUE
        ]
    if not isinstance(node, dict):
        return node
    if len(node) == 1:
        ((key, argument),) = node.items()
        intrinsic = _INTRINSICS.get(key)
        if intrinsic is not None:
            return intrinsic(argument, stack)
        if key.startswith("Fn::"):
            raise ValueError(f"{key} is not implemented by infra.iam_audit.resolve")
    resolved = {key: resolve(value, stack) for key, value in node.items()}
    return {key: value for key, value in resolved.items() if value is not _NO_VALUE}


def _ref(name: str, stack: Stack) -> Any:
    return _NO_VALUE if name == "AWS::NoValue" else stack.refs()[name]


def _join(argument: Any, stack: Stack) -> str:
    separator, values = argument
    return str(separator).join(resolve(values, stack))


def _if(argument: Any, stack: Stack) -> Any:
    name, then, otherwise = argument
    return resolve(then if stack.conditions()[name] else otherwise, stack)


def _equals(argument: Any, stack: Stack) -> bool:
    first, second = resolve(argument, stack)
    return bool(first == second)


def _select(argument: Any, stack: Stack) -> Any:
    index, values = argument
    return resolve(values, stack)[int(index)]


def _split(argument: Any, stack: Stack) -> list[str]:
    separator, value = argument
    return str(resolve(value, stack)).split(separator)


_INTRINSICS: dict[str, Callable[[Any, Stack], Any]] = {
    "Ref": _ref,
    "Fn::GetAtt": lambda argument, stack: stack.attributes()[".".join(argument)],
    "Fn::Sub": lambda argument, stack: _substitute(argument, stack),
    "Fn::Join": _join,
    "Fn::If": _if,
    "Fn::Equals": _equals,
    "Fn::And": lambda argument, stack: all(resolve(argument, stack)),
    "Fn::Or": lambda argument, stack: any(resolve(argument, stack)),
    "Fn::Not": lambda argument, stack: not resolve(argument, stack)[0],
    "Condition": lambda argument, stack: resolve(_CONDITIONS[argument], stack),
    "Fn::Select": _select,
    "Fn::Split": _split,
}
"""The intrinsic functions ``resolve`` evaluates, by their key."""


def _substitute(argument: Any, stack: Stack) -> str:
    template, variables = (argument, {}) if isinstance(argument, str) else argument
    values = {name: resolve(value, stack) for name, value in variables.items()}

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in values:
            return str(values[name])
        if "." in name:
            return stack.attributes()[name]
        return stack.refs()[name]

    return re.sub(r"\$\{([^}!]+)\}", replace, template)


def permissions(call: AwsCall, account: str = ACCOUNT) -> list[Permission]:
    """The IAM permissions ``call`` needs (see the module docstring).

    Raises:
        ValueError: an operation with no mapping here (add one before using it).
    """
    mapping = _PERMISSIONS_BY_SERVICE.get(call.service)
    found = None if mapping is None else mapping(call, account)
    if found is None:
        raise ValueError(
            f"no IAM mapping for {call.service}.{call.operation} (add it to infra/iam_audit.py)"
        )
    return found


def _needs(call: AwsCall, action: str, resource: str, **context: str) -> Permission:
    return Permission(call.function, action, resource, tuple(sorted(context.items())))


_TRANSACTION_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}
_SINGLE_TABLE_OPERATIONS = ("GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan")
_S3_OBJECT_ACTIONS = {
    "GetObject": "s3:GetObject",
    "HeadObject": "s3:GetObject",
    "PutObject": "s3:PutObject",
    "DeleteObject": "s3:DeleteObject",
}
_SQS_ACTIONS = {
    "GetQueueUrl": "sqs:GetQueueUrl",
    "SendMessage": "sqs:SendMessage",
    "SendMessageBatch": "sqs:SendMessage",
    "ReceiveMessage": "sqs:ReceiveMessage",
    "DeleteMessage": "sqs:DeleteMessage",
    "DeleteMessageBatch": "sqs:DeleteMessage",
    "ChangeMessageVisibility": "sqs:ChangeMessageVisibility",
    "GetQueueAttributes": "sqs:GetQueueAttributes",
}


def _dynamodb_permissions(call: AwsCall, account: str) -> list[Permission] | None:
    table = f"arn:aws:dynamodb:{call.region}:{account}:table/"
    operation, params = call.operation, call.params
    if operation in ("TransactWriteItems", "TransactGetItems"):
        return [
            _needs(call, f"dynamodb:{_TRANSACTION_ACTIONS[kind]}", table + name)
            for kind, name in params["items"]
        ]
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [_needs(call, f"dynamodb:{operation}", table + name) for name in params["tables"]]
    if operation in _SINGLE_TABLE_OPERATIONS:
        resource = table + params["TableName"]
        if "IndexName" in params:
            resource += f"/index/{params['IndexName']}"
        return [_needs(call, f"dynamodb:{operation}", resource)]
    return None


def _s3_permissions(call: AwsCall, account: str) -> list[Permission] | None:
    operation, params = call.operation, call.params
    if operation in _S3_OBJECT_ACTIONS:
        resource = f"arn:aws:s3:::{params['Bucket']}/{params['Key']}"
        action = _S3_OBJECT_ACTIONS[operation]
        if operation == "DeleteObject" and params.get("VersionId"):
            action = "s3:DeleteObjectVersion"  # deleting one version is its own action
        return [_needs(call, action, resource)]
    if operation in ("ListObjectsV2", "ListObjects"):
        return [_needs(call, "s3:ListBucket", f"arn:aws:s3:::{params['Bucket']}")]
    if operation == "ListObjectVersions":
        return [_needs(call, "s3:ListBucketVersions", f"arn:aws:s3:::{params['Bucket']}")]
    return None


def _sqs_permissions(call: AwsCall, account: str) -> list[Permission] | None:
    if call.operation not in _SQS_ACTIONS:
        return None
    queue = _queue_arn(call.params, call.region, account)
    return [_needs(call, _SQS_ACTIONS[call.operation], queue)]


def _bedrock_permissions(call: AwsCall, account: str) -> list[Permission] | None:
    if call.operation in ("Converse", "InvokeModel"):
        return _model_permissions(call, account, "bedrock:InvokeModel")
    if call.operation in ("ConverseStream", "InvokeModelWithResponseStream"):
        return _model_permissions(call, account, "bedrock:InvokeModelWithResponseStream")
    return None


def _secrets_permissions(call: AwsCall, account: str) -> list[Permission] | None:
    if call.operation != "GetSecretValue":
        return None
    secret = str(call.params["SecretId"])
    if not secret.startswith("arn:"):
        secret = f"arn:aws:secretsmanager:{call.region}:{account}:secret:{secret}"
    return [_needs(call, "secretsmanager:GetSecretValue", secret)]


_PERMISSIONS_BY_SERVICE: dict[str, Callable[[AwsCall, str], list[Permission] | None]] = {
    "dynamodb": _dynamodb_permissions,
    "secretsmanager": _secrets_permissions,
    "s3": _s3_permissions,
    "sqs": _sqs_permissions,
    "bedrock-runtime": _bedrock_permissions,
}
"""Per service: the permissions of one of its operations, or None for one not mapped."""


def _queue_arn(params: dict[str, Any], region: str, account: str) -> str:
    if "QueueUrl" in params:
        owner, name = urlparse(params["QueueUrl"]).path.strip("/").split("/")[-2:]
        return f"arn:aws:sqs:{region}:{owner}:{name}"
    return f"arn:aws:sqs:{region}:{account}:{params['QueueName']}"


def _model_permissions(call: AwsCall, account: str, action: str) -> list[Permission]:
    model = str(call.params["modelId"])
    function = call.function
    if model.startswith("arn:"):
        return [Permission(function, action, model)]
    if model.startswith(_GEO_PREFIXES):
        profile = f"arn:aws:bedrock:{call.region}:{account}:inference-profile/{model}"
        foundation = model.split(".", 1)[1]
        return [
            Permission(function, action, profile),
            Permission(
                function,
                action,
                f"arn:aws:bedrock:{call.region}::foundation-model/{foundation}",
                (("bedrock:InferenceProfileArn", profile),),
            ),
        ]
    return [
        Permission(function, action, f"arn:aws:bedrock:{call.region}::foundation-model/{model}")
    ]


def _matches(pattern: str, value: str) -> bool:
    """IAM's wildcard match (``*`` any run, ``?`` one character), case-sensitive."""
    regex = "".join(
        ".*" if char == "*" else "." if char == "?" else re.escape(char) for char in pattern
    )
    return re.fullmatch(regex, value, re.DOTALL) is not None


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _condition_holds(condition: dict[str, Any] | None, context: dict[str, str]) -> bool:
    if not condition:
        return True
    for operator, tests in condition.items():
        if operator not in ("StringEquals", "StringLike", "ArnEquals", "ArnLike"):
            raise ValueError(f"condition operator {operator} is not implemented")
        like = operator.endswith("Like")
        for key, expected in tests.items():
            actual = context.get(key)
            if actual is None:
                return False
            if not any(
                _matches(value, actual) if like else value == actual for value in _as_list(expected)
            ):
                return False
    return True


def statement_allows(statement: dict[str, Any], permission: Permission) -> bool:
    """Whether one resolved ``Allow`` statement grants ``permission``.

    Raises:
        ValueError: a statement this checker does not evaluate (Deny, NotAction …).
    """
    if statement.get("Effect") != "Allow" or {"NotAction", "NotResource"} & set(statement):
        raise ValueError(f"only plain Allow statements are checked: {statement}")
    return (
        any(_matches(action, permission.action) for action in _as_list(statement["Action"]))
        and any(
            _matches(resource, permission.resource) for resource in _as_list(statement["Resource"])
        )
        and _condition_holds(statement.get("Condition"), dict(permission.context))
    )


class Audit:
    """The roles of ``infra/iam.py`` held against calls.

    Args:
        stacks: the environment of each call ``source`` (``tests``, ``local_server``).
    """

    def __init__(self, stacks: dict[str, Stack] | None = None) -> None:
        self.stacks = stacks or {}
        self._policies: dict[tuple[str, str], tuple[Stack, list[dict[str, Any]]]] = {}

    def policy(self, function: str, source: str) -> list[dict[str, Any]]:
        """``function``'s resolved statements in the environment of ``source`` (resolved
        once per function and environment: the roles are code, and the test suite judges
        every call against them)."""
        stack = self.stacks[source]
        kept = self._policies.get((function, source))
        if kept is None or kept[0] is not stack:
            document = resolve(iam.policy_document(function), stack)
            kept = self._policies[(function, source)] = (stack, list(document["Statement"]))
        return list(kept[1])

    def permissions(self, call: AwsCall) -> list[Permission]:
        """``permissions(call)`` with the environment's account."""
        return permissions(call, self.stacks[call.source].account)

    def denied(self, calls: Iterable[AwsCall]) -> list[str]:
        """Each permission a call needed that its function's role does not grant."""
        found = []
        for call in calls:
            if call.function not in iam.FUNCTIONS:
                found.append(f"{call.function}: not a Lambda function of the app ({call})")
                continue
            statements = self.policy(call.function, call.source)
            for permission in self.permissions(call):
                if not any(statement_allows(statement, permission) for statement in statements):
                    found.append(f"{permission} ({call.service}.{call.operation})")
        return sorted(set(found))

    def unused(self, calls: Iterable[AwsCall]) -> list[str]:
        """Each (action, resource) a role grants to its function's code that no call
        needed (each call judged in its own environment). ``runtime`` grants are the
        Lambda service's, not the code's, and statements the tests' stack leaves out
        (its conditions) are not judged."""
        needed: dict[str, list[tuple[str, Permission]]] = {name: [] for name in iam.FUNCTIONS}
        for call in calls:
            if call.function in needed:
                needed[call.function] += [(call.source, p) for p in self.permissions(call)]
        conditions = self.stacks["tests"].conditions()
        found = []
        for function in iam.FUNCTIONS:
            for grant in iam.grants(function):
                if grant.runtime or (grant.condition and not conditions[grant.condition]):
                    continue
                statements = {
                    source: resolve(grant.statement(), stack)
                    for source, stack in self.stacks.items()
                }
                for action in grant.actions:
                    for number, resource in enumerate(statements["tests"]["Resource"]):
                        used = any(
                            statement_allows(
                                {
                                    **statements[source],
                                    "Action": action,
                                    "Resource": statements[source]["Resource"][number],
                                },
                                permission,
                            )
                            for source, permission in needed[function]
                        )
                        if not used:
                            found.append(f"{function}: {grant.sid} grants {action} on {resource}")
        return found
