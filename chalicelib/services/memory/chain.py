"""A memory's supersede chain both ways (docs/reference.md#3-the-memory-object ``supersedes`` /
``supersededBy``, §13): the memories it replaced, oldest last, and the ones that replaced it."""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.errors import MemoryNotFound, MemoryNotOwn
from chalicelib.models.memory import Memory
from chalicelib.models.principal import Principal
from chalicelib.services.memory.service import MemoryService

CHAIN_MAX_STEPS = 25
"""Links followed each way at most; a longer chain says it goes on."""


@dataclass(frozen=True)
class SupersedeChain:
    """The neighbours of a memory in its chain, nearest first.

    Attributes:
        older: what it replaced, then what that replaced, …
        newer: what replaced it, then what replaced that, …
        older_continues / newer_continues: the chain goes on past ``CHAIN_MAX_STEPS``.
        missing: ids a link names that the caller cannot read (gone, or not theirs).
    """

    older: list[Memory]
    newer: list[Memory]
    older_continues: bool = False
    newer_continues: bool = False
    missing: tuple[str, ...] = ()


def supersede_chain(
    memories: MemoryService, principal: Principal, memory: Memory
) -> SupersedeChain:
    """Walk ``supersedes`` back and ``supersededBy`` forward from ``memory``, reading
    each link with ``MemoryService.get`` (the caller's visibility rules).

    A cycle cannot arise (a memory supersedes only an older live one), but the walk
    stops at a repeated id anyway.
    """
    missing: list[str] = []

    def walk(start: str | None, forward: bool) -> tuple[list[Memory], bool]:
        seen = {memory.id}
        found: list[Memory] = []
        next_id = start
        while next_id is not None and next_id not in seen:
            if len(found) == CHAIN_MAX_STEPS:
                return found, True
            seen.add(next_id)
            try:
                link = memories.get(principal, next_id)
            except (MemoryNotFound, MemoryNotOwn):
                missing.append(next_id)
                break
            found.append(link)
            next_id = link.superseded_by if forward else link.supersedes
        return found, False

    older, older_more = walk(memory.supersedes, forward=False)
    newer, newer_more = walk(memory.superseded_by, forward=True)
    return SupersedeChain(older, newer, older_more, newer_more, tuple(missing))
