"""The DynamoDB adapter of ``WebSessionRepository``: dashboard sessions and one-time
sign-in codes (docs/reference.md#13-dashboard, docs/issues.md#issue-13), each stored under the
SHA-256 of its secret.

Both carry ``expiresAtEpoch``, the table's TTL attribute, so DynamoDB deletes
them some time after they expire; every read checks the expiry itself (TTL
deletion is lazy, docs/conventions.md#pitfalls).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.session import SignInCode, WebSession
from chalicelib.storage.dynamodb import DynamoDBTable, from_attributes, to_attributes
from chalicelib.storage.keys import KV_TTL_ATTRIBUTE, sign_in_code_key, web_session_key
from chalicelib.storage.owner_marks import put_owner_mark


def _epoch(moment: datetime) -> int:
    return int(moment.timestamp())


def session_to_item(session: WebSession) -> dict[str, Any]:
    """Return the stored item of a session (TTL: its absolute expiry)."""
    return {
        **web_session_key(session.secret_hash),
        "entity": "web_session",
        "personId": session.person_id,
        "workspaceId": session.workspace_id,
        "csrfToken": session.csrf_token,
        "createdAt": to_rfc3339(session.created_at),
        "lastSeenAt": to_rfc3339(session.last_seen_at),
        "expiresAt": to_rfc3339(session.expires_at),
        "absoluteExpiresAt": to_rfc3339(session.absolute_expires_at),
        "via": session.via,
        **({} if session.token_hash is None else {"tokenHash": session.token_hash}),
        **({} if session.person_epoch is None else {"personEpoch": session.person_epoch}),
        KV_TTL_ATTRIBUTE: _epoch(min(session.expires_at, session.absolute_expires_at)),
    }


def session_from_item(secret_hash: str, item: dict[str, Any]) -> WebSession:
    """Rebuild a session from its stored item."""
    return WebSession(
        secret_hash=secret_hash,
        person_id=item["personId"],
        workspace_id=item["workspaceId"],
        csrf_token=item["csrfToken"],
        created_at=from_rfc3339(item["createdAt"]),
        last_seen_at=from_rfc3339(item["lastSeenAt"]),
        expires_at=from_rfc3339(item["expiresAt"]),
        absolute_expires_at=from_rfc3339(item["absoluteExpiresAt"]),
        via=item["via"],
        token_hash=item.get("tokenHash"),
        person_epoch=None if item.get("personEpoch") is None else int(item["personEpoch"]),
    )


class DynamoDBWebSessionRepository:
    """``WebSessionRepository`` on the single table.

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def create_session(self, session: WebSession) -> None:
        """Write a new session (conditional put: a hash never names two sessions), its
        owner mark first (kept until the session's absolute expiry)."""
        put_owner_mark(
            self._table,
            session.person_id,
            web_session_key(session.secret_hash),
            _epoch(session.absolute_expires_at),
        )
        self._table.client.put_item(
            TableName=self._table.name,
            Item=to_attributes(session_to_item(session)),
            ConditionExpression="attribute_not_exists(pk)",
        )

    def get_session(self, secret_hash: str) -> WebSession | None:
        """Return the stored session (expired or not) or None (consistent read)."""
        found = self._table.get(web_session_key(secret_hash))
        return None if found is None else session_from_item(secret_hash, found)

    def extend_session(self, session: WebSession, now: datetime, expires_at: datetime) -> bool:
        """Push a live session's idle expiry back to ``expires_at`` (one conditional update).

        Returns:
            False when the session is gone (signed out meanwhile) or already expired:
            nothing is written then.
        """
        try:
            self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(web_session_key(session.secret_hash)),
                UpdateExpression="SET #seen = :now, #expires = :expires, #ttl = :ttl",
                # Only a session that still exists and has not expired: a sign-out or
                # an expiry must never be undone by a request that read it earlier.
                ConditionExpression="attribute_exists(pk) AND #expires > :now",
                ExpressionAttributeNames={
                    "#seen": "lastSeenAt",
                    "#expires": "expiresAt",
                    "#ttl": KV_TTL_ATTRIBUTE,
                },
                ExpressionAttributeValues=to_attributes(
                    {
                        ":now": to_rfc3339(now),
                        ":expires": to_rfc3339(expires_at),
                        ":ttl": _epoch(min(expires_at, session.absolute_expires_at)),
                    }
                ),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def delete_session(self, secret_hash: str) -> None:
        """Delete a session (sign-out); deleting a missing one is not an error."""
        self._table.client.delete_item(
            TableName=self._table.name, Key=to_attributes(web_session_key(secret_hash))
        )

    def create_code(self, code: SignInCode) -> None:
        """Write a new one-time code (conditional put)."""
        item = {
            **sign_in_code_key(code.code_hash),
            "entity": "sign_in_code",
            "personId": code.person_id,
            "workspaceId": code.workspace_id,
            "createdAt": to_rfc3339(code.created_at),
            "expiresAt": to_rfc3339(code.expires_at),
            **({} if code.token_hash is None else {"tokenHash": code.token_hash}),
            KV_TTL_ATTRIBUTE: _epoch(code.expires_at),
        }
        put_owner_mark(
            self._table, code.person_id, sign_in_code_key(code.code_hash), _epoch(code.expires_at)
        )
        self._table.client.put_item(
            TableName=self._table.name,
            Item=to_attributes(item),
            ConditionExpression="attribute_not_exists(pk)",
        )

    def consume_code(self, code_hash: str) -> SignInCode | None:
        """Delete a code and return what it was (expired or not), or None when no such
        code exists (never issued, or used already).

        One conditional DeleteItem returning the old item: of two requests with the
        same code, exactly one gets it (single use).
        """
        try:
            response = self._table.client.delete_item(
                TableName=self._table.name,
                Key=to_attributes(sign_in_code_key(code_hash)),
                ConditionExpression="attribute_exists(pk)",
                ReturnValues="ALL_OLD",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return None
            raise
        return _code_from_item(code_hash, from_attributes(response["Attributes"]))

    def get_code(self, code_hash: str) -> SignInCode | None:
        """Return a code (expired or not) without using it, or None (never issued, or
        used already): the confirmation page reads it (consistent read)."""
        found = self._table.get(sign_in_code_key(code_hash))
        return None if found is None else _code_from_item(code_hash, found)


def _code_from_item(code_hash: str, item: dict[str, Any]) -> SignInCode:
    return SignInCode(
        code_hash=code_hash,
        person_id=item["personId"],
        workspace_id=item["workspaceId"],
        created_at=from_rfc3339(item["createdAt"]),
        expires_at=from_rfc3339(item["expiresAt"]),
        token_hash=item.get("tokenHash"),
    )
