"""What an operator sees (docs/issues.md#issue-12; docs/reference.md#14-operations): the JSON log
line and EMF metrics each request and review writes, parsed from the real output of real requests,
and what never reaches a log line: tokens, secrets (the secret test corpus), fact texts, day
lines, queries, key-value keys and values, evidence."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.api import telemetry as edge_telemetry
from chalicelib.api.telemetry import Telemetry
from chalicelib.ids import FixedClock
from chalicelib.services.recall import deadline
from chalicelib.services.recall.relevance import Candidate
from chalicelib.settings import Settings
from tests.helpers import BUCKET, TABLE, Actor, Api, World
from tests.secret_corpus import SECRETS, rng_for

ID = re.compile(r"\b(mem|agt|wsp|usr|rvw|rcl|tok|rtn)_[0-9A-Z]{26}\b")


def captured(
    capfd: pytest.CaptureFixture[str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """(log lines, EMF records, everything printed) since the last call."""
    out = capfd.readouterr()
    records = [json.loads(line) for line in out.out.splitlines() if line.strip()]
    logs = [record for record in records if "_aws" not in record]
    emf = [record for record in records if "_aws" in record]
    return logs, emf, out.out + out.err


def requests_of(logs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in logs if line["message"] == "request"]


def metric(emf: Sequence[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    found = []
    for record in emf:
        (directive,) = record["_aws"]["CloudWatchMetrics"]
        if name in {entry["Name"] for entry in directive["Metrics"]}:
            found.append(record)
    return found


def test_every_request_writes_one_json_line_with_the_operator_fields(
    api: Api, world: World, capfd: pytest.CaptureFixture[str]
) -> None:
    captured(capfd)
    status, saved = api.call("POST", "/memories", world.agent, {"text": "Staging needs the VPN"})
    assert status == 201
    api.call("GET", f"/memories/{saved['id']}", world.person)
    api.call("POST", "/memories", world.agent, {"txt": "typo"})
    api.call("GET", "/memories", None)
    api.call("POST", "/kv/remember", None, {"key": "k", "value": 1})
    api.call("POST", "/kv/recall", None, {"key": "k"}, headers={"X-Api-Key": "my-key"})
    api.call("POST", "/memories/day", world.agent, {"line": "deployed"})
    logs, _, printed = captured(capfd)
    assert all(line.startswith("{") for line in printed.splitlines() if line.strip())
    lines = requests_of(logs)
    assert [
        (
            line["method"],
            line["route"],
            line["status"],
            line.get("principal_kind"),
            line.get("error_code"),
        )
        for line in lines
    ] == [
        ("POST", "/memories", 201, "agent", None),
        ("GET", "/memories/{memory_id}", 200, "person", None),
        ("POST", "/memories", 400, "agent", "invalid_request"),
        ("GET", "/memories", 401, None, "unauthorized"),
        ("POST", "/kv/remember", 200, "anonymous", None),
        ("POST", "/kv/recall", 200, "api_key", None),
        ("POST", "/memories/day", 201, "agent", None),
    ]
    assert len({line["request_id"] for line in lines}) == len(lines)
    for line in lines:
        assert line["level"] == ("INFO" if line["status"] < 500 else "ERROR")
        assert line["service"] == "pinework" and line["timestamp"].startswith("20")
        assert isinstance(line["latency_ms"], float) and line["latency_ms"] >= 0
        assert line["function_request_id"]
    assert lines[0]["agent_id"] == world.agent.id and "person_id" not in lines[0]
    assert lines[0]["workspace_id"] == world.workspace_id
    assert lines[1]["person_id"] == world.person.id and "agent_id" not in lines[1]
    assert "workspace_id" not in lines[4]  # anonymous: no id, no IP, no key hash


def test_request_metrics_count_by_route_template_and_status_without_ids(
    api: Api, world: World, capfd: pytest.CaptureFixture[str]
) -> None:
    saved = api.call("POST", "/memories", world.agent, {"text": "Staging needs the VPN"})[1]
    captured(capfd)
    api.call("GET", f"/memories/{saved['id']}", world.agent)
    api.call("POST", f"/memories/{saved['id']}/archive", world.agent, {"reason": "old"})
    api.call("POST", f"/memories/{saved['id']}/archive", world.agent, {"reason": "old"})
    logs, emf, _ = captured(capfd)
    requests = metric(emf, "Requests")
    assert [(r["route"], r["status"], r["Requests"]) for r in requests] == [
        ("GET /memories/{memory_id}", "200", [1.0]),
        ("POST /memories/{memory_id}/archive", "200", [1.0]),
        ("POST /memories/{memory_id}/archive", "409", [1.0]),
    ]
    for record in emf:
        (directive,) = record["_aws"]["CloudWatchMetrics"]
        assert directive["Namespace"] == "Pinework"
        for dimension_set in directive["Dimensions"]:
            assert "service" in dimension_set
            for name in dimension_set:
                assert not ID.search(str(record[name])), (name, record[name])
    (directive,) = requests[0]["_aws"]["CloudWatchMetrics"]
    assert directive["Dimensions"] == [["route", "status", "service"], ["service", "status"]]
    assert [r["request_id"] for r in requests] == [line["request_id"] for line in requests_of(logs)]


class DeadlineScorer:
    """A scorer whose first stage outlasts any short budget, then checks the deadline."""

    def score(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[float]:
        time.sleep(0.1)
        deadline.check("second stage")
        return [1.0] * len(candidates)


class FailingScorer:
    """A scorer that fails, quoting its query (as a careless library might)."""

    def score(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[float]:
        raise ValueError(f"cannot score {query!r}")


@contextmanager
def services_with(
    dynamodb: Any, s3: Any, clock: FixedClock, settings: Settings | None = None, **parts: Any
) -> Iterator[wiring.Services]:
    built = wiring.build_services(
        settings or Settings(table_name=TABLE, bucket_name=BUCKET),
        clock=clock,
        client=dynamodb,
        s3=s3,
        **parts,
    )
    wiring.install(built)
    try:
        yield built
    finally:
        wiring.install(None)


def test_recall_metrics_latency_kept_and_fallback(
    api: Api,
    world: World,
    dynamodb: Any,
    s3: Any,
    clock: FixedClock,
    capfd: pytest.CaptureFixture[str],
) -> None:
    for text in ("Staging deploys need the VPN", "Prod deploys need two approvals", "Use pnpm"):
        api.call("POST", "/memories", world.agent, {"text": text})
    captured(capfd)
    status, answer = api.call("POST", "/memories/recall", world.agent, {"query": "deploy staging"})
    assert status == 200
    start = {"sessionId": "s1", "resumed": False, "slashCommand": "/help"}
    assert api.call("POST", "/memories/recall/start", world.agent, start)[1]["skipped"]
    logs, emf, _ = captured(capfd)
    (recalled,) = metric(emf, "RecallLatency")
    assert recalled["MemoriesKept"] == [float(len(answer["memories"]))]
    assert recalled["RecallFallback"] == [0.0] and recalled["RecallLatency"][0] > 0
    assert [entry["Unit"] for entry in recalled["_aws"]["CloudWatchMetrics"][0]["Metrics"]] == [
        "Milliseconds",
        "Count",
        "Count",
    ]
    on_demand, skipped = requests_of(logs)
    assert on_demand["recall_kind"] == "on_demand"
    assert on_demand["recall_kept"] == len(answer["memories"])
    assert "recall_fallback" not in on_demand and "recall_stopped_at" not in on_demand
    assert on_demand["recall_reranker"] in {"ran", "off", "loading", "over_budget", "failed"}
    assert 0 < on_demand["recall_scoring_ms"] <= on_demand["recall_ms"]
    assert skipped["recall_kind"] == "run_start" and skipped["recall_skipped"]
    with services_with(dynamodb, s3, clock, scorer=FailingScorer()):
        status, answer = api.call(
            "POST", "/memories/recall", world.agent, {"query": "zebra quartz"}
        )
    assert status == 200 and answer["fallback"] == "newest"
    logs, emf, printed = captured(capfd)
    (recalled,) = metric(emf, "RecallFallback")
    assert recalled["RecallFallback"] == [1.0]
    assert requests_of(logs)[0]["recall_fallback"] == "newest"
    (failure,) = [line for line in logs if line["message"].startswith("recall scorer failed")]
    assert "ValueError" in failure["exception"] and failure["exception_name"] == "ValueError"
    assert "zebra" not in printed  # the exception's message quoted the query
    assert "recall_stopped_at" not in requests_of(logs)[0]  # an error, not the deadline
    slow = Settings(table_name=TABLE, bucket_name=BUCKET, recall_time_budget_ms=50)
    with services_with(dynamodb, s3, clock, slow, scorer=DeadlineScorer()):
        status, answer = api.call("POST", "/memories/recall", world.agent, {"query": "deploy"})
    assert status == 200 and answer["fallback"] == "newest"
    logs, emf, _ = captured(capfd)
    assert metric(emf, "RecallFallback")[0]["RecallFallback"] == [1.0]
    (line,) = requests_of(logs)
    assert line["recall_fallback"] == "newest" and line["recall_stopped_at"] == "second stage"


def test_refusals_are_metrics_of_their_own_also_from_mcp(
    api: Api, world: World, capfd: pytest.CaptureFixture[str]
) -> None:
    secret = dict((case, factory) for case, factory, _ in SECRETS)["github-classic"](rng_for("x"))
    captured(capfd)
    status, body = api.call("POST", "/memories", world.agent, {"text": secret})
    assert body["error"]["code"] == "secret_in_memory"
    line = "x" * 290
    while api.call("POST", "/memories/day", world.agent, {"line": line})[0] != 409:
        pass
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "memory_save", "arguments": {"text": secret}},
    }
    status, answer = api.call("POST", "/mcp", world.agent, call)
    assert status == 200 and answer["result"]["isError"] is True
    logs, emf, printed = captured(capfd)
    assert len(metric(emf, "secret_in_memory")) == 2
    assert len(metric(emf, "memory_day_full")) == 1
    mcp_line = requests_of(logs)[-1]
    assert mcp_line["route"] == "/mcp" and mcp_line["mcp_tools"] == ["memory_save"]
    assert mcp_line["tool_error_codes"] == ["secret_in_memory"]
    assert secret.split()[1] not in printed and line not in printed


def test_a_review_counts_its_actions_by_kind_and_outcome(
    api: Api, world: World, capfd: pytest.CaptureFixture[str]
) -> None:
    for text in ("Use pnpm for installs", "use pnpm for installs", "Deploys need the VPN"):
        api.call("POST", "/memories", world.agent, {"text": text})
    captured(capfd)
    status, report = api.call("POST", "/reviews", world.person, {"agentId": world.agent.id})
    assert status == 200 and len(report["applied"]) == 1
    logs, emf, printed = captured(capfd)
    (merged,) = metric(emf, "ReviewActions")
    assert (merged["action"], merged["outcome"], merged["ReviewActions"]) == (
        "merge",
        "applied",
        [1.0],
    )
    (line,) = requests_of(logs)
    assert line["review_id"] == report["id"] and line["review_actions"] == {"merge:applied": 1}
    assert "pnpm" not in printed


def test_the_review_worker_logs_and_counts_each_message(
    api: Api, world: World, capfd: pytest.CaptureFixture[str]
) -> None:
    from app import app

    agent = world.agent
    for text in ("Use pnpm for installs", "use pnpm for installs"):
        assert api.call("POST", "/memories", agent, {"text": text})[0] == 201
    secret = SECRETS[0][1](rng_for("worker"))
    good = json.dumps(
        {"workspaceId": world.workspace_id, "agentId": agent.id, "date": "2026-11-29"}
    )
    with Client(app) as client:
        event = client.events.generate_sqs_event(message_bodies=[good, secret], queue_name="q")
        captured(capfd)
        client.lambda_.invoke("review_worker", event)
    logs, emf, printed = captured(capfd)
    done, malformed = [line for line in logs if line["message"] == "review"]
    assert done["result"] == "done" and done["agent_id"] == agent.id
    assert done["date"] == "2026-11-29" and done["review_actions"] == {"merge:applied": 1}
    assert done["function_request_id"] and done["workspace_id"] == world.workspace_id
    assert malformed["result"] == "malformed" and malformed["level"] == "ERROR"
    assert malformed["body_chars"] == len(secret)
    assert secret not in printed and secret.split("=")[-1] not in printed
    assert sorted(r["result"] for r in metric(emf, "Reviews")) == ["done", "malformed"]
    assert [(r["action"], r["outcome"]) for r in metric(emf, "ReviewActions")] == [
        ("merge", "applied")
    ]


class ExplodingEmbedder:
    """An embedder that fails, quoting the text it was given."""

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        raise RuntimeError(f"cannot embed {texts[0]!r}")


def test_a_500_logs_the_exception_type_and_frames_never_its_message(
    api: Api,
    world: World,
    dynamodb: Any,
    s3: Any,
    clock: FixedClock,
    capfd: pytest.CaptureFixture[str],
) -> None:
    captured(capfd)
    with services_with(dynamodb, s3, clock, embedder=ExplodingEmbedder()):
        status, body = api.call("POST", "/memories", world.agent, {"text": "walrus tango 4411"})
    assert status == 500 and body["error"]["code"] == "internal_error"
    logs, _, printed = captured(capfd)
    (failure,) = [line for line in logs if line["message"].startswith("unhandled error")]
    assert failure["level"] == "ERROR" and failure["exception_name"] == "RuntimeError"
    assert "builtins.RuntimeError" in failure["exception"] and " at " in failure["exception"]
    (line,) = requests_of(logs)
    assert (line["status"], line["error_code"], line["level"]) == (500, "internal_error", "ERROR")
    assert "walrus" not in printed


def test_no_token_secret_or_text_reaches_any_log_line(
    api: Api, world: World, capfd: pytest.CaptureFixture[str]
) -> None:
    """Every credential of the secret corpus, sent in every place a caller can put
    one, and marked texts saved where they are allowed: none of it is printed."""
    captured(capfd)
    secrets = [factory(rng_for(f"logs-{case}")) for case, factory, _ in SECRETS]
    for secret in secrets:
        one_line = " ".join(secret.split())
        api.call("POST", "/memories", world.agent, {"text": secret})
        api.call("POST", "/memories", world.agent, {"text": "ok", "evidence": secret})
        api.call("POST", "/memories/day", world.agent, {"line": one_line[:300]})
        api.call("POST", "/memories/recall", world.agent, {"query": secret})
        api.call("POST", "/kv/remember", world.agent, {"key": "k", "value": secret})
        api.call("POST", "/kv/remember", world.agent, {"key": one_line[:500], "value": 1})
        api.call("GET", "/memories", Actor("x", one_line))
        api.call("POST", "/kv/recall", None, {"key": "k"}, headers={"X-Api-Key": one_line})
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "memory_day", "arguments": {"line": one_line[:300]}},
        }
        api.call("POST", "/mcp", world.agent, call)
    marked = {
        "fact": "Fact marker quokka-7781 lives on staging",
        "evidence": "Evidence marker narwhal-5520 from the run",
        "day": "Day marker axolotl-9043 shipped",
        "query": "Query marker pangolin-3318 deploy",
        "key": "Key marker ocelot-6604",
        "value": "Value marker tapir-2290",
    }
    api.call(
        "POST", "/memories", world.agent, {"text": marked["fact"], "evidence": marked["evidence"]}
    )
    api.call("POST", "/memories/day", world.agent, {"line": marked["day"]})
    api.call("POST", "/memories/recall", world.agent, {"query": marked["query"]})
    api.call("POST", "/kv/remember", world.agent, {"key": marked["key"], "value": marked["value"]})
    api.call("POST", "/kv/recall", world.agent, {"key": marked["key"]})
    logs, _, printed = captured(capfd)
    assert len(requests_of(logs)) == 9 * len(secrets) + 5
    for token in (world.agent.token, world.person.token):
        assert token not in printed and token[8:] not in printed
    for secret in secrets:
        for piece in secret.split():
            if len(piece) >= 12:
                assert piece not in printed, piece
    for what, text in marked.items():
        assert text.split()[2] not in printed, what


class Recording:
    """A ``Tracing`` that records subsegments and their annotations."""

    def __init__(self) -> None:
        self.segments: list[tuple[str, dict[str, Any]]] = []

    @contextmanager
    def subsegment(self, name: str) -> Iterator[Any]:
        annotations: dict[str, Any] = {}
        self.segments.append((name, annotations))

        class Segment:
            def put_annotation(self, key: str, value: Any) -> None:
                annotations[key] = value

        yield Segment()


def test_tracing_on_wraps_each_request_in_an_annotated_subsegment(api: Api, world: World) -> None:
    recording = Recording()
    edge_telemetry.install(Telemetry(Settings(tracing=True), tracing=recording))
    try:
        api.call("GET", "/memories", world.agent)
        api.call("GET", "/memories", None)
    finally:
        edge_telemetry.install(None)
    assert recording.segments == [
        ("## GET /memories", {"route": "/memories", "status": 200, "principal_kind": "agent"}),
        ("## GET /memories", {"route": "/memories", "status": 401}),
    ]


PROBE = textwrap.dedent(
    """
    import json, os, sys
    from chalice.test import Client
    from app import app
    with Client(app) as client:
        response = client.http.request("GET", "/api/v1/memories", headers={}, body=b"")
    print(json.dumps({"status": response.status_code, "xray": "aws_xray_sdk" in sys.modules}))
    """
)


@pytest.mark.parametrize(("switch", "imported"), [("off", False), ("on", True)])
def test_tracing_is_off_by_default_and_imports_nothing(switch: str, imported: bool) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "PINEWORK_TRACING": switch,
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[-1])
    assert answer == {"status": 401, "xray": imported}


def test_text_format_keeps_the_local_console_readable(
    api: Api,
    world: World,
    dynamodb: Any,
    s3: Any,
    clock: FixedClock,
    capfd: pytest.CaptureFixture[str],
) -> None:
    settings = Settings(table_name=TABLE, bucket_name=BUCKET, log_format="text")
    captured(capfd)
    with services_with(dynamodb, s3, clock, settings=settings):
        api.call("POST", "/memories", world.agent, {"text": "Staging needs the VPN"})
    out = capfd.readouterr()
    assert out.out == ""  # no JSON, no EMF
    (line,) = [line for line in out.err.splitlines() if " POST /memories " in line]
    assert re.match(r"\d\d:\d\d:\d\d POST /memories 201 \d+\.\d ms principal_kind=agent ", line)
    assert f"agent_id={world.agent.id}" in line and "request_id" not in line
