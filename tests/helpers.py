"""Helpers shared by the test modules: the one place tests import from.

Fixtures live in ``conftest.py`` files (``tests/conftest.py`` for the moto-backed
services and the API, ``tests/concurrency/conftest.py`` for the embedded server,
``tests/e2e/conftest.py`` for the real local server); the plain constants, types
and functions they and the tests use live here. No test module imports another
test module (``tests/unit/test_test_layout.py`` checks it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import boto3
from botocore.config import Config
from chalice.test import Client
from mcp import types as mcp_types
from typer import Typer
from typer.testing import CliRunner, Result

from chalicelib.ids import Clock, IdFactory
from chalicelib.models.memory import AuditRecord, Memory, MemoryKind, snapshot
from infra.local_process import LocalServer, free_port  # noqa: F401 (the e2e tests import them here)
from pinework import Client as PineworkClient
from pinework.cli import Connections

REPO = Path(__file__).resolve().parents[1]
"""The checkout's root."""
TABLE = "pinework-test"
"""The moto table every in-process test uses (``tests/conftest.py``)."""
BUCKET = "pinework-test"
"""The moto bucket (key-value values, review reports)."""
START = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
"""Where the injected clock starts."""

T = TypeVar("T")


# Principals and the in-process API.


@dataclass
class Actor:
    """A principal with its bearer token."""

    id: str
    token: str


@dataclass
class World:
    """One workspace with two agents and a person, plus a second workspace."""

    workspace_id: str
    agent: Actor
    other_agent: Actor
    person: Actor
    outsider: Actor
    outsider_agent: Actor


class Api:
    """Calls the Chalice app in-process with a bearer token and JSON bodies."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def call(
        self,
        method: str,
        path: str,
        actor: Actor | None = None,
        body: Any = None,
        *,
        raw: bytes | str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """Return (status, parsed JSON body) of one request to ``/api/v1`` + path."""
        status, _, parsed = self.send(method, path, actor, body, raw=raw, headers=headers)
        return status, parsed

    def send(
        self,
        method: str,
        path: str,
        actor: Actor | None = None,
        body: Any = None,
        *,
        raw: bytes | str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], Any]:
        """Like ``call``, with the response headers: (status, headers, parsed JSON body)."""
        sent = {"Content-Type": "application/json", **(headers or {})}
        if actor is not None:
            sent["Authorization"] = f"Bearer {actor.token}"
        payload: bytes | str | None = raw
        if payload is None and body is not None:
            payload = json.dumps(body)
        response = self._client.http.request(
            method, "/api/v1" + path, headers=sent, body=payload or b""
        )
        text = response.body.decode("utf-8") if response.body else ""
        return response.status_code, dict(response.headers), (json.loads(text) if text else None)


def save(
    api: Api, world: World, text: str = "The staging deploy needs the VPN on", **extra: object
) -> Any:
    """Save a fact as the world's agent; assert 201 and return the memory."""
    status, body = api.call("POST", "/memories", world.agent, {"text": text, **extra})
    assert status == 201, body
    return body


def pages(api: Api, actor: Actor, path: str) -> list[list[dict[str, Any]]]:
    """Every page of a list, following ``nextToken`` (``path`` holds the query string)."""
    found: list[list[dict[str, Any]]] = []
    token = None
    while True:
        status, body = api.call("GET", path + (f"&nextToken={token}" if token else ""), actor)
        assert status == 200, body
        found.append(list(body["data"]))
        token = body["nextToken"]
        if token is None:
            return found


def recalled_ids(api: Api, actor: Actor, query: str, **filters: object) -> list[str]:
    """The ids a recall preview (``count: false``) of ``query`` returns, best first;
    ``filters`` join the body (``tags``, ``anyTags``, ``meta``)."""
    body = {"query": query, "count": False, **filters}
    status, result = api.call("POST", "/memories/recall", actor, body)
    assert status == 200, result
    return [item["memory"]["id"] for item in result["memories"]]


def filtered_pages(
    memories: Any, agent_id: str, *, status: str | None, limit: int = 3, **filters: Any
) -> list[list[str]]:
    """The ids of every page of ``memories.list_memories`` for one agent of ``wsp_1``
    (a ``MemoryRepository``), ``filters`` passed on (``all_tags``, ``any_tags``, ``meta``)."""
    found: list[list[str]] = []
    after = None
    while True:
        page = memories.list_memories(
            workspace_id="wsp_1",
            agent_id=agent_id,
            status=status,
            kind=None,
            limit=limit,
            after_id=after,
            **filters,
        )
        found.append([memory.id for memory in page.memories])
        after = page.continue_after
        if after is None:
            return found


