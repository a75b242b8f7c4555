"""What belongs to an agent, a person or a workspace, and how an erasure or an export
reads it by key (docs/reference.md#erasing-an-agent-a-person-or-a-workspace,
docs/issues.md#issue-24-item-2, docs/issues.md#issue-41-item-1).

The rule (``belongs``), complete by construction over the items it is shown:

* an item belongs to an agent or a workspace when its key or any of its values names
  one of the target's ids (the workspace, its agents, the agent), or when its
  partition is one of the ids collected from items that belong (their memories,
  reviews, tokens, learnings, and a workspace's persons and agents);
* in the learnings' partitions an agent's erasure or export takes what is the agent's
  own: a learning (and its copy filed by state) it proposed, its proposal counters,
  and what the learnings it proposed reveal (their history, their refused-text
  entries); a learning a person wrote stays even when its text names the agent
  (docs/reference.md#learnings-and-erasure);
* an item belongs to a person only in the partitions that are the person's own
  (person, tokens, token ids, owner marks, dashboard sessions and sign-in codes, the
  e-mail claim, idempotency records): elsewhere — an audit record, a review decision —
  their id stays as the actor of what they did.

The items it is shown (``owned_items``) are read by key, never by a Scan of the table:
those keyed by the target's ids (``OwnerStore.owned_pages``: an agent's partitions,
memories, tokens and owner-marked items; a person's; a workspace's shared partitions),
then those keyed by the ids the items that belong reveal (a review's lookups, a token
id, a learning's history; a workspace's agents and persons). An agent's erasure or
export also reads its workspace's shared partitions (listing, learnings, actions waiting
for a person, key-value entries), where the rule keeps what names the agent. So the
reads grow with the target's own data, not with the table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, Literal, Protocol

TargetKind = Literal["agent", "person", "workspace"]
ID_PATTERN = re.compile(r"(?:wsp|agt|usr|mem|rvw|tok|lrn|pag)_[0-9A-HJKMNP-TV-Z]{26}")
"""Every id the rule looks for in keys and values (learnings' ``lrn_`` included:
docs/issues.md#issue-42-item-1)."""
KEPT_PARTITIONS = ("ERASURE#", "UPGRADE#")
"""Never erased: erasures' own records and the table's upgrade markers."""
PERSONAL_PARTITIONS = (
    "PERSON#",
    "TOKEN#",
    "TOKENID#",
    "OWNED#",
    "WEBSESSION#",
    "SIGNIN#",
    "PERSONEMAIL#",
    "IDEMPOTENCY#",
)
"""The partitions whose items are a person's own (``belongs``)."""
FOLLOWED_PREFIXES = ("agt_", "usr_", "rvw_", "tok_", "lrn_", "pag_")
"""Revealed ids whose own partitions are read next (a memory's partition is read with
its agent's, so ``mem_`` ids are only collected)."""


class OwnerPages(Protocol):
    """The items keyed by one id (``storage/owner_store.py``)."""

    def owned_pages(self, owner_id: str) -> Iterable[list[dict[str, Any]]]:
        """Every item keyed by ``owner_id``, page by page."""
        ...


def item_kind(item: dict[str, Any]) -> str:
    """The kind an item is counted under: its partition's prefix (``MEMORY``,
    ``RECALLINDEX`` …), ``AUDIT`` for an audit record."""
    pk, sk = str(item["pk"]), str(item.get("sk", ""))
    if pk.startswith("MEMORY#") and sk.startswith("AUDIT#"):
        return "AUDIT"
    return pk.split("#", 1)[0]


def _values_text(item: dict[str, Any]) -> str:
    return json.dumps(item, default=lambda value: "", ensure_ascii=False)


LEARNING_PARTITIONS = ("LEARNINGS#", "LEARNING#")
"""The learnings' partitions, where an agent's erasure reads fields, not every value."""
WIKI_PARTITIONS = ("WIKI#", "WIKIPAGE#", "WIKISECTIONS#")
"""The wiki pages' partitions (their section index too): the workspace's alone (persons
write pages; a page whose text names an agent stays through that agent's erasure:
docs/reference.md#17-wiki-pages)."""


def belongs(item: dict[str, Any], kind: TargetKind, ids: set[str], collected: set[str]) -> bool:
    """Whether ``item`` is erased (or exported) with the target (the module's rule).

    Args:
        ids: the target's own ids (the workspace and its agents; the agent; the person).
        collected: ids found in items that belong (their partitions go too).
    """
    pk = str(item["pk"])
    if pk.startswith(KEPT_PARTITIONS):
        return False
    if collected and not collected.isdisjoint(ID_PATTERN.findall(pk)):
        return True
    if kind == "person" and not pk.startswith(PERSONAL_PARTITIONS):
        return False
    if kind == "agent" and pk.startswith(WIKI_PARTITIONS):
        return False
    if kind == "agent" and pk.startswith(LEARNING_PARTITIONS):
        return _agents_learning_item(item, ids, collected)
    return not ids.isdisjoint(ID_PATTERN.findall(_values_text(item)))


def _agents_learning_item(item: dict[str, Any], ids: set[str], collected: set[str]) -> bool:
    """An item of the learnings' partitions that is the agent's own: a learning or its
    state copy the agent proposed, a proposal counter keyed by it (``RATE#<agt>#…``), a
    refused-text entry of a learning that went with it. Not a learning that only names
    it in its text, nor a history record outside the collected learnings' partitions."""
    if str(item.get("proposedBy", "")) in ids:
        return True
    if str(item.get("learningId", "")) in collected:
        return True
    return not ids.isdisjoint(ID_PATTERN.findall(str(item.get("sk", ""))))


def revealed(item: dict[str, Any], kind: TargetKind) -> set[str]:
    """The ids an item that belongs reveals as the target's too: a memory's id, a
    review's, a token's, a learning's, a wiki page's; for a workspace, its persons and
    agents."""
    pk, sk = str(item["pk"]), str(item.get("sk", ""))
    found: set[str] = set()
    if pk.startswith("MEMORY#") and sk == "MEMORY":
        found.add(pk.removeprefix("MEMORY#"))
    if pk.startswith("REVIEWS#"):
        found.add(sk)
    if pk.startswith(("TOKEN#", "TOKENID#")) and item.get("tokenId"):
        found.add(str(item["tokenId"]))
    if pk.startswith("LEARNINGS#") and sk.startswith("LEARNING#"):
        found.add(sk.removeprefix("LEARNING#"))
    if pk.startswith("WIKI#") and sk.startswith("PAGE#"):
        found.add(sk.removeprefix("PAGE#"))
    if kind == "workspace" and pk.startswith(("PERSON#", "AGENT#")):
        found.add(pk.split("#", 1)[1])
    if kind == "workspace" and pk.startswith("WORKSPACE#") and sk.startswith("AGENT#"):
        found.add(sk.removeprefix("AGENT#"))
    return {value for value in found if ID_PATTERN.fullmatch(value)}


def owned_items(
    store: OwnerPages,
    kind: TargetKind,
    ids: set[str],
    collected: set[str],
    workspace_id: str | None = None,
) -> Iterator[tuple[list[dict[str, Any]], set[str]]]:
    """The target's items by key (the module's reads), page by page: each page's items
    that belong (each item once), and the ids they revealed that were not known.

    ``collected`` grows as ids are revealed (before the page is yielded, so a caller
    can save them before deleting the page). ``workspace_id``: an agent's workspace,
    whose shared partitions are read too.
    """
    pending = sorted(ids | {found for found in collected if found.startswith(FOLLOWED_PREFIXES)})
    if kind == "agent" and workspace_id:
        pending.append(workspace_id)
    read: set[str] = set()
    seen: set[tuple[str, str]] = set()
    while pending:
        owner = pending.pop(0)
        if owner in read:
            continue
        read.add(owner)
        for page in store.owned_pages(owner):
            mine, found = _belonging(page, kind, ids, collected, seen)
            pending.extend(sorted(value for value in found if value.startswith(FOLLOWED_PREFIXES)))
            yield mine, found


def _belonging(
    page: list[dict[str, Any]],
    kind: TargetKind,
    ids: set[str],
    collected: set[str],
    seen: set[tuple[str, str]],
) -> tuple[list[dict[str, Any]], set[str]]:
    """The page's items that belong and not yet ``seen``, and the new ids they reveal
    (added to ``collected``). Repeated until nothing new is revealed: a memory's audit
    records sort before the memory item that reveals its id."""
    found: set[str] = set()
    mine: list[dict[str, Any]] = []
    rest = page
    while rest:
        taken = [item for item in rest if belongs(item, kind, ids, collected)]
        if not taken:
            break
        new: set[str] = set()
        for item in taken:
            new |= revealed(item, kind) - collected - ids
        collected |= new
        found |= new
        mine.extend(taken)
        taken_ids = {id(item) for item in taken}
        rest = [item for item in rest if id(item) not in taken_ids]
        if not new:
            break
    unique = []
    for item in mine:
        key = (str(item["pk"]), str(item.get("sk", "")))
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique, found
