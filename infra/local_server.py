"""The local server: ``make serve`` runs ``python -m infra.local_server``.

It starts the embedded DynamoDB and S3 on loopback (moto, no AWS account, no
Docker) with its journal in the git-ignored ``.pinework-local/`` folder, creates the
table and the bucket for large key-value values, bootstraps a demo workspace with
one agent and one person (kept across restarts), prints their tokens and the
``export`` lines for the CLI, and serves the Chalice app on http://127.0.0.1:8000
(and http://[::1]:8000 where IPv6 is available). Like API Gateway, it gives the
app the connection's address as ``requestContext.identity.sourceIp`` (``chalice
local`` alone always says 127.0.0.1), which scopes anonymous key-value calls
(docs/reference.md#10-key-value).

Environment: ``PINEWORK_PORT`` (API, default 8000), ``PINEWORK_DYNAMODB_PORT``
(embedded DynamoDB, default 8001), ``PINEWORK_DATA_DIR`` (default
``.pinework-local`` in the checkout), ``PINEWORK_LOG_FORMAT`` (``text``: one line
per request on stderr; ``json``: the JSON lines and EMF metrics Lambda prints), and
``PINEWORK_AWS_CALL_LOG``: a file to which every AWS call of a Lambda entry point is
appended as a JSON line (``infra/aws_calls.py``; the tests' IAM check sets it).

The reranker's weights (docs/operations.md#reranker-weights) are uploaded to the embedded
bucket at every start (not journaled) and read from it like on Lambda (``PINEWORK_MODEL_SOURCE=s3``,
kept in ``$PINEWORK_DATA_DIR/models``; either variable can be set to override).
"""

from __future__ import annotations

import os

# One BLAS thread, as on Lambda (.chalice/config.json): set before numpy loads.
# Scoring's matrix products are small, and OpenBLAS's extra threads spin while they
# wait; on a busy machine a nine-clause task over 15 facts then took a median of
# 469 ms and up to 2.3 s (the recall budget is 2 s), against 292 / 330 ms with one
# thread (docs/DECISIONS.md "One BLAS thread").
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# One readable line per request on the console (PINEWORK_LOG_FORMAT=json prints what
# Lambda prints: JSON lines and EMF metrics; docs/DECISIONS.md "Logs and metrics").
os.environ.setdefault("PINEWORK_LOG_FORMAT", "text")

import fcntl
import json
import logging
import re
import secrets
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

from infra import local_reviews
from infra.aws_calls import FUNCTION, HTTP_FUNCTION, CallRecorder, attribution_middleware, file_sink
from infra.local_dynamodb import EmbeddedAWS
from infra.tables import create_table
from infra.template import NOT_FOUND_BODY
from pinework.local_record import LocalServerRecord, write_record

REPO = Path(__file__).resolve().parent.parent
TABLE = "pinework-local"
BUCKET = "pinework-local"
HOST = "127.0.0.1"
LISTEN_BACKLOG = 1024
"""Pending connections the API's listening socket queues (at least 128; docs/DECISIONS.md
"Local server backlog")."""


def _ensure_demo(data_dir: Path, settings: Any) -> dict[str, str]:
    """Create the demo workspace, agent and person once (the person an owner, so the
    dashboard's People and agents page is theirs: docs/reference.md#person-roles); reuse
    them afterwards."""
    from chalicelib.wiring import build_admin_service

    demo_file = data_dir / "demo.json"
    admin = build_admin_service(settings)
    if demo_file.exists():
        demo: dict[str, str] = json.loads(demo_file.read_text())
        if admin.workspace_exists(demo["workspaceId"]):
            return demo
    workspace = admin.create_workspace("Demo")
    agent = admin.create_agent(workspace.id, "demo-agent")
    person = admin.create_person(workspace.id, "demo@example.com", "owner")
    demo = {
        "workspaceId": workspace.id,
        "agentId": agent.id,
        "agentToken": agent.token,
        "personId": person.id,
        "personToken": person.token,
    }
    demo_file.write_text(json.dumps(demo, indent=2))
    return demo


def _upgrade_table(settings: Any) -> None:
    """List agents and index memories a version before the dashboard stored (once)."""
    from chalicelib.wiring import build_admin_service

    report = build_admin_service(settings).upgrade_table()
    if not report.done_before and (report.agents_listed or report.memories_indexed):
        print(
            f"Upgraded the stored data for the dashboard: {report.agents_listed} agents listed, "
            f"{report.memories_indexed} memories indexed.",
            flush=True,
        )