def gateway_call(
    path: str, header_pairs: Sequence[tuple[str, str]], body: bytes = b""
) -> tuple[int, Any]:
    """POST to ``app.py`` with the event API Gateway's REST proxy gives a Lambda:
    every header value in ``multiValueHeaders``, each name's last value in
    ``headers`` (the test client can send a header only once); (status, parsed body)."""
    from chalice.local import LambdaContext

    from app import app

    every: dict[str, list[str]] = {}
    for name, value in header_pairs:
        every.setdefault(name, []).append(value)
    event = {
        "resource": path,
        "path": path,
        "httpMethod": "POST",
        "requestContext": {
            "httpMethod": "POST",
            "resourcePath": path,
            "path": path,
            "identity": {"sourceIp": "127.0.0.1"},  # the test client's
        },
        "headers": {name: values[-1] for name, values in every.items()},
        "multiValueHeaders": every,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "body": body.decode(),
        "isBase64Encoded": False,
    }
    response = app(event, LambdaContext("pinework", 256))
    text = response.get("body") or ""
    return int(response["statusCode"]), json.loads(text) if text else None


def error_code(response: tuple[int, object]) -> tuple[int, str]:
    """The status and error code of an error answer (checking the envelope's shape)."""
    status, body = response
    assert isinstance(body, dict) and set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message"} and body["error"]["message"]
    return status, body["error"]["code"]


def review(api: Api, world: World, dry_run: bool = False) -> dict[str, Any]:
    """Run the world's agent's review now as its person; assert 200 and return the report."""
    status, body = api.call(
        "POST", "/reviews", world.person, {"agentId": world.agent.id, "dryRun": dry_run}
    )
    assert status == 200, body
    assert body["object"] == "review"
    return dict(body)


def every_memory(api: Api, world: World) -> list[dict[str, Any]]:
    """Every memory of the world's agent, live and archived (one page of 500)."""
    status, body = api.call(
        "GET", f"/memories?agentId={world.agent.id}&all=true&limit=500", world.person
    )
    assert status == 200
    return list(body["data"])


# Memories without storage (the reviewers' unit tests).

NOW = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)
"""The reviewers' unit tests' "now" (04:00 UTC, when the nightly review runs)."""


def fact(number: int, text: str, **changes: object) -> Memory:
    """A live fact of ``agt_1`` created five days before ``NOW`` plus ``number`` minutes."""
    created = NOW - timedelta(days=5) + timedelta(minutes=number)
    values: dict[str, object] = {
        "id": f"mem_01KAAAAAAAAAAAAAAAAAAAAA{number:02d}",
        "workspace_id": "wsp_1",
        "agent_id": "agt_1",
        "kind": MemoryKind.FACT,
        "text": text,
        "expires_at": NOW + timedelta(days=80),
        "created_at": created,
        "updated_at": created,
        **changes,
    }
    return Memory.model_validate(values)


# Stored objects (the storage contract suites).


def new_fact(
    ids: IdFactory, clock: Clock, agent_id: str, text: str, workspace_id: str = "wsp_1"
) -> Memory:
    """A live fact saved now, expiring in 90 days."""
    now = clock.now()
    return Memory(
        id=ids.new("mem"),
        workspace_id=workspace_id,
        agent_id=agent_id,
        kind=MemoryKind.FACT,
        text=text,
        expires_at=now + timedelta(days=90),
        created_at=now,
        updated_at=now,
    )


def new_day_row(
    ids: IdFactory, clock: Clock, agent_id: str, date: str, text: str, workspace_id: str = "wsp_1"
) -> Memory:
    """A live day row of ``date`` holding ``text`` (lines joined by newlines)."""
    now = clock.now()
    return Memory(
        id=ids.new("mem"),
        workspace_id=workspace_id,
        agent_id=agent_id,
        kind=MemoryKind.DAY,
        date=date,
        text=text,
        expires_at=now + timedelta(days=90),
        created_at=now,
        updated_at=now,
    )


