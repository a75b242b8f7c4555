"""Record every AWS API operation the product makes, by the Lambda function making
it, so the roles in the template can be held against the calls the code really makes
(moto does not check IAM, docs/conventions.md#moto). A botocore
``before-parameter-build`` hook sees each operation before it is sent (to AWS, moto or
a Stubber alike); ``FUNCTION`` (a context variable, set by ``attribution_middleware``
in the test plugin and the local server) says which function's code runs, and calls
made with it unset are not recorded. Only what names a resource is kept (table,
index, bucket, key, queue, model), never an item, body or value; ``infra/iam_audit.py``
checks the roles. Choices:
docs/DECISIONS.md#packaging-cold-start-and-iam-issue-12-deploy-iam-gateway-errors-queued-reviews
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import botocore.handlers
from chalice.app import Request

FUNCTION: ContextVar[str | None] = ContextVar("pinework_lambda_function", default=None)
"""The Lambda function (``api_handler``, ``review_fanout``, ``review_worker``) whose
code runs in this context; ``None`` outside every entry point."""
HTTP_FUNCTION = "api_handler"
"""Chalice's name for the function behind every HTTP route (MCP included)."""
_EVENT = "before-parameter-build"
_KEPT = (
    "TableName",
    "IndexName",
    "Bucket",
    "Key",
    "VersionId",
    "QueueUrl",
    "QueueName",
    "modelId",
    "SecretId",
)


@dataclass(frozen=True)
class AwsCall:
    """One AWS API operation made by a Lambda function's code.

    Attributes:
        function: the Lambda function (see ``FUNCTION``).
        service: botocore's service name (``dynamodb``, ``s3``, ``sqs``, ``bedrock-runtime``).
        operation: the API operation (``TransactWriteItems``).
        region: the client's region.
        params: the parameters that name resources (``_KEPT``), plus ``tables`` (the
            tables of a batch) or ``items`` (``[[kind, table], …]`` of a transaction).
        source: where it was recorded (``tests``, ``local_server``).
    """

    function: str
    service: str
    operation: str
    region: str
    params: dict[str, Any] = field(default_factory=dict)
    source: str = "tests"

    def to_json(self) -> str:
        """One JSON line."""
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> AwsCall:
        """Read a line written by ``to_json``."""
        return cls(**json.loads(line))


def naming_params(operation: str, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters of one API call that name the resources it touches.

    Args:
        operation: the API operation.
        params: the call's parameters as given to the client.

    Returns:
        The ``_KEPT`` parameters present, plus ``tables`` for a batch
        (``RequestItems``' table names) and ``items`` for a transaction
        (``[kind, table]`` per item, in order).
    """
    kept = {name: params[name] for name in _KEPT if name in params}
    if "RequestItems" in params:
        kept["tables"] = sorted(params["RequestItems"])
    if operation.startswith("Transact"):
        kept["items"] = [
            [kind, body.get("TableName", "")]
            for item in params.get("TransactItems", [])
            for kind, body in item.items()
        ]
    return kept


class CallRecorder:
    """Collects ``AwsCall``s from every botocore client created after ``install``.

    Args:
        source: recorded with each call (``tests``, ``local_server``).
        sink: also called with each call (e.g. to append it to a file).
    """

    def __init__(self, source: str = "tests", sink: Callable[[AwsCall], None] | None = None):
        self.calls: list[AwsCall] = []
        self._source = source
        self._sink = sink
        self._lock = threading.Lock()

    def install(self) -> None:
        """Hook every botocore session created from now on (as moto does): install
        before the clients to watch are built."""
        if (_EVENT, self.on_call) not in botocore.handlers.BUILTIN_HANDLERS:
            botocore.handlers.BUILTIN_HANDLERS.append((_EVENT, self.on_call))

    def uninstall(self) -> None:
        """Stop hooking new sessions."""
        if (_EVENT, self.on_call) in botocore.handlers.BUILTIN_HANDLERS:
            botocore.handlers.BUILTIN_HANDLERS.remove((_EVENT, self.on_call))

    def on_call(
        self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any
    ) -> None:
        """botocore's ``before-parameter-build`` handler: record the call if a Lambda
        function's code made it."""
        function = FUNCTION.get()
        if function is None:
            return
        call = AwsCall(
            function=function,
            service=model.service_model.service_name,
            operation=model.name,
            region=str(context.get("client_region") or ""),
            params=naming_params(model.name, params),
            source=self._source,
        )
        with self._lock:
            self.calls.append(call)
            if self._sink is not None:
                self._sink(call)


def file_sink(path: Path) -> Callable[[AwsCall], None]:
    """A sink appending each call as one JSON line to ``path`` (one write per line, so
    several processes may share the file)."""

    def write(call: AwsCall) -> None:
        with path.open("a", encoding="utf-8") as out:
            out.write(call.to_json() + "\n")

    return write


def read_calls(path: Path, start: int = 0) -> tuple[list[AwsCall], int]:
    """The calls appended to ``path`` from byte ``start`` on, and the new end offset."""
    if not path.exists():
        return [], start
    with path.open("rb") as source:
        source.seek(start)
        data = source.read()
    complete = data[: data.rfind(b"\n") + 1]
    calls = [AwsCall.from_json(line) for line in complete.decode("utf-8").splitlines() if line]
    return calls, start + len(complete)


@contextmanager
def attributed(function: str) -> Iterator[None]:
    """Run the block as ``function``'s code (``FUNCTION`` set, then restored)."""
    token = FUNCTION.set(function)
    try:
        yield
    finally:
        FUNCTION.reset(token)


def function_of(event: Any) -> str:
    """The Lambda function a Chalice middleware ``event`` belongs to: ``api_handler``
    for an HTTP request, else the name in its Lambda context (``review_worker``)."""
    if isinstance(event, Request):
        return HTTP_FUNCTION
    return str(event.context.function_name)


def attribution_middleware(event: Any, get_response: Callable[[Any], Any]) -> Any:
    """Chalice middleware (``app.register_middleware(…, "all")``): runs the handler
    with ``FUNCTION`` set to its Lambda function."""
    with attributed(function_of(event)):
        return get_response(event)
