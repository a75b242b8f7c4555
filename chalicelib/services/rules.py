"""Rules shared by the memory services: limits (SPEC §5), expiry dates (SPEC §7),
secrets (SPEC §6) and who may touch which memory (SPEC §7 "who").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from typing import Protocol, TypeVar

from chalicelib.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    MemoryAgentRequired,
    MemoryNotFound,
    MemoryNotOwn,
    MemoryTextTooLong,
    PineworkError,
    SecretInMemory,
)
from chalicelib.ids import AGENT_ID, MEMORY_ID
from chalicelib.models.memory import Memory
from chalicelib.models.principal import Principal
from chalicelib.storage.protocols import DirectoryRepository, MemoryRepository, WriteConflict

FACT_MAX_CHARS = 500
DAY_LINE_MAX_CHARS = 300
DAY_LOG_MAX_CHARS = 8000
ARCHIVE_REASON_MAX_CHARS = 500
EVIDENCE_MAX_CHARS = 2000
RECALL_QUERY_MAX_CHARS = 4000
DEFAULT_FACT_LIFETIME = timedelta(days=90)
HEADER_MAX_CHARS = 128
WRITE_ATTEMPTS = 8
"""How often a state change re-reads and retries after losing a concurrent race."""

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIMESTAMP = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$"
)
_HEADER_VALUE = re.compile(r"^[\x21-\x7e][\x20-\x7e]*$")

T = TypeVar("T")


class SecretFinder(Protocol):
    """Finds credential-shaped text (``chalicelib.services.secrets.SecretDetector``)."""

    def find_secret(self, text: str) -> str | None:
        """Return the kind of secret found, or None."""
        ...


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def check_text(
    text: str, *, limit: int, what: str, secrets: SecretFinder, advice: str | None = None
) -> None:
    """Check memory text: not blank, no control characters, within ``limit`` code
    points, no secret.

    Args:
        advice: what to do when the text is too long (defaults to splitting a fact).

    Raises:
        InvalidRequest: empty or whitespace only (SPEC §3); control characters.
        MemoryTextTooLong: more than ``limit`` characters (SPEC §5).
        SecretInMemory: it looks like a credential (SPEC §6).
    """
    if not _visible(text):
        raise InvalidRequest(f"The {what} is empty: send some text.")
    if _CONTROL.search(text):
        raise InvalidRequest(f"The {what} holds control characters; send plain text.")
    if len(text) > limit:
        raise MemoryTextTooLong(
            f"The {what} has {len(text)} characters; the limit is {limit}. "
            + (advice or "Shorten it, or split it into two facts.")
        )
    check_no_secret(text, what=what, secrets=secrets)


def _visible(text: str) -> bool:
    """True when the text has a character that is neither white space nor an
    invisible format character (zero-width space, joiners, BOM)."""
    return any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in text)


def check_evidence(evidence: str, *, secrets: SecretFinder) -> None:
    """Check a save's ``evidence`` (issue 4, SPEC §9 step 5): the tool-output
    excerpt that supports a fact. Line breaks and tabs are allowed (it is tool
    output); other control characters are not.

    Raises:
        InvalidRequest: blank, control characters, or over 2,000 characters.
        SecretInMemory: it looks like a credential (the same detector as texts).
    """
    if not _visible(evidence):
        raise InvalidRequest("evidence is empty: send the supporting excerpt, or leave it out.")
    if _CONTROL.search(evidence):
        raise InvalidRequest("evidence holds control characters; send plain text.")
    if len(evidence) > EVIDENCE_MAX_CHARS:
        raise InvalidRequest(
            f"evidence has {len(evidence)} characters; the limit is {EVIDENCE_MAX_CHARS}. "
            "Keep the lines that support the fact."
        )
    check_no_secret(evidence, what="evidence", secrets=secrets)


def check_no_secret(text: str, *, what: str, secrets: SecretFinder) -> None:
    """Reject text that looks like a credential (SPEC §6 ``secret_in_memory``).

    Raises:
        SecretInMemory: the detector found a secret (its kind is named, never its value).
    """
    kind = secrets.find_secret(text)
    if kind is not None:
        raise SecretInMemory(
            f"The {what} looks like a secret ({kind}). Keep credentials in a secret "
            "manager, not in memory; save where to find it instead."
        )


def parse_expiry(value: str, now: datetime) -> datetime:
    """Parse ``expiresAt``: RFC 3339 timestamp, or a date meaning the end of that UTC day.

    Returns:
        An aware UTC datetime in the future.

    Raises:
        InvalidRequest: unparseable, without a time zone, or not in the future (SPEC §7).
    """
    try:
        if _DATE_ONLY.match(value):
            day = date.fromisoformat(value)
            moment = datetime.combine(day, time(23, 59, 59, 999000), tzinfo=UTC)
        elif _TIMESTAMP.match(value):
            moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        else:
            raise ValueError(value)
        moment = moment.astimezone(UTC)
    except (ValueError, OverflowError) as error:
        raise InvalidRequest(
            f"expiresAt {value!r} is not a date (YYYY-MM-DD) or an RFC 3339 timestamp "
            "with a time zone, such as 2026-12-31 or 2026-12-31T18:00:00Z."
        ) from error
    if moment <= now:
        raise InvalidRequest(f"expiresAt {value!r} is in the past; send a future time.")
    return moment


def has_content(text: str | None) -> bool:
    """Whether ``text`` holds anything to read: a character that is neither white
    space nor an invisible one (Unicode categories Cc, Cf, Cs, Cn: controls, format
    marks such as U+200B or U+202E, lone surrogates, unassigned code points; Mn, Me:
    marks with no letter to sit on, such as U+034F or a variation selector; and the
    Hangul fillers U+115F, U+1160, U+3164, U+FFA0).

    A recall query, task, message or slash command without content counts as blank
    (SPEC §8; DECISIONS "Run-start recall"): ``"\\u0000\\u0001"`` is not scored, and a
    ``slashCommand`` of ``"\\u200b"`` is no command.
    """
    return text is not None and any(
        not char.isspace() and char not in _FILLERS and unicodedata.category(char) not in _INVISIBLE
        for char in text
    )


_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Cn", "Mn", "Me"})
# Letters that draw nothing (Unicode default-ignorable code points outside the
# categories above): the Hangul fillers and the half-width one.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")


def check_body_session(value: str | None) -> str | None:
    """Validate a body's ``sessionId`` by the header's rules (``check_header``), except
    that nothing is trimmed: a value with white space (or anything else) around it is
    refused rather than read as another session.

    Returns:
        The session id, or None when absent.

    Raises:
        InvalidRequest: empty, not printable ASCII, over 128 characters, or
            surrounded by white space.
    """
    if value is not None and (not value or value != value.strip()):
        raise InvalidRequest(
            f"sessionId must be 1 to {HEADER_MAX_CHARS} printable ASCII characters, with "
            "no white space around them."
        )
    return check_header(value, "sessionId")


def check_header(value: str | None, name: str) -> str | None:
    """Validate an ``X-Pinework-*`` header: printable ASCII, at most 128 characters.

    Raises:
        InvalidRequest: the value is too long or holds control characters.
    """
    if value is None or value.strip() == "":
        return None
    value = value.strip()
    if len(value) > HEADER_MAX_CHARS or not _HEADER_VALUE.match(value):
        raise InvalidRequest(
            f"{name} must be printable ASCII of at most {HEADER_MAX_CHARS} characters."
        )
    return value


def refuse_agents(principal: Principal, message: str) -> None:
    """Refuse an agent what SPEC §7's "who" gives persons only (routes call it before
    reading the body, so the answer does not depend on what the body holds).

    Raises:
        Forbidden: the principal is an agent; ``message`` says what to do instead.
    """
    if principal.is_agent:
        raise Forbidden(message)


def refuse_persons(principal: Principal, error: type[PineworkError], message: str) -> None:
    """Refuse a person what SPEC §7's "who" gives agents only (see ``refuse_agents``).

    Raises:
        PineworkError: ``error(message)`` when the principal is a person.
    """
    if not principal.is_agent:
        raise error(message)


def check_memory_id(memory_id: str) -> None:
    """Reject ids that cannot name a memory, as not found (SPEC §6 ``memory_not_found``)."""
    if not MEMORY_ID.match(memory_id):
        raise MemoryNotFound(f"No memory {memory_id!r} in your workspace. Check the mem_ id.")


def load_visible(repository: MemoryRepository, principal: Principal, memory_id: str) -> Memory:
    """Load a memory the principal may see: its own (agent) or its workspace's (person).

    Raises:
        MemoryNotFound: no such memory in the caller's workspace.
        MemoryNotOwn: an agent asked for another agent's memory.
    """
    check_memory_id(memory_id)
    memory = repository.get(memory_id)
    if memory is None or memory.workspace_id != principal.workspace_id:
        raise MemoryNotFound(f"No memory {memory_id} in your workspace. Check the mem_ id.")
    if principal.is_agent and memory.agent_id != principal.id:
        raise MemoryNotOwn(f"{memory_id} belongs to another agent. Act on your own memories.")
    return memory


def resolve_agent(
    directory: DirectoryRepository, principal: Principal, agent_id: str | None
) -> str:
    """The agent whose memories a request is about.

    An agent acts on itself (naming another is ``memory_not_own``); a person must
    name an agent of its workspace.

    Raises:
        MemoryNotOwn: an agent named another agent.
        MemoryAgentRequired: a person did not name the agent.
        Forbidden: the named agent is not in the caller's workspace.
    """
    if principal.is_agent:
        if agent_id is not None and agent_id != principal.id:
            raise MemoryNotOwn("An agent acts only on its own memories; leave agentId out.")
        return principal.id
    if agent_id is None:
        raise MemoryAgentRequired("Name the agent: pass agentId (or --agent agt_…).")
    agent = directory.get_agent(agent_id) if AGENT_ID.match(agent_id) else None
    if agent is None or agent.workspace_id != principal.workspace_id:
        # SPEC §6: a person outside the workspace is forbidden; an unknown id
        # answers the same, so ids of other workspaces cannot be probed.
        raise Forbidden(f"agentId {agent_id!r} is not an agent of your workspace.")
    return agent_id


def with_retries(attempt: Callable[[], T]) -> T:
    """Run a read-check-write ``attempt`` again while it loses races (``WriteConflict``).

    Each attempt re-reads, so every rule is checked against the state it writes over.

    Raises:
        Conflict: still losing after ``WRITE_ATTEMPTS`` attempts.
    """
    for _ in range(WRITE_ATTEMPTS):
        try:
            return attempt()
        except WriteConflict:
            continue
    raise Conflict("The memory kept changing while this request ran; try again.")
