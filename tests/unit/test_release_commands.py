"""The release commands run as an operator runs them, against a fake ``aws`` on the PATH
(``tests/fake_aws.py``) and in a checkout like a fresh clone (the tracked files of the
Makefile, ``infra/`` and ``.chalice/``, no ``.venv``, no ``build/``):
docs/operations.md#the-artifact-bucket and #teardown (docs/issues.md#issue-44-item-3,
docs/issues.md#issue-44-item-4)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fake_aws import FakeAws

REPO = Path(__file__).resolve().parents[2]
ACCOUNT = "111122223333"
OTHER = "444455556666"
BUCKET = f"pinework-artifacts-{ACCOUNT}-eu-west-1"
PYTHON = Path(sys.base_prefix) / "bin" / "python3"
"""The interpreter without the virtual environment (a fresh clone has none), called by
path: a version manager's shim would put its own folder, and its aws, first on the PATH."""


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """The tracked files make needs, copied as they are in this worktree."""
    listed = subprocess.run(
        ["git", "ls-files", "Makefile", "infra", ".chalice"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    target = tmp_path / "clone"
    for name in listed:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target / name)
    for name in ("infra/awscli.py", "infra/artifacts.py", "infra/stage_teardown.py"):
        shutil.copy2(REPO / name, target / name)  # new files, maybe not yet committed
    assert not (target / ".venv").exists() and not (target / "build").exists()
    return target


def make(clone: Path, fake: FakeAws, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``make ARGUMENTS`` in the clone with the fake ``aws`` first on the PATH."""
    return subprocess.run(
        ["make", "--no-print-directory", *arguments, "AWS_REGION=eu-west-1", f"PYTHON={PYTHON}"],
        cwd=clone,
        env=fake.env,
        capture_output=True,
        text=True,
        check=False,
    )


def changes(fake: FakeAws) -> list[list[str]]:
    """The calls that change something (everything but reads and waits)."""
    reads = {"head-bucket", "get-caller-identity", "describe-stacks", "wait"}
    return [call for call in fake.calls if call[1] not in reads and call[:2] != ["s3", "cp"]]


def test_a_missing_bucket_is_created_private_encrypted_and_versioned(
    clone: Path, tmp_path: Path
) -> None:
    fake = FakeAws(tmp_path / "aws", {"account": ACCOUNT})
    done = make(clone, fake, "artifact-bucket")
    assert done.returncode == 0, done.stderr
    bucket = fake.state["buckets"][BUCKET]
    assert bucket["owner"] == ACCOUNT
    settings = bucket["settings"]
    assert "Status=Enabled" in settings["put-bucket-versioning"]
    assert "AES256" in " ".join(settings["put-bucket-encryption"])
    assert "RestrictPublicBuckets=true" in " ".join(settings["put-public-access-block"])
    assert "aws:SecureTransport" in " ".join(settings["put-bucket-policy"])
    for call in fake.calls:
        if call[0] == "s3api" and call[1] != "create-bucket":
            assert call[call.index("--expected-bucket-owner") + 1] == ACCOUNT, call
    assert any("LocationConstraint=eu-west-1" in word for word in fake.calls[2])


def test_an_existing_bucket_of_this_account_gets_its_protections_again(
    clone: Path, tmp_path: Path
) -> None:
    state: dict[str, Any] = {
        "account": ACCOUNT,
        "buckets": {BUCKET: {"owner": ACCOUNT, "settings": {}}},
    }
    fake = FakeAws(tmp_path / "aws", state)
    assert make(clone, fake, "artifact-bucket").returncode == 0
    assert not [call for call in fake.calls if call[1] == "create-bucket"]
    assert "put-bucket-versioning" in fake.state["buckets"][BUCKET]["settings"]


def test_a_bucket_of_another_account_stops_the_deploy(clone: Path, tmp_path: Path) -> None:
    state: dict[str, Any] = {
        "account": ACCOUNT,
        "buckets": {BUCKET: {"owner": OTHER, "settings": {}}},
    }
    fake = FakeAws(tmp_path / "aws", state)
    done = make(clone, fake, "artifact-bucket")
    assert done.returncode != 0
    assert f"{BUCKET} exists but is not owned by account {ACCOUNT}" in done.stderr
    assert fake.state["buckets"][BUCKET]["settings"] == {}
    assert [call[1] for call in fake.calls if call[0] == "s3api"] == ["head-bucket"]


def test_no_account_stops_before_any_bucket_is_named(clone: Path, tmp_path: Path) -> None:
    fake = FakeAws(tmp_path / "aws", {})  # sts fails: expired credentials
    for target in ("artifact-bucket", "teardown"):
        done = make(clone, fake, target)
        assert done.returncode != 0
        assert "no AWS account" in done.stderr
    assert not [call for call in fake.calls if call[0] != "sts"]  # nothing else asked


def test_the_dry_run_never_names_a_bucket_without_an_account() -> None:
    done = subprocess.run(
        ["make", "-n", "artifact-bucket", "AWS_ACCOUNT=", "AWS_REGION=us-east-1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "pinework-artifacts--us-east-1" in done.stdout  # the name is then refused …
    assert '--account ""' in done.stdout  # … by infra.artifacts, which needs the account


RECORD = {
    "schema_version": "2.0",
    "backend": "api",
    "resources": [
        {
            "name": "api_handler",
            "resource_type": "lambda_function",
            "lambda_arn": "arn:aws:lambda:eu-west-1:111122223333:function:pinework-x",
        },
        {
            "name": "review_fanout",
            "resource_type": "lambda_function",
            "lambda_arn": "arn:aws:lambda:eu-west-1:111122223333:function:pinework-x-review_fanout",
        },
        {
            "name": "review_fanout-event",
            "resource_type": "cloudwatch_event",
            "rule_name": "pinework-x-review_fanout-event",
        },
        {
            "name": "review_worker",
            "resource_type": "lambda_function",
            "lambda_arn": "arn:aws:lambda:eu-west-1:111122223333:function:pinework-x-review_worker",
        },
        {
            "name": "review_worker-sqs-event-source",
            "resource_type": "sqs_event",
            "event_uuid": "u1",
        },
        {"name": "rest_api", "resource_type": "rest_api", "rest_api_id": "abc123"},
    ],
}
STAGE_THINGS = [
    "stack:pinework-x-resources",
    "stack:pinework-x-operations",
    "stack:pinework-x-waf",
    "function:arn:aws:lambda:eu-west-1:111122223333:function:pinework-x",
    "function:arn:aws:lambda:eu-west-1:111122223333:function:pinework-x-review_fanout",
    "function:arn:aws:lambda:eu-west-1:111122223333:function:pinework-x-review_worker",
    "rule:pinework-x-review_fanout-event",
    "mapping:u1",
    "rest_api:abc123",
]


def stage_state(**more: Any) -> dict[str, Any]:
    """A deployed stage ``x``: its stacks, what chalice made, the record in the bucket."""
    return {
        "account": ACCOUNT,
        "buckets": {BUCKET: {"owner": ACCOUNT, "settings": {}}},
        "objects": {f"s3://{BUCKET}/pinework-x/chalice-deployed/x.json": json.dumps(RECORD)},
        "things": list(STAGE_THINGS),
        "outputs": {
            "pinework-x-resources": {
                "ChaliceStage": "x",
                "TableName": "pinework-x-resources-memories",
                "HashSecretArn": "arn:aws:secretsmanager:eu-west-1:111122223333:secret:h",
            }
        },
        **more,
    }


def teardown(clone: Path, fake: FakeAws) -> subprocess.CompletedProcess[str]:
    return make(clone, fake, "teardown", "STAGE=x", "STACK=pinework-x")


def test_a_fresh_clone_tears_a_stage_down_with_the_alarms_last(clone: Path, tmp_path: Path) -> None:
    fake = FakeAws(tmp_path / "aws", stage_state())
    done = teardown(clone, fake)
    assert done.returncode == 0, done.stderr
    assert fake.state["things"] == []
    assert fake.state["objects"] == {}
    deleting = [call for call in changes(fake) if call[1] != "remove-targets"]
    kinds = [call[1] for call in deleting]
    # nothing starts a function, nothing serves, no function, then the stacks
    assert kinds.index("delete-rule") < kinds.index("delete-rest-api")
    assert kinds.index("delete-event-source-mapping") < kinds.index("delete-rest-api")
    assert kinds.index("delete-rest-api") < kinds.index("delete-function")
    stacks = [call[call.index("--stack-name") + 1] for call in deleting if "--stack-name" in call]
    assert stacks[-1] == "pinework-x-operations"
    assert stacks == ["pinework-x-waf", "pinework-x-resources", "pinework-x-operations"]
    assert "secretsmanager delete-secret" in done.stdout  # the retained secret is named


def test_a_record_missing_everywhere_stops_before_any_deletion(clone: Path, tmp_path: Path) -> None:
    fake = FakeAws(tmp_path / "aws", stage_state(objects={}))
    done = teardown(clone, fake)
    assert done.returncode != 0 and "nothing was deleted" in done.stderr
    assert changes(fake) == []
    assert fake.state["things"] == STAGE_THINGS


def test_a_resources_stack_of_another_stage_stops_before_any_deletion(
    clone: Path, tmp_path: Path
) -> None:
    state = stage_state()
    state["outputs"]["pinework-x-resources"]["ChaliceStage"] = "prod"
    fake = FakeAws(tmp_path / "aws", state)
    done = teardown(clone, fake)
    assert done.returncode != 0 and "made for stage 'prod'" in done.stderr
    assert changes(fake) == []


def test_an_unknown_resource_in_the_record_stops_before_any_deletion(
    clone: Path, tmp_path: Path
) -> None:
    record = json.loads(json.dumps(RECORD))
    record["resources"].append({"name": "d", "resource_type": "domain_name"})
    key = f"s3://{BUCKET}/pinework-x/chalice-deployed/x.json"
    fake = FakeAws(tmp_path / "aws", stage_state(objects={key: json.dumps(record)}))
    done = teardown(clone, fake)
    assert done.returncode != 0 and "d (domain_name)" in done.stderr
    assert changes(fake) == []


def test_a_teardown_stopped_half_way_keeps_the_alarms_and_finishes_when_run_again(
    clone: Path, tmp_path: Path
) -> None:
    fake = FakeAws(tmp_path / "aws", stage_state(fail=["delete-stack --stack-name pinework-x-res"]))
    first = teardown(clone, fake)
    assert first.returncode != 0
    left = fake.state["things"]
    assert "stack:pinework-x-operations" in left  # the stage still has its alarms
    assert not [thing for thing in left if thing.startswith("function:")]
    state = fake.state
    state["fail"] = []
    fake.set_state(state)
    second = teardown(clone, fake)
    assert second.returncode == 0, second.stderr
    assert fake.state["things"] == []


def test_the_one_stack_teardown_checks_the_stack_first(clone: Path, tmp_path: Path) -> None:
    state = {
        "account": ACCOUNT,
        "things": ["stack:pinework-x"],
        "outputs": {"pinework-x": {"TableName": "t"}},  # no ApiName: not a one-stack deploy
    }
    fake = FakeAws(tmp_path / "aws", state)
    done = make(clone, fake, "teardown-cloudformation", "STACK=pinework-x")
    assert done.returncode != 0 and "is not a make deploy-cloudformation stack" in done.stderr
    assert fake.state["things"] == ["stack:pinework-x"]
    state["outputs"]["pinework-x"]["ApiName"] = "pinework-x"  # type: ignore[index]
    fake.set_state(state)
    done = make(clone, fake, "teardown-cloudformation", "STACK=pinework-x")
    assert done.returncode == 0, done.stderr
    assert fake.state["things"] == []