def _index_recall(settings: Any) -> None:
    """Build the recall index of agents a version before it stored (docs/issues.md#issue-23-item-4):
    every agent of the table, each already indexed skipped (a GetItem)."""
    from chalicelib.wiring import build_admin_service

    report = build_admin_service(settings).backfill_recall_index(None, None)
    if report.indexed:
        print(
            f"Built the recall index of {report.indexed} "
            f"{'agent' if report.indexed == 1 else 'agents'} from an earlier version: "
            f"{report.facts:,} {'fact' if report.facts == 1 else 'facts'} indexed.",
            flush=True,
        )


NOT_FOUND_PAGE = "/not-found"
"""The dashboard's page for an address with no page (docs/reference.md#13-dashboard)."""


def _wants_page(method: str, path: str, accept: str) -> bool:
    """Whether an unknown path is a browser's page request (a GET outside ``/api/`` that
    accepts HTML), answered with the dashboard's 404 page instead of the API's JSON."""
    return method == "GET" and not path.startswith("/api/") and "text/html" in accept.lower()


def _dashboard_link(api_url: str, person_token: str) -> str:
    """A one-time sign-in link for the demo person (docs/reference.md#13-dashboard): single use, 10
    minutes."""
    from chalicelib.services.access.auth import hash_token
    from chalicelib.wiring import services

    wired = services()
    person = wired.auth.authenticate(f"Bearer {person_token}")
    link = wired.dashboard.sessions.create_link(person, token_hash=hash_token(person_token))
    return api_url + link.path


def _banner(
    api_url: str, endpoint: str, demo: dict[str, str], replayed: int, dashboard_link: str
) -> str:
    return "\n".join(
        [
            "",
            "Pinework Memory — local server",
            f"  Dashboard:          {api_url}/",
            f"  sign in (demo person, one-time link, 10 minutes): {dashboard_link}",
            f"  API:                {api_url}/api/v1",
            f"  MCP:                {api_url}/api/v1/mcp (streamable HTTP)",
            f"  embedded DynamoDB:  {endpoint} (replayed {replayed} stored writes)",
            f"  workspace:          {demo['workspaceId']}",
            f"  demo agent:         {demo['agentId']}",
            f"  demo person:        {demo['personId']}",
            "",
            "Use the CLI as the demo agent:",
            f"  export PINEWORK_API_URL={api_url}",
            *(
                []
                if endpoint.endswith(":8001")
                else [f"  export PINEWORK_DYNAMODB_ENDPOINT={endpoint}   # for pinework admin"]
            ),
            f"  export PINEWORK_TOKEN={demo['agentToken']}",
            "As the demo person instead:",
            f"  export PINEWORK_TOKEN={demo['personToken']}",
            "",
            "A new dashboard link for a person: PINEWORK_TOKEN=<their token> pinework dashboard",
            "",
            "Press Ctrl+C to stop; data stays in the data folder.",
            "",
        ]
    )


def _byte_count(value: str) -> bool:
    """Whether a Content-Length value is a plain ASCII number that ``int`` and the
    socket read can take (at most 18 digits)."""
    value = value.strip()
    return value.isascii() and value.isdigit() and len(value) <= 18


CHUNKED_BODY_MAX_BYTES = 10 * 1024 * 1024
"""The most bytes of a chunked body the local server buffers: API Gateway's payload limit."""
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,8}")


class MalformedChunkedBody(ValueError):
    """A chunked body that does not follow RFC 9112 §7.1 (the message says how)."""


