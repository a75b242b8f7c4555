"""Erasing an agent, a person or a workspace with everything that belongs to it
(docs/reference.md#erasing-an-agent-a-person-or-a-workspace, docs/issues.md#issue-24-item-2).

Not every item's key can be derived from its owner (a session's id, a day's date, a
digest of a text, an idempotency key's hash), so the erasure reads the whole table
(a Scan, page by page) and keeps a rule that is complete by construction:

* an item belongs to an agent or a workspace when its key or any of its values names
  one of the target's ids (the workspace, its agents, the agent), or when its
  partition is one of the ids the erasure collected from items that belong (their
  memories, reviews, tokens, and a workspace's persons and agents);
* an item belongs to a person only in the partitions that are the person's own
  (person, tokens, token ids, dashboard sessions and sign-in codes, the e-mail claim,
  idempotency records): elsewhere — an audit record, a review decision — their id
  stays as the actor of what they did.

Objects: the prefixes of the target (review reports, recall index volumes, cached
exports) and each key-value entry's values, every version.

Phases, saved in the erasure's record after each page so a rerun resumes: ``collect``
(the ids), ``delete`` (items, and a key-value entry's objects with it), ``objects``
(the prefixes), then ``done``: the record stays as the tombstone (who, what, when,
counts). A dry run does the first two reads only and counts.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from chalicelib.errors import InvalidRequest, NotFound
from chalicelib.ids import Clock, to_rfc3339
from chalicelib.models.principal import Agent, Person, Workspace
from chalicelib.storage.owner_scan import ObjectVersion
from chalicelib.storage.protocols import DirectoryRepository

TargetKind = Literal["agent", "person", "workspace"]
_ID = re.compile(r"(?:wsp|agt|usr|mem|rvw|tok)_[0-9A-HJKMNP-TV-Z]{26}")
_PREFIX_OF_KIND = {"agent": "agt_", "person": "usr_", "workspace": "wsp_"}
KEPT_PARTITIONS = ("ERASURE#", "UPGRADE#")
"""Never erased: erasures' own records and the table's upgrade markers."""
PERSONAL_PARTITIONS = (
    "PERSON#",
    "TOKEN#",
    "TOKENID#",
    "WEBSESSION#",
    "SIGNIN#",
    "PERSONEMAIL#",
    "IDEMPOTENCY#",
)
"""The partitions whose items are a person's own (``belongs``)."""


class OwnerScan(Protocol):
    """The table and bucket as an erasure reads them (``storage/owner_scan.py``)."""

    def pages(
        self, start: dict[str, str] | None
    ) -> Iterable[tuple[list[dict[str, Any]], dict[str, str] | None]]:
        """Every item after ``start``, page by page, with each page's last key."""
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


def item_kind(item: dict[str, Any]) -> str:
    """The kind an item is counted under: its partition's prefix (``MEMORY``,
    ``RECALLINDEX`` …), ``AUDIT`` for an audit record."""
    pk, sk = str(item["pk"]), str(item.get("sk", ""))
    if pk.startswith("MEMORY#") and sk.startswith("AUDIT#"):
        return "AUDIT"
    return pk.split("#", 1)[0]


def _values_text(item: dict[str, Any]) -> str:
    return json.dumps(item, default=lambda value: "", ensure_ascii=False)


def belongs(item: dict[str, Any], kind: TargetKind, ids: set[str], collected: set[str]) -> bool:
    """Whether ``item`` is erased with the target (the module's rule).

    Args:
        ids: the target's own ids (the workspace and its agents; the agent; the person).
        collected: ids found in items that belong (their partitions go too).
    """
    pk = str(item["pk"])
    if pk.startswith(KEPT_PARTITIONS):
        return False
    if collected and not collected.isdisjoint(_ID.findall(pk)):
        return True
    if kind == "person" and not pk.startswith(PERSONAL_PARTITIONS):
        return False
    return not ids.isdisjoint(_ID.findall(_values_text(item)))


