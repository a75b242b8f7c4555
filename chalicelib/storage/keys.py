"""Every key format of the single table, in one place (STYLE.md: storage).

| item | pk | sk |
| --- | --- | --- |
| memory | ``MEMORY#<mem_id>`` | ``MEMORY`` |
| audit record | ``MEMORY#<mem_id>`` | ``AUDIT#<aud_id>`` |
| live day row pointer | ``DAYLOG#<agt_id>#<YYYY-MM-DD>`` | ``DAYLOG`` |
| token | ``TOKEN#<sha256 hex>`` | ``TOKEN`` |
| recall log entry | ``RECALLS#<agt_id>`` | ``<rcl_id>`` |
| run-start session | ``SESSION#<agt_id>#<session id>`` | ``SESSION`` |
| workspace | ``WORKSPACE#<wsp_id>`` | ``WORKSPACE`` |
| agent | ``AGENT#<agt_id>`` | ``AGENT`` |
| person | ``PERSON#<usr_id>`` | ``PERSON`` |

List indexes (GSIs, sort key ``lsk`` = memory id): by agent, by agent and
status, by workspace, by workspace and status.
"""

from __future__ import annotations

MEMORY_SK = "MEMORY"
SORT_ATTRIBUTE = "lsk"
"""Sort key of every list index: the memory id (a ULID), so ids sort by time."""
AUDIT_PREFIX = "AUDIT#"

BY_AGENT = "byAgent"
BY_AGENT_STATUS = "byAgentStatus"
BY_WORKSPACE = "byWorkspace"
BY_WORKSPACE_STATUS = "byWorkspaceStatus"

MEMORY_INDEXES: dict[str, str] = {
    BY_AGENT: "gsiAgent",
    BY_AGENT_STATUS: "gsiAgentStatus",
    BY_WORKSPACE: "gsiWorkspace",
    BY_WORKSPACE_STATUS: "gsiWorkspaceStatus",
}
"""Index name -> its partition-key attribute on memory items."""


def memory_key(memory_id: str) -> dict[str, str]:
    """Primary key of a memory item."""
    return {"pk": f"MEMORY#{memory_id}", "sk": MEMORY_SK}


def audit_key(memory_id: str, audit_id: str) -> dict[str, str]:
    """Primary key of an audit record; it shares its memory's partition."""
    return {"pk": f"MEMORY#{memory_id}", "sk": f"{AUDIT_PREFIX}{audit_id}"}


def day_pointer_key(agent_id: str, date: str) -> dict[str, str]:
    """Primary key of the item naming the one live day row of an agent and date."""
    return {"pk": f"DAYLOG#{agent_id}#{date}", "sk": "DAYLOG"}


def recall_log_partition(agent_id: str) -> str:
    """Partition of an agent's recall log (the injection log), entries sorted by id."""
    return f"RECALLS#{agent_id}"


def recall_log_key(agent_id: str, recall_id: str) -> dict[str, str]:
    """Primary key of one recall log entry."""
    return {"pk": recall_log_partition(agent_id), "sk": recall_id}


def session_key(agent_id: str, session_id: str) -> dict[str, str]:
    """Primary key of the run-start recall state of one agent's session."""
    return {"pk": f"SESSION#{agent_id}#{session_id}", "sk": "SESSION"}


def token_key(token_hash: str) -> dict[str, str]:
    """Primary key of a token item (the SHA-256 hex of the bearer token)."""
    return {"pk": f"TOKEN#{token_hash}", "sk": "TOKEN"}


def workspace_key(workspace_id: str) -> dict[str, str]:
    """Primary key of a workspace item."""
    return {"pk": f"WORKSPACE#{workspace_id}", "sk": "WORKSPACE"}


def agent_key(agent_id: str) -> dict[str, str]:
    """Primary key of an agent item."""
    return {"pk": f"AGENT#{agent_id}", "sk": "AGENT"}


def person_key(person_id: str) -> dict[str, str]:
    """Primary key of a person item."""
    return {"pk": f"PERSON#{person_id}", "sk": "PERSON"}


def memory_index_values(workspace_id: str, agent_id: str, status: str) -> dict[str, str]:
    """The list-index partition values a memory item carries for its state."""
    return {
        MEMORY_INDEXES[BY_AGENT]: agent_id,
        MEMORY_INDEXES[BY_AGENT_STATUS]: f"{agent_id}#{status}",
        MEMORY_INDEXES[BY_WORKSPACE]: workspace_id,
        MEMORY_INDEXES[BY_WORKSPACE_STATUS]: f"{workspace_id}#{status}",
    }