def _read_chunked(stream: Any) -> bytes:
    """Read an HTTP/1.1 chunked body to its end (RFC 9112 §7.1), as API Gateway buffers
    it before the function sees it.

    Raises:
        MalformedChunkedBody: a chunk size that is not 1 to 8 hex digits, a chunk shorter
            than its size or not ended by a line break, a body that ends early, or more
            than ``CHUNKED_BODY_MAX_BYTES`` in all.
    """
    parts: list[bytes] = []
    total = 0
    while True:
        line = stream.readline(1024)
        size_text = line.split(b";")[0].strip()
        if not line.endswith(b"\n") or not _CHUNK_SIZE.fullmatch(size_text):
            got = line[:40].decode("ascii", "backslashreplace").strip()
            raise MalformedChunkedBody(
                f"a chunk size is 1 to 8 hexadecimal digits on a line of its own, not {got!r}"
            )
        size = int(size_text, 16)
        if size == 0:
            while stream.readline(8192).strip():  # trailers
                pass
            return b"".join(parts)
        total += size
        if total > CHUNKED_BODY_MAX_BYTES:
            raise MalformedChunkedBody(f"the body is over {CHUNKED_BODY_MAX_BYTES} bytes")
        chunk = stream.read(size)
        if len(chunk) != size or stream.readline(3).strip():
            raise MalformedChunkedBody("a chunk is shorter than its size or not ended by CRLF")
        parts.append(chunk)


def _gateway_headers(message: Any) -> tuple[dict[str, str], dict[str, list[str]]]:
    """A request's headers as API Gateway's REST proxy event gives them: each name's
    last value (``headers``) and every value in order (``multiValueHeaders``), names in
    lower case. ``chalice local`` alone keeps the first value and drops the rest, so the
    app would read a repeated header unlike the deployed API (docs/reference.md#cross-site)."""
    every: dict[str, list[str]] = {}
    for name, value in message.items():
        every.setdefault(name.lower(), []).append(value)
    return {name: values[-1] for name, values in every.items()}, every


def _lock_data_dir(data_dir: Path) -> Any:
    """Hold an exclusive lock on the data folder for the server's life.

    Two servers replaying and appending one journal would diverge and lose
    acknowledged writes, so a second one refuses to start.
    """
    handle = (data_dir / "server.lock").open("w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(
            f"Another local server is using {data_dir}. Stop it, or give this one its own "
            "folder with PINEWORK_DATA_DIR."
        )
    return handle


def _allowed_methods(app: Any, raw_path: str) -> list[str]:
    """The methods the app serves on a request path (for ``Allow``); empty when no
    route matches."""
    from chalice.local import RouteMatcher

    try:
        route = RouteMatcher(list(app.routes)).match_route(raw_path).route
    except ValueError:
        return []
    return sorted(
        method
        for method, entry in app.routes[route].items()
        if not entry.view_function.__name__.startswith("not_allowed_")
    )


