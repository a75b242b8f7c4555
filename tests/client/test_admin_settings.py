"""Settings of ``pinework admin …``: local DynamoDB by default, ``aws`` for real AWS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chalicelib.settings import DEFAULT_LOCAL_DYNAMODB_ENDPOINT
from pinework.admin import admin_settings, use_dummy_credentials_if_local


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