def revealed(item: dict[str, Any], kind: TargetKind) -> set[str]:
    """The ids an item that belongs reveals as the target's too: a memory's id, a
    review's, a token's; for a workspace, its persons and agents."""
    pk, sk = str(item["pk"]), str(item.get("sk", ""))
    found: set[str] = set()
    if pk.startswith("MEMORY#") and sk == "MEMORY":
        found.add(pk.removeprefix("MEMORY#"))
    if pk.startswith("REVIEWS#"):
        found.add(sk)
    if pk.startswith(("TOKEN#", "TOKENID#")) and item.get("tokenId"):
        found.add(str(item["tokenId"]))
    if kind == "workspace" and pk.startswith(("PERSON#", "AGENT#")):
        found.add(pk.split("#", 1)[1])
    if kind == "workspace" and pk.startswith("WORKSPACE#") and sk.startswith("AGENT#"):
        found.add(sk.removeprefix("AGENT#"))
    return {value for value in found if _ID.fullmatch(value)}


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
    """

    def __init__(self, scan: OwnerScan, directory: DirectoryRepository, clock: Clock) -> None:
        self._scan = scan
        self._directory = directory
        self._clock = clock

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
        if not target_id.startswith(_PREFIX_OF_KIND[kind]) or not _ID.fullmatch(target_id):
            raise InvalidRequest(f"{target_id!r} is not an id of a {kind}.")
        record = self._scan.record(target_id)
        if record is not None and record.get("status") == "done":
            return self._finished(kind, target_id, record, dry_run)
        ids, workspace_id = self._target_ids(kind, target_id, record)
        started = (
            {**record, "status": "running"}
            if record is not None
            else {
                "kind": kind,
                "targetId": target_id,
                "workspaceId": workspace_id,
                "by": by,
                "startedAt": to_rfc3339(self._clock.now()),
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
        collected = self._collect(kind, ids, None, set(), progress, remember=None)
        report = ErasureReport(kind, target_id, dry_run=True)
        counts: Counter[str] = Counter()
        prefixes: set[str] = set()
        scanned = 0
        for page, _ in self._scan.pages(None):
            scanned += len(page)
            for item in page:
                if belongs(item, kind, ids, collected):
                    counts[item_kind(item)] += 1
                    prefixes.update(value_prefixes(item))
            _report(progress, ErasureProgress("count", scanned, sum(counts.values())))
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

        def remember(found: set[str], last: dict[str, str] | None) -> None:
            self._scan.add_ids(target_id, found)
            save(phase="collect", lastKey=last)

        if state["phase"] == "collect":
            known = self._scan.collected_ids(target_id)
            collected = self._collect(
                kind, ids, state.get("lastKey"), known, progress, remember=remember
            )
            tally.items.update(self._revoke(ids | collected))
            save(phase="delete", lastKey=None)
        collected = self._scan.collected_ids(target_id)
        if state["phase"] == "delete":
            scanned = 0
            for page, last in self._scan.pages(state.get("lastKey")):
                scanned += len(page)
                self._delete_page(page, kind, ids, collected, tally)
                save(phase="delete", lastKey=last)
                _report(progress, ErasureProgress("delete", scanned, sum(tally.items.values())))
            save(phase="objects", lastKey=None)
        if state["phase"] == "objects":
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

    def _delete_page(
        self,
        page: list[dict[str, Any]],
        kind: TargetKind,
        ids: set[str],
        collected: set[str],
        tally: _Tally,
    ) -> None:
        """Delete the items of one page that belong, a key-value entry's values first."""
        doomed = [item for item in page if belongs(item, kind, ids, collected)]
        for item in doomed:
            for prefix in value_prefixes(item):
                tally.add_versions(self._scan, self._scan.object_versions(prefix))
            tally.items[item_kind(item)] += 1
        self._scan.delete_items({"pk": item["pk"], "sk": item["sk"]} for item in doomed)

    def _collect(
        self,
        kind: TargetKind,
        ids: set[str],
        start: dict[str, str] | None,
        known: set[str],
        progress: Callable[[ErasureProgress], None] | None,
        *,
        remember: Callable[[set[str], dict[str, str] | None], object] | None,
    ) -> set[str]:
        """Read the table once for the ids items that belong reveal."""
        collected = set(known)
        scanned = 0
        for page, last in self._scan.pages(start):
            scanned += len(page)
            found: set[str] = set()
            for item in page:
                if belongs(item, kind, ids, set()):
                    found.update(revealed(item, kind) - collected - ids)
            collected |= found
            if remember is not None:
                remember(found, last)
            _report(progress, ErasureProgress("collect", scanned, len(collected)))
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
            return prefixes | {f"reviews/{target_id}/", f"exports/{target_id}/"}
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

    def add_versions(self, scan: OwnerScan, versions: list[ObjectVersion]) -> None:
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