# C901 counts the six overrides of the nested handler class into this function; each
# has one branch at most, and they only make sense together. See
# docs/DECISIONS.md#code-rules-complexity-prints-warnings-injection-issue-16-items-3-and-5
def _local_api_server(app: Any, port: int, host: str = HOST) -> Any:  # noqa: C901
    """Chalice's threaded local server, with unknown routes answered in our envelope
    (as the deployed API's GatewayResponse does, see ``infra/template.py``), the
    peer's address as the request context's ``sourceIp``, and repeated headers as
    ``headers`` (last value) and ``multiValueHeaders`` (all), as API Gateway gives them."""
    from chalice.config import Config
    from chalice.local import (
        ChaliceRequestHandler,
        CustomLocalChalice,
        ForbiddenError,
        LambdaEventConverter,
        LocalChalice,
        LocalDevServer,
        RouteMatcher,
        ThreadedHTTPServer,
    )

    class GatewayEventConverter(LambdaEventConverter):
        # chalice local's events have no multiValueHeaders; API Gateway's do.
        multi_value_headers: dict[str, list[str]] = {}

        def create_lambda_event(
            self, method: str, path: str, headers: dict[str, str], body: bytes | None = None
        ) -> dict[str, Any]:
            event: dict[str, Any] = super().create_lambda_event(method, path, headers, body)
            event["multiValueHeaders"] = self.multi_value_headers
            return event

    class EnvelopeRequestHandler(ChaliceRequestHandler):
        path: str

        def handle(self) -> None:
            try:
                super().handle()
            except (BrokenPipeError, ConnectionResetError):
                # The client went away before its answer was written: one line, not
                # socketserver's traceback (the request itself was served and logged).
                self.close_connection = True
                print(f"a client ({self.client_address[0]}) left before its answer", flush=True)

        def _generic_handle(self) -> None:
            lengths = self.headers.get_all("content-length") or []
            if lengths and (len(set(lengths)) > 1 or not _byte_count(lengths[0])):
                # chalice local would raise on int() (or read the wrong body); answer
                # as API Gateway does.
                self.close_connection = True
                self.send_error(400, "Content-Length must be one number of bytes.")
                return
            self.chunked_body: bytes | None = None
            if "chunked" in self.headers.get("transfer-encoding", "").lower():
                # API Gateway buffers chunked bodies before the Lambda sees them; so do
                # we, and a malformed one is a 400 envelope, not a dropped connection.
                try:
                    self.chunked_body = _read_chunked(self.rfile)
                except MalformedChunkedBody as malformed:
                    self.close_connection = True
                    self.send_error(400, f"Malformed chunked body: {malformed}.")
                    return
            converter = self.local_gateway.event_converter
            if not isinstance(converter, GatewayEventConverter):
                converter = GatewayEventConverter(
                    RouteMatcher(list(app.routes)), app.api.binary_types
                )
                self.local_gateway.event_converter = converter
            converter.multi_value_headers = _gateway_headers(self.headers)[1]
            # chalice local writes 127.0.0.1 whatever the peer; API Gateway writes
            # the connection's address. Never a header: those are caller-controlled.
            converter.LOCAL_SOURCE_IP = self.client_address[0]
            super()._generic_handle()

        def _send_http_response_with_body(
            self, code: int, headers: dict[str, Any], body: str | bytes
        ) -> None:
            if self.command != "HEAD":
                super()._send_http_response_with_body(code, headers, body)
                return
            # An answer to HEAD (our routes refuse it with 405, as the deployed API
            # does) has no body (RFC 9110 §9.3.2); a body here would be read as the
            # start of the next response on a kept-alive connection.
            size = len(body if isinstance(body, bytes) else body.encode("utf-8"))
            self.send_response(code)
            self.send_header("Content-Length", str(size))
            self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
            self._send_headers(headers)

        def _parse_payload(self) -> tuple[dict[str, str], bytes | None]:
            body = self.chunked_body
            if body is None:
                body = super()._parse_payload()[1]
            # Each header's last value, as API Gateway (chalice local keeps the first).
            return _gateway_headers(self.headers)[0], body

        def send_error(
            self, code: int, message: str | None = None, explain: str | None = None
        ) -> None:
            # http.server's own errors (unknown method, oversized header) as our envelope.
            error = (
                {"code": "method_not_allowed", "message": "This method is not supported."}
                if code == 501
                else {"code": "invalid_request", "message": message or "Bad request."}
            )
            body = json.dumps({"error": error}).encode()
            self.send_response(405 if code == 501 else code)
            allowed = _allowed_methods(app, self.path) if code == 501 else []
            if allowed:
                # RFC 9110 §15.5.6: a 405 names the methods the path serves.
                self.send_header("Allow", ", ".join(allowed))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            # The app writes each request's line itself (method, route, status, time,
            # caller); http.server's own line would repeat it.
            return

        # The base class binds its own _generic_handle to every method; rebind ours.
        do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = _generic_handle  # noqa: N815

        def _send_error_response(self, error: Any) -> None:
            if isinstance(error, ForbiddenError) and _wants_page(
                self.command, self.path, self.headers.get("Accept", "")
            ):
                # A browser at an address with no page: the dashboard's 404 page.
                self.path = NOT_FOUND_PAGE
                self._generic_handle()
                return
            if isinstance(error, ForbiddenError):
                body = json.dumps(NOT_FOUND_BODY, separators=(",", ":")).encode()
                self._send_http_response(404, {"Content-Type": "application/json"}, body)
                return
            super()._send_error_response(error)

    class BackloggedServer(ThreadedHTTPServer):
        # socketserver listens with a backlog of 5: a burst of new connections
        # (50 at once reset 23-28 of them) overflowed it. The kernel caps the value
        # at net.core.somaxconn.
        request_queue_size = LISTEN_BACKLOG

    class IPv6Server(BackloggedServer):
        address_family = socket.AF_INET6

    # What chalice.local.create_local_server does, with our handler (once per app).
    if not isinstance(app, CustomLocalChalice):
        CustomLocalChalice.__bases__ = (LocalChalice, app.__class__)
        app.__class__ = CustomLocalChalice
    return LocalDevServer(
        app,
        Config.create(chalice_stage="local"),
        host,
        port,
        handler_cls=EnvelopeRequestHandler,
        server_cls=IPv6Server if ":" in host else BackloggedServer,
    )


