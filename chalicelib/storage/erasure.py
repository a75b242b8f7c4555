"""What erasing a memory removes besides its own item (docs/reference.md#erasing-a-memory,
docs/issues.md#issue-24-item-1): the texts in its audit records, in the review items
and report objects of its agent, its agent's recall index (rebuilt without it) and the
workspace's cached exports, every S3 version included (the bucket is versioned).

Texts are found by value: a review report or a pending action quotes a fact's text, so
every string that holds one of the erased texts has it replaced by ``REDACTED``; JSON
kept in a string attribute is parsed and walked. Each step is idempotent, so erasing an
erased memory again finishes what an interrupted erasure left.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from chalicelib.models.memory import SNAPSHOT_TEXTS, Memory
from chalicelib.storage import items as convert
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import (
    AUDIT_PREFIX,
    EXPORT_OBJECT_PREFIX,
    RECALL_INDEX_OBJECT_PREFIX,
    memory_key,
    pending_partition,
    review_lookup_partition,
    review_partition,
)
from chalicelib.storage.owner_store import DynamoDBOwnerStore

if TYPE_CHECKING:
    pass

REDACTED = "[erased]"
"""What replaces an erased text wherever it was quoted."""
SHORTEST_QUOTED_TEXT = 8
"""Texts shorter than this are replaced only where a whole string equals them: a short
text inside longer strings would erase words of other facts."""
_KEYS = ("pk", "sk")


def redacted(value: Any, texts: tuple[str, ...]) -> Any:
    """``value`` (strings, lists, dicts; JSON in strings) with every erased text replaced
    by ``REDACTED``; the same object when nothing changed."""
    if isinstance(value, str):
        return _redacted_string(value, texts)
    if isinstance(value, list):
        changed = [redacted(item, texts) for item in value]
        return value if all(a is b for a, b in zip(changed, value, strict=True)) else changed
    if isinstance(value, dict):
        pairs = {name: redacted(item, texts) for name, item in value.items()}
        return value if all(pairs[name] is value[name] for name in value) else pairs
    return value


def _redacted_string(value: str, texts: tuple[str, ...]) -> str:
    if value[:1] in ("{", "[") and any(text in value for text in texts):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if parsed is not None:
            again = redacted(parsed, texts)
            if again is not parsed:
                return json.dumps(again, ensure_ascii=False, separators=(",", ":"))
    result = value
    for text in texts:
        if result == text:
            return REDACTED
        if len(text) >= SHORTEST_QUOTED_TEXT and text in result:
            result = result.replace(text, REDACTED)
    return value if result == value else result


class DynamoDBMemoryScrub:
    """The erasure's clean-up on the single table and the bucket.

    Args:
        table: the wrapped table.
        bucket: the stack's bucket, as the owner erasure reads it (versions included).
    """

    def __init__(self, table: DynamoDBTable, bucket: DynamoDBOwnerStore) -> None:
        self._table = table
        self._bucket = bucket

    def audit_texts(self, memory_id: str) -> set[str]:
        """Every text the memory's audit records hold (each version's text, a day row's
        lines, evidence, reasons): what the rest of the erasure looks for."""
        texts: set[str] = set()
        for item in self._audit_items(memory_id):
            record = convert.audit_from_item(item)
            for shot in (record.before, record.after):
                for name in ("text", "line"):
                    value = (shot or {}).get(name)
                    if isinstance(value, str) and value:
                        texts.add(value)
                        texts.update(line for line in value.split("\n") if line)
            texts.update(value for value in (record.evidence, record.reason) if value)
        return texts

    def redact_audit(self, memory_id: str, keep_action: str) -> int:
        """Remove the texts of every audit record of the memory but those of action
        ``keep_action`` (the erase record, which holds none): ``SNAPSHOT_TEXTS`` of
        ``before``/``after`` set to null, ``evidence`` and ``reason`` removed. Returns how
        many records were rewritten."""
        changed = 0
        for item in self._audit_items(memory_id):
            if item.get("action") == keep_action:
                continue
            sets, values, names = [], {}, {"#e": "evidence", "#r": "reason"}
            for name in ("before", "after"):
                if name in item:
                    shot = json.loads(item[name])
                    for field in SNAPSHOT_TEXTS:
                        if shot.get(field):
                            shot[field] = None
                    names[f"#{name}"] = name
                    values[f":{name}"] = json.dumps(shot, ensure_ascii=False, separators=(",", ":"))
                    sets.append(f"#{name} = :{name}")
            expression = ("SET " + ", ".join(sets) + " " if sets else "") + "REMOVE #e, #r"
            request: dict[str, Any] = {
                "TableName": self._table.name,
                "Key": to_attributes({"pk": item["pk"], "sk": item["sk"]}),
                "UpdateExpression": expression,
                "ConditionExpression": "attribute_exists(pk)",
                "ExpressionAttributeNames": names,
            }
            if values:
                request["ExpressionAttributeValues"] = to_attributes(values)
            self._table.client.update_item(**request)
            changed += 1
        return changed

    def _audit_items(self, memory_id: str) -> Iterator[dict[str, Any]]:
        return self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :audit)",
            ExpressionAttributeValues=to_attributes(
                {":pk": memory_key(memory_id)["pk"], ":audit": AUDIT_PREFIX}
            ),
            ConsistentRead=True,
        )

    def redact_reviews(self, memory: Memory, texts: Collection[str]) -> int:
        """Replace the texts in the agent's review items (summaries, their lookup copies,
        decisions, undos, runs), its actions waiting for a person and its review report
        objects (rewritten, older versions deleted). Returns how many items and objects
        changed."""
        quoted = tuple(sorted({text for text in texts if text}, key=len, reverse=True))
        if not quoted:
            return 0
        changed = 0
        summaries = list(self._partition(review_partition(memory.agent_id)))
        partitions = [review_partition(memory.agent_id)] + [
            review_lookup_partition(str(item["sk"])) for item in summaries
        ]
        for partition in partitions:
            changed += sum(self._redact_item(item, quoted) for item in self._partition(partition))
        pending = self._partition(pending_partition(memory.workspace_id), f"{memory.agent_id}#")
        changed += sum(self._redact_item(item, quoted) for item in pending)
        prefix = f"reviews/{memory.workspace_id}/{memory.agent_id}/"
        for key in self._bucket.current_objects(prefix):
            changed += self._redact_object(key, quoted)
        return changed

    def _partition(self, pk: str, sk_prefix: str | None = None) -> Iterator[dict[str, Any]]:
        condition = "pk = :pk" + (" AND begins_with(sk, :sk)" if sk_prefix else "")
        values = {":pk": pk, **({":sk": sk_prefix} if sk_prefix else {})}
        return self._table.query(
            KeyConditionExpression=condition,
            ExpressionAttributeValues=to_attributes(values),
            ConsistentRead=True,
        )

    def _redact_item(self, item: dict[str, Any], texts: tuple[str, ...]) -> bool:
        """Rewrite the attributes of ``item`` that quote a text, each only if unchanged
        since read (a concurrent change is redacted by the erasure's next run)."""
        names: dict[str, str] = {}
        values: dict[str, Any] = {}
        sets: list[str] = []
        conditions: list[str] = []
        for position, (name, value) in enumerate(item.items()):
            if name in _KEYS:
                continue
            new = redacted(value, texts)
            if new is value:
                continue
            names[f"#a{position}"] = name
            values[f":n{position}"] = new
            values[f":o{position}"] = value
            sets.append(f"#a{position} = :n{position}")
            conditions.append(f"#a{position} = :o{position}")
        if not sets:
            return False
        try:
            self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes({"pk": item["pk"], "sk": item["sk"]}),
                UpdateExpression="SET " + ", ".join(sets),
                ConditionExpression=" AND ".join(conditions),
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=to_attributes(values),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            return False
        return True

    def _redact_object(self, key: str, texts: tuple[str, ...]) -> int:
        body = self._bucket.get_object(key)
        if body is None:
            return 0
        text = body.decode("utf-8")
        new = redacted(text, texts)
        if new is text:
            return 0
        self._bucket.put_object(key, new.encode("utf-8"))
        self.purge_versions(key, keep_current=True)
        return 1

    def purge_versions(self, prefix: str, *, keep_current: bool) -> int:
        """Delete object versions under ``prefix``: every version and delete marker, or
        with ``keep_current`` all but each live object's current version. Returns how
        many versions went."""
        versions = self._bucket.object_versions(prefix)
        if keep_current:
            versions = [version for version in versions if not version.is_live]
        return self._bucket.delete_versions(versions)

    def purge_exports(self, workspace_id: str) -> int:
        """Delete every cached export of the workspace (all versions): an export made
        before the erasure holds the text. Returns how many versions went."""
        return self.purge_versions(f"{EXPORT_OBJECT_PREFIX}{workspace_id}/", keep_current=False)

    def bump_erasure_epoch(self, workspace_id: str) -> None:
        """Change the workspace's erasure epoch (``DynamoDBOwnerStore``)."""
        self._bucket.bump_erasure_epoch(workspace_id)

    def purge_recall_volumes(self, agent_id: str) -> int:
        """Delete the older versions of the agent's recall index volumes (after a rebuild
        replaced them: each packed the erased fact's text). Returns how many went."""
        return self.purge_versions(f"{RECALL_INDEX_OBJECT_PREFIX}{agent_id}/", keep_current=True)
