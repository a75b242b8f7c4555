"""What protects the stack's data (docs/operations.md#data-protection-backup-and-restore,
``infra/protection.py``): stateful resources retained, the table's deletion protection,
the versioned, TLS-only bucket, the optional customer-managed key used by table, bucket,
queues and log groups (with the roles' grants), the optional backup plan, and a restored
table the stack points at; and the key-value store still working on a versioned bucket."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from chalicelib.settings import REVIEW_QUEUE_NAME
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.kv import DynamoDBKvRepository, S3ObjectStore
from chalicelib.storage.protocols import KvQuota
from infra import iam, protection
from infra.aws_calls import AwsCall, naming_params
from infra.iam_audit import Audit, Stack, resolve
from infra.parameters import backup_parameter, kms_parameter
from infra.template import package_fragment, resources_stack
from tests.helpers import BUCKET, TABLE

TEMPLATES = {"package": package_fragment, "resources": resources_stack}
STATEFUL = (
    "AWS::DynamoDB::Table",
    "AWS::S3::Bucket",
    "AWS::SQS::Queue",
    "AWS::Logs::LogGroup",
    "AWS::Backup::BackupVault",
)
KEY = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
PLAIN = Stack(table="t", bucket="b", queue=REVIEW_QUEUE_NAME)
KEYED = Stack(table="t", bucket="b", queue=REVIEW_QUEUE_NAME, kms_key=KEY)


def of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {
        name: resource
        for name, resource in template["Resources"].items()
        if resource.get("Type") == kind
    }


@pytest.mark.parametrize("kind", sorted(TEMPLATES))
def test_every_stateful_resource_is_kept_on_delete_and_on_replacement(kind: str) -> None:
    template = TEMPLATES[kind]()
    kept = {
        name: (resource.get("DeletionPolicy"), resource.get("UpdateReplacePolicy"))
        for stateful in STATEFUL
        for name, resource in of_type(template, stateful).items()
    }
    queues = {
        "ReviewQueue",
        "ReviewDeadLetterQueue",
        "ReviewFanoutFailureQueue",
        "LifecycleQueue",
        "LifecycleDeadLetterQueue",
    }
    logs = {f"{prefix}LogGroup" for prefix in iam.FUNCTIONS.values()}
    assert {"MemoryTable", "LargeObjectBucket", "MemoryBackupVault"} | queues | logs <= set(kept)
    assert set(kept.values()) == {("Retain", "Retain")}


def test_the_table_is_deletion_protected_and_recoverable_to_any_second() -> None:
    table = resources_stack()["Resources"]["MemoryTable"]["Properties"]
    assert table["DeletionProtectionEnabled"] is True
    assert table["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}


def test_the_bucket_is_versioned_and_old_versions_expire() -> None:
    bucket = resources_stack()["Resources"]["LargeObjectBucket"]["Properties"]
    assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}
    rules = {rule["Id"]: rule for rule in bucket["LifecycleConfiguration"]["Rules"]}
    everything = rules["NoncurrentVersions"]
    assert "Prefix" not in everything  # the whole bucket
    assert everything["NoncurrentVersionExpiration"] == {"NoncurrentDays": 30}
    assert everything["ExpiredObjectDeleteMarker"] is True
    anonymous = rules["AnonymousKeyValueValues"]
    assert anonymous["Prefix"] == "kv/anon/" and anonymous["ExpirationInDays"] == 2
    assert anonymous["NoncurrentVersionExpiration"] == {"NoncurrentDays": 1}


def test_s3_accepts_the_version_rules(aws: None) -> None:
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="versions")
    s3.put_bucket_versioning(Bucket="versions", VersioningConfiguration={"Status": "Enabled"})
    bucket = resources_stack()["Resources"]["LargeObjectBucket"]["Properties"]
    rules = {rule["Id"]: rule for rule in bucket["LifecycleConfiguration"]["Rules"]}
    s3.put_bucket_lifecycle_configuration(
        Bucket="versions",
        LifecycleConfiguration={
            "Rules": [
                {
                    "ID": "NoncurrentVersions",
                    "Status": "Enabled",
                    "Filter": {"Prefix": ""},
                    "NoncurrentVersionExpiration": rules["NoncurrentVersions"][
                        "NoncurrentVersionExpiration"
                    ],
                    "Expiration": {"ExpiredObjectDeleteMarker": True},
                },
                {
                    "ID": "AnonymousKeyValueValues",
                    "Status": "Enabled",
                    "Filter": {"Prefix": "kv/anon/"},
                    "Expiration": {"Days": 2},
                    "NoncurrentVersionExpiration": {"NoncurrentDays": 1},
                },
            ]
        },
    )
    stored = s3.get_bucket_lifecycle_configuration(Bucket="versions")["Rules"]
    assert [rule["NoncurrentVersionExpiration"]["NoncurrentDays"] for rule in stored] == [30, 1]


def test_the_bucket_refuses_every_request_without_tls() -> None:
    policy = resources_stack()["Resources"]["LargeObjectBucketPolicy"]
    assert policy["Properties"]["Bucket"] == {"Ref": "LargeObjectBucket"}
    (statement,) = resolve(policy["Properties"]["PolicyDocument"], PLAIN)["Statement"]
    assert statement["Effect"] == "Deny" and statement["Principal"] == "*"
    assert statement["Action"] == "s3:*"
    assert statement["Resource"] == ["arn:aws:s3:::b", "arn:aws:s3:::b/*"]
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def queues(template: dict[str, Any], stack: Stack) -> dict[str, dict[str, Any]]:
    """Each queue's encryption properties, evaluated for ``stack``."""
    return {
        name: resolve(
            {
                key: value
                for key, value in resource["Properties"].items()
                if key in ("KmsMasterKeyId", "SqsManagedSseEnabled")
            },
            stack,
        )
        for name, resource in of_type(template, "AWS::SQS::Queue").items()
    }


