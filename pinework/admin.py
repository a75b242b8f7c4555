"""Settings for ``pinework admin …``, which writes straight to DynamoDB.

The operator commands run the service code in-process (not over HTTP), so they
need the same :class:`chalicelib.settings.Settings` as the server, with one
difference: by default they target the local server's embedded DynamoDB, so
that ``pinework admin create-workspace`` works out of the box against
``make run``-style local development. ``PINEWORK_DYNAMODB_ENDPOINT=aws``
means real AWS.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Protocol

from chalicelib.settings import DEFAULT_LOCAL_DYNAMODB_ENDPOINT, Settings
from pinework.local_record import data_dir, read_running_record

__all__ = [
    "AWS_ENDPOINT_SENTINEL",
    "AdminOperations",
    "BackfillCounts",
    "ConfiguredWorkspace",
    "CreatedWorkspace",
    "IndexBackfillCounts",
    "IndexProgressStep",
    "IssuedCredential",
    "UpgradeCounts",
    "admin_settings",
    "open_admin_service",
    "use_dummy_credentials_if_local",
]

AWS_ENDPOINT_SENTINEL = "aws"
"""Value of ``PINEWORK_DYNAMODB_ENDPOINT`` that means real AWS (no endpoint override)."""

_ENDPOINT_VARIABLE = "PINEWORK_DYNAMODB_ENDPOINT"
_S3_ENDPOINT_VARIABLE = "PINEWORK_S3_ENDPOINT"
_BUCKET_VARIABLE = "PINEWORK_BUCKET_NAME"
_HASH_SECRET = "PINEWORK_HASH_SECRET"
_HASH_SECRET_ARN = "PINEWORK_HASH_SECRET_ARN"


class CreatedWorkspace(Protocol):
    """What the CLI reads of a new workspace."""

    @property
    def id(self) -> str:
        """The ``wsp_…`` id."""
        ...

    @property
    def name(self) -> str:
        """The workspace's name."""
        ...


class ConfiguredWorkspace(Protocol):
    """What the CLI reads of a workspace whose settings changed."""

    @property
    def id(self) -> str:
        """The ``wsp_…`` id."""
        ...

    @property
    def review_approval(self) -> str:
        """``none`` or ``required`` (see ``set_review_approval``)."""
        ...

    @property
    def learning_approval(self) -> str:
        """``required`` or ``none`` (see ``set_learning_approval``)."""
        ...


class IssuedCredential(Protocol):
    """What the CLI reads of a new agent or person: its id and its token (shown once)."""

    @property
    def id(self) -> str:
        """The ``agt_…`` or ``usr_…`` id."""
        ...

    @property
    def token(self) -> str:
        """The bearer token in clear; the service stores only its hash."""
        ...

    @property
    def token_id(self) -> str | None:
        """The token's ``tok_…`` id (for list-tokens, revoke-token, rotate-token)."""
        ...


class BackfillCounts(Protocol):
    """What the CLI reads of an embedding backfill."""

    def to_wire(self) -> dict[str, int]:
        """``scanned``, ``current``, ``embedded`` and ``changed`` (see the service)."""
        ...


class IndexProgressStep(Protocol):
    """What the CLI reads of one agent done by a recall index backfill."""

    @property
    def agent_id(self) -> str:
        """The ``agt_…`` id."""
        ...

    @property
    def facts(self) -> int:
        """Index entries written for it (0 when skipped)."""
        ...

    @property
    def skipped(self) -> bool:
        """Its index was complete already; nothing was written."""
        ...

    @property
    def done(self) -> int:
        """Agents done so far, this one included."""
        ...

    @property
    def total(self) -> int:
        """Agents the run goes through."""
        ...


class IndexBackfillCounts(Protocol):
    """What the CLI reads of a recall index backfill."""

    def to_wire(self) -> dict[str, int]:
        """``agentsSeen``, ``agentsAlreadyIndexed``, ``agentsIndexed``,
        ``factsIndexed`` and ``changedMeanwhile`` (see the service)."""
        ...


