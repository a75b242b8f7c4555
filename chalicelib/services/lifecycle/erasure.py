"""Erasing an agent, a person or a workspace with everything that belongs to it
(docs/reference.md#erasing-an-agent-a-person-or-a-workspace, docs/issues.md#issue-24-item-2,
docs/issues.md#issue-41-item-1).

What belongs, and how it is read by key (never a Scan of the table), is
``ownership.py``'s rule. Objects: the prefixes of the target (review reports, recall
index volumes, cached exports) and each key-value entry's values, every version.

Phases, saved in the erasure's record after each page so a rerun resumes: ``collect``
(the ids, remembered as they are found), ``delete`` (items, and a key-value entry's
objects with it; a rerun reads the target's remaining items again), ``objects`` (the
prefixes), then ``done``: the record stays as the tombstone (who, what, when, counts).
A dry run reads once and counts. The workspace's erasure epoch changes when the collect
phase starts and again before the objects phase deletes the cached exports (for the
workspace's own erasure: it is deleted), so an export that overlaps the erasure either
sees the change and discards its file or uploaded before that purge
(docs/reference.md#exports-for-a-person, docs/issues.md#issue-42-item-1).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from chalicelib.errors import InvalidRequest, NotFound
from chalicelib.ids import Clock, to_rfc3339
from chalicelib.models.principal import Agent, Person, Workspace
from chalicelib.services.lifecycle.learning_sources import ErasedSources
from chalicelib.services.lifecycle.ownership import (
    ID_PATTERN,
    TargetKind,
    belongs,
    item_kind,
    owned_items,
    revealed,
)
from chalicelib.storage.owner_store import ObjectVersion
from chalicelib.storage.protocols import DirectoryRepository

__all__ = [
    "ErasureProgress",
    "ErasureReport",
    "OwnerErasure",
    "OwnerStore",
    "TargetKind",
    "belongs",
    "item_kind",
    "revealed",
    "value_prefixes",
]

_PREFIX_OF_KIND = {"agent": "agt_", "person": "usr_", "workspace": "wsp_"}


class OwnerStore(Protocol):
    """The table and bucket as an erasure reads them (``storage/owner_store.py``)."""

    def owned_pages(self, owner_id: str) -> Iterable[list[dict[str, Any]]]:
        """Every item keyed by ``owner_id``, page by page (read by key)."""
        ...

    def delete_items(self, keys: Iterable[dict[str, str]]) -> int:
        """Delete items by key."""
        ...

    def object_versions(self, prefix: str) -> list[ObjectVersion]:
        """Every version and delete marker under ``prefix``."""
        ...

    def delete_versions(self, versions: Iterable[ObjectVersion]) -> int:
        """Delete object versions."""
        ...

    def record(self, target_id: str) -> dict[str, Any] | None:
        """The erasure's record, or None."""
        ...

    def save_record(self, target_id: str, record: dict[str, Any]) -> None:
        """Write the erasure's record."""
        ...

    def queue_record(self, target_id: str, record: dict[str, Any]) -> dict[str, Any] | None:
        """Write a queued erasure's record unless one exists (then return that one)."""
        ...

    def add_ids(self, target_id: str, ids: Iterable[str]) -> None:
        """Remember collected ids."""
        ...

    def collected_ids(self, target_id: str) -> set[str]:
        """The remembered ids."""
        ...

    def forget_ids(self, target_id: str) -> None:
        """Delete the remembered ids."""
        ...

    def bump_erasure_epoch(self, workspace_id: str) -> None:
        """Change the workspace's erasure epoch (exports running meanwhile discard)."""
        ...

    def drop_erasure_epoch(self, workspace_id: str) -> None:
        """Delete the workspace's erasure epoch (the workspace's own erasure ends)."""
        ...

    def drop_erasure_list(self, workspace_id: str) -> int:
        """Delete the workspace's listing of its past erasures (its own erasure ends)."""
        ...

    def recount_live_learnings(self, workspace_id: str) -> int | None:
        """Recompute the workspace's count of live learnings from its learnings."""
        ...


@dataclass(frozen=True)
class ErasureProgress:
    """One step of an erasure, for a progress line: the phase, items read so far in it,
    items deleted (or, in a dry run, found) so far."""

    phase: str
    scanned: int
    matched: int


