"""A person's export as a readable JSON document, grouped by kind
(docs/reference.md#exports-for-a-person, docs/issues.md#issue-48-item-4).

The same items as the operator's export (the target's, read by key: ``ownership.py``;
tokens, sessions, idempotency records and erasure records left out), each written in
the API's public form (``storage/readable_export.py``): memories as
``GET /memories/{id}`` answers them, their history records, learnings and their
history, review summaries and the bucket's review reports, actions waiting for a
person, routines, recall log entries, key-value entries, agents, persons and the
workspace. The operator's JSON Lines file
(``transfer.py``) stays what ``pinework admin import`` reads; this document is for
reading, not for import.

Memory stays flat: each group is spooled to a temporary file of its own as pages are
read, then the groups are copied into the document one after another; only one page,
the target's ids and one agent's recall counter pages are held.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from typing import IO, Any

from chalicelib.ids import Clock
from chalicelib.services.lifecycle.ownership import TargetKind, item_kind, owned_items
from chalicelib.services.lifecycle.transfer import (
    LEFT_OUT,
    TransferReport,
    TransferStore,
    export_header,
    export_workspace,
    report_prefix,
)
from chalicelib.storage.keys import recall_counter_key, recall_counter_page
from chalicelib.storage.readable_export import GROUPS, public_entry

FORMAT = "pinework-person-export"
VERSION = 1
"""The document's format and version (its first fields)."""
_COPY_CHARACTERS = 64 * 1024


class _Groups:
    """One temporary file per group, opened when the group gets its first entry."""

    def __init__(self, stack: ExitStack) -> None:
        self._stack = stack
        self.files: dict[str, IO[str]] = {}
        self.counts: dict[str, int] = {}

    def add(self, group: str, entry: dict[str, Any]) -> None:
        file = self.files.get(group)
        if file is None:
            # closed (and deleted) by the export's ExitStack
            spool = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
            file = self.files[group] = self._stack.enter_context(spool)
        else:
            file.write(",\n")
        file.write("    " + json.dumps(entry, ensure_ascii=False))
        self.counts[group] = self.counts.get(group, 0) + 1

    def copy(self, group: str, write: Callable[[str], object]) -> None:
        file = self.files.get(group)
        if file is None:
            return
        file.seek(0)
        while chunk := file.read(_COPY_CHARACTERS):
            write(chunk)
        write("\n")


class ReadableExport:
    """Write a person's export (``PersonLifecycle.run_export``).

    Args:
        store: the table and bucket (read by key).
        clock: the document's ``exportedAt`` and each memory's ``expired``.
    """

    def __init__(self, store: TransferStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def export(
        self, kind: TargetKind, target_id: str, write: Callable[[str], object]
    ) -> TransferReport:
        """Write the document for an agent or a workspace with ``write`` (text chunks,
        UTF-8 when encoded): ``{"format", "version", "kind", "targetId", "exportedAt",
        "counts": {group: n}, <group>: [objects…]}`` with the groups of
        ``readable_export.GROUPS`` that have entries, in that order.

        Returns:
            ``items``: entries by group; ``objects``: key-value values and review
            reports read from the bucket.

        Raises:
            InvalidRequest: ``kind`` is not ``agent`` or ``workspace``, or the id is not
                one of that kind.
        """
        workspace = export_workspace(self._store, kind, target_id)
        report = TransferReport()
        with ExitStack() as stack:
            groups = _Groups(stack)
            self._read(kind, target_id, workspace, groups, report)
            header = {
                **export_header(FORMAT, VERSION, kind, target_id, self._clock),
                "counts": {
                    group: groups.counts[group] for group in GROUPS if group in groups.counts
                },
            }
            write("{\n")
            for name, value in header.items():
                write(f"  {json.dumps(name)}: {json.dumps(value, sort_keys=True)},\n")
            present = [group for group in GROUPS if group in groups.files]
            for position, group in enumerate(present):
                write(f'  "{group}": [\n')
                groups.copy(group, write)
                write("  ]" + ("," if position < len(present) - 1 else "") + "\n")
            if not present:
                write('  "empty": true\n')
            write("}\n")
        report.items = dict(groups.counts)
        return report

    def _read(
        self,
        kind: TargetKind,
        target_id: str,
        workspace: str | None,
        groups: _Groups,
        report: TransferReport,
    ) -> None:
        """Spool every public entry of the target's items into ``groups``."""
        counters: dict[str, dict[str, Any]] = {}
        now = self._clock.now()
        for page, _ in owned_items(self._store, kind, {target_id}, set(), workspace):
            for item in page:
                found = item_kind(item)
                if found in LEFT_OUT:
                    continue
                if found == "RECALLCOUNT":
                    _keep_counters(counters, item)
                    continue
                entry = public_entry(item, now, _counter_page(counters, item))
                if entry is None:
                    continue
                group, body = entry
                if group == "keyValue" and item.get("objectKey"):
                    data = self._store.get_object(str(item["objectKey"]))
                    body["value"] = None if data is None else data.decode("utf-8")
                    report.objects += data is not None
                groups.add(group, body)
        if workspace is not None:
            self._read_reports(report_prefix(kind, target_id, workspace), groups, report)

    def _read_reports(self, prefix: str, groups: _Groups, report: TransferReport) -> None:
        """Spool each review report under ``prefix`` (the bucket's current versions) as
        ``{"object": "review_report", "key", "report"}``, the report as the review wrote
        it (docs/reference.md#the-persons-export-file)."""
        for key in sorted(self._store.current_objects(prefix)):
            data = self._store.get_object(key)
            if data is None:
                continue
            report.objects += 1
            body = {"object": "review_report", "key": key, "report": json.loads(data)}
            groups.add("reviewReports", body)


def _keep_counters(counters: dict[str, dict[str, Any]], page: dict[str, Any]) -> None:
    """Hold a recall counter page; pages of another agent are dropped (an agent's pages
    are read before its memories, ``owner_store.owned_pages``)."""
    agent = str(page["pk"]).split("#", 1)[1]
    for key in [key for key in counters if not key.startswith(f"RECALLCOUNT#{agent}|")]:
        del counters[key]
    counters[f"{page['pk']}|{page['sk']}"] = page


def _counter_page(counters: dict[str, dict[str, Any]], item: dict[str, Any]) -> Any:
    """The held counter page of a memory item, or None."""
    if not (str(item["pk"]).startswith("MEMORY#") and item.get("sk") == "MEMORY"):
        return None
    memory_id, agent_id = str(item.get("id", "")), str(item.get("agentId", ""))
    key = recall_counter_key(agent_id, recall_counter_page(memory_id))
    return counters.get(f"{key['pk']}|{key['sk']}")
