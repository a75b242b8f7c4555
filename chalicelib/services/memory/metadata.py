"""A fact's metadata (docs/reference.md#metadata): a small flat object of keys and
values a caller attaches to a fact (a project, a customer, a source, a date).

A key as sent is trimmed and lower-cased, then must match
``limits.METADATA_KEY_PATTERN``; a value is a string (at most
``limits.METADATA_STRING_MAX_CHARS`` characters, the stored-text character rule, no
credential), a finite number or a boolean; a date is sent as an ISO 8601 string
(``2026-12-07``), which orders as text. At most ``limits.MAX_METADATA_KEYS`` keys and
``limits.METADATA_MAX_BYTES`` bytes of compact JSON. Every refusal is 400
``memory_metadata_invalid`` and nothing is stored; a key or a string that looks like a
credential is 400 ``secret_in_memory``, as a text is. Day rows carry none.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from chalicelib.errors import InvalidRequest, MemoryMetadataInvalid
from chalicelib.limits import (
    MAX_METADATA_KEYS,
    METADATA_KEY_PATTERN,
    METADATA_MAX_BYTES,
    METADATA_STRING_MAX_CHARS,
)
from chalicelib.models.memory import Memory, MemoryKind, MetadataValue
from chalicelib.services.text import SecretFinder, check_characters, check_no_secret

_KEY = re.compile(METADATA_KEY_PATTERN)


def _shown(raw: str) -> str:
    return repr(raw if len(raw) <= 50 else raw[:50] + "…")


def metadata_key(raw: str) -> str:
    """One key as stored: trimmed and lower-cased.

    Raises:
        MemoryMetadataInvalid: empty, or not ``METADATA_KEY_PATTERN`` once normalized.
    """
    key = raw.strip().lower()
    if not _KEY.fullmatch(key):
        raise MemoryMetadataInvalid(
            f"The metadata key {_shown(raw)} is not a key: a letter, then letters, digits "
            "and _ . - (40 characters at most; case is ignored)."
        )
    return key


def _value(key: str, value: Any, secrets: SecretFinder) -> MetadataValue:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise MemoryMetadataInvalid(f"The value of {key!r} is not a finite number.")
        return value
    if isinstance(value, str):
        if len(value) > METADATA_STRING_MAX_CHARS:
            raise MemoryMetadataInvalid(
                f"The value of {key!r} has {len(value)} characters; a metadata string has "
                f"at most {METADATA_STRING_MAX_CHARS}."
            )
        try:
            check_characters(value, f"the value of {key!r}")
        except InvalidRequest as error:
            raise MemoryMetadataInvalid(error.message) from error
        check_no_secret(value, what="metadata value", secrets=secrets)
        return value
    raise MemoryMetadataInvalid(
        f"The value of {key!r} is not a string, a number or a boolean (metadata is flat: "
        "no objects, arrays or null; send a date as a string such as '2026-12-07')."
    )


def fact_metadata(raw: Any, secrets: SecretFinder) -> dict[str, MetadataValue]:
    """The metadata a fact stores for ``raw`` as sent, keys normalized and sorted
    (docs/reference.md#metadata).

    Raises:
        MemoryMetadataInvalid: not an object, a bad key or value, two keys the same once
            normalized, more than ``MAX_METADATA_KEYS`` keys, or over
            ``METADATA_MAX_BYTES`` as compact JSON.
        SecretInMemory: a key or a string value looks like a credential.
    """
    if not isinstance(raw, dict):
        raise MemoryMetadataInvalid("metadata is an object of keys and values.")
    if len(raw) > MAX_METADATA_KEYS:
        raise MemoryMetadataInvalid(
            f"A fact has at most {MAX_METADATA_KEYS} metadata keys; {len(raw)} were sent."
        )
    found: dict[str, MetadataValue] = {}
    for raw_key, value in raw.items():
        key = metadata_key(str(raw_key))
        if key in found:
            raise MemoryMetadataInvalid(f"The metadata key {key!r} is sent twice.")
        check_no_secret(key, what="metadata key", secrets=secrets)
        found[key] = _value(key, value, secrets)
    ordered = dict(sorted(found.items()))
    size = len(json.dumps(ordered, separators=(",", ":"), ensure_ascii=False).encode())
    if size > METADATA_MAX_BYTES:
        raise MemoryMetadataInvalid(
            f"The metadata is {size} bytes as JSON; a fact's metadata has at most "
            f"{METADATA_MAX_BYTES}."
        )
    return ordered


def refuse_day_metadata(memory: Memory) -> None:
    """Refuse metadata on a day row: only facts carry it (docs/reference.md#metadata).

    Raises:
        MemoryMetadataInvalid: ``memory`` is a day row.
    """
    if memory.kind is MemoryKind.DAY:
        raise MemoryMetadataInvalid(f"{memory.id} is a day row; only facts carry metadata.")
