"""The AWS CLI from Python's standard library alone: the release steps that must run in a
fresh clone, before (or without) ``make install`` (the artifact bucket,
``infra/artifacts.py``; a stage's teardown, ``infra/stage_teardown.py``). Nothing here
imports boto3: ``python3 -m infra.artifacts`` works with only ``python3`` and ``aws`` on
the PATH. Choices: docs/DECISIONS.md#releases-an-operator-can-trust-issue-44.
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

ACCOUNT = re.compile(r"^[0-9]{12}$")
"""An AWS account id: twelve digits."""
_ERROR_CODE = re.compile(r"An error occurred \(([^)]+)\)")
NOT_FOUND_CODES = frozenset(
    {
        "404",
        "NotFound",
        "NoSuchBucket",
        "NoSuchKey",
        "ResourceNotFoundException",
        "NotFoundException",
    }
)
"""Error codes the CLI prints for a thing that does not exist."""


class AwsError(Exception):
    """An ``aws`` command that exited non-zero: ``code`` is the service's error code the
    CLI printed (``An error occurred (CODE) …``), or ``""`` when it printed none;
    ``message`` its standard error."""

    def __init__(self, arguments: list[str], code: str, message: str) -> None:
        super().__init__(f"aws {' '.join(arguments)}: {message.strip() or 'failed'}")
        self.code = code
        self.message = message

    @property
    def not_found(self) -> bool:
        """The thing named does not exist (``NOT_FOUND_CODES``, or CloudFormation's
        ``ValidationError … does not exist``)."""
        return self.code in NOT_FOUND_CODES or (
            self.code == "ValidationError" and "does not exist" in self.message
        )


class Stop(Exception):
    """A check failed before anything was changed: the message tells the operator why
    and what to do (the commands print it and exit 1)."""


def aws(*arguments: str, region: str | None = None) -> str:
    """Run ``aws ARGUMENTS [--region REGION]`` and return its standard output.

    Raises:
        AwsError: the command exited non-zero (its error code parsed).
        Stop: no ``aws`` on the PATH.
    """
    command = ["aws", *arguments, *(["--region", region] if region else [])]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except FileNotFoundError as error:
        raise Stop("the AWS CLI (aws) is not on the PATH") from error
    if done.returncode != 0:
        found = _ERROR_CODE.search(done.stderr)
        raise AwsError(command[1:], found.group(1) if found else "", done.stderr)
    return done.stdout


def aws_json(*arguments: str, region: str | None = None) -> Any:
    """``aws`` with ``--output json``, its answer parsed (None for an empty answer)."""
    printed = aws(*arguments, "--output", "json", region=region)
    return json.loads(printed) if printed.strip() else None


def require_account(account: str) -> str:
    """``account`` when it is an account id.

    Raises:
        Stop: empty (``aws sts get-caller-identity`` failed as the Makefile was read:
            no credentials, an expired session) or not twelve digits.
    """
    if not ACCOUNT.fullmatch(account or ""):
        raise Stop(
            f"no AWS account ({account!r}): `aws sts get-caller-identity` failed or named "
            "none. Sign in (aws sso login, AWS_PROFILE=…) or pass AWS_ACCOUNT=<12 digits>; "
            "nothing was changed"
        )
    return account
