"""Creating agents and persons, and setting a person's role (docs/reference.md#2-concepts,
docs/reference.md#person-roles, docs/issues.md#issue-48-item-4): what ``pinework admin
create-agent | create-person | set-role`` and a workspace owner's "People and agents"
dashboard page both do, written once.

Every creation writes the principal and its first token (shown once; only its hash is
stored) in one transaction; a role change is one conditional transaction. Each change
writes an ``audit`` log line (who, what, when), and the stored items keep who created a
principal (``createdBy``) and who last set a role (``roleSetBy``, ``roleSetAt``).
"""

from __future__ import annotations

import logging
import re

from chalicelib.errors import (
    Conflict,
    InvalidRequest,
    NotFound,
    PersonExists,
    PreconditionFailed,
)
from chalicelib.ids import WORKSPACE_ID, Clock, IdFactory
from chalicelib.models.principal import (
    PERSON_ROLES,
    Agent,
    IssuedCredential,
    Person,
    PersonRole,
    Principal,
    PrincipalKind,
)
from chalicelib.services.access.tokens import TokenService
from chalicelib.services.keyed_hash import KeyedHash
from chalicelib.services.text import check_characters
from chalicelib.storage.protocols import DirectoryRepository, PersonEmailTaken, RoleChange

NAME_MAX_CHARS = 200
_ADDRESS = re.compile(r'[^\s@<>()\[\],;:"\\]+@[^\s@<>()\[\],;:"\\]+')
"""One e-mail address: a local part, ``@``, a domain; no space or list punctuation."""
OPERATOR = "operator"
"""Who a change is recorded as when the operator's CLI made it."""
LAST_OWNER = (
    "{email} is the workspace's last owner: make another person an owner first, so "
    "someone can still manage the workspace's people and agents."
)

logger = logging.getLogger(__name__)


def parse_role(value: str) -> PersonRole:
    """Read a role: ``owner`` or ``member`` (any case, spaces around ignored).

    Raises:
        InvalidRequest: another value.
    """
    wanted = value.strip().lower()
    role = next((known for known in PERSON_ROLES if known == wanted), None)
    if role is None:
        raise InvalidRequest(f"A person's role must be owner or member, not {value!r}.")
    return role


def check_name(value: str, what: str) -> str:
    """``value`` without surrounding spaces: 1 to 200 characters, no control or
    invisible characters.

    Raises:
        InvalidRequest: empty, too long, or a forbidden character (the message names ``what``).
    """
    value = value.strip()
    if not value or len(value) > NAME_MAX_CHARS:
        raise InvalidRequest(f"The {what} must be 1 to {NAME_MAX_CHARS} characters.")
    check_characters(value, what)
    return value


def audit(event: str, workspace_id: str, by: str, **fields: str) -> None:
    """The audit line of a change to a workspace's principals: what, where, by whom."""
    logger.info(
        "audit: %s",
        event,
        extra={"audit": event, "workspace_id": workspace_id, "set_by": by, **fields},
    )