def audit_of(
    ids: IdFactory, clock: Clock, action: str, before: Memory | None, after: Memory
) -> AuditRecord:
    """The audit record of one change made by a person ``usr_1``."""
    return AuditRecord(
        id=ids.new("aud"),
        memory_id=after.id,
        workspace_id=after.workspace_id,
        action=action,
        actor_type="person",
        actor_id="usr_1",
        at=clock.now(),
        before=None if before is None else snapshot(before),
        after=snapshot(after),
    )


# The embedded server (concurrency tests).


def forget_embedding(dynamodb: Any, memory_id: str) -> None:
    """Make a fact look saved before embeddings existed: no ``embedding`` on its item and
    none in its recall index entry (both as the fact's own writes keep them)."""
    from chalicelib.storage.dynamodb import from_attributes, to_attributes
    from chalicelib.storage.items import memory_from_item, recall_loose_item
    from chalicelib.storage.keys import memory_key

    key = to_attributes(memory_key(memory_id))
    dynamodb.update_item(TableName=TABLE, Key=key, UpdateExpression="REMOVE embedding")
    item = dynamodb.get_item(TableName=TABLE, Key=key, ConsistentRead=True)["Item"]
    memory = memory_from_item(from_attributes(item))
    dynamodb.put_item(TableName=TABLE, Item=to_attributes(recall_loose_item(memory)))


def embedded_client(endpoint: str) -> Any:
    """A DynamoDB client of the embedded server with room for many threads."""
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(max_pool_connections=64, retries={"max_attempts": 0}),
    )


def run_together(count: int, task: Callable[[int], T]) -> list[T | Exception]:
    """Run ``task(i)`` for i in range(count) on as many threads; results or exceptions."""

    def guarded(number: int) -> T | Exception:
        try:
            return task(number)
        except Exception as error:
            return error

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(guarded, range(count)))


# The real local server (end-to-end tests): ``infra.local_process``.


def cli(server: LocalServer, token: str, *args: str, task: str | None = None) -> Any:
    """Run the installed `pinework` console script; return the completed process."""
    executable = shutil.which("pinework", path=str(Path(sys.executable).parent)) or "pinework"
    env = {
        **os.environ,
        "PINEWORK_API_URL": f"http://127.0.0.1:{server.api_port}",
        "PINEWORK_TOKEN": token,
        "PINEWORK_DYNAMODB_ENDPOINT": f"http://127.0.0.1:{server.dynamodb_port}",
    }
    env.pop("PINEWORK_TASK", None)
    if task:
        env["PINEWORK_TASK"] = task
    return subprocess.run(
        [executable, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


# Documents (the reference checker and the rewrite tool's tests).

MD_LINK = re.compile(r"\[(?P<text>[^\]\n]*)\]\((?P<target>[^)\s]*)\)")
"""A markdown link ``[text](target)``."""
_ANCHOR_TAG = re.compile(r"<a\s+(?:id|name)=\"(?P<id>[^\"]+)\"")
HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<title>.+?)\s*#*\s*$")
"""A markdown heading line."""


def slug(title: str) -> str:
    """GitHub's anchor for a heading: link text kept, markup and punctuation dropped."""
    title = MD_LINK.sub(lambda match: match.group("text"), title)
    title = re.sub(r"<[^>]+>", "", title).strip().lower()
    title = re.sub(r"[^\w\- ]", "", title)
    return title.replace(" ", "-")


@cache
def anchors(path: str) -> frozenset[str]:
    """The anchors of a markdown file of the repository: its headings' slugs (GitHub's
    ``-1``, ``-2`` for repeats) and its ``<a id>`` / ``<a name>`` tags."""
    found: set[str] = set()
    counts: dict[str, int] = {}
    in_code = False
    for line in (REPO / path).read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group("title"))
            number = counts.get(base, 0)
            counts[base] = number + 1
            found.add(base if number == 0 else f"{base}-{number}")
        found.update(match.group("id") for match in _ANCHOR_TAG.finditer(line))
    return frozenset(found)


