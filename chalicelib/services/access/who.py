"""Who may touch which memory (docs/reference.md#7-http-api, the "who" column): an agent its own,
a person any of the workspace's; some routes are for one kind only.
"""

from __future__ import annotations

from chalicelib.errors import (
    AgentNotInWorkspace,
    Forbidden,
    MemoryAgentRequired,
    MemoryNotFound,
    MemoryNotOwn,
    PineworkError,
)
from chalicelib.ids import AGENT_ID, MEMORY_ID
from chalicelib.models.memory import Memory
from chalicelib.models.principal import Principal
from chalicelib.storage.protocols import DirectoryRepository, MemoryRepository


def refuse_agents(principal: Principal, message: str) -> None:
    """Refuse an agent what docs/reference.md#who-may-call gives persons only (routes call it before
    reading the body, so the answer does not depend on what the body holds).

    Raises:
        Forbidden: the principal is an agent; ``message`` says what to do instead.
    """
    if principal.is_agent:
        raise Forbidden(message)


def refuse_persons(principal: Principal, error: type[PineworkError], message: str) -> None:
    """Refuse a person what docs/reference.md#who-may-call gives agents only (see
    ``refuse_agents``).

    Raises:
        PineworkError: ``error(message)`` when the principal is a person.
    """
    if not principal.is_agent:
        raise error(message)


def check_memory_id(memory_id: str) -> None:
    """Reject ids that cannot name a memory, as not found
    (docs/reference.md#error-memory_not_found)."""
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
        # docs/reference.md#6-errors: a person outside the workspace is forbidden; an unknown id
        # answers the same, so ids of other workspaces cannot be probed.
        raise AgentNotInWorkspace(f"agentId {agent_id!r} is not an agent of your workspace.")
    return agent_id