class Enrolment:
    """Creates agents and persons (each with a first token) and sets persons' roles.

    Args:
        directory: where workspaces, agents, persons and token hashes live.
        clock: the current time.
        ids: the id factory.
        digests: the keyed digests of e-mail claims
            (docs/reference.md#keyed-hashes-of-personal-data).
    """

    def __init__(
        self, directory: DirectoryRepository, clock: Clock, ids: IdFactory, digests: KeyedHash
    ) -> None:
        self._directory = directory
        self._clock = clock
        self._ids = ids
        self._digests = digests
        self.tokens = TokenService(directory, clock, ids)

    def create_agent(self, workspace_id: str, name: str, by: str = OPERATOR) -> IssuedCredential:
        """Create an agent in a workspace and issue its bearer token.

        Args:
            by: an owner's ``usr_…`` id (kept as ``createdBy``), or ``operator``.

        Raises:
            InvalidRequest: no such workspace, or a bad name.
        """
        self.check_workspace(workspace_id)
        agent = Agent(
            id=self._ids.new("agt"),
            workspace_id=workspace_id,
            name=check_name(name, "name"),
            created_at=self._clock.now(),
            created_by=None if by == OPERATOR else by,
        )
        principal = Principal(kind=PrincipalKind.AGENT, id=agent.id, workspace_id=workspace_id)
        token, stored = self.tokens.mint(principal)
        self._directory.create_agent(agent, stored)
        audit("agent_created", workspace_id, by, agent_id=agent.id)
        return IssuedCredential(id=agent.id, token=token, token_id=stored.record.id)

    def create_person(
        self, workspace_id: str, email: str, role: str = "member", by: str = OPERATOR
    ) -> IssuedCredential:
        """Create a person in a workspace with a role and issue their bearer token.

        One e-mail address belongs to at most one person of a workspace, compared
        after ``normalized_email`` (``Ana@Example.com`` is ``ana@example.com``); the
        claim is written in the person's own transaction, so two concurrent creations
        cannot both win. Persons of different workspaces may share an address
        (nothing crosses workspaces, docs/reference.md#2-concepts; DECISIONS "One person per
        e-mail").

        Args:
            role: ``owner`` or ``member`` (docs/reference.md#person-roles).
            by: an owner's ``usr_…`` id (kept as ``createdBy``), or ``operator``.

        Raises:
            InvalidRequest: no such workspace, an email that is not one address (one
                ``@`` between two non-empty parts, no space, no ``<>()[],;:"\\``), or
                another role.
            PersonExists: a person of the workspace already has this address.
        """
        self.check_workspace(workspace_id)
        email = check_name(email, "email")
        if not _ADDRESS.fullmatch(email):
            raise InvalidRequest(f"{email!r} is not an email address.")
        person = Person(
            id=self._ids.new("usr"),
            workspace_id=workspace_id,
            email=email,
            created_at=self._clock.now(),
            role=parse_role(role),
            created_by=None if by == OPERATOR else by,
        )
        principal = Principal(kind=PrincipalKind.PERSON, id=person.id, workspace_id=workspace_id)
        token, stored = self.tokens.mint(principal)
        try:
            self._directory.create_person(person, stored, email_digests=self._digests.emails(email))
        except PersonEmailTaken as taken:
            raise PersonExists(
                f"A person of {workspace_id} already has the e-mail {email!r}; use their "
                "token, or issue them a new one."
            ) from taken
        audit("person_created", workspace_id, by, person_id=person.id, role=person.role)
        return IssuedCredential(id=person.id, token=token, token_id=stored.record.id)

    def set_role(
        self,
        person_id: str,
        role: str,
        *,
        by: str = OPERATOR,
        workspace_id: str | None = None,
        keep_an_owner: bool = False,
        expected: PersonRole | None = None,
    ) -> Person:
        """Set a live person's role (one conditional transaction; docs/reference.md#person-roles).

        Setting the role a person has already changes nothing and is not an error.

        Args:
            person_id: the ``usr_…``.
            role: ``owner`` or ``member``.
            by: an owner's ``usr_…`` id, or ``operator`` (kept as ``roleSetBy``).
            workspace_id: the person must be of this workspace (None: any).
            keep_an_owner: refuse to demote the workspace's last live owner (the
                dashboard always asks it; the operator may leave a workspace without one).
            expected: the role the caller saw (a dashboard form's); another stored role
                is a stale form (None: any).

        Returns:
            The person as now stored.

        Raises:
            InvalidRequest: another role.
            NotFound: no such live person (in ``workspace_id``).
            PreconditionFailed: the stored role is not ``expected`` (nothing written).
            Conflict: the person is the last owner (``keep_an_owner``), or their role or
                the other owner's changed meanwhile (nothing written; try again).
        """
        after = parse_role(role)
        person_id = person_id.strip()
        person = self._directory.get_person(person_id) if person_id.startswith("usr_") else None
        if (
            person is None
            or person.removed_at is not None
            or (workspace_id is not None and person.workspace_id != workspace_id)
        ):
            raise NotFound(f"No person {person_id!r} in the workspace (never created, or removed).")
        if expected is not None and person.role != expected:
            raise PreconditionFailed(
                f"{person.email} is {person.role} now: someone changed their role since "
                "you opened the page. Nothing was saved; their role is shown as it stands now."
            )
        if person.role == after:
            return person
        other_owner = None
        if keep_an_owner and person.role == "owner":
            other_owner = next(
                (
                    other.id
                    for other in self._directory.list_persons(person.workspace_id)
                    if other.is_owner and other.id != person.id
                ),
                None,
            )
            if other_owner is None:
                raise Conflict(LAST_OWNER.format(email=person.email))
        change = RoleChange(
            person_id=person.id,
            workspace_id=person.workspace_id,
            before=person.role,
            after=after,
            by=by,
            at=self._clock.now(),
            other_owner=other_owner,
        )
        changed = self._directory.set_person_role(change)
        if changed is None:
            raise Conflict(
                f"The role of {person.email} (or of another owner) changed meanwhile; "
                "nothing was saved. Reload and try again."
            )
        audit("role_set", person.workspace_id, by, person_id=person.id, role=after)
        return changed

    def check_workspace(self, workspace_id: str) -> None:
        """Raises InvalidRequest unless ``workspace_id`` names a stored workspace."""
        if not WORKSPACE_ID.match(workspace_id):
            raise InvalidRequest(f"{workspace_id!r} is not a workspace id (wsp_…).")
        if not self._directory.get_workspace(workspace_id):
            raise InvalidRequest(f"No workspace {workspace_id!r}. Create it first.")


__all__ = ["LAST_OWNER", "OPERATOR", "Enrolment", "audit", "check_name", "parse_role"]
