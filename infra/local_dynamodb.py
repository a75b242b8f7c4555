"""The embedded DynamoDB (and S3/SQS) of the local server and the tests: moto's server
on loopback, serving one request at a time (so each request is atomic, as on
DynamoDB), with transactions that back up only the items they touch
(``infra/moto_transactions.py``, for this server's requests only), and a journal of
successful writes (JSON lines, DynamoDB by ``X-Amz-Target``, S3 by method and SigV4
scope) replayed on the next start so stored data survives a restart. Choices:
docs/DECISIONS.md#local-server.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import BaseWSGIServer, make_server
from werkzeug.test import Client

from chalicelib.ids import IdFactory, SystemClock
from chalicelib.models.memory import Memory
from chalicelib.storage.dynamodb import to_attributes
from chalicelib.storage.items import memory_to_item, recall_entries_from_blob, recall_entry_blob
from chalicelib.storage.keys import MODEL_OBJECT_PREFIX
from chalicelib.storage.recall_index import is_indexed, marker_item, segment_items
from infra import moto_transactions

WRITE_ACTIONS = frozenset(
    {
        "CreateTable",
        "DeleteTable",
        "UpdateTable",
        "UpdateTimeToLive",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "BatchWriteItem",
        "TransactWriteItems",
    }
)
"""DynamoDB actions whose successful requests change stored state."""

S3_WRITE_METHODS = frozenset({"PUT", "POST", "DELETE"})
"""HTTP methods of the S3 requests that change stored state (objects, buckets)."""

StartResponse = Callable[..., Any]
STATS_PATH = "/_pinework/requests"
"""Path on the embedded server that reports request counts by action."""


class SerializedJournaledApp:
    """WSGI middleware: one request at a time; journal successful DynamoDB writes.

    Args:
        app: moto's WSGI application.
        journal: the file to append writes to, or None for no persistence.
    """

    def __init__(self, app: Any, journal: Path | None) -> None:
        self._app = app
        self._journal = journal
        self._lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        """DynamoDB requests served, by action (for benchmarks: ``GET /_pinework/requests``)."""

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """Serve one request under the lock; journal it if it was a successful write."""
        if environ.get("PATH_INFO") == STATS_PATH:
            body = json.dumps(dict(self.requests)).encode()
            start_response("200 OK", [("Content-Type", "application/json")])
            return [body]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = _Body(body)
        statuses: list[str] = []

        def capture(status: str, headers: Any, exc_info: Any = None) -> Any:
            statuses.append(status)
            return start_response(status, headers, exc_info)

        with self._lock, moto_transactions.embedded_server_requests():
            chunks = list(self._app(environ, capture))
            action = str(environ.get("HTTP_X_AMZ_TARGET", "")).rpartition(".")[2]
            if action:
                self.requests[action] += 1
            if (
                self._journal is not None
                and (action in WRITE_ACTIONS or _is_s3_write(environ))
                and statuses
                and statuses[0].startswith("2")
            ):
                self._append(environ, body)
        return chunks

    def _append(self, environ: dict[str, Any], body: bytes) -> None:
        assert self._journal is not None
        headers = {
            key[5:].replace("_", "-").title(): value
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        if environ.get("CONTENT_TYPE"):
            headers["Content-Type"] = environ["CONTENT_TYPE"]
        entry = {
            "method": environ.get("REQUEST_METHOD", "POST"),
            "query": environ.get("QUERY_STRING", ""),
            "path": environ.get("PATH_INFO", "/"),
            "headers": headers,
            "body": base64.b64encode(body).decode("ascii"),
        }
        with self._journal.open("a", encoding="utf-8") as journal:
            journal.write(json.dumps(entry) + "\n")
            journal.flush()

    def replay(self) -> int:
        """Re-apply every journaled write in order (without journaling them again).

        Returns:
            How many requests were replayed.
        """
        if self._journal is None or not self._journal.exists():
            return 0
        client = Client(self._app)
        count = 0
        with (
            self._journal.open(encoding="utf-8") as journal,
            moto_transactions.embedded_server_requests(),
        ):
            for line in journal:
                if not line.strip():
                    continue
                entry = json.loads(line)
                client.open(
                    entry["path"],
                    method=entry.get("method", "POST"),
                    query_string=entry.get("query", ""),
                    headers=entry["headers"],
                    data=base64.b64decode(entry["body"]),
                )
                count += 1
        return count


def _is_s3_write(environ: dict[str, Any]) -> bool:
    """True for a PUT/POST/DELETE signed for S3 (``Credential=…/<region>/s3/aws4_request``)."""
    if environ.get("REQUEST_METHOD") not in S3_WRITE_METHODS:
        return False
    # Model weights (docs/operations.md#reranker-weights) are not journaled: the local
    # server uploads them from the checkout at every start, and 34 MB a restart would
    # swell the journal (and a multipart upload's ids cannot be replayed).
    bucket_and_key = str(environ.get("PATH_INFO", "")).lstrip("/").split("/", 1)
    if len(bucket_and_key) == 2 and bucket_and_key[1].startswith(MODEL_OBJECT_PREFIX):
        return False
    authorization = str(environ.get("HTTP_AUTHORIZATION", ""))
    _, _, credential = authorization.partition("Credential=")
    scope = credential.split(",", 1)[0].split("/")
    return len(scope) >= 5 and scope[3] == "s3"


class _Body:
    """A re-readable request body for the wrapped app."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._position = 0

    def read(self, size: int = -1) -> bytes:
        end = len(self._data) if size is None or size < 0 else self._position + size
        chunk = self._data[self._position : end]
        self._position += len(chunk)
        return chunk

    def readline(self, size: int = -1) -> bytes:
        newline = self._data.find(b"\n", self._position)
        end = len(self._data) if newline == -1 else newline + 1
        if size is not None and size >= 0:
            end = min(end, self._position + size)
        chunk = self._data[self._position : end]
        self._position += len(chunk)
        return chunk


