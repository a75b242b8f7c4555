"""What a workspace's owner manages on the dashboard's People and agents page
(docs/reference.md#person-roles, docs/reference.md#people-and-agents,
docs/issues.md#issue-48-item-4): its agents and persons, persons' roles, agents' tokens.

Every method reads the caller first and refuses anyone but a live owner of the
workspace (403 ``forbidden``) before it reads the input, so a member's request stores
nothing whatever it holds. The writes are ``Enrolment``'s and ``TokenService``'s:
conditional writes and transactions, each with its ``audit`` line.
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.errors import Forbidden, NotFound
from chalicelib.ids import AGENT_ID
from chalicelib.models.principal import Agent, IssuedCredential, Person, Principal, PrincipalKind
from chalicelib.models.token import IssuedToken, TokenRecord
from chalicelib.services.access.enrolment import Enrolment, audit, parse_role
from chalicelib.services.access.who import refuse_agents
from chalicelib.storage.protocols import DirectoryRepository

ONLY_OWNERS = (
    "Only an owner of the workspace can manage its people, agents and tokens; ask an owner "
    "(the operator names owners with the command pinework admin set-role)."
)
AGENTS_WITH_TOKENS = 200
"""Agents whose tokens the page lists at most (one index Query each)."""


@dataclass(frozen=True)
class AgentTokens:
    """An agent and its tokens, oldest first (never a token or its hash)."""

    agent: Agent
    tokens: list[TokenRecord]


@dataclass(frozen=True)
class People:
    """What the People and agents page shows.

    Attributes:
        agents: every agent by name, each with its tokens (the first
            ``AGENTS_WITH_TOKENS`` agents; the others with none listed).
        persons: the live persons by e-mail address, owners first.
        owners: how many live owners the workspace has.
    """

    agents: list[AgentTokens]
    persons: list[Person]
    owners: int


class PeopleService:
    """A workspace owner's management of agents, persons, roles and agents' tokens.

    Args:
        directory: workspaces, agents, persons, token hashes.
        enrolment: creates agents and persons and sets roles (shared with the operator's CLI).
    """

    def __init__(self, directory: DirectoryRepository, enrolment: Enrolment) -> None:
        self._directory = directory
        self._enrolment = enrolment

    def is_owner(self, principal: Principal) -> bool:
        """True when ``principal`` is a live owner of its workspace."""
        if principal.is_agent:
            return False
        person = self._directory.get_person(principal.id)
        return (
            person is not None and person.workspace_id == principal.workspace_id and person.is_owner
        )

    def check_owner(self, principal: Principal) -> None:
        """Refuse anyone but a live owner of the workspace.

        Raises:
            Forbidden: an agent, a member, or a person removed or demoted meanwhile.
        """
        refuse_agents(principal, ONLY_OWNERS)
        if not self.is_owner(principal):
            raise Forbidden(ONLY_OWNERS)

    def listing(self, principal: Principal) -> People:
        """The workspace's agents (by name, with their tokens) and live persons.

        Raises:
            Forbidden: not an owner.
        """
        self.check_owner(principal)
        agents = sorted(
            self._directory.list_agents(principal.workspace_id),
            key=lambda agent: (agent.name.casefold(), agent.id),
        )
        with_tokens = [
            AgentTokens(
                agent,
                self._enrolment.tokens.list(agent.id) if shown < AGENTS_WITH_TOKENS else [],
            )
            for shown, agent in enumerate(agents)
        ]
        persons = sorted(
            (
                person
                for person in self._directory.list_persons(principal.workspace_id)
                if person.removed_at is None
            ),
            key=lambda person: (person.role != "owner", person.email.casefold(), person.id),
        )
        owners = sum(person.is_owner for person in persons)
        return People(agents=with_tokens, persons=persons, owners=owners)

    def create_agent(self, principal: Principal, name: str) -> IssuedCredential:
        """Create an agent of the owner's workspace; its token is shown once.

        Raises:
            Forbidden: not an owner. InvalidRequest: a bad name.
        """
        self.check_owner(principal)
        return self._enrolment.create_agent(principal.workspace_id, name, by=principal.id)

    def invite_person(self, principal: Principal, email: str, role: str) -> IssuedCredential:
        """Create a person of the owner's workspace with a role; their token is shown
        once (they sign in with it, docs/persons.md#the-dashboard).

        Raises:
            Forbidden: not an owner. InvalidRequest: not an e-mail address, another role.
            PersonExists: a person of the workspace has this address.
        """
        self.check_owner(principal)
        return self._enrolment.create_person(principal.workspace_id, email, role, by=principal.id)

    def set_role(self, principal: Principal, person_id: str, role: str, shown: str) -> Person:
        """Set a person's role; the workspace keeps a live owner.

        Args:
            shown: the role the form showed (a stale form is refused).

        Raises:
            Forbidden: not an owner. InvalidRequest: another role.
            NotFound: no such live person in the workspace.
            PreconditionFailed: their role changed since the form was shown.
            Conflict: they are the last owner, or a concurrent change won.
        """
        self.check_owner(principal)
        return self._enrolment.set_role(
            person_id,
            role,
            by=principal.id,
            workspace_id=principal.workspace_id,
            keep_an_owner=True,
            expected=parse_role(shown),
        )

    def issue_token(self, principal: Principal, agent_id: str, label: str | None) -> IssuedToken:
        """Issue one more token for an agent of the workspace (shown once).

        Raises:
            Forbidden: not an owner. NotFound: no such agent in the workspace.
            InvalidRequest: a bad label.
        """
        self.check_owner(principal)
        self._agent(principal, agent_id)
        issued = self._enrolment.tokens.issue(agent_id, label)
        audit(
            "token_issued",
            principal.workspace_id,
            principal.id,
            token_id=issued.id,
            agent_id=agent_id,
        )
        return issued

    def revoke_token(self, principal: Principal, token_id: str) -> TokenRecord:
        """Revoke a token of an agent of the workspace at once.

        Raises:
            Forbidden: not an owner. NotFound: no such token of the workspace's agents,
                or revoked already.
        """
        self.check_owner(principal)
        tokens = self._enrolment.tokens
        stored = self._directory.find_token(token_id.strip()) if token_id.strip() else None
        if (
            stored is None
            or stored.record.workspace_id != principal.workspace_id
            or stored.record.principal_kind is not PrincipalKind.AGENT
        ):
            raise NotFound(
                f"No token {token_id!r} of this workspace's agents (or revoked already)."
            )
        revoked = tokens.revoke(token_id)
        audit(
            "token_revoked",
            principal.workspace_id,
            principal.id,
            token_id=token_id,
            agent_id=revoked.principal_id,
        )
        return revoked

    def _agent(self, principal: Principal, agent_id: str) -> Agent:
        agent = self._directory.get_agent(agent_id) if AGENT_ID.match(agent_id) else None
        if agent is None or agent.workspace_id != principal.workspace_id:
            raise NotFound(f"No agent {agent_id!r} in this workspace.")
        return agent
