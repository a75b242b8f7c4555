"""The running local server's record of its endpoints (docs/operators.md#the-local-servers-record).

``make serve`` holds an exclusive lock on ``<data folder>/server.lock`` for its life
(one server per data folder) and writes into that file, once it serves, where it can be
reached: the API's URL, the embedded DynamoDB's endpoint and the table's name. The admin
commands read it, so that a server moved with ``PINEWORK_PORT`` or
``PINEWORK_DYNAMODB_PORT`` is found without setting anything, and a record left by a
server that has stopped (the lock is free) is never used.

Standard library only: the client package reads it without the ``admin`` extra.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

RECORD_FILE = "server.lock"
"""The file in the data folder that the server locks and writes its record into."""

RECORD_KIND = "pinework-local-server"
"""The record's ``kind``: a file that does not carry it is not a record of ours."""

DEFAULT_DATA_DIR = ".pinework-local"
"""The data folder ``make serve`` uses when ``PINEWORK_DATA_DIR`` is unset (relative to
the folder the command runs in: the checkout)."""


@dataclass(frozen=True)
class LocalServerRecord:
    """Where a running local server answers.

    Attributes:
        api_url: the API's base URL, e.g. ``http://127.0.0.1:8000``.
        dynamodb_endpoint: the embedded DynamoDB's (and S3's) endpoint URL.
        table_name: the table the server serves.
        pid: the server's process id.
    """

    api_url: str
    dynamodb_endpoint: str
    table_name: str
    pid: int

    def to_json(self) -> str:
        """The record as the file holds it: one JSON object with ``kind``."""
        return json.dumps(
            {
                "kind": RECORD_KIND,
                "apiUrl": self.api_url,
                "dynamodbEndpoint": self.dynamodb_endpoint,
                "tableName": self.table_name,
                "pid": self.pid,
            }
        )


def data_dir(environ: dict[str, str] | None = None) -> Path:
    """The local server's data folder: ``PINEWORK_DATA_DIR``, else ``.pinework-local``."""
    env = os.environ if environ is None else environ
    return Path(env.get("PINEWORK_DATA_DIR") or DEFAULT_DATA_DIR)


def write_record(handle: IO[str], record: LocalServerRecord) -> None:
    """Write ``record`` into the server's open, locked ``server.lock`` handle (replacing
    what it held) and flush it to the file."""
    handle.seek(0)
    handle.truncate()
    handle.write(record.to_json() + "\n")
    handle.flush()


def read_running_record(folder: Path) -> LocalServerRecord | None:
    """The record of the server running on ``folder``, or ``None``.

    ``None`` when the file is missing, holds no record of ours (an older server left it
    empty), or nobody holds its lock (the server that wrote it has stopped: its ports may
    belong to another process now).
    """
    path = folder / RECORD_FILE
    try:
        handle = path.open("r", encoding="utf-8")
    except OSError:
        return None
    with handle:
        if not _locked_by_another(handle):
            return None
        return _parse(handle.read())


def _locked_by_another(handle: IO[str]) -> bool:
    """Whether another process holds an exclusive lock on the file (the server does)."""
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def _parse(text: str) -> LocalServerRecord | None:
    """A record from the file's text; ``None`` for anything else."""
    try:
        value: Any = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("kind") != RECORD_KIND:
        return None
    fields = (value.get("apiUrl"), value.get("dynamodbEndpoint"), value.get("tableName"))
    if not all(isinstance(field, str) and field for field in fields):
        return None
    pid = value.get("pid")
    return LocalServerRecord(
        api_url=value["apiUrl"],
        dynamodb_endpoint=value["dynamodbEndpoint"],
        table_name=value["tableName"],
        pid=pid if isinstance(pid, int) else 0,
    )
