"""The ``pinework`` CLI against a mock transport, configured from the environment."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from pinework import Client, cli
from tests.client.fake_api import FakeApi, memory_json
from tests.helpers import InjectedCliRunner

ENV = {
    "PINEWORK_API_URL": "http://pinework.test",
    "PINEWORK_TOKEN": "tok_person",
    "PINEWORK_RUN": "run_5",
    "PINEWORK_TASK": "PIN-9",
}

MEMORY_ID = "mem_01JABCDEF0000000000000000"
RECALL: dict[str, Any] = {
    "object": "recall",
    "query": "deploy",
    "fallback": "newest",
    "memories": [{"score": 0.87, "memory": memory_json()}],
    "block": "--- MEMORY ---\nmem_01JABCDEF0000000000000000 (2026-01-01) The deploy bucket",
}
HISTORY: dict[str, Any] = {
    "object": "list",
    "data": [
        {
            "object": "audit",
            "id": "aud_1",
            "memoryId": MEMORY_ID,
            "action": "archive",
            "actorType": "person",
            "actorId": "usr_1",
            "at": "2026-01-02T08:00:00Z",
            "reason": "wrong",
            "before": memory_json(),
            "after": memory_json(status="archived", archiveReason="wrong"),
        }
    ],
    "nextToken": None,
}


@pytest.fixture
def runner(fake_api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """Every command talks to ``fake_api`` (its client injected), configured only by
    the environment."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return InjectedCliRunner(
        cli.Connections(client=lambda: Client.from_env(transport=fake_api.transport))
    )


def invoke(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli.app, list(args), env=ENV)


# Every command, with --json: stdout is exactly the server's JSON


COMMANDS: list[tuple[list[str], str, str, int, Any]] = [
    (["memory", "save", "a fact"], "POST", "/memories", 201, memory_json(extra="kept")),
    (["memory", "day", "did x"], "POST", "/memories/day", 201, memory_json(kind="day")),
    (["memory", "list"], "GET", "/memories", 200, {"object": "list", "data": [memory_json()]}),
    (["memory", "show", MEMORY_ID], "GET", f"/memories/{MEMORY_ID}", 200, memory_json()),
    (
        ["memory", "edit", MEMORY_ID, "--text", "t", "--if-match", f'"{MEMORY_ID}.v1"'],
        "PATCH",
        f"/memories/{MEMORY_ID}",
        200,
        memory_json(),
    ),
    (
        ["memory", "archive", MEMORY_ID, "--reason", "r"],
        "POST",
        f"/memories/{MEMORY_ID}/archive",
        200,
        memory_json(status="archived"),
    ),
    (
        ["memory", "veto", MEMORY_ID],
        "POST",
        f"/memories/{MEMORY_ID}/veto",
        200,
        memory_json(status="archived"),
    ),
    (
        ["memory", "erase", MEMORY_ID, "--reason", "r"],
        "POST",
        f"/memories/{MEMORY_ID}/erase",
        200,
        memory_json(status="erased", text=""),
    ),
    (
        ["memory", "unarchive", MEMORY_ID],
        "POST",
        f"/memories/{MEMORY_ID}/unarchive",
        200,
        memory_json(),
    ),
    (["memory", "history", MEMORY_ID], "GET", f"/memories/{MEMORY_ID}/history", 200, HISTORY),
    (["memory", "recall", "--query", "deploy"], "POST", "/memories/recall", 200, RECALL),
    (
        ["kv", "remember", "k", "v"],
        "POST",
        "/kv/remember",
        200,
        {"stored": True, "key": "k", "ttl": "permanent"},
    ),
    (["kv", "recall", "k"], "POST", "/kv/recall", 200, {"key": "k", "value": "v", "found": True}),
    (["kv", "recall"], "POST", "/kv/recall", 200, {"keys": ["k"], "count": 1}),
    (["kv", "forget", "k"], "POST", "/kv/forget", 200, {"deleted": True, "key": "k"}),
]


