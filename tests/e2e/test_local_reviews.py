"""Routines and reviews with the real CLI against the real local server
(docs/issues.md#issue-4-item-7):
`pinework review run` on the embedded S3, and the local SQS worker."""

from __future__ import annotations

import json
import time

import boto3
import pytest

from chalicelib.settings import REVIEW_QUEUE_NAME
from tests.helpers import LocalServer, cli


def test_review_run_and_routines_through_the_cli(server: LocalServer) -> None:
    server.start()
    demo = server.demo()
    agent, person, agent_id = demo["agentToken"], demo["personToken"], demo["agentId"]
    for text in ("Deploys need the VPN", "deploys need the VPN", "Tests run on arm64"):
        assert cli(server, agent, "memory", "save", text).returncode == 0
    listed = cli(server, person, "routine", "list", "--agent", agent_id, "--json")
    assert listed.returncode == 0, listed.stderr
    (routine,) = json.loads(listed.stdout)["data"]
    assert (routine["status"], routine["schedule"]) == ("active", "cron(0 4 * * ? *)")

    dry = cli(server, person, "review", "run", "--agent", agent_id, "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert [a["action"] for a in json.loads(dry.stdout)["plan"]["actions"]] == ["merge"]
    ran = cli(server, person, "review", "run", "--agent", agent_id, "--json")
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert [a["action"] for a in report["applied"]] == ["merge"]
    shown = cli(server, person, "review", "show", report["id"], "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["applied"] == report["applied"]
    reviews = cli(server, person, "review", "list", "--agent", agent_id)
    assert report["id"] in reviews.stdout
    facts = cli(server, agent, "memory", "list", "--json")
    assert len(json.loads(facts.stdout)["data"]) == 2

    # The local worker reviews what the fan-out would enqueue.
    assert cli(server, agent, "memory", "save", "Use pnpm").returncode == 0
    assert cli(server, agent, "memory", "save", "use pnpm").returncode == 0
    endpoint = f"http://127.0.0.1:{server.dynamodb_port}"
    sqs = boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    url = sqs.get_queue_url(QueueName=REVIEW_QUEUE_NAME)["QueueUrl"]
    body = {"workspaceId": demo["workspaceId"], "agentId": agent_id, "date": "2026-01-01"}
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps(body))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        listed = json.loads(
            cli(server, person, "review", "list", "--agent", agent_id, "--json").stdout
        )
        if any(item["trigger"] == "schedule" for item in listed["data"]):
            break
        time.sleep(1)
    else:
        raise AssertionError("the local worker did not review the queued agent")
    paused = cli(server, person, "routine", "pause", routine["id"], "--json")
    assert json.loads(paused.stdout)["status"] == "paused"


def test_a_queued_review_runs_on_the_local_worker_and_the_cli_waits_for_it(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every manual review queued (202), as one that may outlast API Gateway's 29 s is.
    monkeypatch.setenv("PINEWORK_REVIEW_INLINE_MAX_FACTS", "0")
    server.start()
    demo = server.demo()
    agent, person, agent_id = demo["agentToken"], demo["personToken"], demo["agentId"]
    for text in ("Deploys need the VPN", "deploys need the VPN"):
        assert cli(server, agent, "memory", "save", text).returncode == 0
    queued = cli(server, person, "review", "run", "--agent", agent_id)
    assert queued.returncode == 0, queued.stderr
    assert ": queued" in queued.stdout and "pinework review show rvw_" in queued.stdout
    waited = cli(server, person, "review", "run", "--agent", agent_id, "--wait", "--json")
    assert waited.returncode == 0, waited.stdout + waited.stderr
    report = json.loads(waited.stdout)
    assert report["status"] == "done" and report["trigger"] == "manual"
    facts = json.loads(cli(server, agent, "memory", "list", "--json").stdout)["data"]
    assert len(facts) == 1  # the first queued review merged the twins
