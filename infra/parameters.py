"""Template parameters shared by more than one part of the templates, defined once:
the optional customer-managed KMS key (``KmsKeyArn``) that the table, bucket, queues
and alarm topic use when it is set (docs/operations.md#data-protection-backup-and-restore,
docs/operations.md#alarms-and-runbook).
"""

from __future__ import annotations

from typing import Any

KMS_KEY_ARN = "KmsKeyArn"
"""The parameter's logical name."""
HAS_KMS_KEY = "HasKmsKey"
"""The condition "``KmsKeyArn`` is set"."""


def kms_parameter() -> dict[str, Any]:
    """The ``KmsKeyArn`` parameter: empty (the default) or the ARN of a KMS key."""
    return {
        "Type": "String",
        "Default": "",
        "AllowedPattern": "^$|^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[0-9a-f-]+$",
        "Description": "ARN of a customer-managed KMS key for the table, bucket, queues and "
        "alarm topic; empty: AWS-owned or AWS-managed keys (and a key of the stack's own "
        "for the alarm topic). Its key policy must allow the services that use it.",
    }


def kms_condition() -> dict[str, Any]:
    """The ``HasKmsKey`` condition's body."""
    return {"Fn::Not": [{"Fn::Equals": [{"Ref": KMS_KEY_ARN}, ""]}]}
