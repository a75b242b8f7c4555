"""The DynamoDB adapter of ``DirectoryRepository``: workspaces, agents, persons and
token hashes (docs/reference.md#2-concepts, docs/reference.md#authentication) on the single table
(keys in ``keys.py``).

A token is two items: ``TOKEN#<sha256>`` (what a request's token resolves to) and
``TOKENID#<tok_id>`` (what names the hash for revoke and rotate), always written
and deleted together in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.ids import to_rfc3339
from chalicelib.models.principal import Agent, Person, Principal, ReviewApproval, Workspace
from chalicelib.models.token import StoredToken
from chalicelib.storage import items as convert
from chalicelib.storage.dynamodb import (
    DynamoDBTable,
    TransactionCancelled,
    from_attributes,
    put_new,
    to_attributes,
)
from chalicelib.storage.keys import (
    BY_TOKEN_PRINCIPAL,
    KV_TTL_ATTRIBUTE,
    TOKEN_INDEX_PARTITION,
    WORKSPACE_AGENT_PREFIX,
    agent_key,
    learning_states_marker_key,
    owned_key,
    owned_partition,
    person_email_key,
    person_key,
    token_id_key,
    token_key,
    workspace_agent_key,
    workspace_key,
)
from chalicelib.storage.owner_marks import owner_mark_put
from chalicelib.storage.protocols import PersonEmailTaken, RoleChange
from chalicelib.storage.recall_index import marker_item

_CONDITION_FAILED = "ConditionalCheckFailedException"


class DynamoDBDirectoryRepository:
    """``DirectoryRepository`` on the single table.

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def create_workspace(self, workspace: Workspace) -> None:
        """Write a new workspace (conditional put)."""
        # a new workspace's learnings are filed by state from the start: no first-read
        # filing (storage/learnings.py, file_by_state) for concurrent first recalls to share
        states = {**learning_states_marker_key(workspace.id), "workspaceId": workspace.id}
        self._table.transact(
            [
                put_new(convert.workspace_to_item(workspace)),
                {"Put": {"Item": to_attributes(states)}},
            ]
        )

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        """Return the workspace or None."""
        found = self._table.get(workspace_key(workspace_id))
        return None if found is None else convert.workspace_from_item(found)

    def set_review_approval(self, workspace_id: str, value: ReviewApproval) -> Workspace | None:
        """Set the workspace's ``reviewApproval`` (conditional update); None when it is missing."""
        return self._set_setting(workspace_id, "reviewApproval", value)

    def set_learning_approval(
        self, workspace_id: str, value: ReviewApproval, *, by: str, at: datetime
    ) -> Workspace | None:
        """Set the workspace's ``learningApproval`` with who set it and when (one
        conditional update); None when it is missing (docs/reference.md#learning-approval)."""
        recorded = {"learningApprovalSetBy": by, "learningApprovalSetAt": to_rfc3339(at)}
        return self._set_setting(workspace_id, "learningApproval", value, recorded)

    def _set_setting(
        self, workspace_id: str, name: str, value: str, recorded: dict[str, str] | None = None
    ) -> Workspace | None:
        extra = recorded or {}
        sets = ", ".join(f"#r{n} = :r{n}" for n in range(len(extra)))
        try:
            response = self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(workspace_key(workspace_id)),
                UpdateExpression="SET #approval = :value" + (f", {sets}" if sets else ""),
                # Only an existing workspace: an update must never create a bare item.
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames={
                    "#approval": name,
                    **{f"#r{n}": key for n, key in enumerate(extra)},
                },
                ExpressionAttributeValues=to_attributes(
                    {":value": value, **{f":r{n}": v for n, v in enumerate(extra.values())}}
                ),
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == _CONDITION_FAILED:
                return None
            raise
        return convert.workspace_from_item(from_attributes(response["Attributes"]))

    def create_agent(self, agent: Agent, token: StoredToken) -> None:
        """Write an agent, its first token and its listing in the workspace atomically."""
        self._table.transact(
            [
                put_new(convert.agent_to_item(agent)),
                *_put_token(token),
                put_new(workspace_agent_item(agent)),
                # A new agent has no facts: its recall index is complete from the start.
                put_new(marker_item(agent.id, agent.created_at)),
            ]
        )

    def list_agents(self, workspace_id: str) -> list[Agent]:
        """Every agent of a workspace, by agent id (one Query of the workspace's
        partition; the listing items carry the agent's name)."""
        items = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=to_attributes(
                {":pk": workspace_key(workspace_id)["pk"], ":prefix": WORKSPACE_AGENT_PREFIX}
            ),
        )
        return [convert.agent_from_item(item) for item in items]

    def all_agents(self) -> Iterator[Agent]:
        """Every agent of the table, in no order: a Scan of the whole table (every 1 MB
        page followed) with a filter on ``entity = agent``, so it reads, and is charged
        for, every item. An operator command's read (``pinework admin
        backfill-recall-index`` without ``--workspace``, docs/issues.md#issue-23-item-4),
        never a request's."""
        for item in self._table.scan(
            FilterExpression="#entity = :agent",
            ExpressionAttributeNames={"#entity": "entity"},
            ExpressionAttributeValues=to_attributes({":agent": "agent"}),
        ):
            yield convert.agent_from_item(item)

    def all_persons(self) -> Iterator[Person]:
        """Every person of the table, removed ones too, in no order: a Scan of the whole
        table filtered on ``entity = person`` (``pinework admin rehash-emails``; an
        operator command's read, never a request's)."""
        for item in self._table.scan(
            FilterExpression="#entity = :person",
            ExpressionAttributeNames={"#entity": "entity"},
            ExpressionAttributeValues=to_attributes({":person": "person"}),
        ):
            yield convert.person_from_item(item)

    def rekey_email_claim(self, person: Person, *, email_digests: Sequence[str]) -> bool:
        """Hold the person's e-mail claim under ``email_digests[0]`` only: put it there and
        delete it under the older digests, in one transaction
        (docs/operations.md#rotating-the-hash-secret). Idempotent.

        Returns:
            False (nothing written) when another person holds the claim under one of
            the digests.
        """
        mine = {
            "ConditionExpression": "attribute_not_exists(pk) OR #person = :person",
            "ExpressionAttributeNames": {"#person": "personId"},
            "ExpressionAttributeValues": to_attributes({":person": person.id}),
        }
        current, *older = email_digests
        claim = {**person_email_key(person.workspace_id, current), "personId": person.id}
        try:
            self._table.transact(
                [
                    {"Put": {"Item": to_attributes(claim), **mine}},
                    # its owner mark: the person's erasure finds the claim (owner_marks.py)
                    owner_mark_put(person.id, person_email_key(person.workspace_id, current)),
                    *(
                        {
                            "Delete": {
                                "Key": to_attributes(person_email_key(person.workspace_id, digest)),
                                **mine,
                            }
                        }
                        for digest in older
                    ),
                ]
            )
        except TransactionCancelled:
            return False
        return True

    def add_workspace_listing(self, agent: Agent) -> bool:
        """List an agent created before listings existed under its workspace
        (conditional put; the table upgrade). Returns False when it was listed."""
        try:
            self._table.client.put_item(
                TableName=self._table.name,
                Item=to_attributes(workspace_agent_item(agent)),
                # Listed once: a second run of the upgrade changes nothing.
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == _CONDITION_FAILED:
                return False
            raise
        return True

    def create_person(
        self, person: Person, token: StoredToken, *, email_digests: Sequence[str]
    ) -> None:
        """Write a person, their first token and their e-mail claim (under
        ``email_digests[0]``) atomically; no claim may exist under any of the digests
        (a previous hash secret's, docs/reference.md#keyed-hashes-of-personal-data).

        Raises:
            PersonEmailTaken: the workspace's claim on the e-mail exists.
        """
        current, *older = email_digests
        claim = {**person_email_key(person.workspace_id, current), "personId": person.id}
        checks = [
            {
                "ConditionCheck": {
                    "Key": to_attributes(person_email_key(person.workspace_id, digest)),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            }
            for digest in older
        ]
        try:
            self._table.transact(
                [
                    # attribute_not_exists: one person per e-mail address in a workspace.
                    # First, so a taken address is among the first reasons whatever follows.
                    put_new(claim),
                    *checks,
                    put_new(convert.person_to_item(person)),
                    *_put_token(token),
                    owner_mark_put(person.id, person_email_key(person.workspace_id, current)),
                    # the workspace's erasure and export find its persons (owner_marks.py)
                    owner_mark_put(person.workspace_id, person_key(person.id)),
                ]
            )
        except TransactionCancelled as cancelled:
            if "ConditionalCheckFailed" in cancelled.reasons[: 1 + len(checks)]:
                raise PersonEmailTaken(person.email) from cancelled
            raise

    def get_agent(self, agent_id: str) -> Agent | None:
        """Return the agent or None."""
        found = self._table.get(agent_key(agent_id))
        return None if found is None else convert.agent_from_item(found)

    def get_person(self, person_id: str) -> Person | None:
        """Return the person or None."""
        found = self._table.get(person_key(person_id))
        return None if found is None else convert.person_from_item(found)

    def principal_for_token(self, token_hash: str) -> Principal | None:
        """Return the principal of a token hash, or None (expiry not checked: use
        ``get_token`` and ``TokenRecord.status``, as ``AuthService`` does)."""
        found = self._table.get(token_key(token_hash))
        return None if found is None else convert.principal_from_token_item(found)

    def get_token(self, token_hash: str) -> StoredToken | None:
        """The token stored under a hash (one consistent GetItem), or None."""
        found = self._table.get(token_key(token_hash))
        return None if found is None else convert.token_from_item(found)

    def find_token(self, token_id: str) -> StoredToken | None:
        """The token with a ``tok_…`` id (two consistent GetItems), or None."""
        named = self._table.get(token_id_key(token_id))
        return None if named is None else self.get_token(str(named["tokenHash"]))

    def add_token(self, token: StoredToken) -> None:
        """Store a new token (both items, conditional puts, one transaction)."""
        self._table.transact(_put_token(token))

    def list_tokens(self, principal_id: str) -> list[StoredToken]:
        """Every token of a principal (the sparse ``byTokenPrincipal`` index, so
        eventually consistent: a token issued a moment ago may be missing)."""
        rows = self._table.query(
            IndexName=BY_TOKEN_PRINCIPAL,
            KeyConditionExpression="#principal = :principal",
            ExpressionAttributeNames={"#principal": TOKEN_INDEX_PARTITION},
            ExpressionAttributeValues=to_attributes({":principal": principal_id}),
        )
        return [convert.token_from_item(row) for row in rows]

    def assign_token_id(self, token_hash: str, token_id: str, created_at: datetime) -> bool:
        """Give a token stored before ids existed its ``tok_…`` id (and ``createdAt``
        unless it has one). Returns False when it has an id already or is gone."""
        update = {
            "Update": {
                "Key": to_attributes(token_key(token_hash)),
                "UpdateExpression": "SET #id = :id, #created = if_not_exists(#created, :created)",
                # Only a live token without an id: two listings never give it two ids.
                "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(#id)",
                "ExpressionAttributeNames": {"#id": "tokenId", "#created": "createdAt"},
                "ExpressionAttributeValues": to_attributes(
                    {":id": token_id, ":created": to_rfc3339(created_at)}
                ),
            }
        }
        naming = put_new({**token_id_key(token_id), "tokenHash": token_hash})
        try:
            self._table.transact([update, naming])
        except TransactionCancelled:
            return False
        return True

    def revoke_token(self, token: StoredToken) -> bool:
        """Delete both items of a token at once. Returns False when it was gone."""
        if token.record.id is None:
            raise ValueError("a token without an id cannot be revoked by id")
        operations: list[dict[str, Any]] = [
            {
                "Delete": {
                    "Key": to_attributes(token_key(token.token_hash)),
                    # Exists: a second revoke reports "already revoked", not success.
                    "ConditionExpression": "attribute_exists(pk)",
                }
            },
            {"Delete": {"Key": to_attributes(token_id_key(token.record.id))}},
        ]
        try:
            self._table.transact(operations)
        except TransactionCancelled:
            return False
        return True

    def rotate_token(
        self, old: StoredToken, new: StoredToken, until: datetime, delete_after: int
    ) -> bool:
        """Store ``new`` and make ``old`` expire at ``until``, in one transaction.

        Args:
            old: the token being rotated (must have an id).
            new: its replacement.
            until: when ``old`` stops working (the grace period's end).
            delete_after: epoch seconds after which DynamoDB's TTL may delete
                ``old``'s items (the table's TTL attribute).

        Returns:
            False when ``old`` was revoked or rotated meanwhile (nothing written).
        """
        if old.record.id is None or new.record.id is None:
            raise ValueError("rotation needs token ids")
        expire = {
            "Update": {
                "Key": to_attributes(token_key(old.token_hash)),
                "UpdateExpression": "SET #expires = :until, #rotated = :new, #ttl = :ttl",
                # A live token rotated once: a second rotation would leave two heirs.
                "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(#rotated)",
                "ExpressionAttributeNames": {
                    "#expires": "expiresAt",
                    "#rotated": "rotatedTo",
                    "#ttl": KV_TTL_ATTRIBUTE,
                },
                "ExpressionAttributeValues": to_attributes(
                    {":until": to_rfc3339(until), ":new": new.record.id, ":ttl": delete_after}
                ),
            }
        }
        naming = {
            "Update": {
                "Key": to_attributes(token_id_key(old.record.id)),
                "UpdateExpression": "SET #ttl = :ttl",
                "ConditionExpression": "attribute_exists(pk)",
                "ExpressionAttributeNames": {"#ttl": KV_TTL_ATTRIBUTE},
                "ExpressionAttributeValues": to_attributes({":ttl": delete_after}),
            }
        }
        try:
            self._table.transact([expire, naming, *_put_token(new)])
        except TransactionCancelled:
            return False
        return True

    def touch_token(self, token_hash: str, now: datetime, stale_before: datetime) -> bool:
        """Set ``lastUsedAt = now`` unless it is at ``stale_before`` or later (one
        conditional UpdateItem). Returns False when nothing was written."""
        try:
            self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(token_key(token_hash)),
                UpdateExpression="SET #used = :now",
                # At most one write per token and interval, however many requests race;
                # never re-create a revoked token's item.
                ConditionExpression=(
                    "attribute_exists(pk) AND (attribute_not_exists(#used) OR #used < :stale)"
                ),
                ExpressionAttributeNames={"#used": "lastUsedAt"},
                ExpressionAttributeValues=to_attributes(
                    {":now": to_rfc3339(now), ":stale": to_rfc3339(stale_before)}
                ),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == _CONDITION_FAILED:
                return False
            raise
        return True

    def end_person_sessions(self, person_id: str) -> Person | None:
        """Add one to the person's ``sessionsEpoch`` (one conditional UpdateItem): every
        dashboard session signed in before ends at its next request. None when there is
        no such person or they were removed."""
        try:
            response = self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(person_key(person_id)),
                UpdateExpression="ADD #epoch :one",
                # A live person only: never create a bare item, nor touch a removed one.
                ConditionExpression="attribute_exists(pk) AND attribute_not_exists(#removed)",
                ExpressionAttributeNames={"#epoch": "sessionsEpoch", "#removed": "removedAt"},
                ExpressionAttributeValues=to_attributes({":one": 1}),
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == _CONDITION_FAILED:
                return None
            raise
        return convert.person_from_item(from_attributes(response["Attributes"]))

    def list_persons(self, workspace_id: str) -> list[Person]:
        """Every person of a workspace, removed ones too, in no order: one Query of the
        workspace's owner marks (``PERSON#…`` sort keys, written with each person; the
        table upgrade marks older ones) and one consistent BatchGetItem of the persons."""
        marks = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=to_attributes(
                {":pk": owned_partition(workspace_id), ":prefix": "PERSON#"}
            ),
        )
        keys = [owned_key(str(mark["sk"])) for mark in marks]
        persons = [convert.person_from_item(item) for item in self._table.batch_get(keys)]
        return [person for person in persons if person.workspace_id == workspace_id]

    def set_person_role(self, change: RoleChange) -> Person | None:
        """Set a person's role, who set it and when (one transaction: the person's
        conditional update, and the other owner's condition check when named). None
        when the person is gone, removed, of another workspace or no longer
        ``change.before``, or the other owner is not a live owner any more."""
        before = (
            "#role = :before"
            if change.before == "owner"
            # a person stored before roles existed has no role attribute: a member
            else "(attribute_not_exists(#role) OR #role = :before)"
        )
        update = {
            "Update": {
                "Key": to_attributes(person_key(change.person_id)),
                "UpdateExpression": "SET #role = :after, #by = :by, #at = :at",
                # A live person of this workspace still holding the role that was read:
                # a concurrent change is reported, never overwritten.
                "ConditionExpression": (
                    "attribute_exists(pk) AND attribute_not_exists(#removed) "
                    f"AND #workspace = :workspace AND {before}"
                ),
                "ExpressionAttributeNames": {
                    "#role": "role",
                    "#by": "roleSetBy",
                    "#at": "roleSetAt",
                    "#removed": "removedAt",
                    "#workspace": "workspaceId",
                },
                "ExpressionAttributeValues": to_attributes(
                    {
                        ":after": change.after,
                        ":by": change.by,
                        ":at": to_rfc3339(change.at),
                        ":before": change.before,
                        ":workspace": change.workspace_id,
                    }
                ),
            }
        }
        operations = [update]
        if change.other_owner is not None:
            operations.append(
                {
                    "ConditionCheck": {
                        "Key": to_attributes(person_key(change.other_owner)),
                        # The workspace keeps a live owner after this change.
                        "ConditionExpression": (
                            "attribute_exists(pk) AND attribute_not_exists(#removed) "
                            "AND #workspace = :workspace AND #role = :owner"
                        ),
                        "ExpressionAttributeNames": {
                            "#role": "role",
                            "#removed": "removedAt",
                            "#workspace": "workspaceId",
                        },
                        "ExpressionAttributeValues": to_attributes(
                            {":workspace": change.workspace_id, ":owner": "owner"}
                        ),
                    }
                }
            )
        try:
            self._table.transact(operations)
        except TransactionCancelled:
            return None
        return self.get_person(change.person_id)

    def remove_person(self, person: Person, *, email_digests: Sequence[str], now: datetime) -> bool:
        """Mark the person removed (the item stays: audit records name them), end their
        sessions and release their e-mail claim, in one transaction. Returns False when
        the person is gone or was removed meanwhile (nothing written)."""
        mark = {
            "Update": {
                "Key": to_attributes(person_key(person.id)),
                "UpdateExpression": "SET #removed = :now ADD #epoch :one",
                # Removed once: a second removal reports it instead of moving the time.
                "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(#removed)",
                "ExpressionAttributeNames": {"#removed": "removedAt", "#epoch": "sessionsEpoch"},
                "ExpressionAttributeValues": to_attributes({":now": to_rfc3339(now), ":one": 1}),
            }
        }
        release = [
            {
                "Delete": {
                    "Key": to_attributes(person_email_key(person.workspace_id, digest)),
                    # Only this person's claim (a person made before claims existed has
                    # none; one made under another hash secret has it under its digest).
                    "ConditionExpression": "attribute_not_exists(pk) OR #person = :person",
                    "ExpressionAttributeNames": {"#person": "personId"},
                    "ExpressionAttributeValues": to_attributes({":person": person.id}),
                }
            }
            for digest in email_digests
        ]
        try:
            self._table.transact([mark, *release])
        except TransactionCancelled:
            return False
        return True


def _put_token(token: StoredToken) -> list[dict[str, Any]]:
    if token.record.id is None:
        raise ValueError("a new token needs an id")
    return [
        put_new(convert.token_to_item(token)),
        put_new({**token_id_key(token.record.id), "tokenHash": token.token_hash}),
    ]


def workspace_agent_item(agent: Agent) -> dict[str, object]:
    """The item listing ``agent`` in its workspace's partition (``keys.workspace_agent_key``):
    the agent's own attributes, so the listing needs no second read."""
    return {
        **convert.agent_to_item(agent),
        **workspace_agent_key(agent.workspace_id, agent.id),
        "entity": "workspace_agent",
    }
