"""What a person asks of the data lifecycle through the API and the dashboard
(docs/reference.md#erasing-an-agent-a-person-or-a-workspace,
docs/reference.md#exports-for-a-person, docs/issues.md#issue-24-item-2,
docs/issues.md#issue-24-item-8): erase an agent of their workspace, export an agent or
the workspace, and follow either.

Both may take longer than API Gateway waits (29 s), so the route only records the
request and puts a job on the lifecycle queue; the lifecycle worker runs it
(``chalicelib/jobs/lifecycle.py``; never behind the nightly reviews:
docs/reference.md#the-lifecycle-queue) with the operator's own code
(``OwnerErasure``; an export is the readable document of ``readable.py``, not the
operator's JSON Lines), and the person reads its progress. A second
request for the same agent's erasure answers the same erasure (its record is keyed by
the agent); an export is a new one each time (use ``Idempotency-Key`` to make a retry
safe).
"""

from __future__ import annotations

import json
import re
import secrets as token_source
import tempfile
from collections.abc import Callable
from datetime import timedelta
from typing import IO, Any, Protocol

from chalicelib.errors import Conflict, NotFound, PineworkError
from chalicelib.ids import AGENT_ID, ULID_PATTERN, Clock, IdFactory, to_rfc3339
from chalicelib.limits import EXPORT_SLOT_HOLD, EXPORTS_PER_WORKSPACE_PER_DAY
from chalicelib.models.lifecycle import EXPORT_ID_PATTERN, LifecycleJob
from chalicelib.models.principal import Principal
from chalicelib.services.access.who import refuse_agents, resolve_agent
from chalicelib.services.lifecycle.erasure import ErasureReport, OwnerErasure
from chalicelib.services.lifecycle.ownership import TargetKind
from chalicelib.services.lifecycle.transfer import TransferReport
from chalicelib.services.memory.erase import check_erase_reason
from chalicelib.services.text import SecretFinder
from chalicelib.storage.keys import EXPORT_KEPT_DAYS, export_object
from chalicelib.storage.protocols import DirectoryRepository, ReviewQueue

ERASURE_IS_FOR_PERSONS = (
    "Only a person erases an agent: ask a person of your workspace (dashboard, or "
    "POST /api/v1/agents/{id}/erase with a person's token)."
)
EXPORT_IS_FOR_PERSONS = (
    "Only a person exports: ask a person of your workspace (dashboard, or POST "
    "/api/v1/exports with a person's token)."
)
_EXPORT_ID = re.compile(EXPORT_ID_PATTERN)
_TARGET_ID = re.compile(rf"(?:wsp|agt|usr)_{ULID_PATTERN}")
ERASURE_TOKEN = r"LIST#\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z#(?:mem|agt|usr)_" + ULID_PATTERN
"""Where a list of erasures continues (an entry's sort key, ``keys.erasure_list_key``):
the API's ``nextToken`` and the dashboard's ``after`` carry it encoded."""
EXPORT_KEPT = timedelta(days=EXPORT_KEPT_DAYS)
"""How long an export's file and record are kept (the bucket's ``Exports`` rule)."""
EXPORT_LINK_SECONDS = 15 * 60
"""How long a download link works; reading the export again gives a new one."""
EXPORT_LEASE = timedelta(minutes=16)
"""A running export whose worker stopped longer ago than this (the worker's 15-minute
Lambda limit) may be taken by a retry."""