@pytest.mark.parametrize("kind", sorted(TEMPLATES))
def test_with_a_key_the_table_bucket_queues_and_logs_use_it(kind: str) -> None:
    template = TEMPLATES[kind]()
    resources = template["Resources"]
    table = resolve(resources["MemoryTable"]["Properties"]["SSESpecification"], KEYED)
    assert table == {"SSEEnabled": True, "SSEType": "KMS", "KMSMasterKeyId": KEY}
    (rule,) = resolve(resources["LargeObjectBucket"]["Properties"]["BucketEncryption"], KEYED)[
        "ServerSideEncryptionConfiguration"
    ]
    assert rule == {
        "ServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": KEY},
        "BucketKeyEnabled": True,
    }
    found = queues(template, KEYED)
    assert len(found) == 5  # review, lifecycle, their dead letters, the fan-out's failures
    for properties in found.values():
        assert properties["KmsMasterKeyId"] == KEY and "SqsManagedSseEnabled" not in properties
    for group in of_type(template, "AWS::Logs::LogGroup").values():
        assert group["Properties"]["KmsKeyId"] == {
            "Fn::If": ["HasKmsKey", {"Ref": "KmsKeyArn"}, {"Ref": "AWS::NoValue"}]
        }


def test_without_a_key_aws_keys_encrypt_as_before() -> None:
    resources = resources_stack()["Resources"]
    assert kms_parameter()["Default"] == ""
    table = resolve(resources["MemoryTable"]["Properties"]["SSESpecification"], PLAIN)
    assert table == {"SSEEnabled": True}
    (rule,) = resolve(resources["LargeObjectBucket"]["Properties"]["BucketEncryption"], PLAIN)[
        "ServerSideEncryptionConfiguration"
    ]
    assert rule == {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
    for properties in queues(resources_stack(), PLAIN).values():
        assert properties["SqsManagedSseEnabled"] is True and "KmsMasterKeyId" not in properties


def test_the_key_parameter_takes_a_key_arn_or_nothing() -> None:
    import re

    pattern = kms_parameter()["AllowedPattern"]
    assert re.fullmatch(pattern, "") and re.fullmatch(pattern, KEY)
    assert not re.fullmatch(pattern, "alias/pinework")
    assert not re.fullmatch(pattern, "arn:aws:kms:us-east-1:123456789012:alias/pinework")


@pytest.mark.parametrize("function", sorted(iam.FUNCTIONS))
def test_each_role_may_use_the_key_only_when_set_and_only_through_its_services(
    function: str,
) -> None:
    (grant,) = [g for g in iam.grants(function) if any(a.startswith("kms:") for a in g.actions)]
    assert grant.runtime and grant.condition == "HasKmsKey"
    assert grant.actions == ("kms:Decrypt", "kms:DescribeKey", "kms:GenerateDataKey")
    assert grant.resources == ({"Ref": "KmsKeyArn"},)
    keyed = [s for s in Audit({"tests": KEYED}).policy(function, "tests") if s["Sid"] == grant.sid]
    assert keyed == [
        {
            "Sid": "CustomerManagedKey",
            "Effect": "Allow",
            "Action": list(grant.actions),
            "Resource": [KEY],
            "Condition": {
                "StringEquals": {
                    "kms:ViaService": [
                        "dynamodb.us-east-1.amazonaws.com",
                        "s3.us-east-1.amazonaws.com",
                        "sqs.us-east-1.amazonaws.com",
                    ]
                }
            },
        }
    ]
    plain = Audit({"tests": PLAIN}).policy(function, "tests")
    assert not [statement for statement in plain if statement["Sid"] == grant.sid]


def test_only_the_fan_out_may_send_to_its_failure_queue() -> None:
    for function in iam.FUNCTIONS:
        sends = [
            grant
            for grant in iam.grants(function)
            if {"Fn::GetAtt": ["ReviewFanoutFailureQueue", "Arn"]} in grant.resources
        ]
        if function != "review_fanout":
            assert sends == []
            continue
        (grant,) = sends
        assert grant.actions == ("sqs:SendMessage",) and grant.runtime  # Lambda's destination


@pytest.mark.parametrize("kind", sorted(TEMPLATES))
def test_the_failure_queue_is_kept_two_weeks_and_named_in_the_outputs(kind: str) -> None:
    template = TEMPLATES[kind]()
    queue = template["Resources"]["ReviewFanoutFailureQueue"]["Properties"]
    assert queue["MessageRetentionPeriod"] == 14 * 24 * 3600
    outputs = template["Outputs"]
    assert outputs["ReviewFanoutFailureQueueArn"]["Value"] == {
        "Fn::GetAtt": ["ReviewFanoutFailureQueue", "Arn"]
    }
    assert outputs["ReviewFanoutFailureQueueName"]["Value"] == {
        "Fn::GetAtt": ["ReviewFanoutFailureQueue", "QueueName"]
    }


def test_the_backup_plan_is_off_by_default_and_backs_up_the_table_when_on() -> None:
    assert backup_parameter()["Default"] == "off"
    resources = resources_stack()["Resources"]
    backup = {name: r for name, r in resources.items() if r["Type"].startswith("AWS::Backup::")}
    backup["MemoryBackupRole"] = resources["MemoryBackupRole"]
    assert {r["Condition"] for r in backup.values()} == {"UseBackupPlan"}  # nothing when off
    (rule,) = backup["MemoryBackupPlan"]["Properties"]["BackupPlan"]["BackupPlanRule"]
    assert rule["Lifecycle"] == {"DeleteAfterDays": 35}
    assert rule["TargetBackupVault"] == {"Ref": "MemoryBackupVault"}
    selection = backup["MemoryBackupSelection"]["Properties"]["BackupSelection"]
    assert selection["IamRoleArn"] == {"Fn::GetAtt": ["MemoryBackupRole", "Arn"]}
    assert resolve(selection["Resources"], PLAIN) == [
        "arn:aws:dynamodb:us-east-1:123456789012:table/t"
    ]
    trust = backup["MemoryBackupRole"]["Properties"]["AssumeRolePolicyDocument"]
    assert trust["Statement"][0]["Principal"] == {"Service": "backup.amazonaws.com"}
    vault = backup["MemoryBackupVault"]["Properties"]
    assert resolve(vault, KEYED)["EncryptionKeyArn"] == KEY


def test_a_restored_table_replaces_the_stacks_own_for_every_function() -> None:
    resources = resources_stack()["Resources"]
    assert resources["MemoryTable"]["Condition"] == "CreateMemoryTable"  # released, retained
    restored = Stack(table="t", bucket="b", queue=REVIEW_QUEUE_NAME, existing_table="t-restored")
    assert resolve(protection.TABLE_NAME, restored) == "t-restored"
    assert resolve(protection.TABLE_NAME, PLAIN) == "t"
    assert resolve(resources_stack()["Outputs"]["TableName"]["Value"], restored) == "t-restored"
    audit = Audit({"tests": restored})
    query = AwsCall(
        "review_fanout",
        "dynamodb",
        "Query",
        "us-east-1",
        naming_params("Query", {"TableName": "t-restored", "IndexName": "byRoutineStatus"}),
    )
    assert audit.denied([query]) == []
    old = AwsCall(
        "review_fanout",
        "dynamodb",
        "Query",
        "us-east-1",
        naming_params("Query", {"TableName": "t", "IndexName": "byRoutineStatus"}),
    )
    assert audit.denied([old])  # the old table is no longer the functions'
    assert Audit({"tests": PLAIN}).denied([old]) == []


def test_forget_and_overwrite_work_on_a_versioned_bucket_and_keep_old_versions(
    dynamodb: Any, s3: Any
) -> None:
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    entries = DynamoDBKvRepository(
        DynamoDBTable(dynamodb, TABLE), S3ObjectStore(lambda: s3, BUCKET), inline_max_bytes=8
    )
    roomy = KvQuota(max_keys=100, max_bytes=100_000)
    args: dict[str, Any] = {"expires_at": None, "now": 0, "quota": roomy, "new_scopes": None}
    entries.put("byok#a", "k", "a large first value", **args)
    entries.put("byok#a", "k", "a large second value", **args)
    assert entries.get("byok#a", "k", now=0) == "a large second value"
    assert entries.delete("byok#a", "k", now=0) is True
    assert entries.get("byok#a", "k", now=0) is None
    assert s3.list_objects_v2(Bucket=BUCKET).get("KeyCount") == 0  # nothing current is left
    listed = s3.list_object_versions(Bucket=BUCKET)
    # Both values stay restorable as noncurrent versions until the lifecycle rule (30 days).
    assert len(listed["Versions"]) == 2 and not any(v["IsLatest"] for v in listed["Versions"])
    assert len(listed["DeleteMarkers"]) == 2
    data = s3.get_object(
        Bucket=BUCKET,
        Key=listed["Versions"][0]["Key"],
        VersionId=listed["Versions"][0]["VersionId"],
    )["Body"].read()
    assert data.decode() in ("a large first value", "a large second value")
    json.dumps(listed, default=str)  # (the listing an operator reads to restore)
