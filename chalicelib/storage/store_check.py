"""Whether a DynamoDB endpoint holds a Pinework table, before an operator command writes
to it (docs/operators.md#the-local-servers-record).

A local port is anybody's: another project's DynamoDB Local, an old server of another
checkout, any HTTP process. The admin commands ask this first and refuse an endpoint
that does not answer as DynamoDB with the table the service creates (``pk``/``sk`` key).
"""

from __future__ import annotations

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
)

_PROBE = Config(connect_timeout=2, read_timeout=5, retries={"max_attempts": 1, "mode": "standard"})
"""One short try: a probe that hangs on a stranger's port helps nobody."""

_KEY_SCHEMA = {("pk", "HASH"), ("sk", "RANGE")}
"""The table's primary key (infra/tables.py's ``table_definition``)."""


def pinework_table_problem(endpoint: str, region: str, table_name: str) -> str | None:
    """Why ``endpoint`` is not a Pinework store, or ``None`` when it is.

    Args:
        endpoint: a DynamoDB endpoint URL, e.g. ``http://127.0.0.1:8001``.
        region: the region to sign requests for.
        table_name: the table the commands would write, e.g. ``pinework-local``.

    Returns:
        A short reason in words (nothing answers, not DynamoDB, no such table, another
        key), or ``None``.
    """
    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name=region, config=_PROBE)
    try:
        table = client.describe_table(TableName=table_name)["Table"]
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code == "ResourceNotFoundException":
            return f"it has no table {table_name!r}"
        return f"it answered {code or 'an error'} where DynamoDB describes a table"
    except (EndpointConnectionError, ConnectTimeoutError):
        return "nothing answers there"
    except BotoCoreError as error:
        return f"no answer as DynamoDB: {type(error).__name__}"
    except ValueError:
        return "its answer is not DynamoDB's"
    keys = {(part["AttributeName"], part["KeyType"]) for part in table.get("KeySchema", [])}
    if keys != _KEY_SCHEMA:
        return f"its table {table_name!r} is not keyed as Pinework's (pk, sk)"
    return None
