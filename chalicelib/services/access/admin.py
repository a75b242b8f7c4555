"""Bearer tokens and the operator commands that issue them (docs/reference.md#authentication,
docs/issues.md#issue-2; the token lifecycle, docs/issues.md#issue-12).

Tokens are random and shown once; only their SHA-256 hex digest is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

from chalicelib.errors import InvalidRequest, NotFound
from chalicelib.ids import AGENT_ID, WORKSPACE_ID, Clock, IdFactory, to_rfc3339
from chalicelib.limits import TOKEN_ROTATION_GRACE
from chalicelib.models.principal import IssuedCredential, Workspace
from chalicelib.services.access.enrolment import Enrolment, check_name
from chalicelib.services.access.workspace import (
    check_unreviewed_confirmed,
    log_learning_approval,
    parse_review_approval,
)
from chalicelib.services.keyed_hash import DEVELOPMENT_SECRETS, KeyedHash
from chalicelib.services.lifecycle.erasure import (
    ErasureProgress,
    ErasureReport,
    OwnerErasure,
    TargetKind,
)
from chalicelib.services.lifecycle.retention import ArchivedTextRetention
from chalicelib.services.lifecycle.transfer import TransferReport, WorkspaceTransfer
from chalicelib.services.recall.backfill import BackfillReport, EmbeddingBackfill
from chalicelib.services.recall.index_backfill import (
    IndexBackfillReport,
    IndexProgress,
    RecallIndexBackfill,
)
from chalicelib.storage.dashboard_protocols import TableUpgrader, UpgradeReport
from chalicelib.storage.protocols import DirectoryRepository


class AdminService:
    """Operator commands: create workspaces, agents and persons with tokens, set a
    person's role (``Enrolment``); end a
    person's sessions or remove them; issue, list, revoke and rotate tokens; set a
    workspace's review approval; backfill recall embeddings and the recall index.

    Args:
        directory: where workspaces, agents, persons and token hashes live.
        clock: the current time.
        ids: the id factory.
        embeddings: the embedding backfill (``backfill_embeddings``).
        recall_index: the recall index backfill (``backfill_recall_index``).
        upgrade: the table upgrade of ``upgrade_table`` (None: not available).
        erasure: erases agents, persons and workspaces (``erase``; None: not available).
        transfer: exports and imports (``export``, ``import_file``; None: not available).
        digests: the keyed digests of e-mail claims (the development secret when None;
            docs/reference.md#keyed-hashes-of-personal-data).
        retention: the sweep of archived memories' audit texts (``sweep_retention``;
            None: not available).
    """

    def __init__(
        self,
        directory: DirectoryRepository,
        clock: Clock,
        ids: IdFactory,
        embeddings: EmbeddingBackfill,
        recall_index: RecallIndexBackfill,
        upgrade: TableUpgrader | None = None,
        erasure: OwnerErasure | None = None,
        transfer: WorkspaceTransfer | None = None,
        digests: KeyedHash | None = None,
        retention: ArchivedTextRetention | None = None,
    ) -> None:
        self._retention = retention
        self._digests = digests or KeyedHash(lambda: DEVELOPMENT_SECRETS)
        self._erasure = erasure
        self._transfer = transfer
        self._directory = directory
        self._clock = clock
        self._ids = ids
        self._embeddings = embeddings
        self._recall_index = recall_index
        self._upgrade = upgrade
        self.enrolment = Enrolment(directory, clock, ids, self._digests)
        self.tokens = self.enrolment.tokens

    def create_workspace(self, name: str) -> Workspace:
        """Create a workspace.

        Raises:
            InvalidRequest: the name is empty or over 200 characters.
        """
        workspace = Workspace(
            id=self._ids.new("wsp"), name=check_name(name, "name"), created_at=self._clock.now()
        )
        self._directory.create_workspace(workspace)
        return workspace

    def create_agent(self, workspace_id: str, name: str) -> IssuedCredential:
        """Create an agent in a workspace and issue its bearer token (``Enrolment.create_agent``).

        Raises:
            InvalidRequest: no such workspace, or a bad name.
        """
        return self.enrolment.create_agent(workspace_id, name)

    def create_person(
        self, workspace_id: str, email: str, role: str = "member"
    ) -> IssuedCredential:
        """Create a person in a workspace with a role (``owner`` or ``member``,
        docs/reference.md#person-roles) and issue their bearer token
        (``Enrolment.create_person``: one person per e-mail address in a workspace).

        Raises:
            InvalidRequest: no such workspace, an email without ``@``, or another role.
            PersonExists: a person of the workspace already has this address.
        """
        return self.enrolment.create_person(workspace_id, email, role)

    def set_role(self, person_id: str, role: str) -> dict[str, Any]:
        """Set a person's role (``Enrolment.set_role``, recorded as set by ``operator``).
        The operator may demote a workspace's last owner (the dashboard never does).

        Returns:
            ``{id, email, workspaceId, role}``.

        Raises:
            InvalidRequest: another role. NotFound: no such live person.
            Conflict: the role changed meanwhile.
        """
        person = self.enrolment.set_role(person_id, role)
        return {
            "id": person.id,
            "email": person.email,
            "workspaceId": person.workspace_id,
            "role": person.role,
        }

    def issue_token(self, principal_id: str, label: str | None = None) -> dict[str, Any]:
        """Issue one more token for an agent or person (``TokenService.issue``).

        Returns:
            ``{id, token, principalKind, principalId, label}``; the token is shown once.

        Raises:
            InvalidRequest: not an agent or person id, no such principal, a bad label.
        """
        return self.tokens.issue(principal_id, label).model_dump(mode="json", by_alias=True)

    def list_tokens(self, principal_id: str) -> list[dict[str, Any]]:
        """An agent's or person's tokens, oldest first (``TokenService.list``).

        Returns:
            One ``TokenRecord.to_listing`` each: never a token or its hash.

        Raises:
            InvalidRequest: not an agent or person id, or no such principal.
        """
        now = self._clock.now()
        return [record.to_listing(now) for record in self.tokens.list(principal_id)]

    def revoke_token(self, token_id: str) -> dict[str, Any]:
        """Revoke a token at once (``TokenService.revoke``).

        Returns:
            The revoked token's listing as it was before.

        Raises:
            NotFound: no such token, or revoked already.
        """
        return self.tokens.revoke(token_id).to_listing(self._clock.now())

    def rotate_token(self, token_id: str, grace_hours: float | None = None) -> dict[str, Any]:
        """Rotate a token; the old one works for ``grace_hours`` more (default 24).

        Returns:
            ``{token: <the new token, shown once>, previous: <the old token's listing,
            expiresAt = the end of its grace period>}``.

        Raises:
            NotFound: no such token. InvalidRequest: a grace outside 0 to 720
                hours; the token was rotated already or expired.
        """
        grace = TOKEN_ROTATION_GRACE if grace_hours is None else timedelta(hours=grace_hours)
        rotated = self.tokens.rotate(token_id, grace)
        return {
            "token": rotated.issued.model_dump(mode="json", by_alias=True),
            "previous": rotated.previous.to_listing(self._clock.now()),
        }

    def end_sessions(self, person_id: str) -> dict[str, Any]:
        """End every dashboard session of a person at its next request
        (docs/reference.md#offboarding): one conditional write raises their
        ``sessionsEpoch``, which each session's resume compares with its own. Their
        tokens keep working; they can sign in again.

        Returns:
            ``{id, email, workspaceId, sessionsEpoch}``.

        Raises:
            NotFound: no such person, or they were removed.
        """
        person = self._directory.end_person_sessions(person_id.strip())
        if person is None:
            raise NotFound(f"No person {person_id!r} (never created, or removed).")
        return {
            "id": person.id,
            "email": person.email,
            "workspaceId": person.workspace_id,
            "sessionsEpoch": person.sessions_epoch,
        }

    def remove_person(self, person_id: str) -> dict[str, Any]:
        """Offboard a person (docs/reference.md#offboarding): in one transaction they
        are marked removed, their sessions end and their e-mail claim is released (the
        address may be given to a new person); then each of their tokens is revoked.
        Their item stays, so memories, audit records and decisions keep naming them;
        a token the index did not list yet is refused anyway (``AuthService`` reads the
        person of every person token).

        Returns:
            ``{id, email, workspaceId, removedAt, tokensRevoked}``.

        Raises:
            NotFound: no such person, or removed already.
        """
        person = self._directory.get_person(person_id.strip())
        if person is None or person.removed_at is not None:
            raise NotFound(f"No person {person_id!r} (never created, or removed already).")
        now = self._clock.now()
        digests = self._digests.emails(person.email)
        if not self._directory.remove_person(person, email_digests=digests, now=now):
            raise NotFound(f"Person {person.id} was removed meanwhile.")
        revoked = sum(
            self._directory.revoke_token(stored)
            for stored in self._directory.list_tokens(person.id)
            if stored.record.id is not None
        )
        return {
            "id": person.id,
            "email": person.email,
            "workspaceId": person.workspace_id,
            "removedAt": to_rfc3339(now),
            "tokensRevoked": revoked,
        }

    def set_review_approval(self, workspace_id: str, value: str) -> Workspace:
        """Set a workspace's ``reviewApproval`` (docs/issues.md#issue-4-item-6).

        ``required``: every later review stores its plan with each action
        pending until a person approves or rejects it; ``none`` (the default):
        reviews apply their plans at once. Reviews already stored keep the mode
        they ran with.

        Args:
            workspace_id: the ``wsp_…`` id.
            value: ``none`` or ``required`` (any case, surrounding spaces ignored).

        Returns:
            The workspace with the new setting.

        Raises:
            InvalidRequest: another value, or no such workspace.
        """
        approval = parse_review_approval(value)
        self._check_workspace(workspace_id)
        workspace = self._directory.set_review_approval(workspace_id, approval)
        if workspace is None:
            raise InvalidRequest(f"No workspace {workspace_id!r}. Create it first.")
        return workspace

    def set_learning_approval(
        self, workspace_id: str, value: str, *, confirmed: bool = False
    ) -> Workspace:
        """Set a workspace's ``learningApproval`` (docs/reference.md#learning-approval):
        ``required`` (the default) keeps an agent's proposed learning waiting for a person;
        ``none`` makes it active at once, and is set only ``confirmed``. Learnings already
        proposed keep their state. Recorded as set by ``operator``, now.

        Raises:
            InvalidRequest: another value, no such workspace, or ``none`` not confirmed.
        """
        approval = parse_review_approval(value, "learningApproval")
        self._check_workspace(workspace_id)
        current = self._directory.get_workspace(workspace_id)
        check_unreviewed_confirmed(
            approval, current.learning_approval if current else "required", confirmed
        )
        workspace = self._directory.set_learning_approval(
            workspace_id, approval, by="operator", at=self._clock.now()
        )
        if workspace is None:
            raise InvalidRequest(f"No workspace {workspace_id!r}. Create it first.")
        log_learning_approval(workspace)
        return workspace

    def backfill_embeddings(self, workspace_id: str, agent_id: str | None) -> BackfillReport:
        """Embed the live facts of a workspace (or one of its agents) whose stored
        recall embedding is missing or of an older format (docs/issues.md#issue-3-item-3).

        Args:
            workspace_id: the ``wsp_…`` id.
            agent_id: only this agent (``agt_…``, of that workspace); ``None``: all.

        Returns:
            The counts (scanned, current, embedded, changed meanwhile).

        Raises:
            InvalidRequest: no such workspace, or the agent is not in it.
        """
        self._check_workspace(workspace_id)
        if agent_id is not None:
            agent = self._directory.get_agent(agent_id)
            if agent is None or agent.workspace_id != workspace_id:
                raise InvalidRequest(f"No agent {agent_id!r} in workspace {workspace_id}.")
        return self._embeddings.run(workspace_id, agent_id)

    def backfill_recall_index(
        self,
        workspace_id: str | None,
        agent_id: str | None,
        *,
        rebuild: bool = False,
        progress: Callable[[IndexProgress], None] | None = None,
    ) -> IndexBackfillReport:
        """Build the recall index of agents created before it: one agent, a workspace's
        agents, or every agent of the table (``RecallIndexBackfill.run``,
        docs/issues.md#issue-23-item-4). Resumable, idempotent, safe while the service
        runs.

        Args:
            workspace_id: the ``wsp_…`` id; ``None``: no workspace filter (every agent
                of the table, or ``agent_id`` wherever it is).
            agent_id: only this agent (``agt_…``, of ``workspace_id`` when given).
            rebuild: clear each agent's index and build it again (after a rollback
                to a release without the index and a new upgrade).
            progress: called after each agent (``IndexProgress``).

        Returns:
            The counts (agents seen, already indexed, indexed now, facts indexed,
            changed meanwhile).

        Raises:
            InvalidRequest: no such workspace; no such agent, or not in the workspace.
        """
        if workspace_id is not None:
            self._check_workspace(workspace_id)
        if agent_id is not None:
            agent = self._directory.get_agent(agent_id) if AGENT_ID.match(agent_id) else None
            if agent is None:
                raise InvalidRequest(f"No agent {agent_id!r}.")
            if workspace_id is not None and agent.workspace_id != workspace_id:
                raise InvalidRequest(f"No agent {agent_id!r} in workspace {workspace_id}.")
        return self._recall_index.run(workspace_id, agent_id, rebuild=rebuild, progress=progress)

    def upgrade_table(self) -> UpgradeReport:
        """Upgrade a table written before the dashboard, once (docs/issues.md#issue-13): list every
        agent under its workspace and give every memory its ``byAgentKind`` index
        value. Scans the whole table; safe to rerun and to run while the service runs.

        Raises:
            InvalidRequest: this service was built without the upgrade.
        """
        if self._upgrade is None:
            raise InvalidRequest("The table upgrade is not available here.")
        return self._upgrade.run(self._clock.now())

    def sweep_retention(self) -> dict[str, int]:
        """Remove the audit texts of every agent's memories archived longer than the
        retention period (docs/reference.md#retention); the nightly review does it for
        each agent it reviews, this does it for all (a paused routine's too). Safe to
        rerun.

        Returns:
            ``{agents, memories, records}``.

        Raises:
            InvalidRequest: this service was built without the sweep.
        """
        if self._retention is None:
            raise InvalidRequest("The retention sweep is not available here.")
        return self._retention.sweep_all(self._directory).to_wire()

    def rehash_emails(self) -> dict[str, int]:
        """Move every live person's e-mail claim to the current hash secret's digest
        (docs/operations.md#rotating-the-hash-secret); safe to rerun and to run while
        the service runs.

        Returns:
            ``{persons, rekeyed, taken}``: live persons seen, claims now under the
            current digest, and claims another person of the workspace holds (left as
            they are; the message of ``create-person`` explains such a pair).
        """
        persons = rekeyed = taken = 0
        for person in self._directory.all_persons():
            if person.removed_at is not None:
                continue
            persons += 1
            digests = self._digests.emails(person.email)
            if self._directory.rekey_email_claim(person, email_digests=digests):
                rekeyed += 1
            else:
                taken += 1
        return {"persons": persons, "rekeyed": rekeyed, "taken": taken}

    def erase(
        self,
        kind: TargetKind,
        target_id: str,
        *,
        by: str,
        dry_run: bool = False,
        progress: Callable[[ErasureProgress], None] | None = None,
    ) -> ErasureReport:
        """Erase an agent, a person or a workspace with everything of it, or count what
        would go (``OwnerErasure.erase``;
        docs/reference.md#erasing-an-agent-a-person-or-a-workspace).

        Raises:
            InvalidRequest: not an id of ``kind``, or no erasure configured.
            NotFound: no such target and no erasure of it.
        """
        if self._erasure is None:
            raise InvalidRequest("Erasure is not available in this service.")
        return self._erasure.erase(kind, target_id, by=by, dry_run=dry_run, progress=progress)

    def export(
        self,
        kind: TargetKind,
        target_id: str,
        write: Callable[[str], object],
        progress: Callable[[int], None] | None = None,
    ) -> TransferReport:
        """Write an agent or a workspace as JSON Lines (``WorkspaceTransfer.export``;
        docs/reference.md#export-and-import).

        Raises:
            InvalidRequest: not an agent or workspace id, or no transfer configured.
        """
        return self._transfer_service().export(kind, target_id, write, progress)

    def import_file(
        self,
        lines: Callable[[], Iterable[str]],
        *,
        remap_into: str | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> TransferReport:
        """Load an export (``WorkspaceTransfer.import_file``; docs/reference.md#export-and-import).

        Raises:
            InvalidRequest: a newer version, a bad line, a truncated file, a bad
                ``remap_into``, or no transfer configured.
        """
        if remap_into is not None and not WORKSPACE_ID.fullmatch(remap_into):
            raise InvalidRequest(f"{remap_into!r} is not a workspace id (wsp_…).")
        return self._transfer_service().import_file(lines, remap_into=remap_into, progress=progress)

    def _transfer_service(self) -> WorkspaceTransfer:
        if self._transfer is None:
            raise InvalidRequest("Export and import are not available in this service.")
        return self._transfer

    def workspace_exists(self, workspace_id: str) -> bool:
        """True when ``workspace_id`` names a stored workspace."""
        return bool(WORKSPACE_ID.match(workspace_id)) and (
            self._directory.get_workspace(workspace_id) is not None
        )

    def _check_workspace(self, workspace_id: str) -> None:
        self.enrolment.check_workspace(workspace_id)
