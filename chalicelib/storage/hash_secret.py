"""The deployment's hash secret in AWS Secrets Manager
(docs/reference.md#keyed-hashes-of-personal-data): the stack generates it, the functions
read it once per cold start, on the first request that needs a keyed digest."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class SecretsManagerSecret:
    """One Secrets Manager secret's current string.

    Args:
        client_factory: builds a boto3 ``secretsmanager`` client (on first read).
        secret_id: the secret's ARN or name (``PINEWORK_HASH_SECRET_ARN``).
    """

    def __init__(self, client_factory: Callable[[], Any], secret_id: str) -> None:
        self._client_factory = client_factory
        self._secret_id = secret_id

    def read(self) -> str:
        """The secret's ``SecretString`` (``GetSecretValue``, version ``AWSCURRENT``).

        Raises:
            botocore.exceptions.ClientError: the secret is missing or not readable
                (the role lacks ``secretsmanager:GetSecretValue``).
        """
        response = self._client_factory().get_secret_value(SecretId=self._secret_id)
        return str(response["SecretString"])
