"""Template parameters and conditions shared by several parts of the stacks
(``infra/template.py``, ``infra/observability.py``, ``infra/protection.py``), so each
name is written once; and the ``Metadata`` shape of a checkov skip, which every stack's
resources use (``infra/rate_limits.py`` too). Choices:
docs/DECISIONS.md#data-protection-and-index-upgrades-issue-22-items-4-and-5.
"""

from __future__ import annotations

from typing import Any

KMS_KEY_ARN = "KmsKeyArn"
"""The parameter naming an optional customer-managed KMS key (empty: AWS keys)."""
HAS_KMS_KEY = "HasKmsKey"
"""The condition ``KmsKeyArn`` is not empty."""


def kms_parameter() -> dict[str, Any]:
    """The ``KmsKeyArn`` parameter: empty (the default) or a KMS key's ARN, e.g.
    ``arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab``
    (an alias is refused: IAM grants need the key's ARN)."""
    return {
        "Type": "String",
        "Default": "",
        "AllowedPattern": "^$|^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[0-9a-f-]+$",
        "Description": "ARN of a customer-managed KMS key for the table, bucket, queues, "
        "log groups and alarm topic; empty: AWS-owned or AWS-managed keys. The key policy "
        "must allow the services (docs/operations.md).",
    }


def kms_condition() -> dict[str, Any]:
    """The ``HasKmsKey`` condition: ``KmsKeyArn`` is set."""
    return {"Fn::Not": [{"Fn::Equals": [{"Ref": KMS_KEY_ARN}, ""]}]}


BACKUP_PLAN = "BackupPlan"
"""The parameter turning the optional AWS Backup plan ``on`` or ``off``."""
USE_BACKUP_PLAN = "UseBackupPlan"
"""The condition ``BackupPlan == on``."""


def backup_parameter() -> dict[str, Any]:
    """The ``BackupPlan`` parameter: ``off`` by default (point-in-time recovery is always
    on; the plan adds daily snapshots kept 35 days in a vault of their own)."""
    return {
        "Type": "String",
        "AllowedValues": ["off", "on"],
        "Default": "off",
        "Description": "on: an AWS Backup plan snapshots the table daily (03:00 UTC) into "
        "a vault of the stack and keeps each snapshot 35 days. Point-in-time recovery "
        "is on either way.",
    }


def backup_condition() -> dict[str, Any]:
    """The ``UseBackupPlan`` condition: ``BackupPlan`` is ``on``."""
    return {"Fn::Equals": [{"Ref": BACKUP_PLAN}, "on"]}


EXISTING_TABLE_NAME = "ExistingTableName"
"""The parameter naming a table the stack uses instead of creating its own (a restored
table, docs/operations.md#data-protection-backup-and-restore)."""
USE_EXISTING_TABLE = "UseExistingTable"
"""The condition ``ExistingTableName`` is set."""
CREATE_TABLE = "CreateMemoryTable"
"""The condition ``ExistingTableName`` is empty: the stack owns ``MemoryTable``."""


def existing_table_parameter() -> dict[str, Any]:
    """The ``ExistingTableName`` parameter: empty (the stack's own ``<stack>-memories``)
    or the name of a table in the stack's account and region, e.g. one restored from a
    point in time."""
    return {
        "Type": "String",
        "Default": "",
        "AllowedPattern": "^$|^[a-zA-Z0-9_.-]{3,255}$",
        "Description": "Empty: the stack creates and owns <stack>-memories. Otherwise the "
        "name of a table (e.g. restored from a point in time) the functions use instead; "
        "the stack's own table is then released, not deleted (docs/operations.md).",
    }


def existing_table_conditions() -> dict[str, Any]:
    """``UseExistingTable`` and its opposite ``CreateMemoryTable``."""
    return {
        USE_EXISTING_TABLE: {"Fn::Not": [{"Fn::Equals": [{"Ref": EXISTING_TABLE_NAME}, ""]}]},
        CREATE_TABLE: {"Fn::Equals": [{"Ref": EXISTING_TABLE_NAME}, ""]},
    }


def checkov_skips(skips: list[tuple[str, str]]) -> dict[str, Any]:
    """A resource's ``Metadata`` that makes checkov skip each ``(check id, reason)`` pair
    (``make package`` fails on any finding not skipped so, docs/operations.md#deploy)."""
    return {"checkov": {"skip": [{"id": check, "comment": reason} for check, reason in skips]}}