def _embedded_s3(endpoint: str) -> S3Client:
    """An S3 client of the embedded stack at ``endpoint`` (path-style addressing)."""
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}),
    )


def _hash_secret(data_dir: Path) -> str:
    """The data folder's hash secret, made at its first start (64 URL-safe characters in
    ``hash-secret``, readable by its owner only); the admin commands read it too
    (``pinework.admin.admin_settings``)."""
    path = data_dir / "hash-secret"
    if not path.is_file():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(secrets.token_urlsafe(48) + "\n")
    return path.read_text(encoding="utf-8").strip()


def _ensure_bucket(endpoint: str) -> None:
    """Create the bucket for large key-value values unless the journal already did."""
    s3 = _embedded_s3(endpoint)
    try:
        s3.head_bucket(Bucket=BUCKET)
    except ClientError:
        s3.create_bucket(Bucket=BUCKET)


def _upload_models(endpoint: str) -> None:
    """Put the checkout's reranker weights in the embedded bucket's ``models/`` unless an
    object of the same size is there (as the deploys sync the stack's bucket), so the
    API reads them through S3 as on Lambda (docs/operations.md#reranker-weights). Without
    a built file (``make serve`` builds it) nothing is uploaded and the reranker reports
    the missing object on first use."""
    from chalicelib.storage.keys import RERANKER_WEIGHTS_OBJECT
    from chalicelib.wiring import RERANKER_WEIGHTS_FILE

    if not RERANKER_WEIGHTS_FILE.is_file():
        return
    s3 = _embedded_s3(endpoint)
    try:
        head = s3.head_object(Bucket=BUCKET, Key=RERANKER_WEIGHTS_OBJECT)
        if head["ContentLength"] == RERANKER_WEIGHTS_FILE.stat().st_size:
            return
    except ClientError:
        pass
    # One request (no multipart); not journaled (infra/local_dynamodb.py), so every start
    # uploads the checkout's current file.
    with RERANKER_WEIGHTS_FILE.open("rb") as body:
        s3.put_object(Bucket=BUCKET, Key=RERANKER_WEIGHTS_OBJECT, Body=body)


def _serve_ipv6_too(app: Any, port: int) -> Any:
    """The same API on ``[::1]`` (best effort: None where IPv6 or the port is unavailable)."""
    try:
        server = _local_api_server(app, port, "::1")
    except OSError:
        return None
    threading.Thread(target=server.server.serve_forever, daemon=True).start()
    return server


def _port(variable: str, default: int) -> int:
    """The port a variable names (``default`` when unset); exits with a message when
    it is not a number from 1 to 65535."""
    value = os.environ.get(variable, "").strip()
    if not value:
        return default
    if not value.isdigit() or not 1 <= int(value) <= 65535:
        sys.exit(f"{variable} must be a port number from 1 to 65535, not {value!r}.")
    return int(value)


