"""Export and import of a workspace or an agent as versioned JSON Lines
(docs/reference.md#export-and-import, docs/issues.md#issue-24-item-5).

The file is the table's own items and the bucket's objects that belong to the target
(the erasure's rule and reads by key, ``ownership.py``), so every field and state of every memory,
audit record, day row, recall counter page, routine, review (summaries, decisions,
undos, pending actions, reports) and key-value entry of the account scope travels
exactly. Left out: tokens and their ids, dashboard sessions and sign-in codes,
idempotency records, run-start session state, erasure records, webhook endpoints and
their deliveries (their secrets), and the recall index (derived: rebuilt by the import).

Lines: a header ``{"format": "pinework-export", "version": 1, "kind", "targetId",
"exportedAt"}``, then ``{"type": "item", "item": <DynamoDB JSON>}`` (binary values in
base64) and ``{"type": "object", "key", "body": <base64>}``, then a trailer
``{"type": "end", "items": n, "objects": m}``; a file without its trailer, or with other
counts, is refused as truncated.

Import reads the file twice (checks, then writes), line by line: a newer version, a
bad line or a missing trailer writes nothing. Items are written only where their key
is free; an identical item counts as already there, another one as a conflict (kept).
With ``remap`` every id gets a new one derived from it and the target workspace
(``remapped_id``: the same file into the same workspace gives the same ids, so a
second import changes nothing; the time part of an id is kept, so order is kept).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from chalicelib.errors import InvalidRequest
from chalicelib.ids import Clock, to_rfc3339
from chalicelib.services.keyed_hash import DEVELOPMENT_SECRETS, KeyedHash
from chalicelib.services.lifecycle.erasure import OwnerStore
from chalicelib.services.lifecycle.ownership import TargetKind, item_kind, owned_items
from chalicelib.storage.dynamodb import from_attributes, to_attributes
from chalicelib.storage.keys import person_email_key, recall_counter_key, recall_counter_page
from chalicelib.storage.owner_marks import owner_mark

FORMAT = "pinework-export"
VERSION = 1
"""The newest file version this code writes and reads."""
LEFT_OUT = (
    "TOKEN",
    "TOKENID",
    "WEBSESSION",
    "SIGNIN",
    "IDEMPOTENCY",
    "SESSION",
    "ERASURE",
    "RECALLINDEX",
    "UPGRADE",
    "PERSONEMAIL",
    "EXPORT",
    "WEBHOOKS",
    "WEBHOOKDIR",
)
"""Kinds of item (``item_kind``) an export never carries. E-mail claims are keyed by the
source deployment's hash secret; an import makes them again under its own. Exports'
records (and so their files) are not part of what they export. Webhook endpoints hold
their signing secrets, shown once (docs/reference.md#webhooks), and point the deployment
at a receiver: a person registers them again where the file is imported."""
_ANY_ID = re.compile(r"(?:wsp|agt|usr|mem|rvw|aud|rcl|rtn|tok|exp|lrn)_[0-9A-HJKMNP-TV-Z]{26}")
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


class TransferStore(OwnerStore, Protocol):
    """The table and bucket as export and import use them (``storage/owner_store.py``)."""

    def get_object(self, key: str) -> bytes | None:
        """An object's body, or None."""
        ...

    def current_objects(self, prefix: str) -> list[str]:
        """Keys under ``prefix``."""
        ...

    def put_object(self, key: str, body: bytes) -> None:
        """Write an object."""
        ...

    def put_new_item(self, item: dict[str, Any]) -> str:
        """``created``, ``same`` or ``conflict``."""
        ...

    def workspace_of(self, agent_id: str) -> str | None:
        """The agent's workspace, or None when there is no such agent."""
        ...


class IndexRebuilder(Protocol):
    """Rebuilds an agent's recall index (``RecallIndexBackfill``)."""

    def run(self, workspace_id: str | None, agent_id: str | None, *, rebuild: bool = False) -> Any:
        """Index the agent's live facts."""
        ...


@dataclass
class TransferReport:
    """What an export wrote or an import did: items by kind, objects, and for an
    import how many were already there and how many keys held other items."""

    items: dict[str, int] = field(default_factory=dict)
    objects: int = 0
    already_there: int = 0
    conflicts: int = 0
    id_map: dict[str, str] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        """The JSON answer of ``pinework admin export|import``."""
        return {
            "items": dict(sorted(self.items.items())),
            "itemCount": sum(self.items.values()),
            "objects": self.objects,
            "alreadyThere": self.already_there,
            "conflicts": self.conflicts,
            "workspaceId": next(
                (new for old, new in self.id_map.items() if old.startswith("wsp_")), None
            ),
        }


def item_line(item: dict[str, Any]) -> str:
    """One item as a line: DynamoDB JSON, binary values in base64."""
    return json.dumps(
        {"type": "item", "item": to_attributes(item)},
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
        default=lambda value: base64.b64encode(bytes(value)).decode("ascii"),
    )


def item_from_json(attributes: dict[str, Any]) -> dict[str, Any]:
    """The item of an ``item`` line (base64 binary values decoded)."""
    return from_attributes({name: _decoded(value) for name, value in attributes.items()})


def _decoded(value: Any) -> Any:
    if not isinstance(value, dict) or len(value) != 1:
        raise InvalidRequest("An item attribute is not DynamoDB JSON.")
    ((tag, inner),) = value.items()
    if tag == "B":
        return {"B": base64.b64decode(inner)}
    if tag == "BS":
        return {"BS": [base64.b64decode(part) for part in inner]}
    if tag == "M":
        return {"M": {name: _decoded(part) for name, part in inner.items()}}
    if tag == "L":
        return {"L": [_decoded(part) for part in inner]}
    return value


def value_object_name(pk: str, sk: str, old_name: str) -> str:
    """The object name of a key-value entry's value under its (new) scope and key:
    ``kv/<anon|keep>/<sha256 of scope and key>/<the old name's last part>``."""
    scope, key = pk.removeprefix("KV#"), sk.removeprefix("KEY#")
    digest = hashlib.sha256(f"{scope}\n{key}".encode()).hexdigest()
    parts = old_name.split("/")
    return f"kv/{parts[1]}/{digest}/{parts[-1]}"


def remapped_id(old: str, secret: str) -> str:
    """A new id for ``old`` in the import keyed by ``secret`` (the target workspace):
    the same prefix and time part (the first 10 ULID characters), then 16 characters
    of HMAC-SHA-256 of the old id, so the same import twice gives the same ids."""
    prefix, ulid = old.split("_", 1)
    digest = hmac.new(secret.encode(), old.encode(), hashlib.sha256).digest()
    number = int.from_bytes(digest[:10], "big")
    tail = "".join(_CROCKFORD[(number >> (5 * shift)) & 31] for shift in reversed(range(16)))
    return f"{prefix}_{ulid[:10]}{tail}"


class Remapper:
    """Replaces every id in an item's strings (keys and attribute names included).

    Args:
        workspace: the source workspace's id and the target's; other ids get
            ``remapped_id`` keyed by the target.
    """

    def __init__(self, source_workspace: str, target_workspace: str) -> None:
        self.ids: dict[str, str] = {source_workspace: target_workspace}
        self.objects: dict[str, str] = {}
        """Old -> new keys of objects whose name depends on what was remapped."""
        self._secret = target_workspace

    def id(self, old: str) -> str:
        """The new id of ``old``."""
        if old not in self.ids:
            self.ids[old] = remapped_id(old, self._secret)
        return self.ids[old]

    def text(self, value: str) -> str:
        """``value`` with every id in it replaced."""
        return _ANY_ID.sub(lambda match: self.id(match.group(0)), value)

    def value(self, value: Any) -> Any:
        """Any item value with its strings remapped (binary and numbers unchanged)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(part) for part in value]
        if isinstance(value, set):
            return {self.value(part) for part in value}
        if isinstance(value, dict):
            return {self.text(name): self.value(part) for name, part in value.items()}
        return value


def export_header(
    format_name: str, version: int, kind: str, target_id: str, clock: Clock
) -> dict[str, Any]:
    """The first fields of an export: ``format``, ``version``, ``kind``, ``targetId``,
    ``exportedAt`` (now)."""
    return {
        "format": format_name,
        "version": version,
        "kind": kind,
        "targetId": target_id,
        "exportedAt": to_rfc3339(clock.now()),
    }


def export_workspace(store: TransferStore, kind: str, target_id: str) -> str | None:
    """The workspace of an export's target (the agent's, or the workspace itself; None
    for an unknown agent).

    Raises:
        InvalidRequest: ``kind`` is not ``agent`` or ``workspace``, or the id is not one
            of that kind.
    """
    prefix = {"agent": "agt_", "workspace": "wsp_"}.get(kind)
    if prefix is None or not target_id.startswith(prefix):
        raise InvalidRequest(f"An export is of an agent or a workspace, not {target_id!r}.")
    return store.workspace_of(target_id) if kind == "agent" else target_id


def report_prefix(kind: str, target_id: str, workspace: str) -> str:
    """The bucket prefix of an export target's review reports:
    ``reviews/<wsp_id>/`` for a workspace, ``reviews/<wsp_id>/<agt_id>/`` for an agent
    (the key the review writes: ``services/review/service.py``)."""
    return f"reviews/{workspace}/" + ("" if kind == "workspace" else f"{target_id}/")


class WorkspaceTransfer:
    """Export and import (operator; docs/reference.md#export-and-import).

    Args:
        store: the table and bucket.
        index: rebuilds each imported agent's recall index.
        clock: the current time (the header's ``exportedAt``).
        digests: the keyed digests of the e-mail claims an import makes (the development
            secret when None; docs/reference.md#keyed-hashes-of-personal-data).
    """

    def __init__(
        self,
        store: TransferStore,
        index: IndexRebuilder,
        clock: Clock,
        digests: KeyedHash | None = None,
    ) -> None:
        self._digests = digests or KeyedHash(lambda: DEVELOPMENT_SECRETS)
        self._store = store
        self._index = index
        self._clock = clock

    def export(
        self,
        kind: TargetKind,
        target_id: str,
        write: Callable[[str], object],
        progress: Callable[[int], None] | None = None,
    ) -> TransferReport:
        """Write the target's lines with ``write`` (one call per line, no newline).

        Reads the target's items by key (``ownership.owned_items``), never a Scan of
        the table; memory: one page at a time, plus the set of the target's ids.

        Raises:
            InvalidRequest: ``kind`` is not ``agent`` or ``workspace``, or the id is
                not one of that kind.
        """
        workspace = export_workspace(self._store, kind, target_id)
        ids = {target_id}
        header = export_header(FORMAT, VERSION, kind, target_id, self._clock)
        write(json.dumps(header, sort_keys=True))
        report = TransferReport()
        objects = self._write_items(kind, ids, workspace, write, report, progress)
        if workspace is not None:
            objects.update(self._store.current_objects(report_prefix(kind, target_id, workspace)))
        for key in sorted(objects):
            body = self._store.get_object(key)
            if body is not None:
                report.objects += 1
                line = {"type": "object", "key": key, "body": base64.b64encode(body).decode()}
                write(json.dumps(line, sort_keys=True))
        end = {"type": "end", "items": sum(report.items.values()), "objects": report.objects}
        write(json.dumps(end))
        return report

    def _write_items(
        self,
        kind: TargetKind,
        ids: set[str],
        workspace: str | None,
        write: Callable[[str], object],
        report: TransferReport,
        progress: Callable[[int], None] | None,
    ) -> set[str]:
        """Write the item lines (the target's items, read by key: ``ownership.py``);
        return the objects they point to."""
        objects: set[str] = set()
        for page, _ in owned_items(self._store, kind, ids, set(), workspace):
            for item in page:
                if item_kind(item) in LEFT_OUT or _marks_left_out(item):
                    continue
                if item.get("objectKey"):
                    objects.add(str(item["objectKey"]))
                report.items[item_kind(item)] = report.items.get(item_kind(item), 0) + 1
                write(item_line(item))
            if progress is not None:
                progress(sum(report.items.values()))
        return objects

    def import_file(
        self,
        lines: Callable[[], Iterable[str]],
        *,
        remap_into: str | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> TransferReport:
        """Load an export (``lines`` is called twice: a check pass, then the writes).

        Args:
            remap_into: give every id a new one, the workspace's ``remap_into``
                (``wsp_…``); None keeps the ids.

        Raises:
            InvalidRequest: not an export, a newer version (``export_version_unsupported``
                in the message), a bad line (its number), or a truncated file.
        """
        header = self._check(lines())
        remapper = (
            None if remap_into is None else Remapper(str(header["sourceWorkspace"]), remap_into)
        )
        report = TransferReport()
        agents: set[str] = set()
        for number, line in enumerate(lines(), start=1):
            if number == 1 or not line.strip():
                continue
            entry = json.loads(line)
            if entry["type"] == "item":
                self._import_item(item_from_json(entry["item"]), remapper, report, agents)
            elif entry["type"] == "object":
                key = entry["key"]
                if remapper is not None:
                    key = remapper.objects.get(key) or remapper.text(key)
                self._store.put_object(key, base64.b64decode(entry["body"]))
                report.objects += 1
            if progress is not None and number % 500 == 0:
                progress(number)
        for agent in sorted(agents):
            self._index.run(None, agent, rebuild=True)
        if remapper is not None:
            report.id_map = dict(remapper.ids)
        return report

    def _import_item(
        self,
        item: dict[str, Any],
        remapper: Remapper | None,
        report: TransferReport,
        agents: set[str],
    ) -> None:
        if remapper is not None:
            old_object = item.get("objectKey")
            item = remapper.value(item)
            if old_object is not None:
                # a key-value value's name is a digest of its scope and key (storage/kv.py)
                name = value_object_name(str(item["pk"]), str(item["sk"]), str(old_object))
                remapper.objects[str(old_object)] = name
                item["objectKey"] = name
        kind = item_kind(item)
        if kind == "AGENT":
            agents.add(str(item["pk"]).split("#", 1)[1])
        if kind == "RECALLCOUNT" and remapper is not None:
            self._import_counters(item, report)
            return
        self._count(kind, self._store.put_new_item(item), report)
        if kind == "PERSON" and item.get("email") and "removedAt" not in item:
            digest = self._digests.emails(str(item["email"]))[0]
            claim = {**person_email_key(str(item["workspaceId"]), digest), "personId": item["id"]}
            # made, not carried: not counted as an item of the file; another person's
            # claim on the address is a conflict
            if self._store.put_new_item(claim) == "conflict":
                report.conflicts += 1
            else:
                self._store.put_new_item(owner_mark(str(item["id"]), claim))

    @staticmethod
    def _count(kind: str, outcome: str, report: TransferReport) -> None:
        if outcome == "created":
            report.items[kind] = report.items.get(kind, 0) + 1
        elif outcome == "same":
            report.already_there += 1
        else:
            report.conflicts += 1

    def _import_counters(self, item: dict[str, Any], report: TransferReport) -> None:
        """A remapped counter page: each memory's counters go to the page of its new id."""
        agent = str(item["pk"]).split("#", 1)[1]
        pages: dict[int, dict[str, Any]] = {}
        for name, value in item.items():
            if name.startswith(("n_", "t_")):
                page = recall_counter_page(name[2:])
                pages.setdefault(page, {})[name] = value
        for page, values in sorted(pages.items()):
            outcome = self._store.put_new_item({**recall_counter_key(agent, page), **values})
            if outcome == "created":
                report.items["RECALLCOUNT"] = report.items.get("RECALLCOUNT", 0) + 1
            elif outcome == "same":
                report.already_there += 1
            else:
                report.conflicts += 1

    @staticmethod
    def _check(lines: Iterable[str]) -> dict[str, Any]:
        """The header, with ``sourceWorkspace``, once every line is checked."""
        tally = _FileTally()
        for number, line in enumerate(_numbered(lines), start=1):
            if line.strip():
                tally.read(number, line)
        if tally.header is None:
            raise InvalidRequest("The file is empty.")
        end = tally.trailer
        if end is None or (end.get("items"), end.get("objects")) != (tally.items, tally.objects):
            raise InvalidRequest(
                "The file is truncated: its end line is missing or counts other lines "
                f"({tally.items} items and {tally.objects} objects read). Export it again."
            )
        return {**tally.header, "sourceWorkspace": tally.workspace or ""}


@dataclass
class _FileTally:
    """What the check pass of an import has read so far."""

    header: dict[str, Any] | None = None
    trailer: dict[str, Any] | None = None
    workspace: str | None = None
    items: int = 0
    objects: int = 0

    def read(self, number: int, line: str) -> None:
        """Check one line.

        Raises:
            InvalidRequest: naming the line.
        """
        try:
            entry = json.loads(line)
        except ValueError as error:
            raise InvalidRequest(f"Line {number} is not JSON: {error}.") from error
        if self.header is None:
            self.header = _header(entry)
            if self.header["kind"] == "workspace":
                self.workspace = str(self.header["targetId"])
            return
        if self.trailer is not None:
            raise InvalidRequest(f"Line {number} follows the end line.")
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind == "item":
            self._item(number, entry)
        elif kind == "object":
            if not isinstance(entry.get("key"), str) or not isinstance(entry.get("body"), str):
                raise InvalidRequest(f"Line {number} is not an object.")
            self.objects += 1
        elif kind == "end":
            self.trailer = entry
        else:
            raise InvalidRequest(f"Line {number} has no known type.")

    def _item(self, number: int, entry: dict[str, Any]) -> None:
        try:
            item = item_from_json(entry["item"])
            if not isinstance(item["pk"], str) or not isinstance(item["sk"], str):
                raise TypeError("pk and sk must be strings")
        except (KeyError, TypeError, AttributeError, ValueError, InvalidRequest) as error:
            raise InvalidRequest(f"Line {number} is not an item: {error}.") from error
        if self.workspace is None and item.get("workspaceId"):
            self.workspace = str(item["workspaceId"])
        self.items += 1


def _marks_left_out(item: dict[str, Any]) -> bool:
    """An owner mark of an item the file leaves out (an import makes its own)."""
    return item_kind(item) == "OWNED" and str(item["sk"]).split("#", 1)[0] in LEFT_OUT


def _numbered(lines: Iterable[str]) -> Iterator[str]:
    yield from lines


def _header(entry: Any) -> dict[str, Any]:
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        raise InvalidRequest("Line 1 is not the header of a Pinework export.")
    version = entry.get("version")
    if not isinstance(version, int) or version < 1:
        raise InvalidRequest("The export's version is not a positive integer.")
    if version > VERSION:
        raise InvalidRequest(
            f"export_version_unsupported: the file is version {version}; this service "
            f"reads versions up to {VERSION}. Upgrade the service, then import again."
        )
    if entry.get("kind") not in ("agent", "workspace"):
        raise InvalidRequest("The export's kind is not agent or workspace.")
    return dict(entry)
