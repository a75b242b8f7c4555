"""A LangGraph ``BaseStore`` over Pinework (docs/integrations/langgraph.md,
docs/issues.md#issue-27).

Every item is one key-value entry of the token's workspace space (docs/reference.md#10-key-value),
shared by the workspace's agents and persons. An item whose value has a string ``text`` is also
a fact of the agent (docs/reference.md#3-the-memory-object): the agent is told it at run start,
the nightly review keeps it and persons see, edit and veto it on the dashboard. A query search
is a recall preview (docs/reference.md#recall-preview) mapped back to the items.

Example::

    from langgraph.graph import StateGraph

    store = PineworkStore(pinework.Client.from_env())
    graph = StateGraph(State).add_node(...).compile(store=store)

Needs the ``langgraph`` extra: ``pip install "pinework[langgraph]"``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast
from urllib.parse import quote, unquote

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        validate_op_namespace,
    )
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'pinework.integrations.langgraph needs LangGraph: pip install "pinework[langgraph]" '
        "(the package langgraph)"
    ) from exc

from pinework import _calls as calls
from pinework.async_client import AsyncClient
from pinework.client import Client
from pinework.errors import PineworkAPIError
from pinework.models import Memory

__all__ = ["KEY_LIMIT", "PineworkStore"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
Steps = calls.Program[T]
"""A store operation as the requests it makes (``pinework._calls``): it yields each request,
is sent the answer (or thrown the :class:`PineworkAPIError`), and returns its result. The
client runs it (``Client.run`` / ``AsyncClient.run``), so one definition serves both."""

KEY_LIMIT = 512
"""UTF-8 bytes of a key-value key (docs/reference.md#5-limits)."""

DELETE_REASON = "deleted through the LangGraph store"
REPLACED_REASON = "replaced through the LangGraph store by a value without text"
UNDO_REASON = "the LangGraph store could not write its entry"
PAGE = 1000
"""Keys per listing page (the most the server gives, docs/reference.md#kv-listing)."""


class _NotOwn:
    """The memory belongs to another agent of the workspace: it cannot be read."""


NOT_OWN = _NotOwn()
Looked = Memory | _NotOwn | None
"""A memory as read: the memory, :data:`NOT_OWN`, or ``None`` (it does not exist)."""


def _stamp(moment: dt.datetime) -> str:
    """RFC 3339 UTC with milliseconds and ``Z`` (docs/reference.md#timestamps)."""
    return moment.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _moment(text: Any) -> dt.datetime | None:
    """A timestamp of an entry, or ``None``."""
    return dt.datetime.fromisoformat(text) if isinstance(text, str) else None


@dataclass(frozen=True)
class Entry:
    """The JSON value of an item's key-value entry (docs/integrations/langgraph.md#entries).

    Attributes:
        value: the item's value (a JSON object).
        created_at: the item's first put (UTC); kept by later puts.
        updated_at: the item's last put (UTC).
        memory_id: the ``mem_…`` fact holding ``value[text_field]``; ``None`` for an item
            without text.
        expires_at: when the item expires (``put(..., ttl=...)``); ``None``: never.
    """

    value: dict[str, Any]
    created_at: dt.datetime
    updated_at: dt.datetime
    memory_id: str | None
    expires_at: dt.datetime | None

    def encode(self) -> str:
        """The entry as compact JSON text.

        Raises:
            ValueError: the value is not JSON (NaN, infinity, a circular reference).
            TypeError: the value holds something JSON cannot (a datetime, a set, …).
        """
        document = {
            "value": self.value,
            "createdAt": _stamp(self.created_at),
            "updatedAt": _stamp(self.updated_at),
            "memoryId": self.memory_id,
            "expiresAt": None if self.expires_at is None else _stamp(self.expires_at),
        }
        return json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

    @classmethod
    def decode(cls, text: str) -> Entry | None:
        """Read an entry written by :meth:`encode`.

        Returns:
            The entry; ``None`` when ``text`` is not one (written by something else).
        """
        try:
            document = json.loads(text)
            created = _moment(document["createdAt"])
            updated = _moment(document["updatedAt"])
            value = document["value"]
            memory_id = document.get("memoryId")
        except (ValueError, TypeError, KeyError):
            return None
        if not isinstance(value, dict) or created is None or updated is None:
            return None
        if memory_id is not None and not isinstance(memory_id, str):
            return None
        return cls(value, created, updated, memory_id, _moment(document.get("expiresAt")))

    def expired(self, now: dt.datetime) -> bool:
        """Whether the item's TTL has passed at ``now``."""
        return self.expires_at is not None and self.expires_at <= now


def encode_key(key_prefix: str, namespace: tuple[str, ...], key: str) -> str:
    """The key-value key of an item (docs/integrations/langgraph.md#namespaces).

    Args:
        key_prefix: the store's ``key_prefix`` (``"langgraph/"``).
        namespace: the item's namespace, non-empty labels.
        key: the item's key, a non-empty string.

    Returns:
        ``key_prefix`` then each label and the key percent-encoded
        (``urllib.parse.quote(part, safe="")``) and joined by ``/``.

    Raises:
        ValueError: ``key`` is empty or not a string, or the result is over
            :data:`KEY_LIMIT` UTF-8 bytes.
    """
    if not isinstance(key, str) or not key:
        raise ValueError(f"An item key must be a non-empty string, not {key!r}")
    encoded = key_prefix + "/".join(quote(part, safe="") for part in (*namespace, key))
    size = len(encoded.encode("utf-8"))
    if size > KEY_LIMIT:
        raise ValueError(
            f"The namespace and key make a key-value key of {size} bytes; Pinework keys are at "
            f"most {KEY_LIMIT} UTF-8 bytes (docs/reference.md#5-limits): use shorter labels"
        )
    return encoded


def decode_key(key_prefix: str, stored: str) -> tuple[tuple[str, ...], str] | None:
    """The namespace and key of a key-value key made by :func:`encode_key`.

    Returns:
        ``(namespace, key)``; ``None`` for a key this store did not make.
    """
    if not stored.startswith(key_prefix):
        return None
    parts = [unquote(part) for part in stored[len(key_prefix) :].split("/")]
    if len(parts) < 2 or not all(parts):
        return None
    return tuple(parts[:-1]), parts[-1]


def namespace_prefix_key(key_prefix: str, prefix: tuple[str, ...]) -> str:
    """The start shared by the keys of every item whose namespace starts with ``prefix``."""
    return key_prefix + "".join(quote(label, safe="") + "/" for label in prefix)


METADATA_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,39}$")
"""A field name that can be a fact's metadata key (docs/reference.md#metadata)."""
METADATA_KEYS = 10
METADATA_STRING = 200
METADATA_BYTES = 2048
FILTER_CONDITIONS = 5
"""What the server takes: 10 keys, strings of 200 characters, 2,048 bytes as JSON, and
5 conditions a filter (docs/reference.md#metadata, docs/reference.md#metadata-filters)."""
METADATA_REFUSALS = ("memory_metadata_invalid", "secret_in_memory", "invalid_request")
"""The refusals a fact's save may owe to its metadata: it is saved again without."""
RANGE_OPERATORS = {"$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte", "$eq": "eq"}


