"""The embedded DynamoDB (and S3/SQS) of the local server and the tests: moto's server
on loopback, serving one request at a time (so each request is atomic, as on
DynamoDB), with transactions that back up only the items they touch
(``infra/moto_transactions.py``, for this server's requests only), and a journal of
successful writes (JSON lines, DynamoDB by ``X-Amz-Target``, S3 by method and SigV4
scope) replayed on the next start so stored data survives a restart. The journal is
compacted (rewritten as a snapshot of what is stored now: ``StateSnapshot``) after the
replay at start and once writes are followed by a quiet second, so what was deleted or
erased leaves the disk. Choices: docs/DECISIONS.md#local-server.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import logging
import os
import stat
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import boto3
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.compat import HTTPHeaders
from botocore.config import Config
from botocore.exceptions import ClientError
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


IDLE_SECONDS = 1.0
"""Quiet time (seconds without a DynamoDB or S3 request) after a write before the journal
is compacted; after a compaction that took D seconds, at least 2·D."""

JOURNALED_SERVICES = frozenset({"dynamodb", "s3"})
"""The services (SigV4 scope) whose writes are journaled and whose requests end a quiet time."""

logger = logging.getLogger(__name__)


class SerializedJournaledApp:
    """WSGI middleware: one request at a time; journal successful DynamoDB and S3 writes,
    and compact the journal (``compact``) so it holds only what is stored now.

    Args:
        app: moto's WSGI application.
        journal: the file to append writes to, or None for no persistence.
        idle_seconds: the quiet time after writes before a background compaction
            (``start_compacting``), in seconds.
    """

    def __init__(self, app: Any, journal: Path | None, idle_seconds: float = IDLE_SECONDS) -> None:
        self._app = app
        self._journal = journal
        self._lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        """DynamoDB requests served, by action (for benchmarks: ``GET /_pinework/requests``)."""
        self.compactions = 0
        """Journal compactions that succeeded since this app was made."""
        self._created: set[CreatedResource] = set()
        self._snapshot = StateSnapshot(app)
        self._idle_seconds = idle_seconds
        # _state guards the fields below; it is taken inside _lock, never around it.
        self._state = threading.Condition()
        self._dirty = False
        self._last_request = time.monotonic()
        self._last_duration = 0.0
        self._stopping = False
        self._compactor: threading.Thread | None = None

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
            journaled = (
                self._journal is not None
                and (action in WRITE_ACTIONS or _is_s3_write(environ))
                and bool(statuses)
                and statuses[0].startswith("2")
            )
            if journaled:
                self._append(environ, body)
            self._note_request(environ, journaled)
        return chunks

    def _note_request(self, environ: dict[str, Any], journaled: bool) -> None:
        """Restart the quiet time after a DynamoDB or S3 request; mark a journaled write."""
        if self._journal is None:
            return
        scope = _credential_scope(str(environ.get("HTTP_AUTHORIZATION", "")))
        if not journaled and (not scope or scope[3] not in JOURNALED_SERVICES):
            return
        with self._state:
            self._last_request = time.monotonic()
            if journaled:
                self._dirty = True
                self._state.notify_all()

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
        self._track(entry)

    def _track(self, entry: dict[str, Any]) -> None:
        """Remember the table or bucket a journal entry creates (the snapshot's scope)."""
        created = created_by(entry)
        if created is not None:
            self._created.add(created)

    def replay(self) -> int:
        """Re-apply every journaled write in order (without journaling them again). A
        snapshot file a compaction left unfinished (the process died) is deleted.

        Returns:
            How many requests were replayed.
        """
        if self._journal is None:
            return 0
        _temporary(self._journal).unlink(missing_ok=True)
        if not self._journal.exists():
            return 0
        client = Client(self._app)
        count = 0
        with (
            self._lock,
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
                self._track(entry)
                count += 1
        return count

    def compact(self) -> int:
        """Rewrite the journal as a snapshot of what is stored now (``StateSnapshot``) and
        put it in place atomically: written to ``<journal>.tmp``, flushed and synced, then
        renamed over the journal. Requests wait meanwhile (the request lock is held), so
        no write falls between the snapshot and the rename. Replaying the new journal
        gives the same tables, items, buckets and objects; what was deleted or erased is
        no longer in it.

        Returns:
            How many entries the new journal holds (0 without a journal).

        Raises:
            Exception: what reading the state or writing the file raised (``ClientError``,
                ``OSError``, ...); the journal is then left as it was and the partial
                snapshot deleted. Either way the next background compaction waits for
                the next write.
        """
        if self._journal is None:
            return 0
        started = time.monotonic()
        with self._lock, moto_transactions.embedded_server_requests():
            try:
                count, kept = self._rewrite(self._journal)
                self._created = kept
                self.compactions += 1
            finally:
                with self._state:
                    self._dirty = False
                    self._last_duration = time.monotonic() - started
        return count

    def _rewrite(self, journal: Path) -> tuple[int, set[CreatedResource]]:
        """Write the snapshot next to ``journal`` and rename it over it (caller holds the lock)."""
        temporary = _temporary(journal)
        count = 0
        try:
            with temporary.open("w", encoding="utf-8") as file:

                def emit(entry: dict[str, Any]) -> None:
                    nonlocal count
                    file.write(json.dumps(entry) + "\n")
                    count += 1

                kept = self._snapshot.write(self._created, emit)
                file.flush()
                os.fsync(file.fileno())
            if journal.exists():
                temporary.chmod(stat.S_IMODE(journal.stat().st_mode))
            os.replace(temporary, journal)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        _sync_directory(journal.parent)
        return count, kept

    def compact_logged(self, moment: str) -> bool:
        """``compact``, logging the outcome instead of raising (the journal is kept as it
        was on a failure).

        Args:
            moment: when it runs, for the log line (``at start``, ``after writes``, ...).

        Returns:
            True if the journal was compacted.
        """
        started = time.monotonic()
        try:
            count = self.compact()
        except Exception:
            logger.exception(
                "compacting the journal %s %s failed; it is kept as it was", self._journal, moment
            )
            return False
        logger.info(
            "compacted the journal %s %s: %d entries in %.2f s",
            self._journal,
            moment,
            count,
            time.monotonic() - started,
        )
        return True

    def start_compacting(self) -> None:
        """Compact the journal in a background thread whenever journaled writes are
        followed by a quiet time: ``idle_seconds`` without a DynamoDB or S3 request, and at
        least twice the last compaction's duration. Nothing happens without a journal or
        when the thread already runs."""
        if self._journal is None or self._compactor is not None:
            return
        with self._state:
            self._stopping = False
        self._compactor = threading.Thread(
            target=self._compact_when_idle, name="journal-compaction", daemon=True
        )
        self._compactor.start()

    def stop_compacting(self) -> None:
        """Stop the background compaction (waiting for one under way), then compact once
        more if writes came since the last compaction (logged on a failure)."""
        thread = self._compactor
        if thread is None:
            return
        with self._state:
            self._stopping = True
            self._state.notify_all()
        thread.join()
        self._compactor = None
        with self._state:
            pending = self._dirty
        if pending:
            self.compact_logged("at stop")

    def _compact_when_idle(self) -> None:
        while True:
            with self._state:
                if not self._wait_for_quiet():
                    return
            self.compact_logged("after writes")

    def _wait_for_quiet(self) -> bool:
        """Wait (``_state`` held) until writes are pending and the server has been quiet
        long enough; False when stopping."""
        while not self._stopping:
            if not self._dirty:
                self._state.wait()
                continue
            quiet = max(self._idle_seconds, 2 * self._last_duration)
            remaining = self._last_request + quiet - time.monotonic()
            if remaining <= 0:
                return True
            self._state.wait(remaining)
        return False


def _temporary(journal: Path) -> Path:
    """Where a compaction writes the snapshot before renaming it over ``journal``."""
    return journal.with_name(journal.name + ".tmp")


def _sync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (best effort where directories cannot be opened)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _credential_scope(authorization: str) -> list[str]:
    """A SigV4 ``Authorization`` header's credential scope, ``[access key, date, region,
    service, "aws4_request"]``; empty when the request is not signed so."""
    _, _, credential = authorization.partition("Credential=")
    scope = credential.split(",", 1)[0].split("/")
    return scope if len(scope) >= 5 else []


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
    scope = _credential_scope(str(environ.get("HTTP_AUTHORIZATION", "")))
    return bool(scope) and scope[3] == "s3"


@dataclass(frozen=True)
class CreatedResource:
    """A table or bucket that a journaled request created.

    Attributes:
        service: ``dynamodb`` or ``s3``.
        account: the moto account it is stored in (12 digits).
        region: the region the request was signed for (a bucket's own region may differ:
            buckets are per partition).
        name: the table's or the bucket's name.
    """

    service: str
    account: str
    region: str
    name: str


def created_by(entry: Mapping[str, Any]) -> CreatedResource | None:
    """The table or bucket a journal entry creates: a DynamoDB ``CreateTable``, or an S3
    ``PUT /<bucket>`` without a subresource (``CreateBucket``); None for anything else
    (whether it succeeded is not known here).

    Args:
        entry: a journal entry (``method``, ``query``, ``path``, ``headers``, base64 ``body``).
    """
    headers = {str(name).lower(): str(value) for name, value in entry["headers"].items()}
    scope = _credential_scope(headers.get("authorization", ""))
    if not scope:
        return None
    if scope[3] == "dynamodb":
        name = _created_table(headers, str(entry.get("body", "")))
    elif scope[3] == "s3":
        name = _created_bucket(entry)
    else:
        return None
    if not name:
        return None
    return CreatedResource(scope[3], _moto_account(headers, scope[0]), scope[2], name)


def _created_table(headers: Mapping[str, str], body: str) -> str | None:
    """The table a DynamoDB request creates (``CreateTable``), else None."""
    if headers.get("x-amz-target", "").rpartition(".")[2] != "CreateTable":
        return None
    try:
        name = json.loads(base64.b64decode(body)).get("TableName")
    except (ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def _created_bucket(entry: Mapping[str, Any]) -> str | None:
    """The bucket an S3 request creates (``PUT /<bucket>``, path-style, no subresource)."""
    if entry.get("method") != "PUT":
        return None
    bucket = str(entry.get("path", "")).strip("/")
    query = parse_qs(str(entry.get("query", "")), keep_blank_values=True)
    if not bucket or "/" in bucket or set(query) - {"x-id"}:
        return None
    return bucket


def _moto_account(headers: Mapping[str, str], access_key: str) -> str:
    """The account moto stores a request's data in, in moto's own order: ``MOTO_ACCOUNT_ID``,
    the ``x-moto-account-id`` header, the account an IAM access key belongs to, the default
    (123456789012)."""
    if os.environ.get("MOTO_ACCOUNT_ID"):
        return os.environ["MOTO_ACCOUNT_ID"]
    if headers.get("x-moto-account-id"):
        return headers["x-moto-account-id"]
    from moto.iam.models import get_account_id_from

    return str(get_account_id_from(access_key))


SNAPSHOT_ENDPOINT = "http://127.0.0.1"
"""The URL the snapshot's requests are prepared for (moto picks the service and region
from the signature, not the host)."""
SNAPSHOT_ACCESS_KEY = "pinework-snapshot"
"""The access key that signs the snapshot's requests; they name their account in the
``x-moto-account-id`` header, which moto reads before the access key."""
_SNAPSHOT_CONFIG = Config(
    # What is written comes from moto's own state; checking every attribute value against
    # the model took half a compaction's time.
    parameter_validation=False,
    retries={"total_max_attempts": 1},
    s3={"addressing_style": "path"},
    request_checksum_calculation="when_required",
    response_checksum_validation="when_required",
)
_UNSENT_HEADERS = frozenset({"content-length", "expect", "transfer-encoding"})
"""Headers a journal entry leaves out: the replay's test client sets the length itself."""
Emit = Callable[[dict[str, Any]], None]
T = TypeVar("T")


class StateSnapshot:
    """The stored state of the embedded stack's tables and buckets, as journal entries.

    It reads through moto's own WSGI app (not the serializing middleware, whose lock the
    compaction holds), with boto3 clients whose requests are handed to the app in
    process, except what it reads from moto's objects: the items (``stored_items``: a
    ``Scan`` through the app is 20 times slower) and each key's object versions, their
    order, bytes and headers (``_object_histories``). The entries are the requests that
    boto3 prepares and signs
    for the writes that recreate the state, kept by a ``before-send`` handler and never
    sent; they name their account (``x-moto-account-id``) and are signed for the region
    the table was created in (a bucket: its own region), so a replay stores them where
    they were.

    Per table: ``CreateTable`` (keys, attribute definitions, billing and throughput,
    global and local indexes, stream, encryption, table class, deletion protection,
    tags), ``UpdateTimeToLive`` when TTL is on, then every item in ``BatchWriteItem``
    puts of 25. Per bucket: ``CreateBucket`` (with its region), versioning, lifecycle,
    default encryption, public access block and tags, then each key's versions oldest
    first (``PutObject`` with its type and user metadata, and a ``DeleteObject`` where a
    delete marker stands), or the current object of an unversioned bucket, then its
    policy (moto applies a Deny to object writes).
    Objects under ``MODEL_OBJECT_PREFIX`` are left out (uploaded at every start). New
    version ids are drawn on replay; a suspended bucket's versions all get ids.

    Args:
        app: moto's WSGI application.
    """

    def __init__(self, app: Any) -> None:
        self._app = app
        self._session: boto3.session.Session | None = None
        self._clients: dict[tuple[str, str, str, str], Any] = {}
        self._emit: Emit | None = None

    def write(self, resources: Iterable[CreatedResource], emit: Emit) -> set[CreatedResource]:
        """Emit the entries that recreate each of ``resources`` that still exists (tables
        first, then buckets; a bucket named twice once).

        Args:
            resources: the tables and buckets to snapshot.
            emit: called with each entry (``method``, ``query``, ``path``, ``headers``,
                base64 ``body``), in replay order.

        Returns:
            The resources that exist, hence were written.

        Raises:
            ClientError: moto refused a read other than "no such table or bucket".
        """
        kept: set[CreatedResource] = set()
        buckets: set[tuple[str, str, str]] = set()
        self._emit = emit
        try:
            for resource in sorted(
                resources, key=lambda r: (r.service != "dynamodb", r.account, r.region, r.name)
            ):
                if resource.service == "dynamodb":
                    written = self._table(resource)
                else:
                    place = (resource.account, _partition(resource.region), resource.name)
                    written = place not in buckets and self._bucket(resource)
                    buckets.add(place)
                if written:
                    kept.add(resource)
        finally:
            self._emit = None
        return kept

    def _table(self, table: CreatedResource) -> bool:
        """Emit one table's entries; False when it no longer exists."""
        reader = self._client("read", "dynamodb", table.account, table.region)
        writer = self._client("record", "dynamodb", table.account, table.region)
        described = _unless(
            "ResourceNotFoundException", lambda: reader.describe_table(TableName=table.name)
        )
        if described is None:
            return False
        description = described["Table"]
        writer.create_table(
            **create_table_arguments(description, _table_tags(reader, description["TableArn"]))
        )
        ttl = reader.describe_time_to_live(TableName=table.name)["TimeToLiveDescription"]
        if ttl.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
            writer.update_time_to_live(
                TableName=table.name,
                TimeToLiveSpecification={"AttributeName": ttl["AttributeName"], "Enabled": True},
            )
        puts: list[dict[str, Any]] = []
        for item in stored_items(table):
            puts.append({"PutRequest": {"Item": item}})
            if len(puts) == BATCH_WRITE_ITEMS:
                writer.batch_write_item(RequestItems={table.name: puts})
                puts = []
        if puts:
            writer.batch_write_item(RequestItems={table.name: puts})
        return True

    def _bucket(self, bucket: CreatedResource) -> bool:
        """Emit one bucket's entries; False when it no longer exists."""
        reader = self._client("read", "s3", bucket.account, bucket.region)
        located = _unless("NoSuchBucket", lambda: reader.get_bucket_location(Bucket=bucket.name))
        if located is None:
            return False
        region = _bucket_region(located.get("LocationConstraint"))
        writer = self._client("record", "s3", bucket.account, region)
        if region == "us-east-1":
            writer.create_bucket(Bucket=bucket.name)
        else:
            writer.create_bucket(
                Bucket=bucket.name, CreateBucketConfiguration={"LocationConstraint": region}
            )
        versioning = reader.get_bucket_versioning(Bucket=bucket.name).get("Status")
        if versioning:
            writer.put_bucket_versioning(
                Bucket=bucket.name, VersioningConfiguration={"Status": "Enabled"}
            )
        _copy_bucket_settings(reader, writer, bucket.name)
        for key, versions in _object_histories(bucket):
            for deleted, version in versions:
                if deleted:
                    writer.delete_object(Bucket=bucket.name, Key=key)
                else:
                    writer.put_object(
                        Bucket=bucket.name,
                        Key=key,
                        Body=version.value,
                        **object_fields(version.metadata),
                    )
        if versioning == "Suspended":
            writer.put_bucket_versioning(
                Bucket=bucket.name, VersioningConfiguration={"Status": "Suspended"}
            )
        # Last: moto applies a policy's Deny to the object writes above.
        policy = _unless(
            "NoSuchBucketPolicy", lambda: reader.get_bucket_policy(Bucket=bucket.name)["Policy"]
        )
        if policy:
            writer.put_bucket_policy(Bucket=bucket.name, Policy=policy)
        return True

    def _client(self, role: str, service: str, account: str, region: str) -> Any:
        """A boto3 client of ``service`` that reads through moto's app (``role`` ``read``)
        or records the requests it would send as entries (``record``), for one account
        and region; made once."""
        cache_key = (role, service, account, region)
        client = self._clients.get(cache_key)
        if client is not None:
            return client
        if self._session is None:
            self._session = boto3.session.Session()
        client = self._session.client(
            service,  # type: ignore[call-overload]
            region_name=region,
            endpoint_url=SNAPSHOT_ENDPOINT,
            aws_access_key_id=SNAPSHOT_ACCESS_KEY,
            aws_secret_access_key=SNAPSHOT_ACCESS_KEY,
            config=_SNAPSHOT_CONFIG,
        )

        def send(request: AWSPreparedRequest, **_: Any) -> AWSResponse:
            entry = _entry(request, account)
            if role == "read":
                return self._serve(request.url, entry)
            if self._emit is None:
                raise RuntimeError("a snapshot write outside StateSnapshot.write")
            self._emit(entry)
            body = b"{}" if service == "dynamodb" else b""
            return _response(request.url, 200, {}, body)

        client.meta.events.register("before-send", send)
        self._clients[cache_key] = client
        return client

    def _serve(self, url: str, entry: dict[str, Any]) -> AWSResponse:
        """Answer a read with moto's app, in process."""
        response = Client(self._app).open(
            entry["path"],
            method=entry["method"],
            query_string=entry["query"],
            headers=entry["headers"],
            data=base64.b64decode(entry["body"]),
        )
        try:
            return _response(
                url, response.status_code, dict(response.headers.items()), response.data
            )
        finally:
            response.close()


def _entry(request: AWSPreparedRequest, account: str) -> dict[str, Any]:
    """A prepared request as a journal entry, addressed to ``account``."""
    url = urlsplit(request.url)
    body = request.body
    if body is None:
        data = b""
    elif isinstance(body, str):
        data = body.encode("utf-8")
    elif isinstance(body, bytes | bytearray):
        data = bytes(body)
    else:
        read = body.read()
        data = read.encode("utf-8") if isinstance(read, str) else bytes(read)
    headers = {
        str(name): value.decode("utf-8") if isinstance(value, bytes) else str(value)
        for name, value in request.headers.items()
        if str(name).lower() not in _UNSENT_HEADERS
    }
    headers["X-Moto-Account-Id"] = account
    return {
        "method": request.method,
        "query": url.query,
        "path": url.path or "/",
        "headers": headers,
        "body": base64.b64encode(data).decode("ascii"),
    }


def _response(url: str, status: int, headers: Mapping[str, str], body: bytes) -> AWSResponse:
    """An answer botocore parses as if it came over HTTP."""
    message = HTTPHeaders()
    for name, value in headers.items():
        message[name] = value
    return AWSResponse(url, status, message, _Raw(body))


class _Raw(io.BytesIO):
    """A response body botocore reads whole (``stream``) or as a stream (``read``)."""

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[bytes]:
        data = self.read()
        if data:
            yield data


def _unless(code: str, call: Callable[[], T]) -> T | None:
    """``call()``, or None when it fails with the error ``code`` (something missing)."""
    try:
        return call()
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == code:
            return None
        raise


def create_table_arguments(table: Mapping[str, Any], tags: Sequence[Any]) -> dict[str, Any]:
    """The ``CreateTable`` arguments that make a table like ``table`` (a ``DescribeTable``
    answer's ``Table``): keys, attribute definitions, billing mode (and throughput when
    provisioned), global and local indexes (keys, projection, throughput when
    provisioned), stream, encryption, table class, deletion protection and ``tags``
    (``ListTagsOfResource``'s ``Tags``)."""
    billing = table.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")
    provisioned = billing == "PROVISIONED"
    arguments: dict[str, Any] = {
        "TableName": table["TableName"],
        "KeySchema": table["KeySchema"],
        "AttributeDefinitions": table["AttributeDefinitions"],
        "BillingMode": billing,
    }
    if provisioned:
        arguments["ProvisionedThroughput"] = _throughput(table["ProvisionedThroughput"])
    for kind, with_throughput in (
        ("GlobalSecondaryIndexes", provisioned),
        ("LocalSecondaryIndexes", False),
    ):
        indexes = [
            {
                "IndexName": index["IndexName"],
                "KeySchema": index["KeySchema"],
                "Projection": index["Projection"],
                **(
                    {"ProvisionedThroughput": _throughput(index["ProvisionedThroughput"])}
                    if with_throughput
                    else {}
                ),
            }
            for index in table.get(kind, [])
        ]
        if indexes:
            arguments[kind] = indexes
    arguments.update(_table_options(table))
    if tags:
        arguments["Tags"] = list(tags)
    return arguments


def _table_options(table: Mapping[str, Any]) -> dict[str, Any]:
    """``CreateTable``'s stream, encryption, table class and deletion protection arguments
    for a described table (only those set)."""
    options: dict[str, Any] = {}
    stream = table.get("StreamSpecification", {})
    if stream.get("StreamEnabled"):
        options["StreamSpecification"] = {
            "StreamEnabled": True,
            "StreamViewType": stream["StreamViewType"],
        }
    encryption = table.get("SSEDescription", {})
    if encryption.get("Status") in ("ENABLED", "ENABLING"):
        options["SSESpecification"] = {
            "Enabled": True,
            **({"SSEType": encryption["SSEType"]} if encryption.get("SSEType") else {}),
            **(
                {"KMSMasterKeyId": encryption["KMSMasterKeyArn"]}
                if encryption.get("KMSMasterKeyArn")
                else {}
            ),
        }
    table_class = table.get("TableClassSummary", {}).get("TableClass")
    if table_class and table_class != "STANDARD":
        options["TableClass"] = table_class
    if table.get("DeletionProtectionEnabled"):
        options["DeletionProtectionEnabled"] = True
    return options


def stored_items(table: CreatedResource) -> Iterator[dict[str, Any]]:
    """Every item of a table, in the attribute-value form boto3 takes and ``Scan`` answers
    (binary values as bytes), in moto's key order.

    Read from moto's table itself: a ``Scan`` through moto's app spends its time in moto's
    response serializer (15 s for 5,000 memories, where this takes a fraction of a
    second). ``tests/unit/test_local_journal.py`` holds the two equal.

    Raises:
        KeyError: no such table in that account and region.
    """
    from moto.dynamodb.models import dynamodb_backends

    stored = dynamodb_backends[table.account][table.region].tables[table.name]
    for item in stored.all_items():
        yield {name: _attribute_value(value) for name, value in item.attrs.items()}


def _attribute_value(value: Any) -> dict[str, Any]:
    """One of moto's ``DynamoType`` values as an attribute value (moto keeps a top-level
    binary as bytes and a nested one as base64 text)."""
    kind, inner = value.type, value.value
    if kind == "M":
        return {"M": {name: _attribute_value(nested) for name, nested in inner.items()}}
    if kind == "L":
        return {"L": [_attribute_value(nested) for nested in inner]}
    if kind == "B":
        return {"B": _binary(inner)}
    if kind == "BS":
        return {"BS": [_binary(member) for member in inner]}
    return {kind: inner}


def _binary(value: bytes | str) -> bytes:
    return base64.b64decode(value) if isinstance(value, str) else bytes(value)


def _throughput(described: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "ReadCapacityUnits": described["ReadCapacityUnits"],
        "WriteCapacityUnits": described["WriteCapacityUnits"],
    }


def _table_tags(reader: Any, arn: str) -> list[Any]:
    """Every tag of a table (``ListTagsOfResource``, all pages)."""
    tags: list[Any] = []
    request: dict[str, Any] = {"ResourceArn": arn}
    while True:
        page = reader.list_tags_of_resource(**request)
        tags.extend(page.get("Tags", []))
        if not page.get("NextToken"):
            return tags
        request["NextToken"] = page["NextToken"]


def _copy_bucket_settings(reader: Any, writer: Any, bucket: str) -> None:
    """Record a bucket's lifecycle, default encryption, public access block and tags (each
    only when set; the policy comes after the objects)."""
    rules = _unless(
        "NoSuchLifecycleConfiguration",
        lambda: reader.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"],
    )
    if rules:
        writer.put_bucket_lifecycle_configuration(
            Bucket=bucket, LifecycleConfiguration={"Rules": rules}
        )
    encryption = _unless(
        "ServerSideEncryptionConfigurationNotFoundError",
        lambda: reader.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"],
    )
    if encryption:
        writer.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration=encryption)
    block = _unless(
        "NoSuchPublicAccessBlockConfiguration",
        lambda: reader.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"],
    )
    if block:
        writer.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration=block)
    tags = _unless("NoSuchTagSet", lambda: reader.get_bucket_tagging(Bucket=bucket)["TagSet"])
    if tags:
        writer.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tags})


