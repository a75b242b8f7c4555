"""What protects the stack's data (docs/operations.md#data-protection-backup-and-restore):
every stateful resource kept when the stack is deleted or the resource replaced
(``RETAINED``), the table's deletion protection and point-in-time recovery, the bucket's
versioning and TLS-only policy, the optional customer-managed KMS key (``KmsKeyArn``) of
table, bucket, queues and log groups, the optional AWS Backup plan (``BackupPlan``), and
``ExistingTableName``, which points the functions at a restored table instead of the
stack's own. ``infra/template.py`` builds the storage resources from these. Choices:
docs/DECISIONS.md#data-protection-and-index-upgrades-issue-22-items-4-and-5.
"""

from __future__ import annotations

from typing import Any

from infra import upgrade
from infra.parameters import (
    BACKUP_PLAN,
    EXISTING_TABLE_NAME,
    HAS_KMS_KEY,
    KMS_KEY_ARN,
    USE_BACKUP_PLAN,
    USE_EXISTING_TABLE,
    backup_condition,
    backup_parameter,
    existing_table_conditions,
    existing_table_parameter,
    kms_condition,
    kms_parameter,
)

RETAINED: dict[str, str] = {"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"}
"""Kept in the account when the stack is deleted, the resource leaves the template, or an
update replaces it (docs/operations.md#teardown says how to delete them for good)."""
NONCURRENT_VERSION_DAYS = 30
"""Days an overwritten or deleted object stays restorable as a noncurrent version."""
ANONYMOUS_NONCURRENT_DAYS = 1
"""The same for ``kv/anon/`` values, whose entries live 24 hours."""
BACKUP_RETENTION_DAYS = 35
"""Days the optional plan keeps each daily snapshot (as long as point-in-time recovery)."""
BACKUP_SCHEDULE = "cron(0 3 * * ? *)"
"""03:00 UTC daily, an hour before the nightly review's fan-out (04:00 UTC)."""
FANOUT_FAILURE_RETENTION = 1_209_600
"""14 days (SQS's maximum), in seconds: a failed night waits that long to be looked at."""

PARAMETERS: dict[str, Any] = {
    KMS_KEY_ARN: kms_parameter(),
    BACKUP_PLAN: backup_parameter(),
    EXISTING_TABLE_NAME: existing_table_parameter(),
    upgrade.TABLE_INDEX_LEVEL: upgrade.index_level_parameter(),
}
"""The parameters of both stacks this module adds."""
CONDITIONS: dict[str, Any] = {
    HAS_KMS_KEY: kms_condition(),
    USE_BACKUP_PLAN: backup_condition(),
    **existing_table_conditions(),
    **upgrade.index_conditions(),
}
"""The conditions of both stacks this module adds."""

_NO_VALUE = {"Ref": "AWS::NoValue"}
_KEY = {"Ref": KMS_KEY_ARN}
TABLE_NAME: dict[str, Any] = {
    "Fn::If": [USE_EXISTING_TABLE, {"Ref": EXISTING_TABLE_NAME}, {"Ref": "MemoryTable"}]
}
"""The name of the table the functions use: ``ExistingTableName`` or the stack's own."""
TABLE_ARN: dict[str, Any] = {
    "Fn::If": [
        USE_EXISTING_TABLE,
        {
            "Fn::Sub": "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}"
            ":table/${ExistingTableName}"
        },
        {"Fn::GetAtt": ["MemoryTable", "Arn"]},
    ]
}
"""The ARN of that table (IAM grants, the backup selection)."""


def with_key(with_kms: Any, without: Any) -> dict[str, Any]:
    """``with_kms`` when ``KmsKeyArn`` is set, else ``without`` (``AWS::NoValue`` for None)."""
    return {
        "Fn::If": [
            HAS_KMS_KEY,
            _NO_VALUE if with_kms is None else with_kms,
            _NO_VALUE if without is None else without,
        ]
    }


def table_properties() -> dict[str, Any]:
    """The table's properties, less its name, billing mode and key schema: the indexes of
    ``TableIndexLevel`` (``infra/upgrade.py``), deletion protection, point-in-time
    recovery, and server-side encryption with the customer-managed key when given (else
    DynamoDB's AWS-managed key, as before)."""
    return {
        **upgrade.table_schema(),
        "DeletionProtectionEnabled": True,
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        "SSESpecification": with_key(
            {"SSEEnabled": True, "SSEType": "KMS", "KMSMasterKeyId": _KEY}, {"SSEEnabled": True}
        ),
    }


def queue_encryption() -> dict[str, Any]:
    """A queue's encryption properties: the customer-managed key, or SQS-managed SSE."""
    return {"KmsMasterKeyId": with_key(_KEY, None), "SqsManagedSseEnabled": with_key(None, True)}