@dataclass
class ErasureReport:
    """What an erasure did (or, dry, would do).

    Attributes:
        kind, target_id: what was erased.
        dry_run: nothing was changed.
        already_erased: an earlier run had finished; nothing was done now.
        items: items deleted (or found) by kind (the partition's prefix; ``AUDIT`` for
            audit records).
        object_versions: S3 object versions deleted (or found), ``object_bytes`` their size.
        erased_by, finished_at: from the tombstone.
    """

    kind: str
    target_id: str
    dry_run: bool
    already_erased: bool = False
    items: dict[str, int] = field(default_factory=dict)
    object_versions: int = 0
    object_bytes: int = 0
    erased_by: str | None = None
    finished_at: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """The JSON answer of ``pinework admin erase-…``."""
        return {
            "kind": self.kind,
            "targetId": self.target_id,
            "dryRun": self.dry_run,
            "alreadyErased": self.already_erased,
            "items": dict(sorted(self.items.items())),
            "itemCount": sum(self.items.values()),
            "objectVersions": self.object_versions,
            "objectBytes": self.object_bytes,
            "erasedBy": self.erased_by,
            "finishedAt": self.finished_at,
        }


def value_prefixes(item: dict[str, Any]) -> list[str]:
    """The S3 prefixes of a key-value entry's values (every value it ever had:
    ``kv/<anon|keep>/<sha256 of scope and key>/``, storage/kv.py)."""
    pk, sk = str(item["pk"]), str(item.get("sk", ""))
    if not (pk.startswith("KV#") and sk.startswith("KEY#")):
        return []
    digest = hashlib.sha256(f"{pk[3:]}\n{sk[4:]}".encode()).hexdigest()
    return [f"kv/keep/{digest}/", f"kv/anon/{digest}/"]


