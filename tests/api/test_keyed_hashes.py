"""No personal data in keys (docs/reference.md#keyed-hashes-of-personal-data): the
anonymous key-value scope, the new-scope counter and the e-mail claims are keyed
digests, rotatable without losing what was stored under the previous secret."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.errors import PersonExists
from chalicelib.ids import FixedClock
from chalicelib.settings import Settings, SettingsError
from tests.helpers import BUCKET, TABLE, Api

SECRET_A = "a" * 20 + "first-secret-of-this-stage"
SECRET_B = "b" * 20 + "second-secret-of-this-stage"
ADDRESS = "203.0.113.7"


def keyed(secret: str, purpose: str, text: str) -> str:
    """The digest the spec defines: HMAC-SHA256 under HMAC(secret, "pinework/<purpose>")."""
    key = hmac.new(secret.encode(), f"pinework/{purpose}".encode(), hashlib.sha256).digest()
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def unkeyed(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


Build = Callable[..., wiring.Services]


@pytest.fixture
def build(dynamodb: Any, s3: Any, clock: FixedClock) -> Iterator[Build]:
    """Services on the moto table under given settings, installed for the API (a
    rebuild is a redeploy with another secret)."""

    def make(**settings: Any) -> wiring.Services:
        built = wiring.build_services(
            Settings(table_name=TABLE, bucket_name=BUCKET, read_concurrency=1, **settings),
            clock=clock,
            client=dynamodb,
            s3=s3,
        )
        wiring.install(built)
        return built

    yield make
    wiring.install(None)


@pytest.fixture
def client() -> Iterator[Api]:
    from app import app

    with Client(app) as chalice:
        yield Api(chalice)


def kv(api: Api, action: str, body: Any, headers: dict[str, str] | None = None) -> Any:
    api._client.http._local_gateway.event_converter.LOCAL_SOURCE_IP = ADDRESS
    status, answer = api.call("POST", f"/kv/{action}", body=body, headers=headers or {})
    assert status == 200, answer
    return answer


def table_text(dynamodb: Any) -> str:
    return json.dumps(dynamodb.scan(TableName=TABLE)["Items"])


def partitions(dynamodb: Any, prefix: str) -> set[str]:
    items = dynamodb.scan(TableName=TABLE)["Items"]
    return {item["pk"]["S"] for item in items if item["pk"]["S"].startswith(prefix)}


def test_no_address_and_no_email_can_be_read_back_from_the_table(
    build: Build, client: Api, dynamodb: Any
) -> None:
    wired = build(hash_secret=SECRET_A)
    workspace = wired.admin.create_workspace("Acme")
    wired.admin.create_person(workspace.id, " Ana@Example.com")
    kv(client, "remember", {"key": "k", "value": "anonymous"})
    kv(client, "remember", {"key": "k", "value": "keyed"}, {"X-Api-Key": "my-key"})
    stored = table_text(dynamodb)
    for plain in (ADDRESS, "ana@example.com"):
        assert unkeyed(plain) not in stored and plain not in stored
    assert partitions(dynamodb, "KV#anon#") == {f"KV#anon#{keyed(SECRET_A, 'kv-network', ADDRESS)}"}
    claim = f"PERSONEMAIL#{workspace.id}#{keyed(SECRET_A, 'email', 'ana@example.com')}"
    assert partitions(dynamodb, "PERSONEMAIL#") == {claim}
    counters = partitions(dynamodb, "KVNEW#")
    assert counters and all(keyed(SECRET_A, "kv-network", ADDRESS) in pk for pk in counters)


def test_after_a_rotation_anonymous_entries_are_still_recalled_and_forgotten(
    build: Build, client: Api, dynamodb: Any
) -> None:
    build(hash_secret=SECRET_A)
    kv(client, "remember", {"key": "old", "value": "before"})
    build(hash_secret=json.dumps({"current": SECRET_B, "previous": [SECRET_A]}))
    assert kv(client, "recall", {"key": "old"})["value"] == "before"
    kv(client, "remember", {"key": "new", "value": "after"})
    assert partitions(dynamodb, "KV#anon#") == {
        f"KV#anon#{keyed(secret, 'kv-network', ADDRESS)}" for secret in (SECRET_A, SECRET_B)
    }
    assert kv(client, "forget", {"key": "old"})["deleted"] is True
    assert kv(client, "recall", {"key": "old"})["found"] is False
    assert kv(client, "recall", {"key": "new"})["value"] == "after"
    build(hash_secret=SECRET_B)  # the previous secret dropped: its entries are out of reach
    kv(client, "remember", {"key": "old", "value": "again"}, None)
    assert kv(client, "recall", {"key": "old"})["value"] == "again"


def test_an_email_claim_holds_across_a_rotation_and_the_migration_moves_it(
    build: Build, dynamodb: Any
) -> None:
    wired = build(hash_secret=SECRET_A)
    workspace = wired.admin.create_workspace("Acme")
    ana = wired.admin.create_person(workspace.id, "ana@example.com")
    rotated = build(hash_secret=json.dumps({"current": SECRET_B, "previous": [SECRET_A]}))
    with pytest.raises(PersonExists):
        rotated.admin.create_person(workspace.id, "ANA@example.com")
    assert rotated.admin.rehash_emails() == {"persons": 1, "rekeyed": 1, "taken": 0}
    claim_b = f"PERSONEMAIL#{workspace.id}#{keyed(SECRET_B, 'email', 'ana@example.com')}"
    assert partitions(dynamodb, "PERSONEMAIL#") == {claim_b}
    assert rotated.admin.rehash_emails()["rekeyed"] == 1  # rerun: the same state
    only_b = build(hash_secret=SECRET_B)
    with pytest.raises(PersonExists):
        only_b.admin.create_person(workspace.id, "ana@example.com")
    only_b.admin.remove_person(ana.id)
    assert partitions(dynamodb, "PERSONEMAIL#") == set()
    only_b.admin.create_person(workspace.id, "ana@example.com")


def test_a_claim_written_unkeyed_by_an_older_release_still_counts(
    build: Build, dynamodb: Any
) -> None:
    wired = build(hash_secret=SECRET_A)
    workspace = wired.admin.create_workspace("Acme")
    bob = wired.admin.create_person(workspace.id, "bob@example.com")
    legacy = f"PERSONEMAIL#{workspace.id}#{unkeyed('ana@example.com')}"
    dynamodb.put_item(
        TableName=TABLE,
        Item={"pk": {"S": legacy}, "sk": {"S": "PERSONEMAIL"}, "personId": {"S": bob.id}},
    )
    with pytest.raises(PersonExists):
        wired.admin.create_person(workspace.id, "ana@example.com")
    # the migration moves the claims persons hold on their own addresses only
    assert wired.admin.rehash_emails() == {"persons": 1, "rekeyed": 1, "taken": 0}
    assert legacy in partitions(dynamodb, "PERSONEMAIL#")


def test_the_deployed_api_reads_the_secret_from_secrets_manager(
    build: Build, client: Api, dynamodb: Any
) -> None:
    secrets = boto3.client("secretsmanager", region_name="us-east-1")
    value = {"current": SECRET_B, "previous": [SECRET_A]}
    arn = secrets.create_secret(Name="pinework-hash-secret", SecretString=json.dumps(value))["ARN"]
    build(hash_secret_arn=arn)
    kv(client, "remember", {"key": "k", "value": "v"})
    assert partitions(dynamodb, "KV#anon#") == {f"KV#anon#{keyed(SECRET_B, 'kv-network', ADDRESS)}"}


def test_a_lambda_without_a_secret_refuses_to_make_digests() -> None:
    digests = wiring.keyed_hash(Settings(hash_secret_required=True))
    with pytest.raises(SettingsError, match="PINEWORK_HASH_SECRET_ARN"):
        digests.digest("email", "ana@example.com")
    lambda_settings = Settings.from_env({"AWS_LAMBDA_FUNCTION_NAME": "pinework-api"})
    assert lambda_settings.hash_secret_required is True
    assert Settings.from_env({}).hash_secret_required is False


def test_an_import_claims_its_persons_addresses_under_the_new_deployments_secret(
    build: Build, dynamodb: Any
) -> None:
    source = build(hash_secret=SECRET_A)
    workspace = source.admin.create_workspace("Acme")
    source.admin.create_person(workspace.id, "ana@example.com")
    lines: list[str] = []
    source.admin.export("workspace", workspace.id, lines.append)
    assert "PERSONEMAIL" not in "".join(lines)  # keyed by the source's secret: left out
    target = build(hash_secret=SECRET_B)
    into = target.admin.create_workspace("Acme copy")
    report = target.admin.import_file(lambda: iter(lines), remap_into=into.id)
    assert report.conflicts == 1  # the target workspace's own item, kept as it was
    assert f"PERSONEMAIL#{into.id}#{keyed(SECRET_B, 'email', 'ana@example.com')}" in partitions(
        dynamodb, "PERSONEMAIL#"
    )
    with pytest.raises(PersonExists):
        target.admin.create_person(into.id, "ana@example.com")
