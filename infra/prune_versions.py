"""Pruning the Lambda versions SAM publishes (docs/operations.md#versions): every
``make deploy-cloudformation`` that changes a function publishes a version under the
alias ``live`` and SAM deletes none, while an account holds 75 GB of code (about 530
deploys of the ~47 MB zip times three functions). ``prune`` keeps, for each of the
stack's functions, the ``KEEP`` newest versions, every version an alias points at (its
routing config's too) and ``$LATEST``, and deletes the rest, oldest first. Rollback
stays possible to any kept version (docs/operations.md#rollback).

Usage: ``python -m infra.prune_versions --stack NAME [--region R] [--keep 10]
[--dry-run]``. Choices: docs/DECISIONS.md#releases-an-operator-can-trust-issue-44.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import boto3

from infra.template import ONE_STACK_FUNCTION_NAMES

KEEP = 10
"""Versions kept per function besides the ones an alias names."""


def function_names(stack: str) -> list[str]:
    """The Lambda names of ``make deploy-cloudformation``'s stack ``stack``."""
    return [name.replace("${AWS::StackName}", stack) for name in ONE_STACK_FUNCTION_NAMES.values()]


def prunable(lambda_client: Any, function: str, keep: int = KEEP) -> list[str]:
    """The versions of ``function`` to delete, oldest first: numbered versions beyond the
    ``keep`` newest that no alias names."""
    versions: list[int] = []
    for page in lambda_client.get_paginator("list_versions_by_function").paginate(
        FunctionName=function
    ):
        versions += [int(v["Version"]) for v in page["Versions"] if v["Version"] != "$LATEST"]
    named: set[int] = set()
    for page in lambda_client.get_paginator("list_aliases").paginate(FunctionName=function):
        for alias in page["Aliases"]:
            if alias["FunctionVersion"].isdigit():
                named.add(int(alias["FunctionVersion"]))
            weights = alias.get("RoutingConfig", {}).get("AdditionalVersionWeights", {})
            named.update(int(version) for version in weights)
    newest = set(sorted(versions)[-keep:]) if keep > 0 else set()
    return [str(v) for v in sorted(versions) if v not in newest and v not in named]


def prune(
    lambda_client: Any, stack: str, keep: int = KEEP, dry_run: bool = False
) -> dict[str, list[str]]:
    """Delete the prunable versions of each of the stack's functions.

    Returns:
        Function name -> the versions deleted (or, with ``dry_run``, to delete).
    """
    done: dict[str, list[str]] = {}
    for function in function_names(stack):
        versions = prunable(lambda_client, function, keep)
        if not dry_run:
            for version in versions:
                lambda_client.delete_function(FunctionName=function, Qualifier=version)
        done[function] = versions
    return done


def main(arguments: list[str] | None = None) -> None:
    """``--stack NAME``: see ``prune``; prints what it deleted."""
    parser = argparse.ArgumentParser(description="Delete old Lambda versions of a stack.")
    parser.add_argument("--stack", required=True)
    parser.add_argument("--region")
    parser.add_argument("--keep", type=int, default=KEEP)
    parser.add_argument("--dry-run", action="store_true")
    parsed = parser.parse_args(arguments)
    client = boto3.client("lambda", region_name=parsed.region)
    done = prune(client, parsed.stack, parsed.keep, parsed.dry_run)
    verb = "would delete" if parsed.dry_run else "deleted"
    for function, versions in done.items():
        sys.stdout.write(f"{function}: {verb} {len(versions)} versions {' '.join(versions)}\n")


if __name__ == "__main__":
    main()
