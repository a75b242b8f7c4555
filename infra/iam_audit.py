"""Hold the roles of ``infra/iam.py`` against recorded AWS calls (``infra/aws_calls.py``).

Three parts:

* ``permissions``: the IAM permissions one API call needs, each an action on a
  resource ARN (with the request's condition keys). The operations inside a
  transaction count one by one (``Put`` -> ``dynamodb:PutItem`` …, ``TransactGetItems``
  -> ``dynamodb:GetItem``); a batch needs its action on each of its tables; a Query
  with ``IndexName`` is on the index's ARN; S3 objects are ``bucket/key`` ARNs; SQS
  queues are known by URL or name; Bedrock's Converse is ``bedrock:InvokeModel`` on
  the model, or on the inference profile and, through it, on the foundation model.
* ``resolve``: the CloudFormation expressions of a role's policy (``Ref``,
  ``Fn::GetAtt``, ``Fn::Sub``, ``Fn::If``, ``Fn::Equals``, ``Fn::Join``) evaluated
  for a given stack (``Stack``: the names the tests' or the local server's resources
  really have).
* ``Audit``: which calls a function's policy does not allow (``denied``), and which
  granted (action, resource) pairs no call used (``unused``). Policies here only
  ``Allow``; a ``Deny``, ``NotAction`` or ``NotResource`` is refused rather than
  half-understood.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from infra import iam, template
from infra.aws_calls import AwsCall

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
        name. region, account: where they are. reviewer, model: the parameters
        ``Reviewer`` and ``BedrockModelId``. log_groups: function -> log group name.
    """

    table: str
    bucket: str
    queue: str
    region: str = "us-east-1"
    account: str = ACCOUNT
    reviewer: str = "bedrock"
    model: str = "anthropic.claude-test-v1:0"
    log_groups: dict[str, str] = field(
        default_factory=lambda: {name: f"/aws/lambda/{name}" for name in iam.FUNCTIONS}
    )

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
            "Reviewer": self.reviewer,
            "BedrockModelId": self.model,
        }

    def attributes(self) -> dict[str, str]:
        """``Fn::GetAtt`` values, as ``Resource.Attribute``."""
        found = {
            "MemoryTable.Arn": f"arn:aws:dynamodb:{self.region}:{self.account}:table/{self.table}",
            "LargeObjectBucket.Arn": f"arn:aws:s3:::{self.bucket}",
            "ReviewQueue.Arn": f"arn:aws:sqs:{self.region}:{self.account}:{self.queue}",
            "ReviewQueue.QueueName": self.queue,
        }
        for function, prefix in iam.FUNCTIONS.items():
            found[f"{prefix}LogGroup.Arn"] = (
                f"arn:aws:logs:{self.region}:{self.account}:log-group:{self.log_groups[function]}:*"
            )
        return found

    def conditions(self) -> dict[str, bool]:
        """The template's conditions (``infra.template.CONDITIONS``), evaluated."""
        return {
            name: bool(resolve(expression, self))
            for name, expression in template.CONDITIONS.items()
        }


_NO_VALUE = object()


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
        if key == "Ref":
            return _NO_VALUE if argument == "AWS::NoValue" else stack.refs()[argument]
        if key == "Fn::GetAtt":
            return stack.attributes()[".".join(argument)]
        if key == "Fn::Sub":
            return _substitute(argument, stack)
        if key == "Fn::Join":
            separator, values = argument
            return separator.join(resolve(values, stack))
        if key == "Fn::If":
            name, then, otherwise = argument
            return resolve(then if stack.conditions()[name] else otherwise, stack)
        if key == "Fn::Equals":
            first, second = resolve(argument, stack)
            return first == second
        if key == "Fn::And":
            return all(resolve(argument, stack))
        if key == "Fn::Or":
            return any(resolve(argument, stack))
        if key == "Fn::Not":
            return not resolve(argument, stack)[0]
        if key == "Condition":
            return resolve(template.CONDITIONS[argument], stack)
        if key == "Fn::Select":
            index, values = argument
            return resolve(values, stack)[int(index)]
        if key == "Fn::Split":
            separator, value = argument
            return str(resolve(value, stack)).split(separator)
        if key.startswith("Fn::"):
            raise ValueError(f"{key} is not implemented by infra.iam_audit.resolve")
    resolved = {key: resolve(value, stack) for key, value in node.items()}
    return {key: value for key, value in resolved.items() if value is not _NO_VALUE}


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
    service, operation, params = call.service, call.operation, call.params

    def needs(action: str, resource: str, **context: str) -> Permission:
        return Permission(call.function, action, resource, tuple(sorted(context.items())))

    if service == "dynamodb":
        table = f"arn:aws:dynamodb:{call.region}:{account}:table/"
        if operation in ("TransactWriteItems", "TransactGetItems"):
            actions = {
                "Put": "PutItem",
                "Update": "UpdateItem",
                "Delete": "DeleteItem",
                "ConditionCheck": "ConditionCheckItem",
                "Get": "GetItem",
            }
            return [
                needs(f"dynamodb:{actions[kind]}", table + name) for kind, name in params["items"]
            ]
        if operation in ("BatchGetItem", "BatchWriteItem"):
            return [needs(f"dynamodb:{operation}", table + name) for name in params["tables"]]
        if operation in ("GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan"):
            resource = table + params["TableName"]
            if "IndexName" in params:
                resource += f"/index/{params['IndexName']}"
            return [needs(f"dynamodb:{operation}", resource)]
    if service == "s3":
        objects = {
            "GetObject": "s3:GetObject",
            "HeadObject": "s3:GetObject",
            "PutObject": "s3:PutObject",
            "DeleteObject": "s3:DeleteObject",
        }
        if operation in objects:
            return [needs(objects[operation], f"arn:aws:s3:::{params['Bucket']}/{params['Key']}")]
        if operation in ("ListObjectsV2", "ListObjects"):
            return [needs("s3:ListBucket", f"arn:aws:s3:::{params['Bucket']}")]
    if service == "sqs":
        queue = _queue_arn(params, call.region, account)
        actions = {
            "GetQueueUrl": "sqs:GetQueueUrl",
            "SendMessage": "sqs:SendMessage",
            "SendMessageBatch": "sqs:SendMessage",
            "ReceiveMessage": "sqs:ReceiveMessage",
            "DeleteMessage": "sqs:DeleteMessage",
            "DeleteMessageBatch": "sqs:DeleteMessage",
            "ChangeMessageVisibility": "sqs:ChangeMessageVisibility",
            "GetQueueAttributes": "sqs:GetQueueAttributes",
        }
        if operation in actions:
            return [needs(actions[operation], queue)]
    if service == "bedrock-runtime" and operation in ("Converse", "InvokeModel"):
        return _model_permissions(call, account, "bedrock:InvokeModel")
    if service == "bedrock-runtime" and operation in (
        "ConverseStream",
        "InvokeModelWithResponseStream",
    ):
        return _model_permissions(call, account, "bedrock:InvokeModelWithResponseStream")
    raise ValueError(f"no IAM mapping for {service}.{operation} (add it to infra/iam_audit.py)")


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

    def policy(self, function: str, source: str) -> list[dict[str, Any]]:
        """``function``'s resolved statements in the environment of ``source``."""
        document = resolve(iam.policy_document(function), self.stacks[source])
        return list(document["Statement"])

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