def bucket_encryption() -> dict[str, Any]:
    """The bucket's default encryption: SSE-KMS with the key and an S3 Bucket Key (fewer
    KMS requests), or SSE-S3 (AES256)."""
    return {
        "ServerSideEncryptionConfiguration": [
            {
                "ServerSideEncryptionByDefault": with_key(
                    {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": _KEY}, {"SSEAlgorithm": "AES256"}
                ),
                "BucketKeyEnabled": with_key(True, None),
            }
        ]
    }


def version_lifecycle_rules() -> list[dict[str, Any]]:
    """Lifecycle rules of the versioned bucket: noncurrent versions deleted after
    ``NONCURRENT_VERSION_DAYS``, delete markers with no version behind them removed."""
    return [
        {
            "Id": "NoncurrentVersions",
            "Status": "Enabled",
            "NoncurrentVersionExpiration": {"NoncurrentDays": NONCURRENT_VERSION_DAYS},
            "ExpiredObjectDeleteMarker": True,
        }
    ]


def bucket_policy() -> dict[str, Any]:
    """``LargeObjectBucketPolicy``: every request to the bucket over plain HTTP denied."""
    bucket = {"Fn::GetAtt": ["LargeObjectBucket", "Arn"]}
    return {
        "LargeObjectBucketPolicy": {
            "Type": "AWS::S3::BucketPolicy",
            **RETAINED,  # stays with the kept bucket
            "Properties": {
                "Bucket": {"Ref": "LargeObjectBucket"},
                "PolicyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "TlsOnly",
                            "Effect": "Deny",
                            "Principal": "*",
                            "Action": "s3:*",
                            "Resource": [bucket, {"Fn::Sub": "${LargeObjectBucket.Arn}/*"}],
                            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                        }
                    ],
                },
            },
        }
    }


def fanout_failure_queue(queue_name: Any) -> dict[str, Any]:
    """``ReviewFanoutFailureQueue``: where Lambda puts a failed asynchronous invocation of
    the nightly fan-out (its ``OnFailure`` destination, ``infra/observability.py``).

    Args:
        queue_name: a CloudFormation expression of the review queue's name (this one is
            ``<it>-fanout-failed``).
    """
    return {
        "ReviewFanoutFailureQueue": {
            "Type": "AWS::SQS::Queue",
            **RETAINED,
            "Properties": {
                "QueueName": {"Fn::Join": ["", [queue_name, "-fanout-failed"]]},
                "MessageRetentionPeriod": FANOUT_FAILURE_RETENTION,
                **queue_encryption(),
            },
        }
    }


def backup_resources() -> dict[str, Any]:
    """The optional AWS Backup plan (``BackupPlan=on``): a vault of the stack (the key,
    when given), a daily rule keeping each snapshot ``BACKUP_RETENTION_DAYS``, the table
    selected, and the role AWS Backup assumes, with AWS's managed backup and restore
    policies. Nothing is created when ``off``."""
    partition_policy = "arn:${AWS::Partition}:iam::aws:policy/service-role/"
    return {
        "MemoryBackupVault": {
            "Type": "AWS::Backup::BackupVault",
            "Condition": USE_BACKUP_PLAN,
            **RETAINED,  # its recovery points outlive the stack
            "Properties": {
                "BackupVaultName": {"Fn::Sub": "${AWS::StackName}-memories"},
                "EncryptionKeyArn": with_key(_KEY, None),
            },
        },
        "MemoryBackupPlan": {
            "Type": "AWS::Backup::BackupPlan",
            "Condition": USE_BACKUP_PLAN,
            "Properties": {
                "BackupPlan": {
                    "BackupPlanName": {"Fn::Sub": "${AWS::StackName}-memories"},
                    "BackupPlanRule": [
                        {
                            "RuleName": "DailyTable",
                            "TargetBackupVault": {"Ref": "MemoryBackupVault"},
                            "ScheduleExpression": BACKUP_SCHEDULE,
                            "StartWindowMinutes": 60,
                            "CompletionWindowMinutes": 720,
                            "Lifecycle": {"DeleteAfterDays": BACKUP_RETENTION_DAYS},
                        }
                    ],
                }
            },
        },
        "MemoryBackupRole": {
            "Type": "AWS::IAM::Role",
            "Condition": USE_BACKUP_PLAN,
            "Properties": {
                "AssumeRolePolicyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "backup.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                },
                "ManagedPolicyArns": [
                    {"Fn::Sub": partition_policy + "AWSBackupServiceRolePolicyForBackup"},
                    {"Fn::Sub": partition_policy + "AWSBackupServiceRolePolicyForRestores"},
                ],
            },
        },
        "MemoryBackupSelection": {
            "Type": "AWS::Backup::BackupSelection",
            "Condition": USE_BACKUP_PLAN,
            "Properties": {
                "BackupPlanId": {"Ref": "MemoryBackupPlan"},
                "BackupSelection": {
                    "SelectionName": "MemoryTable",
                    "IamRoleArn": {"Fn::GetAtt": ["MemoryBackupRole", "Arn"]},
                    "Resources": [TABLE_ARN],
                },
            },
        },
    }


def kept_log_group(name: Any, days: Any) -> dict[str, Any]:
    """An ``AWS::Logs::LogGroup`` kept when the stack is deleted (an incident's logs
    outlive a teardown), ``days`` its retention, encrypted as ``log_group_encryption``."""
    return {
        "Type": "AWS::Logs::LogGroup",
        **RETAINED,
        "Properties": {"LogGroupName": name, "RetentionInDays": days, **log_group_encryption()},
    }


def log_group_encryption() -> dict[str, Any]:
    """A log group's ``KmsKeyId``: the key when given (its policy must allow
    ``logs.<region>.amazonaws.com``), else CloudWatch Logs' own encryption."""
    return {"KmsKeyId": with_key(_KEY, None)}


FANOUT_FAILURE_OUTPUTS: dict[str, Any] = {
    "ReviewFanoutFailureQueueName": {
        "Value": {"Fn::GetAtt": ["ReviewFanoutFailureQueue", "QueueName"]}
    },
    "ReviewFanoutFailureQueueArn": {"Value": {"Fn::GetAtt": ["ReviewFanoutFailureQueue", "Arn"]}},
}
"""The failure queue's outputs of both stacks (the operations stack and its alarm read them)."""
