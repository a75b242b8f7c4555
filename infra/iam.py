"""One least-privilege IAM role per Lambda function (docs/issues.md#issue-12;
docs/reference.md#14-operations), as CloudFormation resources: every ARN comes from the stack
(``Fn::GetAtt`` of the table, or ``ExistingTableName``'s ARN, of the bucket, queues and log
groups, ``Fn::Sub`` of the pseudo parameters and the ``BedrockModelId`` and ``KmsKeyArn``
parameters), none is written here.

Both deploy paths use these roles: ``make package`` merges them into Chalice's
template, and ``make deploy`` creates them in the resources stack and hands their
ARNs to ``chalice deploy`` (``iam_role_arn`` per function). The grants are exactly
the permissions the functions' code was seen to need: ``tests/iam_plugin.py``
records every AWS call of each entry point during the test suite and fails when a
role misses one, or grants one that nothing used. ``runtime`` grants are used by the
Lambda service on the function's behalf (writing its logs; polling its queue), not
by our code, so no recorded call needs them (the customer-managed key's grant, used by
DynamoDB, S3 and SQS for the function's requests, is one too); a unit test checks their
shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.storage.keys import (
    BY_AGENT_KIND,
    BY_ROUTINE_STATUS,
    BY_TOKEN_PRINCIPAL,
    BY_WORKSPACE_SHARD,
    BY_WORKSPACE_STATUS_SHARD,
    EXPORT_OBJECT_PREFIX,
    MODEL_OBJECT_PREFIX,
    RECALL_INDEX_OBJECT_PREFIX,
    WIKI_SECTIONS_OBJECT_PREFIX,
)
from infra.parameters import HAS_KMS_KEY, KMS_KEY_ARN
from infra.protection import TABLE_ARN
from infra.tables import INDEX_RELEASE_ORDER

FUNCTIONS: dict[str, str] = {
    "api_handler": "ApiHandler",
    "review_fanout": "ReviewFanout",
    "review_worker": "ReviewWorker",
    "lifecycle_worker": "LifecycleWorker",
}
"""Chalice's Lambda function names -> the prefix of their resources' logical ids
(``ApiHandlerRole``, ``ApiHandlerLogGroup``)."""
USE_BEDROCK = "UseBedrock"
"""The template condition ``Reviewer == bedrock`` (``infra/template.py``)."""
BEDROCK_MODEL = "BedrockReviewerCallsModel"
"""``UseBedrock`` and ``BedrockModelId`` names a foundation model."""
BEDROCK_PROFILE = "BedrockReviewerCallsProfile"
"""``UseBedrock`` and ``BedrockModelId`` names a cross-region inference profile."""

_TABLE = TABLE_ARN
"""The table the functions use (the stack's own, or ``ExistingTableName``)."""
_QUEUE = {"Fn::GetAtt": ["ReviewQueue", "Arn"]}
_LIFECYCLE_QUEUE = {"Fn::GetAtt": ["LifecycleQueue", "Arn"]}


def _index(name: str) -> dict[str, Any]:
    return {"Fn::Sub": [f"${{Table}}/index/{name}", {"Table": _TABLE}]}


def index_name(resource: Any) -> str:
    """The GSI name of a resource ``_index`` made; empty for any other resource."""
    if isinstance(resource, dict) and isinstance(resource.get("Fn::Sub"), list):
        text = str(resource["Fn::Sub"][0])
        if text.startswith("${Table}/index/"):
            return text.removeprefix("${Table}/index/")
    return ""


def _objects(prefix: str) -> dict[str, Any]:
    return {"Fn::Sub": f"${{LargeObjectBucket.Arn}}/{prefix}*"}


_PROFILE = "arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}:inference-profile/"


@dataclass(frozen=True)
class Grant:
    """One policy statement of one role.

    Attributes:
        sid: the statement id (what it is for).
        actions: IAM actions, e.g. ``dynamodb:GetItem``.
        resources: CloudFormation expressions of the resources' ARNs.
        runtime: used by the Lambda service for the function, not by its code.
        condition: the template condition the statement depends on, if any.
        when: IAM condition block (``{"StringEquals": {...}}``), if any.
    """

    sid: str
    actions: tuple[str, ...]
    resources: tuple[Any, ...]
    runtime: bool = False
    condition: str | None = None
    when: dict[str, Any] | None = None

    def statement(self) -> dict[str, Any]:
        """The IAM policy statement."""
        statement: dict[str, Any] = {
            "Sid": self.sid,
            "Effect": "Allow",
            "Action": list(self.actions),
            "Resource": list(self.resources),
        }
        if self.when:
            statement["Condition"] = self.when
        return statement


def _logs(function: str) -> Grant:
    """The function's own log group only (it exists before the function: the template
    creates it, with its retention, so ``logs:CreateLogGroup`` is not granted)."""
    return Grant(
        "OwnLogGroup",
        ("logs:CreateLogStream", "logs:PutLogEvents"),
        ({"Fn::GetAtt": [f"{FUNCTIONS[function]}LogGroup", "Arn"]},),
        runtime=True,
    )


KMS_ACTIONS = ("kms:Decrypt", "kms:DescribeKey", "kms:GenerateDataKey")
"""What a function's role needs of the customer-managed key: DynamoDB decrypts the
table's key with the caller's rights (``Decrypt``, ``DescribeKey``); S3 and SQS need a
data key to write (``GenerateDataKey``) and ``Decrypt`` to read."""
KMS_SERVICES = ("dynamodb", "s3", "sqs")
"""The services through which (``kms:ViaService``) the functions may use the key."""


def _kms() -> Grant:
    """The customer-managed key (``KmsKeyArn``), only when it is set and only through the
    stack's services in its region; the services call KMS for the function's requests,
    so no recorded call of the code needs it (``runtime``)."""
    return Grant(
        "CustomerManagedKey",
        KMS_ACTIONS,
        ({"Ref": KMS_KEY_ARN},),
        runtime=True,
        condition=HAS_KMS_KEY,
        when={
            "StringEquals": {
                "kms:ViaService": [
                    {"Fn::Sub": f"{service}.${{AWS::Region}}.amazonaws.com"}
                    for service in KMS_SERVICES
                ]
            }
        },
    )


_FANOUT_FAILURES = Grant(
    "FanoutFailureDestination",
    ("sqs:SendMessage",),
    ({"Fn::GetAtt": ["ReviewFanoutFailureQueue", "Arn"]},),
    runtime=True,
)
"""Lambda sends a failed asynchronous invocation of the fan-out to its ``OnFailure``
destination with the function's role (``infra/observability.py``)."""
_READS = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query")
_WRITES = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem")
_PENDING_LIST = "dynamodb:BatchWriteItem"
"""A review files the actions that wait for a person in one batch (``review_actions.py``)."""
_API_ITEMS = Grant(
    "MemoryTable", (*_READS, *_WRITES, _PENDING_LIST, "dynamodb:DeleteItem"), (_TABLE,)
)
"""Deletes: key-value ``forget``, a day row's pointer released by an archive, the recall
index entry of a fact archived or vetoed (docs/issues.md#issue-23-item-1), a wiki page's
left-over sections in the section index (docs/reference.md#page-sections), the
dashboard's sign-out (its session) and one-time sign-in codes (used once), and an
``Idempotency-Key`` released when its first request failed. The idempotency records
(docs/issues.md#issue-15, ``chalicelib/storage/idempotency.py``: conditional ``PutItem``, consistent
``GetItem``, ``UpdateItem``, ``DeleteItem``) are written by this function only."""
_REVIEW_ITEMS = Grant(
    "MemoryTable", (*_READS, *_WRITES, _PENDING_LIST, "dynamodb:DeleteItem"), (_TABLE,)
)
"""A review supersedes, renews, archives facts and lifts new ones. No memory is deleted;
the recall index entry of a fact it archives is (docs/issues.md#issue-23-item-1), in the
archive's transaction."""
_LIFECYCLE_ITEMS = Grant(
    "MemoryTable",
    (*_READS, "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", _PENDING_LIST),
    (_TABLE,),
)
"""An erasure reads an owner's items by key, deletes them (one by one and in batches)
and writes its record and tombstone; an export reads them and writes its record. No
transaction checks a condition on another item (``ConditionCheckItem``)."""
_SEND_REVIEWS = Grant("ReviewQueueSend", ("sqs:GetQueueUrl", "sqs:SendMessage"), (_QUEUE,))
_SEND_LIFECYCLE = Grant(
    "LifecycleQueueSend", ("sqs:GetQueueUrl", "sqs:SendMessage"), (_LIFECYCLE_QUEUE,)
)
"""A person's erasure or export is queued for the lifecycle worker
(docs/reference.md#the-lifecycle-queue)."""


def _queue_events(sid: str, queue: Any) -> Grant:
    """Lambda's SQS trigger polls ``queue`` with the worker's role (``runtime``)."""
    return Grant(
        sid,
        ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"),
        (queue,),
        runtime=True,
    )


def _lifecycle_jobs() -> list[Grant]:
    """What a person's erasure of an agent and an export need besides the table's items
    (docs/reference.md#exports-for-a-person): the erased agent's tokens, revoked before
    its data goes; its objects listed and their versions deleted; an export reads
    reports and key-value values and writes its file. The lifecycle worker's, and the
    review worker's while a job message of release 0.1.0 may still wait on the review
    queue (expand/contract, CHANGELOG.md: a later release removes them there)."""
    return [
        Grant("AgentTokens", ("dynamodb:Query",), (_index(BY_TOKEN_PRINCIPAL),)),
        Grant(
            "LifecycleListing",
            ("s3:ListBucket", "s3:ListBucketVersions"),
            ({"Fn::GetAtt": ["LargeObjectBucket", "Arn"]},),
        ),
        Grant("ExportSources", ("s3:GetObject",), (_objects("reviews/"), _objects("kv/"))),
        Grant("ExportFiles", ("s3:PutObject",), (_objects(EXPORT_OBJECT_PREFIX),)),
        Grant(
            "ErasedVersions",
            ("s3:DeleteObjectVersion",),
            (
                _objects("reviews/"),
                _objects(EXPORT_OBJECT_PREFIX),
                _objects(RECALL_INDEX_OBJECT_PREFIX),
            ),
        ),
    ]


def _bedrock() -> list[Grant]:
    """``bedrock:InvokeModel`` on the configured model (``BedrockModelId``), only when the
    reviewer is ``bedrock``: the foundation model in the stack's region; or, for an
    inference profile, the profile and, through that profile only, the foundation
    models it routes to in any region."""
    profile = {"Fn::Sub": _PROFILE + "${BedrockModelId}"}
    model = "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${BedrockModelId}"
    return [
        Grant(
            "BedrockReviewerModel",
            ("bedrock:InvokeModel",),
            ({"Fn::Sub": model},),
            condition=BEDROCK_MODEL,
        ),
        Grant(
            "BedrockReviewerProfile",
            ("bedrock:InvokeModel",),
            (profile,),
            condition=BEDROCK_PROFILE,
        ),
        Grant(
            "BedrockReviewerThroughProfile",
            ("bedrock:InvokeModel",),
            ({"Fn::Sub": "arn:${AWS::Partition}:bedrock:*::foundation-model/*"},),
            condition=BEDROCK_PROFILE,
            when={"StringEquals": {"bedrock:InferenceProfileArn": profile}},
        ),
    ]


def grants(function: str, with_previous: bool = True) -> list[Grant]:
    """Every statement of ``function``'s role.

    Args:
        function: a key of ``FUNCTIONS``.
        with_previous: add ``PreviousReleaseIndexes``: ``dynamodb:Query`` on the GSIs the
            previous release's code of ``function`` queries and this one does not
            (``infra/releases.py``; none when they read the same), so the code still
            serving during an upgrade, or restored by a rollback, is never refused.

    Returns:
        The grants, in policy order.
    """
    found = _grants(function)
    if with_previous:
        found += _previous_release_grant(function, found)
    return found


def _previous_release_grant(function: str, current: list[Grant]) -> list[Grant]:
    from infra.releases import previous_release_reads

    queried = {
        index_name(resource)
        for grant in current
        if "dynamodb:Query" in grant.actions
        for resource in grant.resources
    }
    extra = [
        name
        for name in previous_release_reads(function)
        if name not in queried and name in INDEX_RELEASE_ORDER
    ]
    if not extra:
        return []
    return [Grant("PreviousReleaseIndexes", ("dynamodb:Query",), tuple(map(_index, extra)))]


def _grants(function: str) -> list[Grant]:
    """The statements of ``function``'s role that its own code needs (``grants``)."""
    if function == "api_handler":
        return [
            _API_ITEMS,
            Grant(
                "MemoryLists",
                ("dynamodb:Query",),
                tuple(
                    _index(name)
                    for name in (
                        BY_AGENT_KIND,
                        BY_WORKSPACE_SHARD,
                        BY_WORKSPACE_STATUS_SHARD,
                        BY_ROUTINE_STATUS,
                    )
                ),
            ),
            # an owner's People and agents page lists each agent's tokens
            # (docs/reference.md#people-and-agents)
            Grant("AgentTokens", ("dynamodb:Query",), (_index(BY_TOKEN_PRINCIPAL),)),
            Grant(
                "KeyValueObjects",
                ("s3:GetObject", "s3:PutObject", "s3:DeleteObject"),
                (_objects("kv/"),),
            ),
            Grant(
                "ReviewReports",
                ("s3:GetObject", "s3:PutObject", "s3:DeleteObjectVersion"),
                (_objects("reviews/"),),
            ),
            # Erasing a memory (docs/reference.md#erasing-a-memory): the agent's reports
            # are listed and rewritten, replaced volumes' and cached exports' versions
            # deleted (the bucket is versioned).
            Grant(
                "ErasureListing",
                ("s3:ListBucket", "s3:ListBucketVersions"),
                ({"Fn::GetAtt": ["LargeObjectBucket", "Arn"]},),
            ),
            Grant(
                "ErasureVersions",
                ("s3:DeleteObjectVersion",),
                (_objects(RECALL_INDEX_OBJECT_PREFIX), _objects(EXPORT_OBJECT_PREFIX)),
            ),
            # Volumes of the recall index, written and replaced by the reads that merge
            # segments (docs/issues.md#issue-23-item-2).
            Grant(
                "RecallIndexVolumes",
                ("s3:GetObject", "s3:PutObject", "s3:DeleteObject"),
                (_objects(RECALL_INDEX_OBJECT_PREFIX),),
            ),
            # Packed sections of published pages, a record a page, written by a page's
            # change and read by recall (docs/issues.md#issue-45-item-3).
            Grant(
                "WikiSectionRecords",
                ("s3:GetObject", "s3:PutObject", "s3:DeleteObject"),
                (_objects(WIKI_SECTIONS_OBJECT_PREFIX),),
            ),
            # Model weights too large for the zip (the recall reranker's), read once per
            # container into /tmp; the deploys upload them (docs/operations.md#reranker-weights).
            Grant("ModelWeights", ("s3:GetObject",), (_objects(MODEL_OBJECT_PREFIX),)),
            # The keyed digests' secret, read once per container on the first digest
            # (docs/reference.md#keyed-hashes-of-personal-data).
            Grant("HashSecret", ("secretsmanager:GetSecretValue",), ({"Ref": "HashSecret"},)),
            # A person's export: is its file still there, and the 15-minute link signed
            # with this role (docs/reference.md#exports-for-a-person).
            Grant("ExportFiles", ("s3:GetObject",), (_objects(EXPORT_OBJECT_PREFIX),)),
            _SEND_REVIEWS,
            _SEND_LIFECYCLE,
            _logs(function),
            _kms(),
        ]
    if function == "review_fanout":
        return [
            Grant("ActiveRoutines", ("dynamodb:Query",), (_index(BY_ROUTINE_STATUS),)),
            _SEND_REVIEWS,
            _FANOUT_FAILURES,
            _logs(function),
            _kms(),
        ]
    if function == "review_worker":
        return [
            _REVIEW_ITEMS,
            # An agent's facts: listed by kind (``memory_index.list_by_kind``),
            # docs/issues.md#issue-13.
            Grant("AgentFacts", ("dynamodb:Query",), (_index(BY_AGENT_KIND),)),
            Grant("ReviewReports", ("s3:PutObject",), (_objects("reviews/"),)),
            *_lifecycle_jobs(),
            *_bedrock(),
            _queue_events("ReviewQueueEvents", _QUEUE),
            _logs(function),
            _kms(),
        ]
    if function == "lifecycle_worker":
        return [
            _LIFECYCLE_ITEMS,
            Grant("OwnerItems", ("dynamodb:Query",), (_index(BY_AGENT_KIND),)),
            *_lifecycle_jobs(),
            _queue_events("LifecycleQueueEvents", _LIFECYCLE_QUEUE),
            _logs(function),
            _kms(),
        ]
    raise ValueError(f"no Lambda function {function!r} (one of {sorted(FUNCTIONS)})")


def policy_document(function: str) -> dict[str, Any]:
    """``function``'s policy document, with ``Fn::If`` around conditional statements."""
    statements: list[Any] = []
    for grant in grants(function):
        if grant.condition:
            statements.append(
                {"Fn::If": [grant.condition, grant.statement(), {"Ref": "AWS::NoValue"}]}
            )
        else:
            statements.append(grant.statement())
    return {"Version": "2012-10-17", "Statement": statements}


def lambda_role(policy_name: str, document: dict[str, Any]) -> dict[str, Any]:
    """An ``AWS::IAM::Role`` assumable by Lambda only, with one inline policy."""
    return {
        "Type": "AWS::IAM::Role",
        "Properties": {
            "AssumeRolePolicyDocument": {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "lambda.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                ],
            },
            "Policies": [{"PolicyName": policy_name, "PolicyDocument": document}],
        },
    }


def role_resources() -> dict[str, Any]:
    """``<Function>Role`` for every function: assumable by Lambda only, one inline policy."""
    return {
        f"{prefix}Role": lambda_role(f"{prefix}Policy", policy_document(function))
        for function, prefix in FUNCTIONS.items()
    }
