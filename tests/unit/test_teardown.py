"""Deleting a retained bucket for good (docs/operations.md#teardown): every version and
delete marker goes, past S3's 1,000 keys a request, and the bucket can then be deleted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from infra.teardown import DELETE_BATCH, empty_bucket, main


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="kept")
        client.put_bucket_versioning(Bucket="kept", VersioningConfiguration={"Status": "Enabled"})
        yield client


def test_every_version_and_delete_marker_goes_past_one_request(s3: Any) -> None:
    keys = [f"kv/keep/{n:04}" for n in range(DELETE_BATCH // 2 + 30)]
    for key in keys:
        s3.put_object(Bucket="kept", Key=key, Body=b"one")
        s3.put_object(Bucket="kept", Key=key, Body=b"two")  # a noncurrent version
    for key in keys[:100]:
        s3.delete_object(Bucket="kept", Key=key)  # a delete marker over two versions
    expected = 2 * len(keys) + 100
    assert expected > DELETE_BATCH
    assert empty_bucket(s3, "kept") == expected
    listed = s3.list_object_versions(Bucket="kept")
    assert not listed.get("Versions") and not listed.get("DeleteMarkers")
    s3.delete_bucket(Bucket="kept")  # S3 refuses a bucket with any version left
    assert "kept" not in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def test_an_empty_bucket_is_left_as_it_is(s3: Any) -> None:
    assert empty_bucket(s3, "kept") == 0
    assert s3.head_bucket(Bucket="kept")["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_the_command_empties_and_deletes(s3: Any, capsys: pytest.CaptureFixture[str]) -> None:
    s3.put_object(Bucket="kept", Key="reviews/r.json", Body=b"{}")
    main(["empty-bucket", "kept", "--region", "us-east-1", "--delete-bucket"])
    printed = capsys.readouterr().out
    assert "1 object versions and delete markers deleted" in printed and "kept: deleted" in printed
    assert "kept" not in [b["Name"] for b in s3.list_buckets()["Buckets"]]