class Faults:
    """Makes chosen calls of a real (moto-backed) boto3 client fail as AWS would.

    A ``before-call`` handler on the client's own event system answers matching
    calls with an AWS error (what botocore's ``Stubber`` does for every call), so the
    project's code runs unpatched and every other call reaches moto.
    """

    def __init__(self, client: Any) -> None:
        self.calls: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self._rules: list[dict[str, Any]] = []
        client.meta.events.register("before-call", self._before_call)

    def fail(
        self,
        code: str,
        *,
        operation: str | None = None,
        mentioning: str | None = None,
        reasons: list[str] | None = None,
        skip: int = 0,
        times: int | None = 1,
    ) -> None:
        """Answer matching calls with ``code`` (HTTP 400).

        Args:
            code: the AWS error code, e.g. ``ThrottlingException``.
            operation: only this operation (``TransactWriteItems``); None: any.
            mentioning: only calls whose request body contains this text.
            reasons: ``CancellationReasons`` codes (for ``TransactionCanceledException``).
            skip: let this many matching calls through first.
            times: fail this many matching calls (None: every one from then on).
        """
        self._rules.append(
            {
                "code": code,
                "operation": operation,
                "mentioning": mentioning,
                "reasons": reasons,
                "skip": skip,
                "times": times,
            }
        )

    def clear(self) -> None:
        """Let every call through again."""
        self._rules.clear()

    def _before_call(self, model: Any, params: dict[str, Any], **_: Any) -> Any:
        from botocore.awsrequest import AWSResponse

        self.calls.append(model.name)
        body = params.get("body") or b""
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
        self.requests.append((model.name, text))
        for rule in self._rules:
            if rule["operation"] not in (None, model.name):
                continue
            if rule["mentioning"] is not None and rule["mentioning"] not in text:
                continue
            if rule["skip"] > 0:
                rule["skip"] -= 1
                continue
            if rule["times"] is not None:
                if rule["times"] <= 0:
                    continue
                rule["times"] -= 1
            parsed: dict[str, Any] = {
                "ResponseMetadata": {"HTTPStatusCode": 400},
                "Error": {"Code": rule["code"], "Message": f"injected {rule['code']}"},
            }
            if rule["reasons"] is not None:
                parsed["CancellationReasons"] = [{"Code": code} for code in rule["reasons"]]
            return AWSResponse(None, 400, {}, None), parsed
        return None


def growth(run: Callable[[str], object], build: Callable[[int], str], size: int) -> float:
    """How much longer ``run`` takes on ``build(8 * size)`` than on ``build(size)``
    (best of five each): about 8 for linear work, 64 for quadratic. A ratio, not a
    time, so a busy machine does not decide it; speed itself lives in ``bench/``. The
    time is this thread's CPU time, so other processes (parallel test workers, a
    busy machine) taking the CPU between the two sizes do not skew the ratio."""

    def best(text: str) -> float:
        times = []
        for _ in range(5):
            started = time.thread_time()
            run(text)
            times.append(time.thread_time() - started)
        return max(min(times), 1e-6)

    return best(build(8 * size)) / best(build(size))


# The dashboard through chalice.test.Client (docs/reference.md#13-dashboard): a browser-like
# visitor.
FORM = "application/x-www-form-urlencoded"
ORIGIN = "http://localhost"


class DashboardPage:
    """One browser-like visitor: keeps the session cookie, sends forms as a browser does."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.cookie: str | None = None

    def get(self, path: str, **headers: str) -> Any:
        return self.client.http.get(path, headers=self._headers(headers))

    def post(self, path: str, form: dict[str, str], **headers: str) -> Any:
        sent = {"Content-Type": FORM, "Origin": ORIGIN, **headers}
        body = "&".join(f"{quote(k)}={quote(v)}" for k, v in form.items())
        response = self.client.http.post(path, headers=self._headers(sent), body=body)
        cookie = response.headers.get("Set-Cookie")
        if cookie:
            value = cookie.split(";")[0]
            self.cookie = None if value.endswith("=") else value
        return response

    def sign_in(self, token: str) -> Any:
        return self.post("/sign-in", {"token": token, "next": "/"})

    def csrf(self, path: str = "/") -> str:
        found = re.search(r'name="csrf" value="([^"]+)"', self.get(path).body.decode())
        assert found is not None
        return found.group(1)

    def _headers(self, headers: dict[str, str]) -> dict[str, str]:
        return {**headers, **({"Cookie": self.cookie} if self.cookie else {})}


def text(response: Any) -> str:
    """A ``chalice.test`` response's body as text (UTF-8)."""
    return str(response.body.decode("utf-8"))


