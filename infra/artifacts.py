"""The artifact bucket every template, Lambda zip and chalice deployed record goes through
(docs/operations.md#the-artifact-bucket): one per account and region,
``pinework-artifacts-<account>-<region>``, owned by the deploying account.

S3 bucket names are global: another account can create that name first and would then
receive the templates and the zip CloudFormation deploys with IAM capability. So
``ensure_bucket`` checks ownership first (``head-bucket --expected-bucket-owner``; S3
answers 403 for a bucket of another account) and stops with a message naming the
bucket; it creates a missing bucket, and on every run (idempotent, each call with the
expected owner) keeps it private (public access block, owner-enforced objects),
encrypted (SSE-S3, bucket key), versioned (the deployed records and templates can be
restored), TLS-only, and its old versions expiring after ``NONCURRENT_DAYS``. Every
``aws s3`` call of the Makefile on this bucket passes ``--expected-bucket-owner`` too;
``aws cloudformation deploy``/``package`` take no such option, so the deploys depend on
this check, run just before them. Standard library only (``infra/awscli.py``).

Usage: ``python3 -m infra.artifacts ensure --bucket B --account 111122223333 --region R``.
Choices: docs/DECISIONS.md#releases-an-operator-can-trust-issue-44.
"""

from __future__ import annotations

import argparse
import json
import sys

from infra.awscli import AwsError, Stop, aws, require_account

NONCURRENT_DAYS = 90
"""Days an overwritten template, zip or deployed record is kept (a rollback needs the
previous release's record, docs/operations.md#rollback)."""
FOREIGN_CODES = frozenset({"403", "Forbidden", "AccessDenied"})
"""``head-bucket``'s answers for a bucket another account owns (or this one may not read)."""


def _bucket_policy(bucket: str) -> str:
    """Deny every request not sent over TLS."""
    arn = f"arn:aws:s3:::{bucket}"
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "TlsOnly",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": [arn, f"{arn}/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        }
    )


def _settings(bucket: str) -> list[list[str]]:
    """The ``aws s3api`` calls that set the bucket's protections (each idempotent)."""
    return [
        [
            "put-public-access-block",
            "--public-access-block-configuration",
            "BlockPublicAcls=true,IgnorePublicAcls=true,BlockPublicPolicy=true,"
            "RestrictPublicBuckets=true",
        ],
        [
            "put-bucket-ownership-controls",
            "--ownership-controls",
            json.dumps({"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}),
        ],
        [
            "put-bucket-encryption",
            "--server-side-encryption-configuration",
            json.dumps(
                {
                    "Rules": [
                        {
                            "ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"},
                            "BucketKeyEnabled": True,
                        }
                    ]
                }
            ),
        ],
        ["put-bucket-versioning", "--versioning-configuration", "Status=Enabled"],
        [
            "put-bucket-lifecycle-configuration",
            "--lifecycle-configuration",
            json.dumps(
                {
                    "Rules": [
                        {
                            "ID": "OldVersions",
                            "Status": "Enabled",
                            "Filter": {"Prefix": ""},
                            "NoncurrentVersionExpiration": {"NoncurrentDays": NONCURRENT_DAYS},
                            "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1},
                        }
                    ]
                }
            ),
        ],
        ["put-bucket-policy", "--policy", _bucket_policy(bucket)],
    ]


def ensure_bucket(bucket: str, account: str, region: str) -> bool:
    """Make sure ``bucket`` exists, belongs to ``account`` and is protected (see the
    module doc).

    Args:
        bucket: the bucket's name.
        account: the deploying account's id (twelve digits).
        region: where a missing bucket is created.

    Returns:
        True when the bucket was created, False when it existed.

    Raises:
        Stop: no account; the bucket belongs to another account (or this one may not
            read it); another account took the name while it was being created.
        AwsError: any other failure of the CLI.
    """
    owner = ["--bucket", bucket, "--expected-bucket-owner", require_account(account)]
    created = False
    try:
        aws("s3api", "head-bucket", *owner, region=region)
    except AwsError as error:
        if error.code in FOREIGN_CODES:
            raise Stop(
                f"the artifact bucket {bucket} exists but is not owned by account {account} "
                "(or this account may not read it): templates and the Lambda zip must not go "
                "to another account's bucket. Pass ARTIFACT_BUCKET=<a bucket of yours>; "
                "nothing was deployed"
            ) from error
        if not error.not_found:
            raise
        location = (
            []
            if region == "us-east-1"
            else ["--create-bucket-configuration", f"LocationConstraint={region}"]
        )
        try:
            aws("s3api", "create-bucket", "--bucket", bucket, *location, region=region)
        except AwsError as failed:
            if failed.code != "BucketAlreadyOwnedByYou":
                raise Stop(
                    f"the artifact bucket {bucket} could not be created ({failed.code or 'error'}"
                    "): another account may own the name. Pass ARTIFACT_BUCKET=<a bucket of "
                    "yours>; nothing was deployed"
                ) from failed
        created = True
    for call in _settings(bucket):
        aws("s3api", call[0], *owner, *call[1:], region=region)
    return created


def main(arguments: list[str] | None = None) -> None:
    """``ensure --bucket B --account A --region R``: see ``ensure_bucket``; a ``Stop``
    prints its message and exits 1."""
    parser = argparse.ArgumentParser(description="The artifact bucket of the deploys.")
    parser.add_argument("step", choices=["ensure"])
    parser.add_argument("--bucket", required=True)
    parser.add_argument("--account", default="")
    parser.add_argument("--region", required=True)
    parsed = parser.parse_args(arguments)
    try:
        created = ensure_bucket(parsed.bucket, parsed.account, parsed.region)
    except Stop as stop:
        sys.stderr.write(f"{stop}\n")
        raise SystemExit(1) from stop
    state = "created" if created else "owned by this account"
    sys.stdout.write(f"artifact bucket {parsed.bucket}: {state}; private, encrypted, versioned\n")


if __name__ == "__main__":
    main()