def _scalar(value: Any) -> bool:
    """A value metadata holds: a string of at most 200 characters, a number, a boolean."""
    if isinstance(value, str):
        return 0 < len(value) <= METADATA_STRING
    return isinstance(value, bool | int | float) and not (
        isinstance(value, float) and value != value
    )


def item_metadata(value: Mapping[str, Any], text_field: str) -> dict[str, Any]:
    """The fact's metadata made from an item's value (docs/integrations/langgraph.md#filters):
    its top-level fields other than the text whose name can be a metadata key and whose
    value is a string (200 characters at most), a number or a boolean, in name order, at
    most 10 and 2,048 bytes as JSON (the later ones left out). A search ``filter`` on them
    is applied by the server, before the recall's cut."""
    kept: dict[str, Any] = {}
    for name in sorted(value):
        field = value[name]
        if name == text_field or not METADATA_KEY.match(name) or not _scalar(field):
            continue
        if name.lower() in {key.lower() for key in kept}:
            continue
        trial = {**kept, name: field}
        if len(trial) > METADATA_KEYS or len(json.dumps(trial).encode()) > METADATA_BYTES:
            break
        kept = trial
    return kept


def meta_conditions(condition: Mapping[str, Any] | None) -> list[str]:
    """The server's metadata filter (``key:op:value``) for the parts of a search
    ``filter`` it can apply: a field equal to a string, number or boolean, or a numeric
    ``$eq $gt $gte $lt $lte``; at most 5. The rest (``$ne``, nested objects, lists) is
    checked here on each item (``matches_filter``), as is every part."""
    found: list[str] = []
    for name, expected in (condition or {}).items():
        if not METADATA_KEY.match(name):
            continue
        if isinstance(expected, dict):
            for operator, operand in expected.items():
                if operator in RANGE_OPERATORS and _scalar(operand):
                    found.append(f"{name}:{RANGE_OPERATORS[operator]}:{_text(operand)}")
        elif _scalar(expected):
            found.append(f"{name}:eq:{_text(expected)}")
    return found[:FILTER_CONDITIONS]


