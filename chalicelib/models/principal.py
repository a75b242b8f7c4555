"""Who is calling (docs/reference.md#2-concepts): workspaces, agents, persons and their tokens."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from chalicelib.models.common import Timestamp, WireModel

ReviewApproval = Literal["none", "required"]
"""A workspace's ``reviewApproval`` setting (docs/issues.md#issue-4-item-6): ``none`` (default)
applies each review's plan at once; ``required`` makes every action wait for a
person of the workspace to approve or reject it."""
REVIEW_APPROVAL_VALUES: tuple[ReviewApproval, ...] = ("none", "required")

PersonRole = Literal["owner", "member"]
"""A person's role in their workspace (docs/reference.md#person-roles): an ``owner`` may also
create agents, invite persons, change roles and issue or revoke agents' tokens on the
dashboard; a ``member`` may do everything else a person may. A person stored without a
role is a ``member``."""
PERSON_ROLES: tuple[PersonRole, ...] = ("owner", "member")


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
    """A tenant (``wsp_…``); nothing crosses workspaces.

    ``review_approval`` is its review setting (see ``ReviewApproval``);
    ``learning_approval`` says whether an agent's proposed learning waits for a person
    (``required``, the default) or is active at once (``none``;
    docs/reference.md#learning-approval).
    """

    id: str
    name: str
    created_at: Timestamp
    review_approval: ReviewApproval = "none"
    learning_approval: ReviewApproval = "required"
    learning_approval_set_by: str | None = None
    """Who last set ``learning_approval`` (a person's id, or ``operator``); None: never."""
    learning_approval_set_at: Timestamp | None = None
    """When it was last set."""


class Agent(WireModel):
    """An automated caller (``agt_…``) in one workspace; ``created_by``: the owner's
    ``usr_…`` id when an owner created it on the dashboard, None when the operator did."""

    id: str
    workspace_id: str
    name: str
    created_at: Timestamp
    created_by: str | None = None


class Person(WireModel):
    """A human member (``usr_…``) of one workspace.

    Attributes:
        sessions_epoch: raised by one each time the person's dashboard sessions are
            ended (``end-sessions``, ``remove-person``); a session signed in under
            another value has ended (docs/reference.md#offboarding).
        removed_at: when an operator removed the person (``remove-person``); the item
            stays so their past edits keep naming them, but they cannot sign in, their
            tokens are 401 and their e-mail address is free again.
        role: ``owner`` or ``member`` (``PersonRole``; docs/reference.md#person-roles).
        role_set_by: who last set the role (an owner's ``usr_…`` id, or ``operator``);
            None: given at creation and never changed.
        role_set_at: when the role was last set.
        created_by: who created the person (an owner's ``usr_…`` id, or None: the operator).
    """

    id: str
    workspace_id: str
    email: str
    created_at: Timestamp
    sessions_epoch: int = 0
    removed_at: Timestamp | None = None
    role: PersonRole = "member"
    role_set_by: str | None = None
    role_set_at: Timestamp | None = None
    created_by: str | None = None

    @property
    def is_owner(self) -> bool:
        """True for a live owner of the workspace."""
        return self.role == "owner" and self.removed_at is None


class IssuedCredential(WireModel):
    """A new principal and its bearer token, shown once (only its hash is stored);
    ``token_id`` names the token for ``list-tokens``, ``revoke-token``, ``rotate-token``."""

    id: str
    token: str
    token_id: str | None = None
