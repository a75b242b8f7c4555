"""Who is calling (SPEC §2): workspaces, agents, persons and their tokens."""

from __future__ import annotations

from enum import StrEnum

from chalicelib.models.common import Timestamp, WireModel


class PrincipalKind(StrEnum):
    """An automated caller or a human member of a workspace."""

    AGENT = "agent"
    PERSON = "person"


class Principal(WireModel):
    """The caller a bearer token resolves to."""

    kind: PrincipalKind
    id: str
    workspace_id: str

    @property
    def is_agent(self) -> bool:
        """True for an agent, False for a person."""
        return self.kind is PrincipalKind.AGENT


class Workspace(WireModel):
    """A tenant (``wsp_…``); nothing crosses workspaces."""

    id: str
    name: str
    created_at: Timestamp


class Agent(WireModel):
    """An automated caller (``agt_…``) in one workspace."""

    id: str
    workspace_id: str
    name: str
    created_at: Timestamp


class Person(WireModel):
    """A human member (``usr_…``) of one workspace."""

    id: str
    workspace_id: str
    email: str
    created_at: Timestamp


class IssuedCredential(WireModel):
    """A new principal and its bearer token, shown once (only its hash is stored)."""

    id: str
    token: str
