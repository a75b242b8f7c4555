"""``pinework routine …`` and ``pinework review …`` against a mock transport."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pinework import Client, cli
from pinework.models import ReviewReport
from tests.client.fake_api import FakeApi
from tests.helpers import InjectedCliRunner

ENV = {"PINEWORK_API_URL": "http://pinework.test", "PINEWORK_TOKEN": "tok_person"}
AGENT = "agt_01JABCDEF0000000000000000"
ROUTINE_ID = "rtn_01JABCDEF0000000000000000"
ROUTINE: dict[str, Any] = {
    "id": ROUTINE_ID,
    "object": "routine",
    "agentId": AGENT,
    "name": "Memory dreaming",
    "schedule": "cron(0 4 * * ? *)",
    "status": "active",
    "createdAt": "2026-11-30T12:00:00.000Z",
    "updatedAt": "2026-11-30T12:00:00.000Z",
    "updatedByPersonId": None,
    "scheduleDescription": "daily at 04:00 UTC",
    "timezone": "UTC",
}
REPORT: dict[str, Any] = {
    "id": "rvw_01JABCDEF0000000000000000",
    "object": "review",
    "agentId": AGENT,
    "date": "2026-11-29",
    "trigger": "manual",
    "dryRun": True,
    "reviewer": "rules-v1",
    "startedAt": "2026-11-30T12:00:00.000Z",
    "finishedAt": "2026-11-30T12:00:00.000Z",
    "plan": {
        "agentId": AGENT,
        "date": "2026-11-29",
        "reviewer": "rules-v1",
        "generatedAt": "2026-11-30T12:00:00.000Z",
        "actions": [
            {
                "id": "a1",
                "action": "merge",
                "memoryIds": ["mem_2"],
                "keepId": "mem_1",
                "text": None,
                "supersedes": None,
                "expiresAt": None,
                "reason": "2 live facts say the same thing",
                "evidence": ["mem_1: x", "mem_2: x"],
                "expectedVersions": {"mem_1": 1, "mem_2": 1},
            }
        ],
        "notes": [],
    },
    "applied": [],
    "skipped": [],
    "reportKey": None,
}


def invoke(fake_api: FakeApi, *args: str) -> Any:
    """Run the CLI against ``fake_api`` (its client injected), configured by ``ENV``."""
    connections = cli.Connections(client=lambda: Client.from_env(transport=fake_api.transport))
    return InjectedCliRunner(connections).invoke(cli.app, list(args), env=ENV)


@pytest.mark.parametrize(
    ("args", "method", "path"),
    [
        (["routine", "pause", ROUTINE_ID], "POST", f"/routines/{ROUTINE_ID}/pause"),
        (["routine", "resume", AGENT], "POST", f"/routines/{AGENT}/resume"),
        (["routine", "delete", ROUTINE_ID], "DELETE", f"/routines/{ROUTINE_ID}"),
        (["routine", "show", ROUTINE_ID], "GET", f"/routines/{ROUTINE_ID}"),
    ],
)
def test_routine_commands_call_their_routes_and_print_json(
    fake_api: FakeApi, args: list[str], method: str, path: str
) -> None:
    fake_api.on(method, path, 200, ROUTINE)
    result = invoke(fake_api, *args, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == ROUTINE
    assert fake_api.last.method == method


def test_routine_list_sends_the_agent_and_prints_lines(fake_api: FakeApi) -> None:
    fake_api.on("GET", "/routines", 200, {"object": "list", "data": [ROUTINE], "nextToken": None})
    result = invoke(fake_api, "routine", "list", "--agent", AGENT)
    assert result.exit_code == 0
    assert fake_api.last.url.params["agentId"] == AGENT
    assert ROUTINE_ID in result.stdout and "active" in result.stdout


def test_routine_list_pages_with_limit_and_next_token(fake_api: FakeApi) -> None:
    fake_api.on("GET", "/routines", 200, {"object": "list", "data": [ROUTINE], "nextToken": "tk1"})
    result = invoke(fake_api, "routine", "list", "--limit", "1", "--next-token", "tk0")
    assert result.exit_code == 0, result.output
    assert dict(fake_api.last.url.params) == {"limit": "1", "nextToken": "tk0"}
    assert result.stdout.splitlines()[-1] == "more: --next-token tk1"


def test_routine_error_exits_1_with_code(fake_api: FakeApi) -> None:
    fake_api.on(
        "POST",
        f"/routines/{ROUTINE_ID}/pause",
        403,
        {"error": {"code": "forbidden", "message": "Only a person can pause."}},
    )
    result = invoke(fake_api, "routine", "pause", ROUTINE_ID)
    assert result.exit_code == 1 and "forbidden" in result.output


def test_review_run_dry_run_sends_the_flag_and_renders_the_plan(fake_api: FakeApi) -> None:
    fake_api.on("POST", "/reviews", 200, REPORT)
    result = invoke(fake_api, "review", "run", "--agent", AGENT, "--dry-run")
    assert result.exit_code == 0, result.output
    assert fake_api.last_json() == {"agentId": AGENT, "dryRun": True}
    assert "a1 merge" in result.stdout and "dry run" in result.stdout
    result = invoke(fake_api, "review", "run", "--agent", AGENT, "--json")
    assert fake_api.last_json() == {"agentId": AGENT, "dryRun": False}
    assert json.loads(result.stdout) == REPORT


def test_review_show_prints_the_text_a_lift_would_save(fake_api: FakeApi) -> None:
    lift = {
        **REPORT["plan"]["actions"][0],
        "action": "lift",
        "memoryIds": [],
        "keepId": None,
        "text": "CI runs on arm64",
        "reason": "marked durable in the day log of 2026-11-29",
        "expectedVersions": {},
    }
    report = {**REPORT, "plan": {**REPORT["plan"], "actions": [lift]}}
    fake_api.on("GET", f"/reviews/{REPORT['id']}", 200, report)
    result = invoke(fake_api, "review", "show", REPORT["id"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("  a1 lift"))
    assert lines[at + 1] == "      text: CI runs on arm64"


def test_review_list_prints_summaries(fake_api: FakeApi) -> None:
    summary = {
        "id": REPORT["id"],
        "object": "review_summary",
        "agentId": AGENT,
        "date": "2026-11-29",
        "trigger": "schedule",
        "reviewer": "rules-v1",
        "startedAt": "2026-11-30T04:00:00.000Z",
        "finishedAt": "2026-11-30T04:00:01.000Z",
        "planned": 3,
        "applied": 2,
        "skipped": 1,
        "reportKey": "reviews/x.json",
    }
    fake_api.on("GET", "/reviews", 200, {"object": "list", "data": [summary], "nextToken": None})
    result = invoke(fake_api, "review", "list", "--agent", AGENT)
    assert result.exit_code == 0, result.output
    assert "applied 2, skipped 1" in result.stdout
    assert fake_api.last.url.params["agentId"] == AGENT


QUEUED: dict[str, Any] = {
    "id": REPORT["id"],
    "object": "review",
    "trigger": "manual",
    "agentId": AGENT,
    "date": "2026-11-29",
    "dryRun": False,
    "status": "queued",
    "requestedBy": "usr_1",
    "requestedAt": "2026-11-30T12:00:00.000Z",
    "startedAt": None,
    "finishedAt": None,
    "attempts": 0,
    "error": None,
}


def test_a_queued_review_prints_its_id_and_how_to_follow_it(fake_api: FakeApi) -> None:
    fake_api.on("POST", "/reviews", 202, QUEUED)
    result = invoke(fake_api, "review", "run", "--agent", AGENT)
    assert result.exit_code == 0, result.output
    assert f"review {REPORT['id']} of {AGENT} for 2026-11-29 (manual): queued" in result.stdout
    assert f"pinework review show {REPORT['id']}" in result.stdout
    fake_api.on("GET", f"/reviews/{REPORT['id']}", 200, {**QUEUED, "status": "running"})
    shown = invoke(fake_api, "review", "show", REPORT["id"])
    assert shown.exit_code == 0 and ": running" in shown.stdout


def test_review_run_wait_follows_a_queued_review_to_its_report(fake_api: FakeApi) -> None:
    fake_api.on("POST", "/reviews", 202, QUEUED)
    done = {**REPORT, "dryRun": False, "status": "done"}
    fake_api.on("GET", f"/reviews/{REPORT['id']}", 200, done)
    result = invoke(fake_api, "review", "run", "--agent", AGENT, "--wait", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == done
    assert [request.method for request in fake_api.requests[-2:]] == ["POST", "GET"]


def test_review_run_wait_exits_1_when_the_review_failed(fake_api: FakeApi) -> None:
    fake_api.on("POST", "/reviews", 202, QUEUED)
    failed = {**QUEUED, "status": "failed", "attempts": 1, "error": "RuntimeError"}
    fake_api.on("GET", f"/reviews/{REPORT['id']}", 200, failed)
    result = invoke(fake_api, "review", "run", "--agent", AGENT, "--wait")
    assert result.exit_code == 1
    assert "attempt 1 failed (RuntimeError); the queue retries it" in result.stdout


def test_wait_for_review_polls_until_the_report_arrives(fake_api: FakeApi) -> None:
    answers = iter([{**QUEUED, "status": "queued"}, {**QUEUED, "status": "running"}, REPORT])

    def next_answer(request: Any) -> Any:
        import httpx

        return httpx.Response(200, json=next(answers))

    fake_api.routes[("GET", f"/api/v1/reviews/{REPORT['id']}")] = next_answer
    slept: list[float] = []
    with Client("http://pinework.test", "tok", transport=fake_api.transport) as client:
        report = client.wait_for_review(REPORT["id"], interval=2, sleep=slept.append)
    assert report.id == REPORT["id"] and slept == [2, 2]
    assert isinstance(report, ReviewReport)  # the report, not the queued run
