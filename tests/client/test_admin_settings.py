"""Settings of ``pinework admin …``: local DynamoDB by default, ``aws`` for real AWS."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer

from chalicelib.settings import DEFAULT_LOCAL_DYNAMODB_ENDPOINT
from chalicelib.storage.store_check import pinework_table_problem
from infra.tables import create_table
from pinework.admin import admin_settings, open_admin_service, use_dummy_credentials_if_local
from pinework.local_record import LocalServerRecord, read_running_record
from tests.helpers import free_port


def test_admin_targets_the_local_dynamodb_when_no_endpoint_is_set() -> None:
    assert admin_settings({}).dynamodb_endpoint == DEFAULT_LOCAL_DYNAMODB_ENDPOINT


@pytest.mark.parametrize("port", ["abc", "0", "65536", "-1", "80a"])
def test_a_bad_local_dynamodb_port_is_refused_not_replaced(port: str) -> None:
    with pytest.raises(ValueError, match="PINEWORK_DYNAMODB_PORT must be a port number"):
        admin_settings({"PINEWORK_DYNAMODB_PORT": port})
    good = admin_settings({"PINEWORK_DYNAMODB_PORT": " 8732 "})
    assert good.dynamodb_endpoint == "http://127.0.0.1:8732"


AWS = {
    "PINEWORK_DYNAMODB_ENDPOINT": "aws",
    "PINEWORK_BUCKET_NAME": "pinework-prod-bucket",
    "PINEWORK_HASH_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:hash-Ab12Cd",
}


def test_admin_endpoint_aws_means_real_aws() -> None:
    settings = admin_settings(AWS)
    assert settings.dynamodb_endpoint is None and settings.s3_endpoint is None
    assert settings.bucket_name == "pinework-prod-bucket"


def test_against_aws_the_bucket_must_be_named() -> None:
    """docs/issues.md#issue-23-item-2: the recall index's volumes live in the stack's
    bucket; a default name would point an operator's commands at another bucket."""
    for bucket in ({}, {"PINEWORK_BUCKET_NAME": "  "}):
        with pytest.raises(ValueError, match="PINEWORK_BUCKET_NAME must name the stack's"):
            admin_settings({"PINEWORK_DYNAMODB_ENDPOINT": "aws", **bucket})


def test_a_local_endpoint_serves_s3_too_unless_told_otherwise() -> None:
    assert admin_settings({}).s3_endpoint == DEFAULT_LOCAL_DYNAMODB_ENDPOINT
    moved = admin_settings({"PINEWORK_DYNAMODB_PORT": "8732"})
    assert moved.s3_endpoint == "http://127.0.0.1:8732"
    given = admin_settings({"PINEWORK_S3_ENDPOINT": "http://127.0.0.1:9000"})
    assert given.s3_endpoint == "http://127.0.0.1:9000"


def test_admin_uses_an_explicit_endpoint_and_the_other_settings() -> None:
    settings = admin_settings(
        {
            "PINEWORK_DYNAMODB_ENDPOINT": "http://localhost:9999",
            "PINEWORK_TABLE_NAME": "pinework-dev",
            "AWS_REGION": "eu-west-1",
        }
    )

    assert settings.dynamodb_endpoint == "http://localhost:9999"
    assert (settings.table_name, settings.region) == ("pinework-dev", "eu-west-1")


def test_dummy_credentials_only_for_a_local_endpoint_without_credentials() -> None:
    environ: dict[str, str] = {}
    assert use_dummy_credentials_if_local(admin_settings(environ), environ) is True
    assert environ == {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}

    real_aws: dict[str, str] = dict(AWS)
    assert use_dummy_credentials_if_local(admin_settings(real_aws), real_aws) is False
    assert "AWS_ACCESS_KEY_ID" not in real_aws

    own = {"AWS_ACCESS_KEY_ID": "AKIA_MINE", "AWS_SECRET_ACCESS_KEY": "mine"}
    assert use_dummy_credentials_if_local(admin_settings(own), own) is False
    assert own["AWS_ACCESS_KEY_ID"] == "AKIA_MINE"


def test_the_admin_cli_names_a_bad_setting_instead_of_using_another_port() -> None:
    from typer.testing import CliRunner

    from pinework import cli

    runner = CliRunner()
    args = ["admin", "create-workspace", "--name", "x", "--json"]
    result = runner.invoke(cli.app, args, env={"PINEWORK_DYNAMODB_PORT": "abc"})
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"] == {
        "code": "invalid_setting",
        "message": "PINEWORK_DYNAMODB_PORT must be a port number from 1 to 65535, not 'abc'.",
    }


