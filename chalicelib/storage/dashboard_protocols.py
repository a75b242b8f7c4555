"""What the dashboard's services need from storage besides ``protocols.py``
(docs/reference.md#13-dashboard, docs/issues.md#issue-13): an agent's memories without their text,
and browser sessions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from chalicelib.models.memory import MemoryKind, MemoryStatus
from chalicelib.models.overview import MemoryIndexEntry
from chalicelib.models.session import SignInCode, WebSession
from chalicelib.models.totals import ListTotal


class MemoryIndexRepository(Protocol):
    """An agent's memories without their text, for counts and pictures (docs/issues.md#issue-13)."""

    def count(self, agent_id: str, kind: MemoryKind, status: MemoryStatus) -> int:
        """How many of the agent's memories have this kind and status."""
        ...

    def entries(
        self, agent_id: str, kind: MemoryKind, status: MemoryStatus, *, newest: int | None = None
    ) -> list[MemoryIndexEntry]:
        """Those memories newest first (at most ``newest`` of them when given)."""
        ...

    def count_page(
        self,
        agent_id: str,
        kinds: Sequence[MemoryKind],
        statuses: Sequence[MemoryStatus],
        after_id: str | None,
        *,
        expired: bool | None,
        now: datetime,
        cap: int,
    ) -> ListTotal:
        """How many memories of ``kinds`` in ``statuses`` (expired or not, when given)
        the agent has, and how many are newer than the page after ``after_id``; at most
        ``cap`` read (docs/reference.md#list-totals)."""
        ...


class WebSessionRepository(Protocol):
    """Dashboard sessions and one-time sign-in codes, stored under their secrets'
    hashes (docs/reference.md#13-dashboard)."""

    def create_session(self, session: WebSession) -> None:
        """Write a new session."""
        ...

    def get_session(self, secret_hash: str) -> WebSession | None:
        """The stored session (expired or not), or None."""
        ...

    def extend_session(self, session: WebSession, now: datetime, expires_at: datetime) -> bool:
        """Push a live session's idle expiry back; False (nothing written) when it is
        gone or expired."""
        ...

    def delete_session(self, secret_hash: str) -> None:
        """Delete a session (a missing one is fine)."""
        ...

    def create_code(self, code: SignInCode) -> None:
        """Write a new one-time sign-in code."""
        ...

    def consume_code(self, code_hash: str) -> SignInCode | None:
        """Delete a code atomically and return it (expired or not); None when it does
        not exist (never issued or used already)."""
        ...

    def get_code(self, code_hash: str) -> SignInCode | None:
        """Read a code without using it (expired or not); None when it does not exist."""
        ...


@dataclass(frozen=True)
class UpgradeReport:
    """What an upgrade run did.

    Attributes:
        done_before: a finished run was recorded already; nothing was read.
        scanned: items read.
        agents_listed: agents given their workspace listing.
        memories_indexed: memories given the index values they lacked (``byAgentKind``,
            the workspace shards).
        changed_meanwhile: memories whose status changed while the run read them
            (their change wrote the value itself; nothing is lost).
        owners_marked: items given the owner mark they lacked (``storage/owner_marks.py``).
        erasures_listed: erasures (of memories, agents, persons) given their entry in
            their workspace's past erasures (``storage/erasure_list.py``).
        tags_refiled: tagged facts whose tag index entries were written again
            (``storage/memory_tags.py``).
        stale_tags_dropped: tag index entries deleted because their memory no longer
            holds the tag under that status (a release without tags changed it).
        section_pages_rebuilt: wiki pages whose sections, one item each, were rebuilt
            as one packed record (``wiki_sections.rebuild_pages``).
    """

    done_before: bool = False
    scanned: int = 0
    agents_listed: int = 0
    memories_indexed: int = 0
    changed_meanwhile: int = 0
    owners_marked: int = 0
    erasures_listed: int = 0
    tags_refiled: int = 0
    stale_tags_dropped: int = 0
    section_pages_rebuilt: int = 0

    def to_wire(self) -> dict[str, Any]:
        """The report as JSON (camelCase)."""
        return {
            "doneBefore": self.done_before,
            "scanned": self.scanned,
            "agentsListed": self.agents_listed,
            "memoriesIndexed": self.memories_indexed,
            "ownersMarked": self.owners_marked,
            "erasuresListed": self.erasures_listed,
            "tagsRefiled": self.tags_refiled,
            "staleTagsDropped": self.stale_tags_dropped,
            "sectionPagesRebuilt": self.section_pages_rebuilt,
            "changedMeanwhile": self.changed_meanwhile,
        }


class TableUpgrader(Protocol):
    """The one-time upgrade of a table written before the dashboard (operators only)."""

    def run(self, now: datetime) -> UpgradeReport:
        """Upgrade what needs it and record the run; ``done_before`` if recorded already."""
        ...
