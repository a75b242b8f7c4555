"""Tags on facts (docs/reference.md#tags): how a tag as sent becomes the tag stored,
and how a list's tag filter is read.

A tag as sent is trimmed and lower-cased (ASCII: the only letters a tag may hold, so
this is its case folding), then must match ``limits.TAG_PATTERN`` within
``limits.TAG_MAX_CHARS``; a fact's tags are kept sorted, each once, at most
``limits.MAX_TAGS``. Every refusal is 400 ``memory_tag_invalid`` and nothing is stored;
a tag that looks like a credential is 400 ``secret_in_memory``, as a text is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chalicelib.errors import MemoryTagInvalid
from chalicelib.limits import MAX_FILTER_TAGS, MAX_TAGS, TAG_MAX_CHARS, TAG_PATTERN
from chalicelib.models.memory import Memory, MemoryKind
from chalicelib.services.text import SecretFinder, check_no_secret

_TAG = re.compile(TAG_PATTERN)


def normalize_tag(raw: str) -> str:
    """One tag as stored: ``raw`` trimmed and lower-cased (docs/reference.md#tags).

    Raises:
        MemoryTagInvalid: empty once trimmed, over ``TAG_MAX_CHARS`` characters, or a
            character outside ``TAG_PATTERN`` (the message names the tag, shortened).
    """
    tag = raw.strip().lower()
    shown = repr(raw if len(raw) <= TAG_MAX_CHARS + 10 else raw[: TAG_MAX_CHARS + 10] + "…")
    if not tag:
        raise MemoryTagInvalid("A tag is empty. Send tags such as 'billing' or 'customer:acme'.")
    if len(tag) > TAG_MAX_CHARS:
        raise MemoryTagInvalid(
            f"The tag {shown} has {len(tag)} characters; a tag has at most {TAG_MAX_CHARS}."
        )
    if not _TAG.fullmatch(tag):
        raise MemoryTagInvalid(
            f"The tag {shown} holds a character a tag may not: a tag is letters a-z, digits "
            "and . _ : - (case is ignored), starting with a letter or a digit."
        )
    return tag


def fact_tags(raw: Sequence[str], secrets: SecretFinder) -> tuple[str, ...]:
    """The tags a fact stores for ``raw`` as sent: each normalized (``normalize_tag``),
    each once, sorted (docs/reference.md#tags).

    Raises:
        MemoryTagInvalid: more than ``MAX_TAGS`` tags sent (duplicates counted, as
            sent), or one tag is invalid (``normalize_tag``).
        SecretInMemory: a tag looks like a credential (``check_no_secret``).
    """
    if len(raw) > MAX_TAGS:
        raise MemoryTagInvalid(f"A fact has at most {MAX_TAGS} tags; {len(raw)} were sent.")
    tags = sorted({normalize_tag(tag) for tag in raw})
    for tag in tags:
        check_no_secret(tag, what="tag", secrets=secrets)
    return tuple(tags)


def refuse_day_tags(memory: Memory) -> None:
    """Refuse tags on a day row: only facts carry tags (docs/reference.md#tags).

    Raises:
        MemoryTagInvalid: ``memory`` is a day row.
    """
    if memory.kind is MemoryKind.DAY:
        raise MemoryTagInvalid(f"{memory.id} is a day row; only facts carry tags.")


@dataclass(frozen=True)
class TagFilter:
    """A list's tag filter (docs/reference.md#tags): facts holding every tag of
    ``all_of`` and at least one of ``any_of`` (an empty side asks nothing)."""

    all_of: tuple[str, ...] = ()
    any_of: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when the filter names no tag (the plain list)."""
        return not self.all_of and not self.any_of


def split_tags(raw: str | None) -> list[str]:
    """The tags of a query parameter, comma-separated (a parameter given more than once
    arrives joined so); ``None``: none."""
    return [] if raw is None else raw.split(",")


def tag_filter(all_of: Sequence[str], any_of: Sequence[str]) -> TagFilter:
    """The filter of a list's ``tag`` and ``anyTag`` (``split_tags``) or a recall's
    ``tags`` and ``anyTags``: each tag normalized (``normalize_tag``), each once.

    Raises:
        MemoryTagInvalid: a named tag is invalid (an empty parameter names an empty
            tag), or more than ``MAX_FILTER_TAGS`` distinct tags in all.
    """
    found = TagFilter(
        tuple(sorted({normalize_tag(tag) for tag in all_of})),
        tuple(sorted({normalize_tag(tag) for tag in any_of})),
    )
    named = len(found.all_of) + len(found.any_of)
    if named > MAX_FILTER_TAGS:
        raise MemoryTagInvalid(
            f"A filter names at most {MAX_FILTER_TAGS} tags (all of and any of together); "
            f"{named} were named."
        )
    return found
