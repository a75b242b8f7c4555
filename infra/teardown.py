"""Deleting a torn-down stage's retained data for good (docs/operations.md#teardown):
``empty_bucket`` removes every object version and delete marker of a versioned bucket,
1,000 a request (S3's ``DeleteObjects`` limit), however many there are, so the bucket
itself can then be deleted. Usage: ``python -m infra.teardown empty-bucket BUCKET
[--region R] [--delete-bucket]``. Nothing here runs unless an operator types it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import boto3

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ObjectIdentifierTypeDef

DELETE_BATCH = 1000
"""S3's most keys in one ``DeleteObjects`` request."""


def empty_bucket(s3: S3Client, bucket: str) -> int:
    """Delete every version and delete marker in ``bucket`` (also a never-versioned
    bucket's objects: their version id is ``null``).

    Args:
        s3: a boto3 S3 client.
        bucket: the bucket's name.

    Returns:
        How many versions and delete markers were deleted.

    Raises:
        RuntimeError: S3 refused some of the deletions (each key and S3's code named).
    """
    deleted = 0
    batch: list[ObjectIdentifierTypeDef] = []
    # Listing while deleting would shift the pages: list a page, delete it, list again.
    while True:
        page = s3.list_object_versions(Bucket=bucket, MaxKeys=DELETE_BATCH)
        batch = [
            {"Key": item["Key"], "VersionId": item["VersionId"]}
            for kind in ("Versions", "DeleteMarkers")
            for item in page.get(kind, [])  # type: ignore[attr-defined]
        ]
        if not batch:
            return deleted
        for start in range(0, len(batch), DELETE_BATCH):
            chunk = batch[start : start + DELETE_BATCH]
            answer = s3.delete_objects(Bucket=bucket, Delete={"Objects": chunk, "Quiet": True})
            errors = answer.get("Errors", [])
            if errors:
                named = ", ".join(f"{e.get('Key')} ({e.get('Code')})" for e in errors[:5])
                raise RuntimeError(f"S3 refused {len(errors)} deletions: {named}")
            deleted += len(chunk)


def main(arguments: list[str] | None = None) -> None:
    """``empty-bucket BUCKET``: empty a bucket (and with ``--delete-bucket`` delete it)."""
    parser = argparse.ArgumentParser(description="Delete a torn-down stage's data for good.")
    parser.add_argument("step", choices=["empty-bucket"])
    parser.add_argument("bucket")
    parser.add_argument("--region")
    parser.add_argument("--delete-bucket", action="store_true")
    parsed = parser.parse_args(arguments)
    s3 = boto3.client("s3", region_name=parsed.region)
    count = empty_bucket(s3, parsed.bucket)
    print(f"{parsed.bucket}: {count} object versions and delete markers deleted")
    if parsed.delete_bucket:
        s3.delete_bucket(Bucket=parsed.bucket)
        print(f"{parsed.bucket}: deleted")


if __name__ == "__main__":
    main()
