"""The release rehearsal (docs/operations.md#releases, docs/issues.md#issue-44-item-1):
upgrade from the
previous release, roll back, upgrade again, contract, roll back once more, on moto, with
each release's own code: the previous release's is its commit (``infra/releases.py``)
unpacked with ``git archive`` (CI's clone of main has the history; no tag is needed).
At every table level the upgrade passes through, each release that may run there
answers every route (no 5xx) and a flow that reads every list index, and the roles of
this release grant every index either release queries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest

from infra import iam, releases, upgrade
from infra.tables import expand_end, indexes_at, table_definition
from tests.helpers import REPO

DRIVER = REPO / "tests" / "release_driver.py"
PREVIOUS = releases.previous()
CURRENT = releases.current()
PREVIOUS_STACK_INDEXES = {
    "0.1.0": [
        "byRoutineStatus",
        "byTokenPrincipal",
        "byAgentKind",
        "byWorkspaceShard",
        "byWorkspaceStatusShard",
    ]
}
"""The GSIs a stack has after each release's deploy (its table's level)."""


@pytest.fixture(scope="module")
def previous_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The previous release's files, from its commit."""
    assert PREVIOUS is not None
    archived = subprocess.run(
        ["git", "archive", "--format=tar", PREVIOUS.commit],
        cwd=REPO,
        capture_output=True,
        check=False,
    )
    assert archived.returncode == 0, (
        f"release {PREVIOUS.version}'s commit {PREVIOUS.commit} is not in this clone's "
        f"history: {archived.stderr.decode()[:200]}"
    )
    target = tmp_path_factory.mktemp(f"release-{PREVIOUS.version}")
    with tarfile.open(fileobj=BytesIO(archived.stdout)) as archive:
        archive.extractall(target, filter="data")
    return target


_ANSWERS: dict[tuple[str, int], dict[str, Any]] = {}


def answers(tree: Path, version: str, level: int, tmp_path: Path) -> dict[str, Any]:
    """What ``version``'s code (in ``tree``) answers on a table at ``level``."""
    if (version, level) not in _ANSWERS:
        definition = tmp_path / f"table-{version}-{level}.json"
        definition.write_text(json.dumps(table_definition("rehearsal", level)))
        _ANSWERS[version, level] = drive(tree, definition)
    return _ANSWERS[version, level]


def drive(tree: Path, definition: Path) -> dict[str, Any]:
    """``tests/release_driver.py`` run with ``tree``'s code on the table ``definition``."""
    done = subprocess.run(
        [sys.executable, str(DRIVER), str(definition)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def rehearsal() -> list[tuple[str, str, int]]:
    """(moment, release that runs, table level) of upgrade → rollback → upgrade →
    contract → rollback, from a stack the previous release left."""
    assert PREVIOUS is not None
    start = upgrade.index_level(PREVIOUS_STACK_INDEXES[PREVIOUS.version])
    expanded = expand_end(start, PREVIOUS.version)
    moments = [("expand", PREVIOUS.version, level) for level in range(start, expanded + 1)]
    moments += [
        ("upgraded", CURRENT.version, expanded),
        ("rolled back", PREVIOUS.version, expanded),
        ("upgraded again", CURRENT.version, expanded),
    ]
    contracted = upgrade.contract_steps(indexes_at(expanded), CURRENT.version)
    moments += [("contract", CURRENT.version, level) for level in contracted]
    final = contracted[-1] if contracted else expanded
    if CURRENT.rollback.startswith("yes"):
        moments.append(("rolled back after the contract", PREVIOUS.version, final))
    return moments


def test_the_release_table_is_in_order_and_names_this_checkout() -> None:
    releases.check()
    pyproject = (REPO / "pyproject.toml").read_text()
    assert f'version = "{CURRENT.version}"' in pyproject
    client = json.loads((REPO / "clients/typescript/package.json").read_text())
    assert client["version"] == CURRENT.version  # make dist packs it under this version
    changelog = (REPO / "CHANGELOG.md").read_text()
    for release in releases.RELEASES:  # newest first, dated
        assert f"## {release.version} ({release.date})" in changelog
    positions = [changelog.index(f"## {r.version} (") for r in releases.RELEASES]
    assert positions == sorted(positions, reverse=True)
    if PREVIOUS is not None:
        assert f"### Upgrading from {PREVIOUS.version} to {CURRENT.version}" in changelog


def test_the_roles_grant_what_both_releases_query() -> None:
    assert PREVIOUS is not None
    for function in iam.FUNCTIONS:
        granted = {
            iam.index_name(resource)
            for grant in iam.grants(function)
            if "dynamodb:Query" in grant.actions
            for resource in grant.resources
        }
        assert set(releases.current_reads()[function]) <= granted
        assert set(PREVIOUS.reads.get(function, ())) <= granted, function


@pytest.mark.parametrize("moment", range(len(rehearsal())), ids=lambda n: rehearsal()[n][0])
def test_every_route_of_the_release_that_runs_answers_at_each_level(
    moment: int, previous_tree: Path, tmp_path: Path
) -> None:
    name, version, level = rehearsal()[moment]
    tree = REPO if version == CURRENT.version else previous_tree
    found = answers(tree, version, level, tmp_path)
    reads = releases.current_reads() if version == CURRENT.version else None
    if reads is None:
        assert PREVIOUS is not None
        reads = PREVIOUS.reads
        # the data of the previous release is what its own roles say
        assert {f: sorted(set(found["queries"][f])) for f in reads} == {
            f: sorted(set(names)) for f, names in reads.items()
        }
    present = set(indexes_at(level))
    for function, names in reads.items():
        assert set(names) <= present, (name, version, level, function)
    errors = {route: status for route, status in found["routes"].items() if status >= 500}
    assert not errors, (name, version, level, errors)
    flow = dict(found["flow"])
    assert flow["remember"] == 201, (name, found["flow"])
    assert all(status < 500 for status in flow.values()), (name, found["flow"])


def test_the_rehearsal_sees_a_missing_index(tmp_path: Path) -> None:
    # the current code on a table without byAgentKind: the flow that reads it fails
    definition = table_definition("rehearsal", upgrade.FULL_LEVEL)
    definition["GlobalSecondaryIndexes"] = [
        index
        for index in definition["GlobalSecondaryIndexes"]
        if index["IndexName"] != "byAgentKind"
    ]
    used = {"pk", "sk"} | {
        part["AttributeName"]
        for index in definition["GlobalSecondaryIndexes"]
        for part in index["KeySchema"]
    }
    definition["AttributeDefinitions"] = [
        a for a in definition["AttributeDefinitions"] if a["AttributeName"] in used
    ]
    path = tmp_path / "missing.json"
    path.write_text(json.dumps(definition))
    flow = dict(drive(REPO, path)["flow"])
    assert any(status >= 500 for status in flow.values()), flow