class EmbeddedAWS:
    """moto's server on loopback in a background thread.

    Args:
        host: address to bind; loopback only.
        port: port to bind; 0 picks a free one.
        journal: where writes are journaled and replayed from (None: in memory only).
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, journal: Path | None = None):
        self._app = SerializedJournaledApp(DomainDispatcherApplication(create_backend_app), journal)
        self._server: BaseWSGIServer = make_server(host, port, self._app, threaded=True)
        self._thread: threading.Thread | None = None
        self.replayed = 0

    @property
    def endpoint(self) -> str:
        """The server's URL, e.g. ``http://127.0.0.1:8001``."""
        return f"http://{self._server.host}:{self._server.port}"

    def start(self) -> str:
        """Replay the journal, then serve in a daemon thread; return the endpoint."""
        self.replayed = self._app.replay()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self.endpoint

    def stop(self) -> None:
        """Stop serving (the journal stays on disk)."""
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


@contextlib.contextmanager
def embedded_for_bench() -> Iterator[str]:
    """An in-memory embedded AWS for a ``bench/`` script: placeholder credentials unless
    real ones are set, no log line per request; yields the endpoint and stops the
    server when the block ends (also on an error)."""
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = EmbeddedAWS()
    try:
        yield server.start()
    finally:
        server.stop()


BATCH_WRITE_ITEMS = 25
"""DynamoDB's most puts in one ``BatchWriteItem``."""


def memory_items(memories: Sequence[Memory]) -> list[dict[str, Any]]:
    """What the service stores for ``memories``, in attribute-value form, for a ``bench/``
    script to seed: each memory's item (``memory_to_item``) and the active facts' recall
    index (docs/issues.md#issue-23-item-1) packed in segments as a compaction leaves it, with
    each agent's marker that its index is complete."""
    stored = [memory_to_item(memory) for memory in memories]
    ids = IdFactory(SystemClock())
    by_agent: dict[str, list[Memory]] = {}
    for memory in memories:
        if is_indexed(memory):
            by_agent.setdefault(memory.agent_id, []).append(memory)
    for agent_id, facts in by_agent.items():
        packed = [recall_entries_from_blob(recall_entry_blob(fact))[0] for fact in facts]
        stored.extend(segment_items(agent_id, packed, ids.new))
        stored.append(marker_item(agent_id, datetime.now(UTC)))
    return [to_attributes(item) for item in stored]


def put_items(client: Any, table: str, items: Iterable[dict[str, Any]]) -> None:
    """Seed ``table`` for a ``bench/`` script: put every item (DynamoDB's attribute-value
    form, e.g. ``to_attributes(memory_to_item(m))``) with ``BatchWriteItem``, 25 a
    request, sending again what DynamoDB returns unprocessed until nothing is left.

    Args:
        client: a boto3 DynamoDB client.
        table: the table's name.
        items: the items to put.
    """
    requests = [{"PutRequest": {"Item": item}} for item in items]
    for start in range(0, len(requests), BATCH_WRITE_ITEMS):
        pending: dict[str, Any] = {table: requests[start : start + BATCH_WRITE_ITEMS]}
        while pending:
            pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems", {})
