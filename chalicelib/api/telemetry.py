"""Where the edge's logs, metrics and traces go (docs/reference.md#14-operations):
Powertools' Logger (one JSON object per line), EMF metrics (``EphemeralMetrics``, one
record per event) and, when ``PINEWORK_TRACING`` is on, X-Ray through Powertools'
Tracer. Only ``chalicelib/api`` and ``chalicelib/jobs`` use it; the services log with
the standard library through the same JSON handler. Never written: a bearer token, an
API key, a fact, day line, query, key-value key or value, or an evidence excerpt; an
exception is its type, AWS error code and frames, never its message. Powertools is
imported on the first event, not with ``app``. Choices:
docs/DECISIONS.md#logs-and-metrics-issue-12.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import sys
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from chalicelib.settings import Settings

if TYPE_CHECKING:
    from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

SERVICE = "pinework"
"""The ``service`` key of every log line and metric (Powertools' convention)."""
_FRAMES = 12
"""Stack frames kept per exception in a log line (the innermost ones)."""


@dataclass(frozen=True)
class Metric:
    """One EMF metric value: ``name`` (e.g. ``Requests``), CloudWatch ``unit``, ``value``."""

    name: str
    unit: str
    value: float


class Tracing(Protocol):
    """What the edge needs of a tracer: a named subsegment with annotations."""

    def subsegment(self, name: str) -> contextlib.AbstractContextManager[Any]:
        """Open a subsegment; the object it yields takes ``put_annotation(key, value)``."""
        ...


class PowertoolsTracing:
    """``Tracing`` on Powertools' Tracer (X-Ray); it patches botocore, so every AWS
    call of a traced request is a subsegment too."""

    def __init__(self) -> None:
        from aws_lambda_powertools import Tracer

        self._tracer = Tracer(service=SERVICE, patch_modules=["botocore"])

    def subsegment(self, name: str) -> contextlib.AbstractContextManager[Any]:
        """An X-Ray subsegment named ``name`` under the Lambda's segment."""
        manager: contextlib.AbstractContextManager[Any] = self._tracer.provider.in_subsegment(
            name=name
        )
        return manager


def describe_exception(error: BaseException) -> str:
    """An exception chain as types, AWS error codes and stack frames: never messages.

    ``ClientError`` keeps its error code and operation; a domain error its code.
    """
    parts = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        kind = type(current)
        detail = ""
        response = getattr(current, "response", None)
        if isinstance(response, Mapping):
            code = response.get("Error", {}).get("Code")
            detail = f" ({code} on {getattr(current, 'operation_name', '?')})"
        elif isinstance(getattr(current, "code", None), str):
            detail = f" ({current.code})"  # type: ignore[attr-defined]
        frames = traceback.extract_tb(current.__traceback__)[-_FRAMES:]
        lines = [f"{kind.__module__}.{kind.__qualname__}{detail}"]
        lines += [f"  at {frame.filename}:{frame.lineno} in {frame.name}" for frame in frames]
        parts.append("\n".join(lines))
        current = current.__cause__ or current.__context__
    return "\ncaused by ".join(parts)


def _redacting_formatter(**options: Any) -> LambdaPowertoolsFormatter:
    """Powertools' JSON formatter, writing exceptions with ``describe_exception``."""
    from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

    class RedactingFormatter(LambdaPowertoolsFormatter):
        def formatException(self, ei: Any) -> str:  # noqa: N802 (logging's name)
            return describe_exception(ei[1]) if ei and ei[1] is not None else ""

    return RedactingFormatter(**options)


def process_stream(name: str) -> Any:
    """The process's own ``stdout`` or ``stderr`` (file descriptor 1 or 2): what
    Lambda sends to CloudWatch Logs, whatever a caller did to ``sys.stdout`` (an
    in-process CLI test swaps it to read the CLI's own output)."""
    return getattr(sys, f"__{name}__") or getattr(sys, name)


class _ProcessStream(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler writing to ``process_stream(name)``, looked up at each line."""

    def __init__(self, name: str) -> None:
        self._stream_name = name
        super().__init__(process_stream(name))

    @property
    def stream(self) -> Any:
        return process_stream(self._stream_name)

    @stream.setter
    def stream(self, _: Any) -> None:
        pass


_TEXT_HIDDEN = frozenset({"request_id", "function_request_id", "cold_start"})
_TEXT_REQUEST = ("method", "route", "status", "latency_ms")


class _TextFormatter(logging.Formatter):
    """One readable line per event for the local server's console:
    ``HH:MM:SS POST /memories 201 12.3 ms agent_id=agt_… …`` for a request,
    ``HH:MM:SS message key=value …`` for anything else."""

    def format(self, record: logging.LogRecord) -> str:
        fields = dict(getattr(record, "fields", {}) or {})
        line = self.formatTime(record, "%H:%M:%S")
        if record.getMessage() == "request" and all(key in fields for key in _TEXT_REQUEST):
            method, route, status, latency = (fields.pop(key) for key in _TEXT_REQUEST)
            line += f" {method} {route} {status} {latency} ms"
        else:
            line += f" {record.getMessage()}"
        shown = " ".join(
            f"{key}={value}"
            for key, value in fields.items()
            if value is not None and key not in _TEXT_HIDDEN
        )
        line += f" {shown}" if shown else ""
        if record.exc_info and record.exc_info[1] is not None:
            line += "\n" + describe_exception(record.exc_info[1])
        return line


class Telemetry:
    """Logs, metrics and traces of one process, as the settings ask.

    Args:
        settings: ``log_format`` (``json``: Powertools JSON lines and EMF metrics;
            ``text``: readable lines, no metrics), ``tracing``, ``metrics_namespace``.
        tracing: a tracer to use instead of Powertools' (tests); only when tracing is on.
    """

    def __init__(self, settings: Settings, tracing: Tracing | None = None) -> None:
        self.json = settings.log_format == "json"
        self.namespace = settings.metrics_namespace
        self.logger = _json_logger() if self.json else _text_logger()
        self.tracing: Tracing | None = None
        if settings.tracing:
            self.tracing = tracing if tracing is not None else self._powertools_tracing()

    def log(
        self,
        message: str,
        fields: Mapping[str, Any],
        *,
        level: int = logging.INFO,
        error: BaseException | None = None,
    ) -> None:
        """Write one line: ``message`` and ``fields`` (ids, codes, counts, times only)."""
        exc_info = (type(error), error, error.__traceback__) if error is not None else None
        extra = dict(fields) if self.json else {"fields": dict(fields)}
        # stacklevel 2: the line's ``location`` is the caller's, not this method's.
        self.logger.log(level, message, extra=extra, exc_info=exc_info, stacklevel=2)

    def emit(
        self,
        metrics: Sequence[Metric],
        dimensions: Mapping[str, str],
        *,
        more_dimensions: Sequence[Mapping[str, str]] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Print one EMF record (JSON mode only): ``metrics`` under the dimension set
        ``service`` + ``dimensions`` (and each of ``more_dimensions`` with ``service``).

        Dimension values must be few (a route template, a status, a kind), never ids:
        each combination is a CloudWatch metric. ``metadata`` (ids) is searchable in
        the log line but is not a dimension.
        """
        if not self.json or not metrics:
            return
        from aws_lambda_powertools.metrics import EphemeralMetrics

        record = EphemeralMetrics(namespace=self.namespace, service=SERVICE)
        for name, value in dimensions.items():
            record.add_dimension(name=name, value=value)
        for extra in more_dimensions:
            record.add_dimensions(service=SERVICE, **extra)
        for key, value in (metadata or {}).items():
            if value is not None:
                record.add_metadata(key=key, value=value)
        for metric in metrics:
            record.add_metric(name=metric.name, unit=metric.unit, value=metric.value)
        stream = process_stream("stdout")
        stream.write(json.dumps(record.serialize_metric_set(), separators=(",", ":")) + "\n")
        stream.flush()

    @contextlib.contextmanager
    def traced(self, name: str, annotations: Mapping[str, Any]) -> Iterator[Any]:
        """A subsegment ``name`` with ``annotations`` when tracing is on; else nothing."""
        if self.tracing is None:
            yield None
            return
        with self.tracing.subsegment(name) as subsegment:
            for key, value in annotations.items():
                if value is not None and subsegment is not None:
                    subsegment.put_annotation(key, value)
            yield subsegment

    def _powertools_tracing(self) -> Tracing | None:
        try:
            return PowertoolsTracing()
        except ImportError as missing:
            # The X-Ray SDK is not in the package (docs: add Powertools' Lambda layer).
            self.log(
                "tracing is on but the X-Ray SDK is missing; tracing stays off",
                {"missing": missing.name},
                level=logging.WARNING,
            )
            return None


@functools.cache
def _json_logger() -> logging.Logger:
    """Powertools' Logger for the process (configured once per service name), whose
    handler also writes the services' ``chalicelib.*`` records as JSON lines."""
    from aws_lambda_powertools import Logger

    handler = _ProcessStream("stdout")
    powertools = Logger(
        service=SERVICE,
        logger_handler=handler,
        logger_formatter=_redacting_formatter(
            utc=True, use_rfc3339=True, serialize_stacktrace=False
        ),
    )
    logger: logging.Logger = logging.getLogger(powertools.service)
    # Chalice's app logger has the same name ("pinework") and a plain-text handler of
    # its own: its records (app.log) become JSON lines too, and no line is written twice.
    logger.handlers = [powertools.registered_handler]
    logger.propagate = False
    return logger


@functools.cache
def _text_logger() -> logging.Logger:
    """A plain logger for the local server's console (stderr, one line per event)."""
    handler = _ProcessStream("stderr")
    handler.setFormatter(_TextFormatter())
    logger = logging.getLogger("pinework-local")
    logger.handlers = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger


def _route_package_logs(logger: logging.Logger) -> None:
    """The services' ``chalicelib.*`` records through ``logger``'s handlers."""
    package = logging.getLogger("chalicelib")
    if package.handlers != logger.handlers:
        package.handlers = list(logger.handlers)
        package.setLevel(logger.level or logging.INFO)
        package.propagate = False


_built: dict[tuple[str, bool, str], Telemetry] = {}
_installed: dict[str, Telemetry] = {}


def telemetry(settings: Settings) -> Telemetry:
    """The process's telemetry for ``settings`` (built once), or the installed one."""
    installed = _installed.get("telemetry")
    if installed is not None:
        _route_package_logs(installed.logger)
        return installed
    key = (settings.log_format, settings.tracing, settings.metrics_namespace)
    found = _built.get(key)
    if found is None:
        found = _built[key] = Telemetry(settings)
    _route_package_logs(found.logger)
    return found


def install(chosen: Telemetry | None) -> None:
    """Use ``chosen`` for every event from now on (tests); ``None`` goes back to
    building from the settings."""
    _installed.pop("telemetry", None)
    if chosen is not None:
        _installed["telemetry"] = chosen
