"""A person's own workspace (docs/reference.md#2-concepts, docs/reference.md#13-dashboard): its
agents, and its review approval setting (docs/issues.md#issue-4-item-6), as the dashboard shows and
changes them."""

from __future__ import annotations

import logging

from chalicelib.errors import AgentNotInWorkspace, InvalidRequest, NotFound
from chalicelib.ids import Clock, SystemClock
from chalicelib.models.principal import (
    REVIEW_APPROVAL_VALUES,
    Agent,
    Person,
    Principal,
    ReviewApproval,
    Workspace,
)
from chalicelib.services.access.who import refuse_agents, resolve_agent
from chalicelib.storage.protocols import DirectoryRepository

APPROVAL_IS_FOR_PERSONS = "Only a person can change how reviews are approved."
UNREVIEWED_LEARNINGS_RISK = (
    "With learningApproval none, any agent's proposed text is told to every agent of the "
    "workspace at once, unread by a person: one agent (or text it was fed, a prompt "
    "injection) can instruct all the others. Confirm to switch (confirm=true; on the "
    "dashboard, tick the confirmation); learnings that go live this way are listed as "
    "not reviewed until a person confirms or retires each."
)
"""Why switching ``learningApproval`` to ``none`` asks for confirmation
(docs/reference.md#learning-approval, docs/issues.md#issue-42-item-3)."""


def check_unreviewed_confirmed(value: ReviewApproval, current: str, confirmed: bool) -> None:
    """Refuse a switch to ``learningApproval: none`` that was not confirmed.

    Raises:
        InvalidRequest: ``none`` asked for, not already set, and not ``confirmed``.
    """
    if value == "none" and current != "none" and not confirmed:
        raise InvalidRequest(UNREVIEWED_LEARNINGS_RISK)


logger = logging.getLogger(__name__)


def log_learning_approval(workspace: Workspace) -> None:
    """The audit line of a ``learningApproval`` change: who, when, the new value."""
    logger.info(
        "audit: learningApproval set",
        extra={
            "audit": "learning_approval",
            "workspace_id": workspace.id,
            "learning_approval": workspace.learning_approval,
            "set_by": workspace.learning_approval_set_by,
        },
    )


def parse_review_approval(value: str, name: str = "reviewApproval") -> ReviewApproval:
    """Read a ``reviewApproval`` (or ``learningApproval``, ``name``) value: ``none`` or
    ``required`` (any case, spaces around ignored).

    Raises:
        InvalidRequest: another value.
    """
    wanted = value.strip().lower()
    approval = next((known for known in REVIEW_APPROVAL_VALUES if known == wanted), None)
    if approval is None:
        choices = " or ".join(REVIEW_APPROVAL_VALUES)
        raise InvalidRequest(f"{name} must be {choices}, not {value!r}.")
    return approval


class WorkspaceService:
    """What a principal may read and set of its own workspace.

    Args:
        directory: workspaces and agents.
    """

    def __init__(self, directory: DirectoryRepository, clock: Clock | None = None) -> None:
        self._directory = directory
        self._clock = clock or SystemClock()

    def workspace(self, principal: Principal) -> Workspace:
        """The caller's workspace.

        Raises:
            NotFound: it no longer exists.
        """
        workspace = self._directory.get_workspace(principal.workspace_id)
        if workspace is None:
            raise NotFound("Your workspace no longer exists.")
        return workspace

    def agents(self, principal: Principal, name: str | None = None) -> list[Agent]:
        """The workspace's agents by name (then id); with ``name``, those whose name or id contains
        it (case-insensitive).

        Raises:
            Forbidden: an agent asked (agents see only themselves).
        """
        refuse_agents(principal, "Only a person can list a workspace's agents.")
        agents = sorted(
            self._directory.list_agents(principal.workspace_id),
            key=lambda agent: (agent.name.casefold(), agent.id),
        )
        wanted = (name or "").strip().casefold()
        if not wanted:
            return agents
        return [a for a in agents if wanted in a.name.casefold() or wanted in a.id.casefold()]

    def agent(self, principal: Principal, agent_id: str) -> Agent:
        """One agent of the caller's workspace (an agent may read only itself).

        Raises:
            Forbidden: not an agent of the workspace (unknown and foreign ids answer
                alike, as on every route that takes ``agentId``).
            MemoryNotOwn: an agent named another agent.
        """
        resolve_agent(self._directory, principal, agent_id)
        agent = self._directory.get_agent(agent_id)
        if agent is None:  # pragma: no cover - resolve_agent read it a moment ago
            raise AgentNotInWorkspace(f"agentId {agent_id!r} is not an agent of your workspace.")
        return agent

    def display_name(self, principal: Principal, principal_id: str) -> str | None:
        """What a person reads for an agent or person id of the caller's workspace: the
        agent's name or the person's e-mail address (docs/reference.md#13-dashboard).

        Returns:
            The name, or ``None`` for an id of another workspace, an unknown id, another
            kind of id, or a person whose address was erased (the page shows the id).
        """
        named: Agent | Person | None = None
        if principal_id.startswith("agt_"):
            named = self._directory.get_agent(principal_id)
        elif principal_id.startswith("usr_"):
            named = self._directory.get_person(principal_id)
        if named is None or named.workspace_id != principal.workspace_id:
            return None
        return (named.name if isinstance(named, Agent) else named.email) or None

    def set_review_approval(self, principal: Principal, value: str) -> Workspace:
        """A person sets their workspace's ``reviewApproval`` (``required``: each review
        action waits for a person; ``none``: reviews apply their plans). Reviews already
        stored keep the mode they ran with.

        Raises:
            Forbidden: an agent tried.
            InvalidRequest: a value other than ``none`` or ``required``.
            NotFound: the workspace no longer exists.
        """
        refuse_agents(principal, APPROVAL_IS_FOR_PERSONS)
        approval = parse_review_approval(value)
        workspace = self._directory.set_review_approval(principal.workspace_id, approval)
        if workspace is None:
            raise NotFound("Your workspace no longer exists.")
        return workspace

    def set_learning_approval(
        self, principal: Principal, value: str, *, confirmed: bool = False
    ) -> Workspace:
        """A person sets their workspace's ``learningApproval`` (``required``: an agent's
        proposed learning waits for a person; ``none``: it is active at once, and only
        ``confirmed``; docs/reference.md#learning-approval). Who and when are recorded on
        the workspace and in the log (``audit`` line).

        Raises:
            Forbidden: an agent tried.
            InvalidRequest: a value other than ``none`` or ``required``, or ``none``
                without ``confirmed`` (the message names the risk).
            NotFound: the workspace no longer exists.
        """
        refuse_agents(principal, APPROVAL_IS_FOR_PERSONS)
        approval = parse_review_approval(value, "learningApproval")
        current = self.workspace(principal)
        check_unreviewed_confirmed(approval, current.learning_approval, confirmed)
        workspace = self._directory.set_learning_approval(
            principal.workspace_id, approval, by=principal.id, at=self._clock.now()
        )
        if workspace is None:
            raise NotFound("Your workspace no longer exists.")
        log_learning_approval(workspace)
        return workspace