def test_against_aws_the_hash_secret_must_be_named() -> None:
    """docs/reference.md#keyed-hashes-of-personal-data: a claim keyed by another secret
    than the service's would let one address in twice."""
    unnamed = {key: value for key, value in AWS.items() if key != "PINEWORK_HASH_SECRET_ARN"}
    with pytest.raises(ValueError, match="PINEWORK_HASH_SECRET_ARN must name the stack's"):
        admin_settings(unnamed)
    assert admin_settings(AWS).hash_secret_arn == AWS["PINEWORK_HASH_SECRET_ARN"]


def test_locally_the_admin_uses_the_local_servers_hash_secret(tmp_path: Path) -> None:
    secret = "s" * 64
    (tmp_path / "hash-secret").write_text(secret + "\n", encoding="utf-8")
    assert admin_settings({"PINEWORK_DATA_DIR": str(tmp_path)}).hash_secret == secret
    given = admin_settings({"PINEWORK_DATA_DIR": str(tmp_path), "PINEWORK_HASH_SECRET": "t" * 40})
    assert given.hash_secret == "t" * 40
    assert admin_settings({"PINEWORK_DATA_DIR": str(tmp_path / "none")}).hash_secret is None


def _hold_record(folder: Path, record: LocalServerRecord) -> subprocess.Popen[bytes]:
    """A process that holds ``server.lock`` as ``make serve`` does, with ``record`` in it."""
    script = (
        "import fcntl, sys, time\n"
        "from pathlib import Path\n"
        "from pinework.local_record import LocalServerRecord, write_record\n"
        f"handle = (Path({str(folder)!r}) / 'server.lock').open('w')\n"
        "fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        f"write_record(handle, LocalServerRecord(*{list(record.__dict__.values())!r}))\n"
        "print('held', flush=True)\n"
        "time.sleep(60)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
    return holder


def test_admin_finds_a_moved_server_through_its_record(tmp_path: Path) -> None:
    """docs/operators.md#the-local-servers-record: the server of the data folder says
    where it is, so a server moved with PINEWORK_DYNAMODB_PORT is found by itself."""
    record = LocalServerRecord("http://127.0.0.1:9000", "http://127.0.0.1:9001", "pw-x", 1)
    holder = _hold_record(tmp_path, record)
    try:
        found = admin_settings({"PINEWORK_DATA_DIR": str(tmp_path)})
        assert (found.dynamodb_endpoint, found.table_name) == ("http://127.0.0.1:9001", "pw-x")
        # an explicit setting still wins over the record
        given = admin_settings(
            {"PINEWORK_DATA_DIR": str(tmp_path), "PINEWORK_DYNAMODB_PORT": "8732"}
        )
        assert given.dynamodb_endpoint == "http://127.0.0.1:8732"
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    # the server stopped: its lock is free and its ports may be anybody's now
    assert read_running_record(tmp_path) is None
    stale = admin_settings({"PINEWORK_DATA_DIR": str(tmp_path)})
    assert stale.dynamodb_endpoint == DEFAULT_LOCAL_DYNAMODB_ENDPOINT


def test_a_lock_file_without_a_record_is_not_a_record(tmp_path: Path) -> None:
    (tmp_path / "server.lock").write_text('{"kind": "something-else"}', encoding="utf-8")
    assert read_running_record(tmp_path) is None
    assert read_running_record(tmp_path / "missing") is None


@pytest.fixture
def stranger() -> Iterator[str]:
    """A DynamoDB on loopback that is not a Pinework server (moto's, no tables)."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def test_admin_refuses_an_endpoint_that_is_not_a_pinework_store(
    stranger: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newcomer whose admin command reaches another process's DynamoDB must not write
    into it: the command refuses and names the variables to set."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    env = {"PINEWORK_DYNAMODB_ENDPOINT": stranger}
    with pytest.raises(
        ValueError, match=r"is not a Pinework store .*no table.*PINEWORK_DYNAMODB_PORT"
    ):
        open_admin_service(dict(env))
    client = boto3.client(
        "dynamodb",
        endpoint_url=stranger,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )
    client.create_table(
        TableName="pinework-local",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    )
    assert "not keyed as Pinework's" in (
        pinework_table_problem(stranger, "us-east-1", "pinework-local") or ""
    )
    client.delete_table(TableName="pinework-local")
    create_table(client, "pinework-local")
    assert pinework_table_problem(stranger, "us-east-1", "pinework-local") is None
    assert open_admin_service(dict(env)) is not None
    nothing = f"http://127.0.0.1:{free_port()}"
    assert pinework_table_problem(nothing, "us-east-1", "t") == "nothing answers there"