def _require_free(port: int, variable: str) -> None:
    """Exit with a message naming ``variable`` when ``port`` is taken on ``HOST``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As the servers themselves bind: a port left in TIME_WAIT by a stopped
        # server is free, one with a listener is not.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError as error:
            sys.exit(
                f"Cannot use {HOST}:{port} ({error.strerror}); stop what uses it or set "
                f"{variable} to a free port."
            )


CALL_LOG_VARIABLE = "PINEWORK_AWS_CALL_LOG"


def _record_aws_calls(call_log: str | None) -> None:
    """With a call log, record the AWS calls the Lambda entry points make (before any
    client exists; the server's own set-up is not recorded: it runs in none)."""
    if not call_log:
        return
    CallRecorder("local_server", file_sink(Path(call_log))).install()
    sys.path.insert(0, str(REPO))
    from app import app

    app.register_middleware(attribution_middleware, "all")


def _warm_up() -> None:
    """Load recall's models (the embedder, the reranker's weights through the embedded
    S3) while the server starts, as the API function's code (the download is its call),
    so the first recall does not spend its time budget on them."""
    from chalicelib import wiring

    FUNCTION.set(HTTP_FUNCTION)
    wiring.services().recall.warm_up()


WEBHOOK_INTERVAL_SECONDS = 10.0
"""How often the local server runs the webhook delivery (docs/reference.md#webhook-deliveries)."""


def _deliver_webhooks(stop: threading.Event) -> None:
    """Run the webhook delivery every ``WEBHOOK_INTERVAL_SECONDS`` until ``stop`` (a
    failed run is logged, the next one tries again)."""
    from chalicelib import wiring
    from chalicelib.jobs.webhooks import deliver_webhooks

    while not stop.wait(WEBHOOK_INTERVAL_SECONDS):
        try:
            deliver_webhooks(wiring.services())
        except Exception:
            logging.getLogger("pinework.webhooks").exception("webhook delivery run failed")


def main() -> None:
    """Start everything and serve until interrupted."""
    api_port = _port("PINEWORK_PORT", 8000)
    dynamodb_port = _port("PINEWORK_DYNAMODB_PORT", 8001)
    # Both ports are checked before the data folder is touched (no demo tokens are
    # written for a server that cannot start).
    if api_port == dynamodb_port:
        sys.exit(
            f"PINEWORK_PORT and PINEWORK_DYNAMODB_PORT are both {api_port}; the API and the "
            "embedded DynamoDB need two different ports."
        )
    _require_free(api_port, "PINEWORK_PORT")
    _require_free(dynamodb_port, "PINEWORK_DYNAMODB_PORT")
    data_dir = Path(os.environ.get("PINEWORK_DATA_DIR", REPO / ".pinework-local"))
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = _lock_data_dir(data_dir)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    _record_aws_calls(os.environ.get(CALL_LOG_VARIABLE))

    aws = EmbeddedAWS(HOST, dynamodb_port, journal=data_dir / "dynamodb.journal")
    endpoint = aws.start()
    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    create_table(client, TABLE)
    _ensure_bucket(endpoint)
    _upload_models(endpoint)
    os.environ["PINEWORK_TABLE_NAME"] = TABLE
    os.environ["PINEWORK_DYNAMODB_ENDPOINT"] = endpoint
    os.environ["PINEWORK_BUCKET_NAME"] = BUCKET
    os.environ["PINEWORK_S3_ENDPOINT"] = endpoint  # moto's server serves S3 too
    os.environ["PINEWORK_DEMO_FILE"] = str((data_dir / "demo.json").resolve())  # sign-in hint
    # this data folder's own hash secret (docs/reference.md#keyed-hashes-of-personal-data)
    os.environ.setdefault("PINEWORK_HASH_SECRET", _hash_secret(data_dir))
    # Model weights come from the embedded bucket, as on Lambda, kept in the data folder.
    os.environ.setdefault("PINEWORK_MODEL_SOURCE", "s3")
    os.environ.setdefault("PINEWORK_MODEL_DIR", str((data_dir / "models").resolve()))
    reviews_stop = threading.Event()
    local_reviews.start(endpoint, reviews_stop)  # the 04:00 UTC fan-out and the SQS workers

    from chalicelib.settings import Settings, SettingsError

    try:
        settings = Settings.from_env()
    except SettingsError as error:
        sys.exit(f"{error}. Fix the variable (README, Configuration) and start again.")
    _upgrade_table(settings)
    _index_recall(settings)
    demo = _ensure_demo(data_dir, settings)

    sys.path.insert(0, str(REPO))
    from app import app

    threading.Thread(target=_warm_up, name="recall-warm-up", daemon=True).start()
    threading.Thread(
        target=_deliver_webhooks, args=(reviews_stop,), name="webhooks", daemon=True
    ).start()
    try:
        server = _local_api_server(app, api_port)
    except OSError as error:
        aws.stop()
        sys.exit(
            f"Cannot serve the API on {HOST}:{api_port} ({error.strerror}); "
            "stop what uses it or set PINEWORK_PORT."
        )
    ipv6_server = _serve_ipv6_too(app, api_port)
    api_url = f"http://{HOST}:{api_port}"
    link = _dashboard_link(api_url, demo["personToken"])
    # the admin commands find this server through its record (docs/operators.md)
    write_record(lock, LocalServerRecord(api_url, endpoint, TABLE, os.getpid()))
    print(_banner(api_url, endpoint, demo, aws.replayed, link), flush=True)
    if ipv6_server is not None:
        print(f"API also on http://[::1]:{api_port}/api/v1 (IPv6)", flush=True)

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()
        if ipv6_server is not None:
            threading.Thread(target=ipv6_server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.server.serve_forever()
    finally:
        reviews_stop.set()
        aws.stop()
        lock.close()
        print("Pinework Memory local server stopped.", flush=True)


if __name__ == "__main__":
    main()