class AdminOperations(Protocol):
    """The part of the service's ``AdminService`` the CLI uses (checked structurally)."""

    def create_workspace(self, name: str, /) -> CreatedWorkspace:
        """Create a workspace.

        Args:
            name: its display name.

        Returns:
            The workspace.

        Raises:
            chalicelib.errors.PineworkError: e.g. ``invalid_request``.
        """
        ...

    def create_agent(self, workspace_id: str, name: str, /) -> IssuedCredential:
        """Create an agent in a workspace and issue its token.

        Args:
            workspace_id: the ``wsp_…`` id.
            name: the agent's name.

        Returns:
            The agent's id and token.

        Raises:
            chalicelib.errors.PineworkError: e.g. an unknown workspace.
        """
        ...

    def create_person(self, workspace_id: str, email: str, role: str = ..., /) -> IssuedCredential:
        """Create a person in a workspace and issue their token.

        Args:
            workspace_id: the ``wsp_…`` id.
            email: the person's email address.
            role: ``owner`` or ``member`` (the default; docs/reference.md#person-roles).

        Returns:
            The person's id and token.

        Raises:
            chalicelib.errors.PineworkError: e.g. an unknown workspace.
        """
        ...

    def backfill_embeddings(self, workspace_id: str, agent_id: str | None, /) -> BackfillCounts:
        """Embed the workspace's (or one agent's) live facts whose recall embedding is
        missing or of an older format; safe to rerun.

        Args:
            workspace_id: the ``wsp_…`` id.
            agent_id: only this agent; ``None`` for every agent of the workspace.

        Returns:
            The counts.

        Raises:
            chalicelib.errors.PineworkError: ``invalid_request`` (unknown workspace,
                or an agent outside it).
        """
        ...

    def backfill_recall_index(
        self,
        workspace_id: str | None,
        agent_id: str | None,
        /,
        *,
        rebuild: bool = False,
        progress: Callable[[IndexProgressStep], None] | None = None,
    ) -> IndexBackfillCounts:
        """Build the recall index of agents created before it (docs/issues.md#issue-23-item-4);
        resumable, safe to rerun and to run while the service runs.

        Args:
            workspace_id: only this workspace's agents (``wsp_…``); ``None``: every
                agent of the table (it scans the table).
            agent_id: only this agent (``agt_…``).
            rebuild: clear each agent's index and build it again.
            progress: called after each agent.

        Returns:
            The counts.

        Raises:
            chalicelib.errors.PineworkError: ``invalid_request`` (unknown workspace
                or agent, or an agent outside the workspace).
        """
        ...

    def sweep_retention(self) -> dict[str, int]:
        """Remove the audit texts of memories archived longer than the retention period.

        Returns:
            ``{agents, memories, records}``.
        """
        ...

    def rehash_emails(self) -> dict[str, int]:
        """Move every live person's e-mail claim to the current hash secret's digest.

        Returns:
            ``{persons, rekeyed, taken}``.
        """
        ...

    def upgrade_table(self) -> UpgradeCounts:
        """Upgrade a table written before the dashboard, once: list every agent under
        its workspace and index every memory for the dashboard. Safe to rerun.

        Returns:
            The counts (``doneBefore`` when a finished run was recorded).
        """
        ...

    def issue_token(self, principal_id: str, label: str | None = None, /) -> dict[str, Any]:
        """Issue one more token for an agent or a person.

        Args:
            principal_id: ``agt_…`` or ``usr_…``.
            label: a note to tell its tokens apart (e.g. ``ci-runner``).

        Returns:
            ``{id, token, principalKind, principalId, label}`` (the token shown once).

        Raises:
            chalicelib.errors.PineworkError: ``invalid_request`` (no such principal,
                a bad label).
        """
        ...

    def list_tokens(self, principal_id: str, /) -> list[dict[str, Any]]:
        """An agent's or a person's tokens, oldest first: ``id``, ``prefix``, ``label``,
        the principal, ``createdAt``, ``lastUsedAt``, ``expiresAt``, ``rotatedTo``,
        ``status`` (never the token or its hash).

        Raises:
            chalicelib.errors.PineworkError: ``invalid_request`` (no such principal).
        """
        ...

    def revoke_token(self, token_id: str, /) -> dict[str, Any]:
        """Revoke a token at once (its next request is 401); returns its listing.

        Raises:
            chalicelib.errors.PineworkError: ``not_found`` (no such token, or revoked).
        """
        ...

    def rotate_token(self, token_id: str, grace_hours: float | None = None, /) -> dict[str, Any]:
        """Issue a replacement; the old token works for ``grace_hours`` more (24 by
        default). Returns ``{token: <new, shown once>, previous: <old listing>}``.

        Raises:
            chalicelib.errors.PineworkError: ``not_found``; ``invalid_request`` (a
                grace outside 0 to 720 hours, a token rotated already).
        """
        ...

    def set_role(self, person_id: str, role: str, /) -> dict[str, Any]:
        """Set a person's role, ``owner`` or ``member`` (docs/reference.md#person-roles).
        Returns ``{id, email, workspaceId, role}``.

        Raises:
            chalicelib.errors.PineworkError: ``invalid_request`` (another role),
                ``not_found`` (no such live person), ``conflict`` (changed meanwhile).
        """
        ...

    def end_sessions(self, person_id: str, /) -> dict[str, Any]:
        """End every dashboard session of a person at its next request (their tokens
        keep working). Returns ``{id, email, workspaceId, sessionsEpoch}``.

        Raises:
            chalicelib.errors.PineworkError: ``not_found`` (no such person, or removed).
        """
        ...

    def remove_person(self, person_id: str, /) -> dict[str, Any]:
        """Remove a person: tokens revoked, sessions ended, e-mail address free again;
        their past edits stay attributed. Returns ``{id, email, workspaceId, removedAt,
        tokensRevoked}``.

        Raises:
            chalicelib.errors.PineworkError: ``not_found`` (no such person, or removed).
        """
        ...

    def erase(
        self,
        kind: Any,
        target_id: str,
        /,
        *,
        by: str,
        dry_run: bool = False,
        progress: Callable[[Any], None] | None = None,
    ) -> ErasureCounts:
        """Erase an agent, a person or a workspace with everything of it (``kind``:
        ``agent``, ``person``, ``workspace``), or with ``dry_run`` count what would go;
        resumable, a rerun of a finished one does nothing.

        Raises:
            chalicelib.errors.PineworkError: ``invalid_request`` (not an id of ``kind``),
                ``not_found`` (no such target and no erasure of it).
        """
        ...

    def export(
        self,
        kind: Any,
        target_id: str,
        write: Callable[[str], object],
        progress: Callable[[int], None] | None = None,
        /,
    ) -> ErasureCounts:
        """Write an agent or a workspace as JSON Lines, one ``write`` per line.

        Raises:
            chalicelib.errors.PineworkError: ``invalid_request``.
        """
        ...

    def import_file(
        self,
        lines: Callable[[], Any],
        /,
        *,
        remap_into: str | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> ErasureCounts:
        """Load an export (``lines`` is called twice: checks, then writes).

        Raises:
            chalicelib.errors.PineworkError: ``invalid_request`` (a newer version, a bad
                line, a truncated file).
        """
        ...

    def set_review_approval(self, workspace_id: str, value: str, /) -> ConfiguredWorkspace:
        """Set a workspace's ``reviewApproval``.

        Args:
            workspace_id: the ``wsp_…`` id.
            value: ``required`` (each review action waits for a person to
                approve or reject it) or ``none`` (reviews apply their plans).

        Returns:
            The workspace with its new setting.

        Raises:
            chalicelib.errors.PineworkError: ``invalid_request`` (another value,
                or an unknown workspace).
        """
        ...

    def set_learning_approval(
        self, workspace_id: str, value: str, /, *, confirmed: bool = False
    ) -> ConfiguredWorkspace:
        """Set a workspace's ``learningApproval`` (docs/reference.md#learning-approval):
        ``required`` (an agent's proposed learning waits for a person) or ``none`` (it is
        active at once; only ``confirmed``, the risk named otherwise).

        Raises:
            chalicelib.errors.PineworkError: ``invalid_request`` (another value, an
                unknown workspace, or ``none`` not confirmed).
        """
        ...


class ErasureCounts(Protocol):
    """What ``erase``, ``export`` or ``import_file`` did (``to_wire``)."""

    def to_wire(self) -> dict[str, Any]:
        """The JSON form: ``kind``, ``targetId``, ``dryRun``, ``alreadyErased``,
        ``items`` (by kind), ``itemCount``, ``objectVersions``, ``objectBytes``,
        ``erasedBy``, ``finishedAt``."""
        ...


class UpgradeCounts(Protocol):
    """What the CLI reads of a table upgrade."""

    def to_wire(self) -> dict[str, Any]:
        """``doneBefore``, ``scanned``, ``agentsListed``, ``memoriesIndexed``,
        ``ownersMarked``, ``erasuresListed``, ``tagsRefiled``, ``staleTagsDropped``,
        ``sectionPagesRebuilt``, ``changedMeanwhile`` (see the service)."""
        ...


def admin_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Build the settings the admin commands use.

    Same as :meth:`Settings.from_env`, except for the endpoints: a DynamoDB endpoint
    unset or empty means the local server's embedded DynamoDB
    (``DEFAULT_LOCAL_DYNAMODB_ENDPOINT``, or ``http://127.0.0.1:$PINEWORK_DYNAMODB_PORT``
    when that is set, as for ``make serve``), ``aws`` means real AWS (endpoint
    ``None``), anything else is used as given. A local endpoint serves S3 too (the
    embedded stack answers both), so ``PINEWORK_S3_ENDPOINT`` defaults to it there;
    against AWS, ``PINEWORK_BUCKET_NAME`` must name the stack's bucket (its
    ``BucketName`` output): the recall index keeps volumes there
    (docs/issues.md#issue-23-item-2), and a default name would be someone else's bucket;
    ``PINEWORK_HASH_SECRET_ARN`` must name the stack's hash secret there too. Locally,
    ``PINEWORK_HASH_SECRET`` defaults to the local server's
    (``$PINEWORK_DATA_DIR/hash-secret``, else ``.pinework-local/hash-secret`` under the
    current folder; docs/reference.md#keyed-hashes-of-personal-data).

    Args:
        environ: the variables to read; ``os.environ`` when omitted. Not modified.

    Returns:
        The settings.

    Raises:
        pydantic.ValidationError: a variable holds a value of the wrong type.
        ValueError: ``PINEWORK_DYNAMODB_PORT`` is set but is not a port number, or
            ``PINEWORK_BUCKET_NAME`` or ``PINEWORK_HASH_SECRET_ARN`` is missing against AWS.
    """
    env = dict(os.environ if environ is None else environ)
    endpoint = env.get(_ENDPOINT_VARIABLE, "").strip()
    if endpoint.lower() == AWS_ENDPOINT_SENTINEL:
        env.pop(_ENDPOINT_VARIABLE)
        if not env.get(_BUCKET_VARIABLE, "").strip():
            raise ValueError(
                f"{_BUCKET_VARIABLE} must name the stack's bucket (its BucketName output) "
                f"when {_ENDPOINT_VARIABLE}=aws."
            )
        if not (env.get(_HASH_SECRET_ARN, "").strip() or env.get(_HASH_SECRET, "").strip()):
            # a person's e-mail claim made under another secret than the service's
            # would let the same address in twice
            raise ValueError(
                f"{_HASH_SECRET_ARN} must name the stack's hash secret (its HashSecretArn "
                f"output) when {_ENDPOINT_VARIABLE}=aws."
            )
        return Settings.from_env(env)
    if not endpoint:
        port = env.get("PINEWORK_DYNAMODB_PORT", "").strip()
        if port and not (port.isdigit() and 1 <= int(port) <= 65535):
            # As ``make serve`` refuses it: never fall back to another port silently.
            raise ValueError(
                f"PINEWORK_DYNAMODB_PORT must be a port number from 1 to 65535, not {port!r}."
            )
        running = None if port else read_running_record(data_dir(env))
        if running is not None:
            # the server of this data folder says where it is (it may have been moved)
            env[_ENDPOINT_VARIABLE] = running.dynamodb_endpoint
            env.setdefault("PINEWORK_TABLE_NAME", running.table_name)
        else:
            env[_ENDPOINT_VARIABLE] = (
                f"http://127.0.0.1:{port}" if port else DEFAULT_LOCAL_DYNAMODB_ENDPOINT
            )
    if not env.get(_S3_ENDPOINT_VARIABLE, "").strip():
        env[_S3_ENDPOINT_VARIABLE] = env[_ENDPOINT_VARIABLE].strip()
    if not env.get(_HASH_SECRET, "").strip():
        # the local server's own secret (infra/local_server.py writes it at first start)
        secret_file = data_dir(env) / "hash-secret"
        if secret_file.is_file():
            env[_HASH_SECRET] = secret_file.read_text(encoding="utf-8").strip()
    return Settings.from_env(env)


def use_dummy_credentials_if_local(
    settings: Settings, environ: MutableMapping[str, str] | None = None
) -> bool:
    """Give boto3 dummy credentials when talking to a local endpoint without any.

    The embedded DynamoDB accepts any credentials, but boto3 refuses to sign a
    request without some. Real AWS (no endpoint override) is never touched, and
    credentials already in the environment are kept.

    Args:
        settings: the admin settings (see :func:`admin_settings`).
        environ: the environment to update; ``os.environ`` when omitted.

    Returns:
        ``True`` when dummy credentials were set.
    """
    env = os.environ if environ is None else environ
    if settings.dynamodb_endpoint is None or env.get("AWS_ACCESS_KEY_ID"):
        return False
    env["AWS_ACCESS_KEY_ID"] = "testing"
    env["AWS_SECRET_ACCESS_KEY"] = "testing"
    return True


def open_admin_service(environ: MutableMapping[str, str] | None = None) -> AdminOperations:
    """Build the service the admin commands call, against the tables of :func:`admin_settings`.

    Imports the service code (and so boto3) only now, so that the client and the
    other commands work without the ``admin`` extra.

    Args:
        environ: the environment to read (and to give dummy credentials for a
            local endpoint); ``os.environ`` when omitted.

    Returns:
        The admin service.

    Raises:
        ImportError: boto3 or the service code is not installed
            (``pip install 'pinework[admin]'``).
        pydantic.ValidationError: a settings variable holds a bad value.
    """
    settings = admin_settings(environ)
    use_dummy_credentials_if_local(settings, environ)
    from chalicelib.storage.store_check import pinework_table_problem
    from chalicelib.wiring import build_admin_service

    if settings.dynamodb_endpoint is not None:
        problem = pinework_table_problem(
            settings.dynamodb_endpoint, settings.region, settings.table_name
        )
        if problem is not None:
            # Another process may listen on the port: never write into its tables.
            raise ValueError(
                f"{settings.dynamodb_endpoint} is not a Pinework store ({problem}). Start "
                "`make serve`, or point the admin commands at its embedded DynamoDB with "
                "PINEWORK_DYNAMODB_PORT or PINEWORK_DYNAMODB_ENDPOINT (its banner prints it), "
                "or PINEWORK_DATA_DIR for a server of another data folder."
            )

    service: AdminOperations = build_admin_service(settings)
    return service