def _text(value: Any) -> str:
    """A metadata value as a filter writes it (``true``/``false``, JSON numbers)."""
    return value if isinstance(value, str) else json.dumps(value)


def matches_filter(value: Mapping[str, Any], condition: Mapping[str, Any] | None) -> bool:
    """Whether an item's value passes a search ``filter``, as LangGraph's ``InMemoryStore``
    reads it (docs/integrations/langgraph.md#search).

    Args:
        value: the item's value.
        condition: ``{field: expected}``: equality (a nested object or a list compared
            field by field), or ``{field: {"$op": operand}}`` with ``$eq $ne $gt $gte $lt $lte``
            (the comparisons are numeric); ``None`` or empty passes everything.

    Raises:
        ValueError: an unknown operator, or a comparison of a value that is not a number.
        TypeError: a comparison of ``None`` or of a non-numeric type.
    """
    return all(
        _compare(value.get(field), expected) for field, expected in (condition or {}).items()
    )


def _compare(actual: Any, expected: Any) -> bool:
    """One field of :func:`matches_filter`."""
    if isinstance(expected, dict):
        if any(str(name).startswith("$") for name in expected):
            return all(_operator(actual, name, operand) for name, operand in expected.items())
        if not isinstance(actual, dict):
            return False
        return all(_compare(actual.get(name), inner) for name, inner in expected.items())
    if isinstance(expected, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(expected)
            and all(_compare(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected)


ORDERINGS: dict[str, Callable[[float, float], bool]] = {
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}


def _operator(actual: Any, name: str, operand: Any) -> bool:
    """One ``$`` operator of a filter."""
    if name == "$eq":
        return bool(actual == operand)
    if name == "$ne":
        return bool(actual != operand)
    if name in ORDERINGS:
        return ORDERINGS[name](float(actual), float(operand))
    raise ValueError(f"Unsupported filter operator {name!r}: use $eq $ne $gt $gte $lt $lte")


def matches_namespace(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether a namespace meets a ``list_namespaces`` prefix or suffix condition (``*`` matches
    any one label), as LangGraph's ``InMemoryStore`` reads it."""
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(wanted in ("*", label) for label, wanted in pairs)


def _check_op(op: Op) -> None:
    """Refuse what LangGraph's own methods refuse, for ops given straight to ``batch``.

    Raises:
        InvalidNamespaceError: a label empty, not a string, with ``.`` or NUL; a put's
            namespace empty or rooted at ``langgraph``.
        ValueError: an unknown op.
    """
    if not isinstance(op, GetOp | PutOp | SearchOp | ListNamespacesOp):
        raise ValueError(f"Unknown operation type: {type(op)}")
    validate_op_namespace(op)
    if isinstance(op, PutOp) and op.value is not None:
        if not op.namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        if op.namespace[0] == "langgraph":
            raise InvalidNamespaceError(
                f'Root label for namespace cannot be "langgraph". Got: {op.namespace}'
            )


class PineworkStore(BaseStore):
    """A LangGraph store whose items live in Pinework (docs/integrations/langgraph.md).

    Args:
        client: a :class:`pinework.Client` with a bearer token: an agent's (its items' facts
            are that agent's), or a person's with ``agent_id``. Its workspace's key-value
            space holds the items.
        async_client: the :class:`pinework.AsyncClient` ``abatch`` uses (same token); without
            one, ``abatch`` runs ``batch`` in a thread (``asyncio.to_thread``).
        agent_id: whose facts (``agt_…``); required with a person's token, ``None`` for the
            token's own agent.
        text_field: the value field that becomes a fact when it is a string.
        count_recalls: a query search counts as a recall of the facts it scored (on the
            recall log, ``recallCount``); ``False``: a recall preview, nothing counted.
        key_prefix: the start of every key-value key this store writes; empty or ending
            with ``/``.
        now: the clock of ``createdAt``, ``updatedAt`` and TTLs (aware UTC); the system
            clock by default.

    Raises:
        ValueError: ``key_prefix`` does not end with ``/``, or ``text_field`` is empty.

    Semantics (docs/integrations/langgraph.md#what-does-not-map-cleanly): reads of a batch see
    the store as it was before the batch's puts, which run after them, the last put of a
    key winning (as ``InMemoryStore``). Server refusals raise :class:`PineworkAPIError`.
    """

    supports_ttl = True

    def __init__(
        self,
        client: Client,
        *,
        async_client: AsyncClient | None = None,
        agent_id: str | None = None,
        text_field: str = "text",
        count_recalls: bool = False,
        key_prefix: str = "langgraph/",
        now: Callable[[], dt.datetime] | None = None,
    ) -> None:
        if key_prefix and not key_prefix.endswith("/"):
            raise ValueError(f"key_prefix must be empty or end with '/', not {key_prefix!r}")
        if not text_field:
            raise ValueError("text_field must be a field name")
        self.client = client
        self.async_client = async_client
        self.agent_id = agent_id
        self.text_field = text_field
        self.count_recalls = count_recalls
        self.key_prefix = key_prefix
        self._now = now or (lambda: dt.datetime.now(dt.UTC))

    # Running the operations

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ops with the sync client (docs/integrations/langgraph.md#operations).

        Args:
            ops: ``GetOp``, ``SearchOp``, ``ListNamespacesOp`` and ``PutOp`` (``value=None``
                deletes).

        Returns:
            One result per op, in order: an ``Item`` or ``None``, a list of ``SearchItem``, a
            list of namespaces, ``None`` for a put.

        Raises:
            InvalidNamespaceError, ValueError: as :func:`_check_op`, :func:`encode_key`,
                :func:`matches_filter`; nothing of the batch is run.
            PineworkAPIError: a refusal (``memory_text_too_long``, ``secret_in_memory``,
                ``memory_vetoed``, ``kv_quota_exceeded`` …); the puts before it stay done.
        """
        return self.client.run(self._batch(list(ops)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch`, over ``async_client`` when given, else in a worker thread."""
        listed = list(ops)
        if self.async_client is None:
            return await asyncio.to_thread(self.batch, listed)
        return await self.async_client.run(self._batch(listed))

    def _batch(self, ops: list[Op]) -> Steps[list[Result]]:
        """The batch: every op checked, the reads in order, then the puts (last per key)."""
        puts: dict[str, PutOp] = {}
        for op in ops:
            _check_op(op)
            if isinstance(op, PutOp):
                puts[encode_key(self.key_prefix, op.namespace, op.key)] = op
            elif isinstance(op, GetOp):
                encode_key(self.key_prefix, op.namespace, op.key)
        results: list[Result] = []
        for op in ops:
            results.append(None if isinstance(op, PutOp) else (yield from self._read(op)))
        for key, put in puts.items():
            if put.value is None:
                yield from self._delete(key)
            else:
                yield from self._put(key, put)
        return results

    def _read(self, op: GetOp | SearchOp | ListNamespacesOp) -> Steps[Result]:
        """One read op."""
        if isinstance(op, GetOp):
            key = encode_key(self.key_prefix, op.namespace, op.key)
            return (yield from self._get(key, op.namespace, op.key))
        if isinstance(op, SearchOp):
            if op.query:
                return (yield from self._query_search(op, op.query))
            return (yield from self._listing_search(op))
        return (yield from self._list_namespaces(op))

    # Reading

    def _entry(self, key: str) -> Steps[Entry | None]:
        """The entry under ``key``; ``None`` when absent or not this store's."""
        answer = yield from calls.kv_value(key)
        if not answer.found or answer.value is None:
            return None
        return Entry.decode(answer.value)

    def _memory(self, memory_id: str) -> Steps[Looked]:
        """The fact ``memory_id`` as this token may read it."""
        try:
            memory = yield from calls.get_memory(memory_id)
        except PineworkAPIError as exc:
            if exc.code == "memory_not_found":
                return None
            if exc.code == "memory_not_own":
                return NOT_OWN
            raise
        return memory

    def _live_value(self, entry: Entry, memory: Looked) -> dict[str, Any] | None:
        """The item's value, or ``None`` when the item is absent: expired, or its fact gone,
        archived (vetoed, erased, superseded, archived by a person or the review) or expired.
        A person's edit of the fact shows in ``text_field``
        (docs/integrations/langgraph.md#facts)."""
        if entry.expired(self._now()):
            return None
        if entry.memory_id is None or isinstance(memory, _NotOwn):
            return entry.value
        if memory is None or memory.status != "active" or memory.expired:
            return None
        return {**entry.value, self.text_field: memory.text}

    def _item_value(self, key: str) -> Steps[tuple[Entry, dict[str, Any]] | None]:
        """The entry and the live value under ``key``, or ``None``."""
        entry = yield from self._entry(key)
        if entry is None:
            return None
        memory: Looked = None
        if entry.memory_id is not None:
            memory = yield from self._memory(entry.memory_id)
        value = self._live_value(entry, memory)
        return None if value is None else (entry, value)

    def _get(self, key: str, namespace: tuple[str, ...], item_key: str) -> Steps[Item | None]:
        """``GetOp``: the item, or ``None``."""
        found = yield from self._item_value(key)
        if found is None:
            return None
        entry, value = found
        return Item(
            value=value,
            key=item_key,
            namespace=namespace,
            created_at=entry.created_at,
            updated_at=entry.updated_at,
        )

    def _keys(self, start: str) -> Steps[list[str]]:
        """Every key-value key starting with ``start``, in key order
        (docs/reference.md#kv-listing)."""
        return (yield from calls.keys_under(start, PAGE))

    def _listing_search(self, op: SearchOp) -> Steps[list[SearchItem]]:
        """``SearchOp`` without a query: the live items under the prefix in key order,
        filtered, then ``offset``/``limit``."""
        stop = op.offset + op.limit if min(op.offset, op.limit) >= 0 else None
        found: list[SearchItem] = []
        for key in (
            yield from self._keys(namespace_prefix_key(self.key_prefix, op.namespace_prefix))
        ):
            where = decode_key(self.key_prefix, key)
            item = None if where is None else (yield from self._item_value(key))
            if where is None or item is None or not matches_filter(item[1], op.filter):
                continue
            found.append(_search_item(where, item[0], item[1], None))
            if len(found) == stop:
                break
        return found[op.offset : op.offset + op.limit]

    def _query_search(self, op: SearchOp, query: str) -> Steps[list[SearchItem]]:
        """``SearchOp`` with a query: a recall (a preview unless ``count_recalls``) whose facts
        are mapped back to the items under the prefix, best score first, filtered, then
        ``offset``/``limit`` (docs/integrations/langgraph.md#search)."""
        recalled = yield from calls.recall(
            query=query,
            agent_id=self.agent_id,
            count=self.count_recalls,
            meta=meta_conditions(op.filter) or None,
        )
        if not recalled.memories:
            return []
        by_memory: dict[str, tuple[tuple[tuple[str, ...], str], Entry]] = {}
        now = self._now()
        for key in (
            yield from self._keys(namespace_prefix_key(self.key_prefix, op.namespace_prefix))
        ):
            where = decode_key(self.key_prefix, key)
            entry = None if where is None else (yield from self._entry(key))
            if (
                where is not None
                and entry is not None
                and entry.memory_id
                and not entry.expired(now)
            ):
                by_memory[entry.memory_id] = (where, entry)
        found: list[SearchItem] = []
        for scored in recalled.memories:
            if scored.memory.id not in by_memory:
                continue
            where, entry = by_memory[scored.memory.id]
            value = {**entry.value, self.text_field: scored.memory.text}
            if matches_filter(value, op.filter):
                found.append(_search_item(where, entry, value, scored.score))
        return found[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> Steps[list[tuple[str, ...]]]:
        """``ListNamespacesOp``: the namespaces of the stored keys (expired items' included
        until deleted), matched, cut at ``max_depth``, sorted, then ``offset``/``limit``."""
        namespaces: set[tuple[str, ...]] = set()
        for key in (yield from self._keys(self.key_prefix)):
            where = decode_key(self.key_prefix, key)
            if where is None:
                continue
            namespace = where[0]
            if all(matches_namespace(c, namespace) for c in op.match_conditions or ()):
                namespaces.add(namespace if op.max_depth is None else namespace[: op.max_depth])
        return sorted(namespaces)[op.offset : op.offset + op.limit]

    # Writing

    def _put(self, key: str, op: PutOp) -> Steps[None]:
        """``PutOp`` with a value (docs/integrations/langgraph.md#facts): the fact first (new,
        superseding the item's old one, or kept when its text and expiry did not change),
        then the entry; the new fact is archived again if the entry cannot be written."""
        value = dict(cast(Mapping[str, Any], op.value))
        now = self._now()
        expires_at = _expiry(now, op.ttl)
        old = yield from self._entry(key)
        memory: Looked = None
        if old is not None and old.memory_id is not None:
            memory = yield from self._memory(old.memory_id)
        created = now if old is None or self._live_value(old, memory) is None else old.created_at
        old_fact = memory if isinstance(memory, Memory) and memory.status == "active" else None
        text = value.get(self.text_field)
        entry = Entry(value, created, now, None, expires_at)
        entry.encode()  # refuse a value that is not JSON before anything is written
        if not isinstance(text, str):
            yield from calls.kv_remember(key, entry.encode())
            if old_fact is not None:
                yield from self._archive(old_fact.id, REPLACED_REASON)
            return None
        metadata = item_metadata(value, self.text_field)
        unchanged = op.ttl is None and (old is None or old.expires_at is None)
        same = old_fact is not None and old_fact.metadata == _stored(metadata)
        if old_fact is not None and old_fact.text == text and unchanged and same:
            memory_id = old_fact.id
            saved = False
        else:
            supersedes = None if old_fact is None else old_fact.id
            try:
                fact = yield from calls.save_fact(
                    text,
                    expires_at=expires_at,
                    supersedes=supersedes,
                    agent_id=self.agent_id,
                    metadata=metadata,
                )
            except PineworkAPIError as exc:
                if not metadata or exc.code not in METADATA_REFUSALS:
                    raise
                # A field the server will not keep as metadata (it looks like a secret,
                # or holds characters stored text may not): the fact without metadata;
                # a filter on it is then checked here only.
                fact = yield from calls.save_fact(
                    text, expires_at=expires_at, supersedes=supersedes, agent_id=self.agent_id
                )
            memory_id, saved = fact.id, True
        try:
            yield from calls.kv_remember(
                key, Entry(value, created, now, memory_id, expires_at).encode()
            )
        except PineworkAPIError:
            if saved:
                yield from self._archive(memory_id, UNDO_REASON)
            raise
        return None

    def _delete(self, key: str) -> Steps[None]:
        """``PutOp`` with ``value=None``: the item's fact archived, then its entry forgotten."""
        entry = yield from self._entry(key)
        if entry is not None and entry.memory_id is not None:
            yield from self._archive(entry.memory_id, DELETE_REASON)
        yield from calls.kv_forget(key)
        return None

    def _archive(self, memory_id: str, reason: str) -> Steps[None]:
        """Archive a fact; one already archived, gone or another agent's is left as it is."""
        try:
            yield from calls.archive(memory_id, reason)
        except PineworkAPIError as exc:
            if exc.code not in ("memory_already_archived", "memory_not_found", "memory_not_own"):
                raise
            logger.info("Pinework fact %s left as it is: %s", memory_id, exc.code)
        return None


def _stored(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata as the server stores it: keys lower-cased and sorted."""
    return {key.lower(): metadata[key] for key in sorted(metadata, key=str.lower)}


def _expiry(now: dt.datetime, ttl: float | None) -> dt.datetime | None:
    """``now`` plus ``ttl`` minutes, or ``None`` without a TTL.

    Raises:
        ValueError: ``ttl`` is not a positive number of minutes.
    """
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
        raise ValueError(f"ttl is minutes from now, a positive number, not {ttl!r}")
    return now + dt.timedelta(minutes=ttl)


def _search_item(
    where: tuple[tuple[str, ...], str], entry: Entry, value: dict[str, Any], score: float | None
) -> SearchItem:
    """A search result."""
    return SearchItem(
        namespace=where[0],
        key=where[1],
        value=value,
        created_at=entry.created_at,
        updated_at=entry.updated_at,
        score=score,
    )
