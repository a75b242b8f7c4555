"""Recall requests and the recall log (the injection log, docs/issues.md#issue-3): which memories
went to which agent, session, run and task, with their scores (docs/reference.md#8-recall)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from chalicelib.models.common import RequestModel, Timestamp, WireModel
from chalicelib.models.requests import META_FILTER_DESCRIPTION, SentMetaFilter, SentTags


class RecallStartRequest(RequestModel):
    """``POST /memories/recall/start``: run-start recall (docs/reference.md#7-http-api to
    docs/reference.md#8-recall).

    ``resumed`` is required (docs/reference.md#7-http-api lists it without ``?``). ``sessionId`` may
    come from the ``X-Pinework-Session`` header instead (same rules: printable ASCII, at
    most 128 characters; checked by ``RecallService.start``).
    ``task`` (else ``message``, else the ``X-Pinework-Task`` header) is what facts
    are scored against. A ``slashCommand`` or a resumed session that already had a
    run-start recall in the last 24 hours gets no block.
    """

    session_id: str | None = None
    resumed: bool
    task: str | None = None
    message: str | None = None
    slash_command: str | None = None
    tags: SentTags | None = Field(
        default=None,
        description="Rank only facts holding every one of these tags (docs/reference.md#tags).",
    )
    any_tags: SentTags | None = Field(
        default=None, description="Rank only facts holding at least one of these tags."
    )
    meta: SentMetaFilter | None = Field(default=None, description=META_FILTER_DESCRIPTION)


class RecalledMemory(WireModel):
    """One memory of a recall log entry and its score (``None`` on fallback)."""

    memory_id: str
    score: float | None


class RecalledLearning(WireModel):
    """One learning of a recall log entry and its score (``None`` on fallback;
    docs/reference.md#learnings-in-recall)."""

    learning_id: str
    score: float | None


class RecalledSection(WireModel):
    """One wiki section a recall showed (docs/reference.md#wiki-in-recall): its page,
    its position among the page's sections, its heading's anchor and its score."""

    page_id: str
    index: int
    anchor: str
    score: float


class RecallLogEntry(WireModel):
    """One recall, as the recall log keeps it (readable by persons)."""

    id: str
    workspace_id: str = Field(exclude=True)
    agent_id: str
    kind: Literal["start", "on_demand"]
    session_id: str | None = None
    run_id: str | None = None
    task_key: str | None = None
    query: str
    fallback: str | None = None
    at: Timestamp
    memories: list[RecalledMemory]
    learnings: list[RecalledLearning] = Field(default_factory=list)
    sections: list[RecalledSection] = Field(default_factory=list)
    wiki_failed: bool = False
    """Scoring the wiki's sections failed: none was shown."""

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON object (``object: "recall_log"``)."""
        body = self.model_dump(mode="json", by_alias=True)
        return {"id": body.pop("id"), "object": "recall_log", **body}


@dataclass(frozen=True)
class RecallEntry:
    """One live fact as the recall index holds it (docs/issues.md#issue-23-item-1).

    Attributes:
        memory_id: the fact's ``mem_…`` id.
        text: the fact text, exactly as stored on the memory.
        created_at: when the fact was saved (aware UTC).
        expires_at: when it expires (aware UTC).
        sentence: the first ``RECALL_INDEX_VECTOR_BYTES`` of the stored embedding (its
            format tag, the sentence vector and the word-piece count byte), or ``None``
            when the memory has no embedding.
        embedding_size: the stored embedding's full length in bytes (0 without one), so
            the scorer can check the format as ``is_ours`` does.
        version: the memory's version the entry was made from (of two copies of one
            fact, the later version holds; a tombstone of a later one removes it).
    """

    memory_id: str
    text: str
    created_at: datetime
    expires_at: datetime
    sentence: bytes | None
    embedding_size: int
    version: int