class OwnerErasure:
    """Erase an agent, a person or a workspace (operator; docs/operations.md#erasure-requests).

    Args:
        scan: the table and bucket.
        directory: to find the target and revoke its tokens first.
        clock: the current time.
        sources: the learnings the review proposed from an erased agent's facts.
    """

    def __init__(
        self,
        scan: OwnerStore,
        directory: DirectoryRepository,
        clock: Clock,
        sources: ErasedSources,
    ) -> None:
        self._scan = scan
        self._directory = directory
        self._clock = clock
        self._sources = sources

    def erase(
        self,
        kind: TargetKind,
        target_id: str,
        *,
        by: str,
        dry_run: bool = False,
        progress: Callable[[ErasureProgress], None] | None = None,
    ) -> ErasureReport:
        """Erase (or with ``dry_run`` count) everything of the target.

        Args:
            by: who asked, kept in the tombstone (an operator's name or a ``usr_…``).
            progress: called after each page.

        Returns:
            The report; ``already_erased`` when a finished erasure of the target exists.

        Raises:
            InvalidRequest: ``target_id`` is not an id of ``kind``.
            NotFound: no such target and no erasure of it.
        """
        if not target_id.startswith(_PREFIX_OF_KIND[kind]) or not ID_PATTERN.fullmatch(target_id):
            raise InvalidRequest(f"{target_id!r} is not an id of a {kind}.")
        record = self._scan.record(target_id)
        if record is not None and record.get("status") == "done":
            return self._finished(kind, target_id, record, dry_run)
        ids, workspace_id = self._target_ids(kind, target_id, record)
        now = to_rfc3339(self._clock.now())
        started = (
            {**record, "status": "running", "startedAt": record.get("startedAt") or now}
            if record is not None
            else {
                "kind": kind,
                "targetId": target_id,
                "workspaceId": workspace_id,
                "by": by,
                "startedAt": now,
                "status": "running",
                "progress": {"phase": "collect"},
            }
        )
        if dry_run:
            return self._dry_run(kind, target_id, workspace_id, ids, progress)
        return self._run(kind, target_id, workspace_id, ids, started, progress)

    def _target_ids(
        self, kind: TargetKind, target_id: str, record: dict[str, Any] | None
    ) -> tuple[set[str], str]:
        """The target's own ids and its workspace; NotFound when it does not exist and
        no erasure of it started (a started one resumes from its record)."""
        ids = {target_id}
        found: Workspace | Agent | Person | None
        if kind == "workspace":
            found = self._directory.get_workspace(target_id)
            ids.update(agent.id for agent in self._directory.list_agents(target_id))
        elif kind == "agent":
            found = self._directory.get_agent(target_id)
        else:
            found = self._directory.get_person(target_id)
        if found is None and record is None:
            raise NotFound(f"No {kind} {target_id!r}.")
        if record is not None:
            return ids, str(record.get("workspaceId", ""))
        assert found is not None
        return ids, found.id if isinstance(found, Workspace) else found.workspace_id

    def _dry_run(
        self,
        kind: TargetKind,
        target_id: str,
        workspace_id: str,
        ids: set[str],
        progress: Callable[[ErasureProgress], None] | None,
    ) -> ErasureReport:
        report = ErasureReport(kind, target_id, dry_run=True)
        counts: Counter[str] = Counter()
        prefixes: set[str] = set()
        collected: set[str] = set()
        read = 0
        for page, _ in owned_items(self._scan, kind, ids, collected, workspace_id):
            read += len(page)
            for item in page:
                counts[item_kind(item)] += 1
                prefixes.update(value_prefixes(item))
            _report(progress, ErasureProgress("count", read, sum(counts.values())))
        report.items = dict(counts)
        versions = [
            version
            for prefix in sorted(
                prefixes | self._prefixes(kind, target_id, workspace_id, ids | collected)
            )
            for version in self._scan.object_versions(prefix)
        ]
        report.object_versions = len(versions)
        report.object_bytes = sum(version.size for version in versions)
        return report

    def _run(
        self,
        kind: TargetKind,
        target_id: str,
        workspace_id: str,
        ids: set[str],
        record: dict[str, Any],
        progress: Callable[[ErasureProgress], None] | None,
    ) -> ErasureReport:
        state: dict[str, Any] = dict(record["progress"])
        tally = _Tally(
            Counter(state.get("items", {})),
            int(state.get("objectVersions", 0)),
            int(state.get("objectBytes", 0)),
        )

        def save(**changes: Any) -> None:
            state.update(changes, **tally.to_state())
            self._scan.save_record(target_id, {**record, "progress": state})

        if state["phase"] == "collect":
            if workspace_id:
                self._scan.bump_erasure_epoch(workspace_id)
            collected = self._collect(kind, ids, workspace_id, target_id, progress)
            tally.items.update(self._revoke(ids | collected))
            save(phase="delete", lastKey=None)
        collected = self._scan.collected_ids(target_id)
        if state["phase"] == "delete":
            read = 0
            for page, _ in owned_items(self._scan, kind, ids, collected, workspace_id):
                read += len(page)
                self._delete_page(page, tally)
                save(phase="delete")
                _report(progress, ErasureProgress("delete", read, sum(tally.items.values())))
            save(phase="objects")
        if state["phase"] == "objects":
            self._before_objects(kind, target_id, workspace_id, collected)
            for prefix in sorted(self._prefixes(kind, target_id, workspace_id, ids | collected)):
                tally.add_versions(self._scan, self._scan.object_versions(prefix))
            save(phase="done")
        self._scan.forget_ids(target_id)
        finished = to_rfc3339(self._clock.now())
        record = {**record, "status": "done", "finishedAt": finished}
        self._scan.save_record(target_id, {**record, "progress": state})
        return ErasureReport(
            kind,
            target_id,
            dry_run=False,
            items=dict(tally.items),
            object_versions=tally.versions,
            object_bytes=tally.bytes,
            erased_by=str(record["by"]),
            finished_at=finished,
        )

    def _before_objects(
        self, kind: TargetKind, target_id: str, workspace_id: str, collected: set[str]
    ) -> None:
        """Between the items and the objects: for an agent, blank and retire (or prune)
        the learnings the review proposed from its facts (``learning_sources.py``), then
        recount the workspace's live learnings (its own went with it: recomputed, never
        decremented by a guess); then change the erasure epoch, before the cached
        exports go (an export that read before sees the change after; the workspace's
        own erasure deletes the epoch and its listing of past erasures)."""
        if not workspace_id:
            return
        if kind == "agent":
            facts = {found for found in collected if found.startswith("mem_")}
            self._sources.after_erasure(workspace_id, memory_ids=facts, agent_id=target_id)
            self._scan.recount_live_learnings(workspace_id)
        if kind == "workspace":
            self._scan.drop_erasure_epoch(workspace_id)
            self._scan.drop_erasure_list(workspace_id)
        else:
            self._scan.bump_erasure_epoch(workspace_id)

    def _delete_page(self, doomed: list[dict[str, Any]], tally: _Tally) -> None:
        """Delete the items of one page that belong, a key-value entry's values first."""
        for item in doomed:
            for prefix in value_prefixes(item):
                tally.add_versions(self._scan, self._scan.object_versions(prefix))
            tally.items[item_kind(item)] += 1
        self._scan.delete_items({"pk": item["pk"], "sk": item["sk"]} for item in doomed)

    def _collect(
        self,
        kind: TargetKind,
        ids: set[str],
        workspace_id: str,
        target_id: str,
        progress: Callable[[ErasureProgress], None] | None,
    ) -> set[str]:
        """Read the target's items once (by key) for the ids they reveal, remembering
        each page's in the erasure's record before reading on (a rerun starts from
        them)."""
        collected = self._scan.collected_ids(target_id)
        read = 0
        for page, found in owned_items(self._scan, kind, ids, collected, workspace_id):
            read += len(page)
            if found:
                self._scan.add_ids(target_id, found)
            _report(progress, ErasureProgress("collect", read, len(collected)))
        return collected

    def _revoke(self, ids: set[str]) -> list[str]:
        """End the principals' tokens and dashboard sessions before their data goes, so
        nothing new is written for them meanwhile. Returns the kinds of the items
        deleted (a token is two: ``TOKEN`` and ``TOKENID``)."""
        deleted: list[str] = []
        for principal_id in sorted(ids):
            if not principal_id.startswith(("agt_", "usr_")):
                continue
            for token in self._directory.list_tokens(principal_id):
                if token.record.id is not None and self._directory.revoke_token(token):
                    deleted += ["TOKEN", "TOKENID"]
            if principal_id.startswith("usr_"):
                self._directory.end_person_sessions(principal_id)
        return deleted

    @staticmethod
    def _prefixes(kind: TargetKind, target_id: str, workspace_id: str, ids: set[str]) -> set[str]:
        """The bucket prefixes that are the target's (none for a person)."""
        if kind == "person":
            return set()
        agents = {found for found in ids if found.startswith("agt_")}
        prefixes = {f"recall-index/{agent}/" for agent in agents}
        if kind == "workspace":
            return prefixes | {
                f"reviews/{target_id}/",
                f"exports/{target_id}/",
                f"wiki-sections/{target_id}/",  # the packed sections of its pages
            }
        # the workspace's cached exports may hold the agent's data, as after a memory's erasure
        return prefixes | {f"reviews/{workspace_id}/{target_id}/", f"exports/{workspace_id}/"}

    @staticmethod
    def _finished(
        kind: TargetKind, target_id: str, record: dict[str, Any], dry_run: bool
    ) -> ErasureReport:
        state = record.get("progress", {})
        return ErasureReport(
            kind,
            target_id,
            dry_run=dry_run,
            already_erased=True,
            items=dict(state.get("items", {})),
            object_versions=int(state.get("objectVersions", 0)),
            object_bytes=int(state.get("objectBytes", 0)),
            erased_by=record.get("by"),
            finished_at=record.get("finishedAt"),
        )


@dataclass
class _Tally:
    """What a running erasure deleted so far (saved with its progress)."""

    items: Counter[str]
    versions: int
    bytes: int

    def add_versions(self, scan: OwnerStore, versions: list[ObjectVersion]) -> None:
        self.versions += scan.delete_versions(versions)
        self.bytes += sum(version.size for version in versions)

    def to_state(self) -> dict[str, Any]:
        return {
            "items": dict(self.items),
            "objectVersions": self.versions,
            "objectBytes": self.bytes,
        }


def _report(progress: Callable[[ErasureProgress], None] | None, step: ErasureProgress) -> None:
    if progress is not None:
        progress(step)