def _bucket_region(location: str | None) -> str:
    """A bucket's region from ``GetBucketLocation`` (None: us-east-1; ``EU``: eu-west-1)."""
    if not location:
        return "us-east-1"
    return "eu-west-1" if location == "EU" else location


def _partition(region: str) -> str:
    from moto.utilities.utils import get_partition

    return str(get_partition(region))


def _object_histories(bucket: CreatedResource) -> Iterator[tuple[str, list[tuple[bool, Any]]]]:
    """Each key of a bucket with its versions oldest first, as ``(is a delete marker,
    moto's version)``; keys under ``MODEL_OBJECT_PREFIX`` and keys with no version left
    out, and a key's delete markers older than its oldest version too (a replayed
    ``DeleteObject`` of a missing key makes no marker).

    Read from moto's bucket itself: its list is the order ``GetObject`` takes the newest
    of (``ListObjectVersions`` sorts by a millisecond time, so versions written in one
    millisecond would be ambiguous, and answers delete markers apart from versions), and
    moto applies a bucket policy's Deny to ``GetObject`` whoever asks.
    """
    from moto.s3.models import FakeDeleteMarker, s3_backends

    stored = s3_backends[bucket.account][_partition(bucket.region)].buckets[bucket.name]
    for key, versions in list(stored.keys.iterlists()):
        if key.startswith(MODEL_OBJECT_PREFIX):
            continue
        history = [(isinstance(version, FakeDeleteMarker), version) for version in versions]
        while history and history[0][0]:
            history.pop(0)
        if history:
            yield key, history