class ErasureRecords(Protocol):
    """Erasure records as a person's requests use them (``storage/owner_store.py``)."""

    def record(self, target_id: str) -> dict[str, Any] | None:
        """The erasure's record, or None."""
        ...

    def queue_record(self, target_id: str, record: dict[str, Any]) -> dict[str, Any] | None:
        """Write a queued erasure's record unless one exists (then return that one)."""
        ...

    def erasures(
        self, workspace_id: str, limit: int, after: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of the workspace's erasures' records, newest first, and where the next
        page starts (``storage/erasure_list.py``)."""
        ...


class Exporter(Protocol):
    """Writes an export's document (``readable.ReadableExport``)."""

    def export(
        self, kind: TargetKind, target_id: str, write: Callable[[str], object]
    ) -> TransferReport:
        """Write the target's document in text chunks; entries by group."""
        ...


class ExportStore(Protocol):
    """Export records and files (``storage/exports.py``)."""

    def create(
        self, record: dict[str, Any], *, per_day: int, held_until: Any
    ) -> dict[str, Any] | None:
        """Put a new record and take the workspace's export slot; the record of the
        export that holds it instead (raises ``RateLimited`` past ``per_day``)."""
        ...

    def release(self, workspace_id: str, export_id: str) -> None:
        """Free the workspace's export slot if the export holds it."""
        ...

    def get(self, export_id: str) -> dict[str, Any] | None:
        """A record not yet expired, or None."""
        ...

    def claim(self, export_id: str, claim_id: str, now: Any, stale_before: Any) -> None:
        """Take the export for one attempt (raises the store's ``ExportTaken``)."""
        ...

    def settle(self, export_id: str, claim_id: str, changes: dict[str, Any]) -> None:
        """Write an attempt's outcome while the claim holds."""
        ...

    def upload(self, key: str, body: IO[bytes]) -> None:
        """Write the file."""
        ...

    def file_exists(self, key: str) -> bool:
        """Whether the file is there."""
        ...

    def erasure_epoch(self, workspace_id: str) -> str:
        """The workspace's erasure epoch ("" when none)."""
        ...

    def discard(self, key: str) -> int:
        """Delete every version of a file."""
        ...

    def link(self, key: str, seconds: int) -> str:
        """A presigned GET of the file."""
        ...


class PersonLifecycle:
    """A person's erasures and exports: request, follow, and (the worker) run them.

    Args:
        erasure: the operator's erasure, run for a queued request.
        records: erasure records.
        exporter: writes a person's export (the readable document).
        exports: export records and files.
        directory: to check the named agent.
        queue: the lifecycle queue the lifecycle worker reads.
        secrets: checks an erasure's reason.
        clock, ids: the time and new ids.
        taken: the store's "someone else holds this export" exception.
    """

    def __init__(
        self,
        erasure: OwnerErasure,
        records: ErasureRecords,
        exporter: Exporter,
        exports: ExportStore,
        directory: DirectoryRepository,
        queue: ReviewQueue,
        secrets: SecretFinder,
        clock: Clock,
        ids: IdFactory,
        *,
        taken: type[Exception],
    ) -> None:
        self._erasure = erasure
        self._records = records
        self._exporter = exporter
        self._exports = exports
        self._directory = directory
        self._queue = queue
        self._secrets = secrets
        self._clock = clock
        self._ids = ids
        self._taken = taken

    def erase_agent(
        self, principal: Principal, agent_id: str, reason: str
    ) -> tuple[dict[str, Any], bool]:
        """Queue the erasure of an agent of the person's workspace (or answer the one
        there is).

        Returns:
            The erasure's wire object, and whether it is finished (200) or not (202).

        Raises:
            Forbidden: an agent called, or the agent is not of the person's workspace.
            InvalidRequest: a blank reason or one over 500 characters.
            SecretInMemory: the reason looks like a credential.
        """
        refuse_agents(principal, ERASURE_IS_FOR_PERSONS)
        check_erase_reason(reason, self._secrets)
        existing = self._records.record(agent_id) if AGENT_ID.match(agent_id) else None
        if existing is None or existing.get("workspaceId") != principal.workspace_id:
            resolve_agent(self._directory, principal, agent_id)
            record = {
                "kind": "agent",
                "targetId": agent_id,
                "workspaceId": principal.workspace_id,
                "by": principal.id,
                "reason": reason,
                "requestedAt": to_rfc3339(self._clock.now()),
                "status": "queued",
                "progress": {"phase": "collect"},
            }
            existing = self._records.queue_record(agent_id, record) or record
        if existing.get("status") == "queued":  # new, or a retry of a request whose send failed
            self._send("erase", agent_id)
        return erasure_wire(existing), existing.get("status") == "done"

    def erasure(self, principal: Principal, target_id: str) -> dict[str, Any]:
        """An erasure of the person's workspace (an agent's, a person's, or the workspace's
        own), running or done.

        Raises:
            Forbidden: an agent called.
            NotFound: no erasure of that id in the person's workspace.
        """
        refuse_agents(principal, ERASURE_IS_FOR_PERSONS)
        record = self._records.record(target_id) if _is_id(target_id) else None
        if record is None or record.get("workspaceId") != principal.workspace_id:
            raise NotFound(f"No erasure of {target_id!r} in your workspace.")
        return erasure_wire(record)

    def erasures(
        self, principal: Principal, limit: int, after: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """The workspace's past erasures (of memories, agents and persons), newest first
        (docs/reference.md#past-erasures): each as ``GET /erasures/{id}`` answers it, read
        by key from the workspace's own listing, never another workspace's.

        Args:
            limit: erasures at most (1-500).
            after: where the page starts (``ERASURE_TOKEN``, decoded), or None.

        Returns:
            The erasures and where the next page starts (None on the last page).

        Raises:
            Forbidden: an agent called.
        """
        refuse_agents(principal, ERASURE_IS_FOR_PERSONS)
        records, more = self._records.erasures(principal.workspace_id, limit, after)
        return [erasure_wire(record) for record in records], more

    def run_erasure(self, target_id: str) -> ErasureReport | None:
        """The worker: run (or resume) a queued erasure; None when there is none to run."""
        record = self._records.record(target_id)
        if record is None or record.get("status") == "done":
            return None
        return self._erasure.erase(record["kind"], target_id, by=str(record["by"]))

    def start_export(
        self, principal: Principal, agent_id: str | None
    ) -> tuple[dict[str, Any], bool]:
        """Queue an export of one agent of the person's workspace, or of the workspace
        (docs/reference.md#exports-for-a-person): one export per workspace is queued or
        running at a time, and ``EXPORTS_PER_WORKSPACE_PER_DAY`` are requested a UTC day.

        Returns:
            The export, and whether it is new (202); a request while another export of
            the workspace is queued or running answers that one (200, nothing queued).

        Raises:
            Forbidden: an agent called, or the agent is not of the person's workspace.
            RateLimited: the workspace requested its exports of the day (429).
        """
        refuse_agents(principal, EXPORT_IS_FOR_PERSONS)
        if agent_id is not None:
            resolve_agent(self._directory, principal, agent_id)
        export_id = self._ids.new("exp")
        now = self._clock.now()
        record = {
            "id": export_id,
            "kind": "workspace" if agent_id is None else "agent",
            "targetId": agent_id or principal.workspace_id,
            "workspaceId": principal.workspace_id,
            "status": "queued",
            "requestedBy": principal.id,
            "requestedAt": to_rfc3339(now),
            "expiresAt": to_rfc3339(now + EXPORT_KEPT),
            "objectKey": export_object(principal.workspace_id, export_id),
        }
        holder = self._exports.create(
            record, per_day=EXPORTS_PER_WORKSPACE_PER_DAY, held_until=now + EXPORT_SLOT_HOLD
        )
        if holder is not None:
            return self._export_wire(holder), False
        self._send("export", export_id)
        return self._export_wire(record), True

    def export(self, principal: Principal, export_id: str) -> dict[str, Any]:
        """An export of the person's workspace; a done one carries a fresh download link.

        Raises:
            Forbidden: an agent called.
            NotFound: no such export in the person's workspace (or past its 7 days).
        """
        refuse_agents(principal, EXPORT_IS_FOR_PERSONS)
        found = self._exports.get(export_id) if _EXPORT_ID.match(export_id) else None
        if found is None or found.get("workspaceId") != principal.workspace_id:
            raise NotFound(f"No export {export_id!r} in your workspace.")
        return self._export_wire(found)

    def run_export(self, export_id: str) -> dict[str, Any] | None:
        """The worker: write the export's file; None when it is done or another worker
        holds it. Before it is ``done`` the workspace's erasure epoch is read again: an
        erasure that ran meanwhile deletes the file (``_check_not_erased``), so a ``done``
        export never holds erased data (docs/issues.md#issue-42-item-1).

        Raises:
            Conflict: an erasure overlapped; the file was deleted (recorded as ``failed``;
                the queue runs it again).
            PineworkError, OSError, …: the attempt failed (recorded as ``failed``; the
                queue retries it).
        """
        claim = token_source.token_hex(8)
        now = self._clock.now()
        try:
            self._exports.claim(export_id, claim, now, now - EXPORT_LEASE)
        except self._taken:
            return None
        record = self._exports.get(export_id)
        if record is None:
            return None
        workspace_id = str(record["workspaceId"])
        epoch = self._exports.erasure_epoch(workspace_id)
        try:
            with tempfile.TemporaryFile() as file:
                report = self._exporter.export(
                    record["kind"], str(record["targetId"]), lambda text: file.write(text.encode())
                )
                size = file.tell()
                file.seek(0)
                self._exports.upload(str(record["objectKey"]), file)
            self._check_not_erased(export_id, record, epoch)
        except Exception as error:
            code = error.code if isinstance(error, PineworkError) else "internal_error"
            if self._exports.get(export_id) is not None:
                self._exports.settle(export_id, claim, {"status": "failed", "error": code})
            raise
        done = {
            "status": "done",
            "finishedAt": to_rfc3339(self._clock.now()),
            "items": sum(report.items.values()),
            "objects": report.objects,
            "bytes": size,
        }
        self._exports.settle(export_id, claim, done)
        self._exports.release(str(record["workspaceId"]), export_id)
        return {**record, **done}

    def _check_not_erased(self, export_id: str, record: dict[str, Any], epoch: str) -> None:
        """Before an export is published: when an erasure touched its workspace while it
        ran (the erasure epoch changed, or the record went with the workspace), its file
        may hold erased data: every version of it is deleted.

        Raises:
            Conflict: the file was discarded (the queue runs the export again, or, the
                workspace being erased, finds nothing to run).
        """
        workspace_id = str(record["workspaceId"])
        if (
            self._exports.erasure_epoch(workspace_id) == epoch
            and self._exports.get(export_id) is not None
        ):
            return
        self._exports.discard(str(record["objectKey"]))
        raise Conflict(
            "An erasure in the workspace ran while the export was written: its file was "
            "deleted and the export runs again."
        )

    def _send(self, job: str, target: str) -> None:
        self._queue.send([LifecycleJob(job=job, id=target).model_dump_json()])  # type: ignore[arg-type]

    def _export_wire(self, record: dict[str, Any]) -> dict[str, Any]:
        status = str(record["status"])
        url = url_expires = None
        if status == "done":
            key = str(record["objectKey"])
            if self._exports.file_exists(key):
                url = self._exports.link(key, EXPORT_LINK_SECONDS)
                url_expires = to_rfc3339(self._clock.now() + timedelta(seconds=EXPORT_LINK_SECONDS))
            else:
                status = "expired"
        return {
            "id": record["id"],
            "object": "export",
            "kind": record["kind"],
            "targetId": record["targetId"],
            "status": status,
            "requestedBy": record["requestedBy"],
            "requestedAt": record["requestedAt"],
            "finishedAt": record.get("finishedAt"),
            "expiresAt": record["expiresAt"],
            "items": int(record.get("items", 0)),
            "objects": int(record.get("objects", 0)),
            "bytes": int(record.get("bytes", 0)),
            "url": url,
            "urlExpiresAt": url_expires,
            "error": record.get("error"),
        }


def erasure_wire(record: dict[str, Any]) -> dict[str, Any]:
    """An erasure's record as the API shows it (``ErasureObject``)."""
    progress = record.get("progress") or {}
    if isinstance(progress, str):
        progress = json.loads(progress)
    items = {str(kind): int(count) for kind, count in sorted(progress.get("items", {}).items())}
    return {
        "id": record["targetId"],
        "object": "erasure",
        "kind": record["kind"],
        "workspaceId": record.get("workspaceId", ""),
        "status": record.get("status", "running"),
        "phase": progress.get("phase", "collect"),
        "requestedBy": record["by"],
        "reason": record.get("reason"),
        "requestedAt": record.get("requestedAt") or record.get("startedAt"),
        "startedAt": record.get("startedAt"),
        "finishedAt": record.get("finishedAt"),
        "items": items,
        "itemCount": sum(items.values()),
        "objectVersions": int(progress.get("objectVersions", 0)),
    }


def _is_id(value: str) -> bool:
    return _TARGET_ID.fullmatch(value) is not None