@pytest.mark.parametrize(
    ("args", "method", "path", "status", "body"),
    COMMANDS,
    ids=[" ".join(command[0][:2]) for command in COMMANDS],
)
def test_json_flag_prints_the_server_json_only(
    runner: CliRunner,
    fake_api: FakeApi,
    args: list[str],
    method: str,
    path: str,
    status: int,
    body: Any,
) -> None:
    fake_api.on(method, path, status, body)

    result = invoke(runner, *args, "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == body
    assert fake_api.last.headers["Authorization"] == "Bearer tok_person"
    assert fake_api.last.headers["X-Pinework-Run"] == "run_5"
    assert fake_api.last.headers["X-Pinework-Task"] == "PIN-9"


# Requests the commands send


def test_save_sends_options_and_prints_the_new_memory(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("POST", "/memories", 201, memory_json())

    result = invoke(
        runner,
        *["memory", "save", "The deploy bucket is in eu-west-1."],
        *["--expires", "2026-04-01", "--supersedes", "mem_old", "--agent", "agt_1"],
        *["--evidence", "$ aws s3api get-bucket-location\n eu-west-1"],
    )

    assert result.exit_code == 0, result.output
    assert fake_api.last_json() == {
        "text": "The deploy bucket is in eu-west-1.",
        "expiresAt": "2026-04-01",
        "supersedes": "mem_old",
        "agentId": "agt_1",
        "evidence": "$ aws s3api get-bucket-location\n eu-west-1",
    }
    assert result.stdout.startswith(f"saved {MEMORY_ID}")


def test_list_sends_filters_and_prints_one_line_per_memory(
    runner: CliRunner, fake_api: FakeApi
) -> None:
    long_text = "word " * 40
    fake_api.on(
        "GET",
        "/memories",
        200,
        {
            "object": "list",
            "data": [
                memory_json(id="mem_2", text=long_text, recallCount=7),
                memory_json(id="mem_1", kind="day", date="2025-12-31", text="a\nb"),
            ],
            "nextToken": "tok_next",
        },
    )

    result = invoke(
        runner,
        *["memory", "list", "--kind", "fact", "--status", "active", "--agent", "agt_1"],
        *["--all", "--limit", "2", "--next-token", "tok_prev"],
    )

    assert result.exit_code == 0, result.output
    assert dict(fake_api.last.url.params) == {
        "agentId": "agt_1",
        "kind": "fact",
        "status": "active",
        "all": "true",
        "limit": "2",
        "nextToken": "tok_prev",
    }
    first, second, more = result.stdout.splitlines()
    assert first.startswith("mem_2  fact  active")
    assert "2026-01-01" in first and "recalls=7" in first and first.endswith("…")
    assert second.startswith("mem_1  day ") and "2025-12-31" in second and "a ⏎ b" in second
    assert more == "more: --next-token tok_next"


def test_show_prints_a_readable_block(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("GET", f"/memories/{MEMORY_ID}", 200, memory_json(expired=True))

    result = invoke(runner, "memory", "show", MEMORY_ID)

    assert result.exit_code == 0, result.output
    assert f"id:               {MEMORY_ID}" in result.stdout
    assert "status:           active/expired" in result.stdout
    assert "expires at:       2026-04-01T00:00:00Z" in result.stdout
    assert result.stdout.rstrip().endswith("text:\n  The deploy bucket is in eu-west-1.")


def test_edit_sends_only_the_given_fields(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("GET", f"/memories/{MEMORY_ID}", 200, memory_json())
    fake_api.on("PATCH", f"/memories/{MEMORY_ID}", 200, memory_json())

    result = invoke(runner, "memory", "edit", MEMORY_ID, "--expires", "2026-09-01")

    assert result.exit_code == 0, result.output
    assert fake_api.last_json() == {"expiresAt": "2026-09-01"}


def test_edit_sends_the_version_it_just_read_as_if_match(
    runner: CliRunner, fake_api: FakeApi
) -> None:
    tag = f'"{MEMORY_ID}.v7"'
    fake_api.on("GET", f"/memories/{MEMORY_ID}", 200, memory_json(), headers={"ETag": tag})
    fake_api.on("PATCH", f"/memories/{MEMORY_ID}", 200, memory_json())

    result = invoke(runner, "memory", "edit", MEMORY_ID, "--text", "new words")

    assert result.exit_code == 0, result.output
    get, patch = fake_api.requests
    assert get.method == "GET" and "If-Match" not in get.headers
    assert patch.method == "PATCH" and patch.headers["If-Match"] == tag


def test_edit_of_a_memory_changed_meanwhile_fails_with_precondition_failed(
    runner: CliRunner, fake_api: FakeApi
) -> None:
    refused = {"error": {"code": "precondition_failed", "message": "changed since you read it"}}
    fake_api.on("PATCH", f"/memories/{MEMORY_ID}", 412, refused)

    result = invoke(runner, "memory", "edit", MEMORY_ID, "--text", "x", "--if-match", '"v1"')

    assert result.exit_code == 1
    assert "precondition_failed" in result.stderr
    assert [request.method for request in fake_api.requests] == ["PATCH"]
    assert fake_api.last.headers["If-Match"] == '"v1"'


def test_edit_without_changes_is_a_usage_error(runner: CliRunner, fake_api: FakeApi) -> None:
    result = invoke(runner, "memory", "edit", MEMORY_ID)

    assert result.exit_code == 2
    assert fake_api.requests == []


def test_archive_sends_the_reason(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("POST", f"/memories/{MEMORY_ID}/archive", 200, memory_json(status="archived"))

    result = invoke(runner, "memory", "archive", MEMORY_ID, "--reason", "outdated")

    assert result.exit_code == 0, result.output
    assert fake_api.last_json() == {"reason": "outdated"}
    assert result.stdout.startswith(f"archived {MEMORY_ID}")


def test_erase_sends_the_reason_and_says_erased(runner: CliRunner, fake_api: FakeApi) -> None:
    tombstone = memory_json(status="erased", text="", eraseReason="asked")
    fake_api.on("POST", f"/memories/{MEMORY_ID}/erase", 200, tombstone)

    result = invoke(runner, "memory", "erase", MEMORY_ID, "--reason", "asked")

    assert result.exit_code == 0, result.output
    assert fake_api.last_json() == {"reason": "asked"}
    assert result.stdout.startswith(f"erased {MEMORY_ID}")
    assert invoke(runner, "memory", "erase", MEMORY_ID).exit_code == 2  # the reason is required


def test_archive_without_reason_is_a_usage_error(runner: CliRunner, fake_api: FakeApi) -> None:
    result = invoke(runner, "memory", "archive", MEMORY_ID)

    assert result.exit_code == 2
    assert "--reason" in result.stderr
    assert fake_api.requests == []


def test_recall_prints_fallback_and_scores(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("POST", "/memories/recall", 200, RECALL)

    result = invoke(runner, "memory", "recall", "--query", "deploy", "--agent", "agt_1")

    assert result.exit_code == 0, result.output
    assert fake_api.last_json() == {"query": "deploy", "agentId": "agt_1"}
    (scored,) = result.stdout.splitlines()  # the note goes to stderr only
    assert result.stderr.startswith("fallback: newest")
    assert scored.startswith(f"0.87  {MEMORY_ID}")


def test_run_start_says_it_fell_back_on_stderr_only(runner: CliRunner, fake_api: FakeApi) -> None:
    started = {**RECALL, "object": "recall_start", "skipped": False, "reason": None}
    fake_api.on("POST", "/memories/recall/start", 200, started)
    result = invoke(runner, "memory", "start", "--session", "s", "--task", "deploy")
    assert result.exit_code == 0, result.output
    assert result.stdout == RECALL["block"] + "\n"
    assert result.stderr.startswith("fallback: newest (scoring failed or ran past its time budget)")
    fake_api.on("POST", "/memories/recall/start", 200, {**started, "fallback": None})
    result = invoke(runner, "memory", "start", "--session", "s", "--task", "deploy")
    assert result.stderr == "" and result.stdout == RECALL["block"] + "\n"


def test_recall_block_flag_prints_the_block(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("POST", "/memories/recall", 200, {**RECALL, "fallback": None})

    result = invoke(runner, "memory", "recall", "--block")

    assert result.exit_code == 0, result.output
    assert fake_api.last_json() == {}
    assert result.stdout == RECALL["block"] + "\n"


def test_recall_prints_the_learnings_it_gave(runner: CliRunner, fake_api: FakeApi) -> None:
    learning = {
        "id": "lrn_01JABCDEF0000000000000000",
        "object": "learning",
        "workspaceId": "wsp_1",
        "text": "Staging deploys need\nthe VPN",
        "state": "active",
        "proposedBy": "usr_1",
        "proposedByType": "person",
        "proposedAt": "2026-01-01T00:00:00Z",
        "updatedAt": "2026-01-01T00:00:00Z",
    }
    answer = {**RECALL, "fallback": None, "memories": [], "learnings": []}
    fake_api.on("POST", "/memories/recall", 200, answer)
    assert invoke(runner, "memory", "recall").stdout == "no memories recalled\n"

    fake_api.on(
        "POST",
        "/memories/recall",
        200,
        {**answer, "learnings": [{"score": 0.98, "learning": learning}]},
    )
    result = invoke(runner, "memory", "recall")

    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "0.98  lrn_01JABCDEF0000000000000000  active    Staging deploys need the VPN",
        "no memories recalled (the learnings above are the workspace's)",
    ]


def test_history_prints_one_line_per_record(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("GET", f"/memories/{MEMORY_ID}/history", 200, HISTORY)

    result = invoke(runner, "memory", "history", MEMORY_ID)

    assert result.exit_code == 0, result.output
    assert result.stdout == "2026-01-02T08:00:00Z  archive     person:usr_1  reason=wrong\n"


def test_kv_remember_parse_sends_a_json_value(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("POST", "/kv/remember", 200, {"stored": True, "key": "k", "ttl": "permanent"})

    result = invoke(runner, "kv", "remember", "k", '{"n": 1}', "--parse")

    assert result.exit_code == 0, result.output
    assert fake_api.last_json() == {"key": "k", "value": {"n": 1}}
    assert result.stdout == "stored k (ttl: permanent)\n"


def test_kv_recall_of_a_missing_key_exits_1(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("POST", "/kv/recall", 200, {"key": "k", "value": None, "found": False})

    result = invoke(runner, "kv", "recall", "k")

    assert result.exit_code == 1
    assert result.stdout == ""
    assert "not found: k" in result.stderr


# Errors


def test_api_error_prints_code_and_message_and_exits_1(
    runner: CliRunner, fake_api: FakeApi
) -> None:
    envelope = {"error": {"code": "memory_not_found", "message": "No memory mem_x here."}}
    fake_api.on("GET", "/memories/mem_x", 404, envelope)

    result = invoke(runner, "memory", "show", "mem_x")

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == "error: memory_not_found: No memory mem_x here.\n"


def test_api_error_with_json_prints_the_envelope_on_stdout(
    runner: CliRunner, fake_api: FakeApi
) -> None:
    envelope = {"error": {"code": "memory_day_full", "message": "Today's log is full."}}
    fake_api.on("POST", "/memories/day", 409, envelope)

    result = invoke(runner, "memory", "day", "one more", "--json")

    assert result.exit_code == 1
    assert json.loads(result.stdout) == envelope
    assert "error: memory_day_full: Today's log is full." in result.stderr


def test_unreachable_server_is_a_connection_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Connection refused", request=request)

    runner = InjectedCliRunner(
        cli.Connections(client=lambda: Client.from_env(transport=httpx.MockTransport(refuse)))
    )

    result = invoke(runner, "memory", "list", "--json")

    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["code"] == "connection_error"
    assert result.stderr.startswith("error: connection_error: could not reach")


def test_bad_api_url_is_reported_not_raised(runner: CliRunner, fake_api: FakeApi) -> None:
    result = runner.invoke(
        cli.app, ["memory", "list"], env={**ENV, "PINEWORK_API_URL": "localhost:8000"}
    )

    assert result.exit_code == 2  # found here: a usage error, never a server's code
    assert result.stderr.startswith("error: the API URL must start with http")
    assert (
        "(checked before sending: nothing was sent)" in result.stderr
        and "invalid_request" not in result.stderr
    )
    assert fake_api.requests == []


def test_without_connections_the_commands_build_their_client_from_the_environment() -> None:
    # What the console script does (main() passes no Connections): make_client() reads
    # PINEWORK_API_URL, so a bad one is reported before anything is sent.
    result = CliRunner().invoke(
        cli.app, ["memory", "list", "--json"], env={**ENV, "PINEWORK_API_URL": "ftp://x"}
    )

    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "invalid_argument"
    assert "the API URL must start with http" in result.stderr


def test_day_says_started_for_the_first_line_and_appended_after(
    runner: CliRunner, fake_api: FakeApi
) -> None:
    fake_api.on("POST", "/memories/day", 201, memory_json(kind="day", text="09:00 did x"))
    first = invoke(runner, "memory", "day", "did x")
    assert first.exit_code == 0 and first.stdout.startswith("started day log mem_")
    fake_api.on("POST", "/memories/day", 200, memory_json(kind="day", text="09:00 a\n10:00 b"))
    second = invoke(runner, "memory", "day", "b")
    assert second.stdout.startswith("appended to mem_") and "2 lines" in second.stdout


def test_recall_log_prints_the_query(runner: CliRunner, fake_api: FakeApi) -> None:
    entry = {
        "object": "recall_log",
        "id": "rcl_1",
        "agentId": "agt_1",
        "kind": "on_demand",
        "taskKey": "PIN-9",
        "query": "how do I deploy",
        "at": "2026-01-02T08:00:00Z",
        "memories": [{"memoryId": MEMORY_ID, "score": 0.9}],
    }
    fake_api.on("GET", "/recalls", 200, {"object": "list", "data": [entry], "nextToken": None})
    result = invoke(runner, "memory", "recalls", "--agent", "agt_1")
    assert result.exit_code == 0, result.output
    line, query = result.stdout.splitlines()
    assert "task=PIN-9" in line and f"{MEMORY_ID} (0.90)" in line
    assert query == "    query: how do I deploy"


def test_nothing_to_recall_for_names_the_cli_options(runner: CliRunner, fake_api: FakeApi) -> None:
    refusal = {
        "error": {
            "code": "invalid_request",
            "message": "Send a query, or X-Pinework-Task to recall for the task.",
        }
    }
    fake_api.on("POST", "/memories/recall", 400, refusal)
    result = invoke(runner, "memory", "recall")
    assert result.exit_code == 1
    assert "With the CLI: give --query, or set PINEWORK_TASK" in result.stderr
    fake_api.on("POST", "/memories/recall/start", 400, refusal)
    result = invoke(runner, "memory", "start", "--session", "s")
    assert "With the CLI: give --task or --message, or set PINEWORK_TASK" in result.stderr
    other = {"error": {"code": "invalid_request", "message": "The query has 4001 characters"}}
    fake_api.on("POST", "/memories/recall", 400, other)
    result = invoke(runner, "memory", "recall", "--query", "x" * 4001)
    assert "With the CLI" not in result.stderr


def test_history_shows_appended_lines_and_erased_records(
    runner: CliRunner, fake_api: FakeApi
) -> None:
    """docs/reference.md#day-line-history and #erasing-a-memory: an ``append`` record's
    ``after`` is a day line, an erased memory's records have null texts."""
    redacted = {**memory_json(), "text": None}
    history = {
        "object": "list",
        "data": [
            {
                "object": "audit",
                "id": "aud_1",
                "memoryId": MEMORY_ID,
                "action": "append",
                "actorType": "agent",
                "actorId": "agt_1",
                "at": "2026-01-02T08:00:00Z",
                "reason": None,
                "before": None,
                "after": {"object": "dayLine", "line": "08:00 ran the tests", "runId": None},
            },
            {
                "object": "audit",
                "id": "aud_2",
                "memoryId": MEMORY_ID,
                "action": "erase",
                "actorType": "person",
                "actorId": "usr_1",
                "at": "2026-01-02T09:00:00Z",
                "reason": "asked",
                "before": redacted,
                "after": {**memory_json(status="erased", text=""), "eraseReason": "asked"},
            },
        ],
        "nextToken": None,
    }
    fake_api.on("GET", f"/memories/{MEMORY_ID}/history", 200, history)

    result = invoke(runner, "memory", "history", MEMORY_ID)

    assert result.exit_code == 0, result.output
    assert "line: 08:00 ran the tests" in result.stdout
    assert "erase" in result.stdout and "reason=asked" in result.stdout


def test_a_run_header_that_cannot_be_sent_is_named_before_anything_is_sent(
    runner: CliRunner, fake_api: FakeApi
) -> None:
    result = runner.invoke(
        cli.app,
        ["memory", "save", "A fact", "--json"],
        env={**ENV, "PINEWORK_TASK": "PIN 812 é"},
    )
    assert result.exit_code == 2 and fake_api.requests == []
    assert "the task key holds 'é' (U+00E9) at character 9" in result.stderr
    assert "connection_error" not in result.stderr and "invalid_request" not in result.stderr
    assert '"code": "invalid_argument"' in result.stdout