OBJECT_HEADERS = {
    "content-type": "ContentType",
    "content-encoding": "ContentEncoding",
    "content-disposition": "ContentDisposition",
    "content-language": "ContentLanguage",
    "cache-control": "CacheControl",
}
"""The stored headers of an object version the snapshot keeps, by ``PutObject``'s names
(with the user metadata, ``x-amz-meta-*``)."""
USER_METADATA = "x-amz-meta-"


def object_fields(metadata: Mapping[str, str]) -> dict[str, Any]:
    """``PutObject`` arguments for an object version's stored headers (moto keeps them by
    header name: ``content-type``, ``x-amz-meta-owner``, ...): its type, encoding,
    disposition, language, cache control and user metadata, each only when set."""
    fields: dict[str, Any] = {}
    user: dict[str, str] = {}
    for name, value in metadata.items():
        lowered = name.lower()
        if lowered in OBJECT_HEADERS and value:
            fields[OBJECT_HEADERS[lowered]] = value
        elif lowered.startswith(USER_METADATA):
            user[lowered[len(USER_METADATA) :]] = value
    if user:
        fields["Metadata"] = user
    return fields


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
        idle_seconds: with a journal, the quiet time after writes before it is compacted
            (``SerializedJournaledApp.start_compacting``), in seconds.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        journal: Path | None = None,
        idle_seconds: float = IDLE_SECONDS,
    ):
        self._app = SerializedJournaledApp(
            DomainDispatcherApplication(create_backend_app), journal, idle_seconds
        )
        self._server: BaseWSGIServer = make_server(host, port, self._app, threaded=True)
        self._thread: threading.Thread | None = None
        self.replayed = 0

    @property
    def endpoint(self) -> str:
        """The server's URL, e.g. ``http://127.0.0.1:8001``."""
        return f"http://{self._server.host}:{self._server.port}"

    @property
    def compactions(self) -> int:
        """How many journal compactions succeeded since this server was made."""
        return self._app.compactions

    def start(self) -> str:
        """Replay the journal and compact it (when it had entries; a failure is logged and
        leaves it as it was), then serve in a daemon thread and compact after writes;
        return the endpoint."""
        self.replayed = self._app.replay()
        if self.replayed:
            self._app.compact_logged("at start")
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self._app.start_compacting()
        return self.endpoint

    def compact(self) -> int:
        """Compact the journal now (``SerializedJournaledApp.compact``): returns the entries
        it holds; raises what failed, the journal then left as it was."""
        return self._app.compact()

    def stop(self) -> None:
        """Stop serving, then compact the journal if writes came since its last compaction
        (the journal stays on disk). A server that never started (``start`` raised) only
        closes its socket."""
        if self._thread is not None:
            self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._app.stop_compacting()


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
