"""The embedded server's journal compaction (``infra/local_dynamodb.py``): after erasure,
the journal holds only what is stored now, and replaying it gives the same state.

moto's backends are shared by the whole process, so each test uses its own table and
bucket names, and a "fresh" server is simulated by removing this test's tables and
buckets from the backends before the second server replays the journal.
"""

from __future__ import annotations

import base64
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import dynamodb_backends
from moto.s3.models import s3_backends

from chalicelib.storage.keys import MODEL_OBJECT_PREFIX
from infra.local_dynamodb import (
    CreatedResource,
    EmbeddedAWS,
    StateSnapshot,
    created_by,
    stored_items,
)

REGION = "us-east-1"
ERASED = "[erased]"
SECRET_UPDATED = "the launch code is 4711"
SECRET_DELETED = "my locker combination is 1234"
SECRET_VERSION = "first draft with the old address"
SECRET_OBJECT = "an unversioned object that was deleted"
ODD_KEY = "notes/a b%20c+d ü.txt"


def client(service: str, endpoint: str) -> Any:
    """A boto3 client of the embedded server (path-style S3)."""
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 0}),
    )


@pytest.fixture
def servers() -> Iterator[Callable[..., EmbeddedAWS]]:
    """Start embedded servers (``EmbeddedAWS`` arguments); each is stopped at the end."""
    started: list[EmbeddedAWS] = []

    def start(**arguments: Any) -> EmbeddedAWS:
        server = EmbeddedAWS(**arguments)
        started.append(server)
        server.start()
        return server

    yield start
    for server in started:
        server.stop()  # again for one a test stopped: a no-op


def names() -> tuple[str, str, str]:
    """A table, a versioned bucket and an unversioned bucket, unique to the caller."""
    suffix = uuid.uuid4().hex[:10]
    return f"journal-{suffix}", f"journal-v-{suffix}", f"journal-u-{suffix}"


def entries(journal: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]


def journal_text(journal: Path) -> str:
    """The raw journal and every entry's decoded body, to search for stored text."""
    bodies = [
        base64.b64decode(entry["body"]).decode("utf-8", "replace") for entry in entries(journal)
    ]
    return journal.read_text() + "\n".join(bodies)


