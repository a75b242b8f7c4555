"""The DynamoDB adapter of ``DirectoryRepository``: workspaces, agents, persons and
token hashes (SPEC §2, §7 auth) on the single table (keys in ``keys.py``)."""

from __future__ import annotations

from botocore.exceptions import ClientError

from chalicelib.models.principal import (
    Agent,
    Person,
    Principal,
    PrincipalKind,
    ReviewApproval,
    Workspace,
)
from chalicelib.storage import items as convert
from chalicelib.storage.dynamodb import (
    DynamoDBTable,
    TransactionCancelled,
    from_attributes,
    put_new,
    to_attributes,
)
from chalicelib.storage.keys import (
    agent_key,
    person_email_key,
    token_key,
    workspace_key,
)
from chalicelib.storage.protocols import PersonEmailTaken


class DynamoDBDirectoryRepository:
    """``DirectoryRepository`` on the single table.

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def create_workspace(self, workspace: Workspace) -> None:
        """Write a new workspace (conditional put)."""
        self._table.transact([put_new(convert.workspace_to_item(workspace))])

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        """Return the workspace or None."""
        found = self._table.get(workspace_key(workspace_id))
        return None if found is None else convert.workspace_from_item(found)

    def set_review_approval(self, workspace_id: str, value: ReviewApproval) -> Workspace | None:
        """Set the workspace's ``reviewApproval`` (conditional update); None when it is missing."""
        try:
            response = self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(workspace_key(workspace_id)),
                UpdateExpression="SET #approval = :value",
                # Only an existing workspace: an update must never create a bare item.
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames={"#approval": "reviewApproval"},
                ExpressionAttributeValues=to_attributes({":value": value}),
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return None
            raise
        return convert.workspace_from_item(from_attributes(response["Attributes"]))

    def create_agent(self, agent: Agent, token_hash: str) -> None:
        """Write an agent and its token hash atomically."""
        principal = Principal(
            kind=PrincipalKind.AGENT, id=agent.id, workspace_id=agent.workspace_id
        )
        self._table.transact(
            [
                put_new(convert.agent_to_item(agent)),
                put_new({**token_key(token_hash), **convert.principal_to_token_item(principal)}),
            ]
        )

    def create_person(self, person: Person, token_hash: str, *, email_digest: str) -> None:
        """Write a person, its token hash and its e-mail claim atomically.

        Raises:
            PersonEmailTaken: the workspace's claim on the e-mail exists.
        """
        principal = Principal(
            kind=PrincipalKind.PERSON, id=person.id, workspace_id=person.workspace_id
        )
        claim = {**person_email_key(person.workspace_id, email_digest), "personId": person.id}
        try:
            self._table.transact(
                [
                    # attribute_not_exists: one person per e-mail address in a workspace.
                    # First, so its cancellation reason is reasons[0] whatever follows.
                    put_new(claim),
                    put_new(convert.person_to_item(person)),
                    put_new(
                        {**token_key(token_hash), **convert.principal_to_token_item(principal)}
                    ),
                ]
            )
        except TransactionCancelled as cancelled:
            if cancelled.reasons[:1] == ["ConditionalCheckFailed"]:
                raise PersonEmailTaken(person.email) from cancelled
            raise

    def get_agent(self, agent_id: str) -> Agent | None:
        """Return the agent or None."""
        found = self._table.get(agent_key(agent_id))
        return None if found is None else convert.agent_from_item(found)

    def principal_for_token(self, token_hash: str) -> Principal | None:
        """Return the principal of a token hash, or None."""
        found = self._table.get(token_key(token_hash))
        return None if found is None else convert.principal_from_token_item(found)
