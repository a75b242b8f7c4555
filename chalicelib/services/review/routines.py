"""The "Memory dreaming" routine (docs/reference.md#9-review, docs/issues.md#issue-4): created by an
agent's first save, read by persons and the owner agent, paused, resumed and deleted by persons.

A routine is addressed by its ``rtn_…`` id or by its agent's ``agt_…`` id (the
two share their ULID). Deleting keeps a tombstone so the next save does not
create the routine again; a person may create it again with ``POST /routines``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

from chalicelib.errors import (
    AgentNotInWorkspace,
    Forbidden,
    MemoryAgentRequired,
    MemoryNotOwn,
    NotFound,
)
from chalicelib.ids import AGENT_ID, ULID_PATTERN, Clock
from chalicelib.limits import DEFAULT_LIST_LIMIT
from chalicelib.models.principal import Principal
from chalicelib.models.routine import Routine, RoutineStatus, agent_id_for, routine_id_for
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.retries import with_retries
from chalicelib.storage.protocols import DirectoryRepository, RoutineExists, RoutineRepository

logger = logging.getLogger(__name__)

ROUTINE_ID = re.compile(rf"^rtn_{ULID_PATTERN}$")

ROUTINE_CREATION_IS_FOR_PERSONS = "Only a person can create a routine; an agent's first save does."
ROUTINE_CHANGES_ARE_FOR_PERSONS = "Only a person can pause, resume or delete a routine."


class RoutineService:
    """Use-cases on routines.

    Args:
        routines: routine storage.
        directory: agents, to check a named agent's workspace.
        clock: the current time.
    """

    def __init__(
        self, routines: RoutineRepository, directory: DirectoryRepository, clock: Clock
    ) -> None:
        self._routines = routines
        self._directory = directory
        self._clock = clock

    def ensure_routine(self, workspace_id: str, agent_id: str) -> bool:
        """Create the agent's routine unless one (or its tombstone) exists
        (docs/reference.md#9-review).

        Called after every save: one consistent GetItem, and a conditional put only
        when nothing is stored, so concurrent first saves create exactly one.

        Returns:
            True if this call created the routine.
        """
        if self._routines.get(agent_id) is not None:
            return False
        now = self._clock.now()
        routine = Routine(
            id=routine_id_for(agent_id),
            workspace_id=workspace_id,
            agent_id=agent_id,
            created_at=now,
            updated_at=now,
        )
        try:
            self._routines.create(routine)
        except RoutineExists:
            return False
        logger.info("created routine %s for %s", routine.id, agent_id)
        return True

    def list(
        self,
        principal: Principal,
        agent_id: str | None,
        limit: int = DEFAULT_LIST_LIMIT,
        after_agent_id: str | None = None,
    ) -> tuple[list[Routine], str | None]:
        """The routines a caller may read: an agent its own; a person one agent's
        (``agentId``) or the workspace's live routines, a page at a time by agent id
        (docs/reference.md#5-limits: ``limit``, continuing after ``after_agent_id``).

        Returns:
            The page, and the agent id to continue after (None at the end).

        Raises:
            Forbidden: an agent named another agent; a person named an agent
                outside the workspace.
        """
        if principal.is_agent or agent_id is not None:
            agent = self._readable_agent(principal, principal.id if agent_id is None else agent_id)
            routine = self._routines.get(agent)
            if routine is None or not _live(routine) or agent <= (after_agent_id or ""):
                return [], None
            return [routine], None
        return self._routines.list_workspace(principal.workspace_id, limit, after_agent_id)

    def get(self, principal: Principal, reference: str) -> Routine:
        """One live routine by ``rtn_…`` or ``agt_…`` id (a person, or the owner agent).

        Raises:
            NotFound: no live routine of that agent in the caller's workspace.
            Forbidden: an agent asked for another agent's routine.
        """
        agent_id = self._readable_agent(principal, _agent_of(reference), by_path=True)
        routine = self._routines.get(agent_id)
        if routine is None or not _live(routine):
            raise NotFound(f"No routine {reference!r} in your workspace.")
        return routine

    def pause(self, principal: Principal, reference: str) -> Routine:
        """Pause a routine: the nightly review skips it. Pausing a paused one is a no-op.

        Raises:
            Forbidden: an agent tried (persons only).
            NotFound: no live routine.
        """
        return self._set_status(principal, reference, RoutineStatus.PAUSED)

    def resume(self, principal: Principal, reference: str) -> Routine:
        """Resume a paused routine. Resuming an active one is a no-op.

        Raises:
            Forbidden: an agent tried (persons only).
            NotFound: no live routine.
        """
        return self._set_status(principal, reference, RoutineStatus.ACTIVE)

    def delete(self, principal: Principal, reference: str) -> Routine:
        """Delete a routine (a tombstone is kept so saves do not create it again).

        Returns:
            The routine as it was deleted (``status: deleted``).

        Raises:
            Forbidden: an agent tried (persons only).
            NotFound: no live routine.
        """
        return self._set_status(principal, reference, RoutineStatus.DELETED)

    def create(self, principal: Principal, agent_id: str | None) -> tuple[Routine, bool]:
        """A person creates an agent's routine, e.g. again after deleting it.

        Returns:
            The live routine, and True when this call created it (False: it existed).

        Raises:
            Forbidden: an agent tried; the agent is not in the workspace.
            MemoryAgentRequired: no ``agentId``.
        """
        refuse_agents(principal, ROUTINE_CREATION_IS_FOR_PERSONS)
        if agent_id is None:
            raise MemoryAgentRequired("Name the agent: pass agentId (or --agent agt_…).")
        agent = self._readable_agent(principal, agent_id)
        now = self._clock.now()
        routine = Routine(
            id=routine_id_for(agent),
            workspace_id=principal.workspace_id,
            agent_id=agent,
            created_at=now,
            updated_at=now,
            updated_by_person_id=principal.id,
        )
        try:
            self._routines.create(routine, over_tombstone=True)
        except RoutineExists:
            return self.get(principal, agent), False
        return routine, True

    def iter_active(self) -> Iterator[Routine]:
        """Every active routine of every workspace (the nightly fan-out,
        docs/reference.md#9-review)."""
        return self._routines.iter_active()

    def is_active(self, agent_id: str) -> bool:
        """True when the agent's routine exists and is active (checked by the worker)."""
        routine = self._routines.get(agent_id)
        return routine is not None and routine.status is RoutineStatus.ACTIVE

    def _set_status(self, principal: Principal, reference: str, status: RoutineStatus) -> Routine:
        refuse_agents(principal, ROUTINE_CHANGES_ARE_FOR_PERSONS)

        def attempt() -> Routine:
            before = self.get(principal, reference)
            if before.status is status:
                return before
            after = before.model_copy(
                update={
                    "status": status,
                    "updated_at": self._clock.now(),
                    "updated_by_person_id": principal.id,
                    "version": before.version + 1,
                }
            )
            self._routines.change(before, after)
            return after

        return with_retries(attempt)

    def _readable_agent(self, principal: Principal, agent_id: str, by_path: bool = False) -> str:
        if principal.is_agent:
            if agent_id == principal.id:
                return agent_id
            if by_path:
                raise Forbidden("An agent reads only its own routine.")
            # As on every list that takes agentId (rules.resolve_agent).
            raise MemoryNotOwn("An agent reads only its own routine; leave agentId out.")
        # A malformed id answers like an unknown one, as on every other route that
        # takes agentId (rules.resolve_agent).
        agent = self._directory.get_agent(agent_id) if AGENT_ID.match(agent_id) else None
        if agent is None or agent.workspace_id != principal.workspace_id:
            if by_path:
                # Like memory ids: another workspace's routine is simply not found.
                raise NotFound(f"No routine for {agent_id!r} in your workspace.")
            raise AgentNotInWorkspace(f"agentId {agent_id!r} is not an agent of your workspace.")
        return agent_id


def _live(routine: Routine) -> bool:
    return routine.status is not RoutineStatus.DELETED


def _agent_of(reference: str) -> str:
    """The agent id a ``rtn_…`` or ``agt_…`` reference names.

    Raises:
        NotFound: neither form.
    """
    if ROUTINE_ID.match(reference):
        return agent_id_for(reference)
    if AGENT_ID.match(reference):
        return reference
    raise NotFound(f"No routine {reference!r}: use its rtn_… id or its agent's agt_… id.")