def make_table(dynamodb: Any, table: str) -> None:
    """A table with a sort key, a GSI and TTL."""
    dynamodb.create_table(
        TableName=table,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "g")
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "byG",
                "KeySchema": [
                    {"AttributeName": "g", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["text"]},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.update_time_to_live(
        TableName=table,
        TimeToLiveSpecification={"AttributeName": "expiresAtEpoch", "Enabled": True},
    )


def item(sk: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"pk": {"S": "P#1"}, "sk": {"S": sk}, "g": {"S": "g"}, "text": {"S": text}, **extra}


def write_and_erase(endpoint: str, table: str, versioned: str, plain: str) -> None:
    """Store items and objects, then erase and delete some of them."""
    dynamodb = client("dynamodb", endpoint)
    make_table(dynamodb, table)
    dynamodb.put_item(
        TableName=table,
        Item=item(
            "keep",
            "kept text",
            n={"N": "42"},
            b={"B": b"\x00\x01binary"},
            tags={"SS": ["x", "y"]},
            blobs={"BS": [b"\x01", b"\x02"]},
            nested={"M": {"b": {"B": b"\x03"}, "l": {"L": [{"B": b"\x04"}, {"NULL": True}]}}},
            expiresAtEpoch={"N": "4102444800"},
        ),
    )
    dynamodb.put_item(TableName=table, Item=item("erase", SECRET_UPDATED))
    dynamodb.put_item(TableName=table, Item=item("delete", SECRET_DELETED))
    for number in range(60):  # more than two BatchWriteItem requests' worth
        dynamodb.put_item(TableName=table, Item=item(f"bulk-{number:03d}", f"bulk {number}"))
    dynamodb.update_item(
        TableName=table,
        Key={"pk": {"S": "P#1"}, "sk": {"S": "erase"}},
        UpdateExpression="SET #t = :erased",
        ExpressionAttributeNames={"#t": "text"},
        ExpressionAttributeValues={":erased": {"S": ERASED}},
    )
    dynamodb.delete_item(TableName=table, Key={"pk": {"S": "P#1"}, "sk": {"S": "delete"}})

    s3 = client("s3", endpoint)
    s3.create_bucket(Bucket=versioned)
    s3.put_bucket_versioning(Bucket=versioned, VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_lifecycle_configuration(
        Bucket=versioned,
        LifecycleConfiguration={
            "Rules": [
                {
                    "ID": "old-versions",
                    "Status": "Enabled",
                    "Filter": {"Prefix": ""},
                    "NoncurrentVersionExpiration": {"NoncurrentDays": 30},
                }
            ]
        },
    )
    s3.put_bucket_encryption(
        Bucket=versioned,
        ServerSideEncryptionConfiguration={
            "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]
        },
    )
    s3.put_public_access_block(
        Bucket=versioned,
        PublicAccessBlockConfiguration={
            "BlockPublicAcls": True,
            "IgnorePublicAcls": True,
            "BlockPublicPolicy": True,
            "RestrictPublicBuckets": True,
        },
    )
    first = s3.put_object(
        Bucket=versioned,
        Key="doc",
        Body=SECRET_VERSION.encode(),
        ContentType="text/plain",
        Metadata={"owner": "agt_1"},
    )
    s3.put_object(Bucket=versioned, Key="doc", Body=b"second draft", ContentType="text/plain")
    s3.put_object(
        Bucket=versioned,
        Key="doc",
        Body=b"current draft",
        ContentType="text/markdown",
        Metadata={"owner": "agt_2"},
    )
    s3.delete_object(Bucket=versioned, Key="doc", VersionId=first["VersionId"])
    s3.put_object(Bucket=versioned, Key="removed", Body=b"only in history")
    s3.delete_object(Bucket=versioned, Key="removed")  # a delete marker over a live version
    s3.put_object(Bucket=versioned, Key=ODD_KEY, Body=b"odd key")
    s3.put_object(Bucket=versioned, Key="models/weights.bin", Body=b"uploaded at each start")

    s3.create_bucket(Bucket=plain + "-gone")
    s3.delete_bucket(Bucket=plain + "-gone")
    dynamodb.create_table(
        TableName=table + "-gone",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.delete_table(TableName=table + "-gone")

    s3.create_bucket(Bucket=plain)
    s3.put_object(Bucket=plain, Key="kv/value", Body=b"\x00large value", ContentType="a/b")
    s3.put_object(Bucket=plain, Key="kv/gone", Body=SECRET_OBJECT.encode())
    s3.delete_object(Bucket=plain, Key="kv/gone")


def state(endpoint: str, table: str, buckets: tuple[str, ...]) -> dict[str, Any]:
    """What a replay must restore: items, table settings, TTL, bucket settings, objects."""
    dynamodb = client("dynamodb", endpoint)
    described = dynamodb.describe_table(TableName=table)["Table"]
    items = dynamodb.scan(TableName=table, ConsistentRead=True)["Items"]
    found: dict[str, Any] = {
        "items": sorted(items, key=lambda found: found["sk"]["S"]),
        "table": {
            "KeySchema": described["KeySchema"],
            "AttributeDefinitions": sorted(
                described["AttributeDefinitions"], key=lambda a: a["AttributeName"]
            ),
            "BillingMode": described["BillingModeSummary"]["BillingMode"],
            "GlobalSecondaryIndexes": [
                (index["IndexName"], index["KeySchema"], index["Projection"])
                for index in described["GlobalSecondaryIndexes"]
            ],
        },
        "ttl": dynamodb.describe_time_to_live(TableName=table)["TimeToLiveDescription"],
    }
    s3 = client("s3", endpoint)
    for bucket in buckets:
        found[bucket] = bucket_state(s3, bucket)
    return found


def bucket_state(s3: Any, bucket: str) -> dict[str, Any]:
    """A bucket's settings, each key's current object and its versions' bodies."""
    found: dict[str, Any] = {
        "versioning": s3.get_bucket_versioning(Bucket=bucket).get("Status"),
        "lifecycle": optional(lambda: s3.get_bucket_lifecycle_configuration(Bucket=bucket)),
        "encryption": optional(lambda: s3.get_bucket_encryption(Bucket=bucket)),
        "block": optional(lambda: s3.get_public_access_block(Bucket=bucket)),
    }
    listed = s3.list_object_versions(Bucket=bucket)
    keys = {
        entry["Key"]
        for entry in listed.get("Versions", []) + listed.get("DeleteMarkers", [])
        if not entry["Key"].startswith(MODEL_OBJECT_PREFIX)  # uploaded at each start
    }
    for key in sorted(keys):
        versions = [v for v in listed.get("Versions", []) if v["Key"] == key]
        bodies = sorted(
            s3.get_object(Bucket=bucket, Key=key, VersionId=v["VersionId"])["Body"].read()
            for v in versions
        )
        markers = [m for m in listed.get("DeleteMarkers", []) if m["Key"] == key]
        try:
            got = s3.get_object(Bucket=bucket, Key=key)
            current: Any = (got["Body"].read(), got["ContentType"], got["Metadata"])
        except ClientError as error:
            current = error.response["Error"]["Code"]
        found[key] = {"current": current, "versions": bodies, "markers": len(markers)}
    return found


def optional(call: Callable[[], dict[str, Any]]) -> Any:
    """A setting's answer without its metadata, or the error code when it is unset."""
    try:
        answer = call()
    except ClientError as error:
        return error.response["Error"]["Code"]
    answer.pop("ResponseMetadata", None)
    return answer


def forget(table: str, buckets: tuple[str, ...]) -> None:
    """Remove a test's tables and buckets from moto's process-wide backends, as a new
    process would start without them."""
    dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].tables.pop(table)
    for bucket in buckets:
        s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets.pop(bucket)
        s3_backends.bucket_accounts.pop(bucket)


def wait_for(condition: Callable[[], bool], timeout: float = 15.0) -> bool:
    """Poll ``condition`` every 50 ms until it holds (True) or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_compaction_drops_erased_data_and_replays_to_the_same_state(
    tmp_path: Path, servers: Callable[..., EmbeddedAWS]
) -> None:
    journal = tmp_path / "j"
    table, versioned, plain = names()
    first = servers(journal=journal, idle_seconds=3600.0)
    write_and_erase(first.endpoint, table, versioned, plain)
    before = journal_text(journal)
    for secret in (SECRET_UPDATED, SECRET_DELETED, SECRET_VERSION, SECRET_OBJECT):
        assert secret in before  # the test can fail: the plain journal keeps them

    compacted = first.compact()
    assert compacted == len(entries(journal))
    after = journal_text(journal)
    for secret in (SECRET_UPDATED, SECRET_DELETED, SECRET_VERSION, SECRET_OBJECT):
        assert secret not in after
    assert ERASED in after and "kept text" in after and "second draft" in after
    assert "uploaded at each start" not in after  # models/ is not journaled
    assert not (tmp_path / "j.tmp").exists()
    # Only what this journal created and still exists (moto's backends hold other tests' too).
    created = {created_by(entry) for entry in entries(journal)} - {None}
    assert {(c.service, c.name) for c in created if c is not None} == {
        ("dynamodb", table),
        ("s3", versioned),
        ("s3", plain),
    }
    expected = state(first.endpoint, table, (versioned, plain))
    assert expected[versioned]["doc"]["versions"] == [b"current draft", b"second draft"]
    assert expected[versioned]["removed"] == {
        "current": "NoSuchKey",
        "versions": [b"only in history"],
        "markers": 1,
    }
    assert "kv/gone" not in expected[plain]

    first.stop()
    forget(table, (versioned, plain))
    second = servers(journal=journal, idle_seconds=3600.0)
    assert second.replayed == compacted
    assert state(second.endpoint, table, (versioned, plain)) == expected
    assert second.compactions == 1  # compacted at start, after the replay
    assert SECRET_VERSION not in journal_text(journal)


def test_the_journal_is_compacted_on_its_own_once_writes_stop(
    tmp_path: Path, servers: Callable[..., EmbeddedAWS]
) -> None:
    journal = tmp_path / "j"
    table, _, _ = names()
    server = servers(journal=journal)
    dynamodb = client("dynamodb", server.endpoint)
    make_table(dynamodb, table)
    dynamodb.put_item(TableName=table, Item=item("a", SECRET_UPDATED))
    dynamodb.put_item(TableName=table, Item=item("a", ERASED))
    written = time.monotonic()
    assert SECRET_UPDATED in journal_text(journal)

    assert wait_for(lambda: server.compactions == 1)
    assert time.monotonic() - written >= 0.9  # not before a quiet second
    assert SECRET_UPDATED not in journal_text(journal)
    assert ERASED in journal_text(journal)
    # A write after the compaction is appended to the new journal, and compacted in turn.
    dynamodb.put_item(TableName=table, Item=item("b", "after the compaction"))
    assert "after the compaction" in journal_text(journal)
    assert wait_for(lambda: server.compactions == 2)
    assert len(entries(journal)) == 3  # CreateTable, UpdateTimeToLive, one BatchWriteItem


def test_a_failing_compaction_leaves_the_journal_as_it_was(
    tmp_path: Path,
    servers: Callable[..., EmbeddedAWS],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    journal = tmp_path / "j"
    table, _, _ = names()

    def broken(self: StateSnapshot, resources: Any, emit: Callable[[dict[str, Any]], None]) -> Any:
        emit({"method": "POST", "query": "", "path": "/", "headers": {}, "body": ""})
        raise RuntimeError("snapshot failed")

    monkeypatch.setattr(StateSnapshot, "write", broken)
    server = servers(journal=journal, idle_seconds=0.2)
    dynamodb = client("dynamodb", server.endpoint)
    make_table(dynamodb, table)
    dynamodb.put_item(TableName=table, Item=item("a", SECRET_UPDATED))
    stored = journal.read_bytes()

    with caplog.at_level(logging.ERROR, logger="infra.local_dynamodb"):
        assert wait_for(lambda: "failed; it is kept as it was" in caplog.text)
    assert journal.read_bytes() == stored
    with pytest.raises(RuntimeError, match="snapshot failed"):
        server.compact()
    assert journal.read_bytes() == stored
    assert not (tmp_path / "j.tmp").exists()
    assert server.compactions == 0

    # The journal still restores everything: a new server replays it.
    monkeypatch.undo()
    server.stop()
    forget(table, ())
    again = servers(journal=journal, idle_seconds=3600.0)
    assert again.replayed == 3 and again.compactions == 1
    got = client("dynamodb", again.endpoint).scan(TableName=table)["Items"]
    assert got == [item("a", SECRET_UPDATED)]


def test_items_read_from_moto_are_what_a_scan_answers(
    servers: Callable[..., EmbeddedAWS],
) -> None:
    table, _, _ = names()
    server = servers()
    dynamodb = client("dynamodb", server.endpoint)
    make_table(dynamodb, table)
    dynamodb.put_item(
        TableName=table,
        Item=item(
            "a",
            "text",
            b={"B": b"\x00\xff"},
            bs={"BS": [b"\x01", b"\x02"]},
            n={"N": "1.50"},
            ns={"NS": ["1", "2"]},
            ss={"SS": ["x"]},
            flag={"BOOL": False},
            none={"NULL": True},
            m={"M": {"b": {"B": b"\x03"}, "l": {"L": [{"B": b"\x04"}, {"M": {}}, {"L": []}]}}},
        ),
    )
    dynamodb.update_item(
        TableName=table,
        Key={"pk": {"S": "P#1"}, "sk": {"S": "a"}},
        UpdateExpression="SET m.z = :b, u = :b ADD bs :bs",
        ExpressionAttributeValues={":b": {"B": b"\x05"}, ":bs": {"BS": [b"\x06"]}},
    )
    dynamodb.put_item(TableName=table, Item=item("b", "other"))
    scanned = dynamodb.scan(TableName=table, ConsistentRead=True)["Items"]
    read = list(stored_items(CreatedResource("dynamodb", DEFAULT_ACCOUNT_ID, REGION, table)))
    assert sorted(read, key=lambda i: i["sk"]["S"]) == sorted(scanned, key=lambda i: i["sk"]["S"])


OTHER_ACCOUNT = "111122223333"
OTHER_REGION = "eu-west-1"


def other_account_client(service: str, endpoint: str) -> Any:
    """A client in ``OTHER_REGION`` whose requests name ``OTHER_ACCOUNT`` to moto."""
    found = boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=OTHER_REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 0}),
    )

    def name_account(request: Any, **_: Any) -> None:
        request.headers["x-moto-account-id"] = OTHER_ACCOUNT

    found.meta.events.register("before-sign", name_account)
    return found


def test_a_snapshot_replays_into_the_same_account_and_region(
    tmp_path: Path, servers: Callable[..., EmbeddedAWS]
) -> None:
    journal = tmp_path / "j"
    table, bucket, _ = names()
    first = servers(journal=journal, idle_seconds=3600.0)
    dynamodb = other_account_client("dynamodb", first.endpoint)
    dynamodb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
    )
    dynamodb.put_item(TableName=table, Item={"pk": {"S": "x"}})
    s3 = other_account_client("s3", first.endpoint)
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": OTHER_REGION})
    s3.put_object(Bucket=bucket, Key="k", Body=b"kept", ContentType="text/plain")
    tls_only = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Deny",
                "Principal": "*",
                "Action": "s3:*",
                "Resource": f"arn:aws:s3:::{bucket}/*",
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            }
        ],
    }
    # moto applies the Deny to every object request here: the snapshot reads moto's objects
    # and puts the policy after them.
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps(tls_only))
    first.compact()
    first.stop()
    dynamodb_backends[OTHER_ACCOUNT][OTHER_REGION].tables.pop(table)
    s3_backends[OTHER_ACCOUNT]["aws"].buckets.pop(bucket)
    s3_backends.bucket_accounts.pop(bucket)

    second = servers(journal=journal, idle_seconds=3600.0)
    assert second.compactions == 1
    dynamodb = other_account_client("dynamodb", second.endpoint)
    described = dynamodb.describe_table(TableName=table)["Table"]
    assert described["TableArn"] == f"arn:aws:dynamodb:{OTHER_REGION}:{OTHER_ACCOUNT}:table/{table}"
    assert described["ProvisionedThroughput"]["WriteCapacityUnits"] == 4
    assert dynamodb.scan(TableName=table)["Items"] == [{"pk": {"S": "x"}}]
    assert table not in dynamodb_backends[DEFAULT_ACCOUNT_ID][OTHER_REGION].tables
    s3 = other_account_client("s3", second.endpoint)
    assert s3.get_bucket_location(Bucket=bucket)["LocationConstraint"] == OTHER_REGION
    assert json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"]) == tls_only
    stored = s3_backends[OTHER_ACCOUNT]["aws"].buckets[bucket].keys["k"]
    assert (stored.value, stored.metadata["Content-Type"]) == (b"kept", "text/plain")