class InjectedCliRunner(CliRunner):
    """A typer ``CliRunner`` whose every ``invoke`` runs the CLI with ``connections``
    (``pinework.cli.Connections``, click's context object): the API client and the
    admin service are injected, never patched into the project's modules.

    Args:
        connections: what the commands connect with (an ``httpx.MockTransport``
            client, the moto-wired admin service, …).
    """

    def __init__(self, connections: Connections) -> None:
        super().__init__()
        self.connections = connections

    def invoke(  # type: ignore[override]
        self, app: Typer, args: str | Sequence[str] | None = None, **extra: Any
    ) -> Result:
        """``CliRunner.invoke`` with ``obj=connections``."""
        return super().invoke(app, args, obj=self.connections, **extra)


@contextmanager
def example_run(
    tmp_path: Path, script: str, python: str = sys.executable, cwd: Path = REPO
) -> Iterator[tuple[subprocess.CompletedProcess[str], PineworkClient]]:
    """Run ``examples/<script>`` as a reader of docs/integrations would: against a real
    local server (started here, stopped after), as its demo agent, with no run headers and
    the scripted model (``PINEWORK_TASK``, ``PINEWORK_RUN`` and ``PINEWORK_EXAMPLE_MODEL``
    unset), with ``python`` from ``cwd`` (``PYTHONPATH`` unset: the package ``python``
    has installed is the one that runs). Asserts it exits 0; yields its output and a
    client of the demo agent."""
    server = LocalServer(tmp_path / "data")
    server.start()
    try:
        token = server.demo()["agentToken"]
        url = f"http://127.0.0.1:{server.api_port}"
        env = {**os.environ, "PINEWORK_API_URL": url, "PINEWORK_TOKEN": token}
        for name in ("PINEWORK_TASK", "PINEWORK_RUN", "PINEWORK_EXAMPLE_MODEL", "PYTHONPATH"):
            env.pop(name, None)
        done = subprocess.run(
            [python, str(REPO / "examples" / script)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        with PineworkClient(url, token=token) as client:
            yield done, client
    finally:
        server.stop()


class Mcp:
    """Posts JSON-RPC to the MCP endpoint."""

    def __init__(self, client: Client) -> None:
        self._http = client.http
        self._next_id = 0

    def post(
        self,
        payload: Any = None,
        *,
        actor: Actor | None = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
        method: str = "POST",
    ) -> tuple[int, dict[str, str], Any]:
        sent = {
            "Host": "127.0.0.1:8000",  # what a client of the local server sends
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        }
        if actor is not None:
            sent["Authorization"] = f"Bearer {actor.token}"
        body = raw if raw is not None else json.dumps(payload).encode()
        response = self._http.request(method, "/api/v1/mcp", headers=sent, body=body)
        text = response.body.decode() if response.body else ""
        return response.status_code, dict(response.headers), json.loads(text) if text else None

    def request(self, method: str, params: Any = None, **options: Any) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        status, _, answer = self.post(message, **options)
        assert answer["id"] == self._next_id and answer["jsonrpc"] == "2.0", answer
        assert status == (200 if "result" in answer else status)
        return dict(answer)

    def result(self, method: str, params: Any = None, **options: Any) -> dict[str, Any]:
        answer = self.request(method, params, **options)
        assert "result" in answer, answer
        return dict(answer["result"])

    def tool(self, name: str, arguments: Any = None, **options: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        result = self.result("tools/call", params, **options)
        mcp_types.CallToolResult.model_validate(result)  # a valid MCP tool result
        (content,) = result["content"]
        assert content["type"] == "text"
        assert json.loads(content["text"]) == result["structuredContent"]
        return result

    def ok(self, name: str, arguments: Any = None, **options: Any) -> dict[str, Any]:
        result = self.tool(name, arguments, **options)
        assert result["isError"] is False, result
        return dict(result["structuredContent"])

    def tool_error(self, name: str, arguments: Any = None, **options: Any) -> str:
        result = self.tool(name, arguments, **options)
        assert result["isError"] is True, result
        error = result["structuredContent"]["error"]
        assert error["message"]
        return str(error["code"])


class Receiver:
    """A webhook receiver on 127.0.0.1 (a thread with ``http.server``): it answers 500
    to the first ``failures`` requests, then 204, and keeps every request."""

    def __init__(self) -> None:
        self.failures = 0
        self.received: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append({"headers": dict(self.headers), "body": body})
                failing = receiver.failures > 0
                receiver.failures -= 1 if failing else 0
                self.send_response(500 if failing else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(request["body"]) for request in self.received]
