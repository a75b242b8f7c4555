"""One person per e-mail address in a workspace (docs/issues.md#issue-14): ``pinework admin
create-person`` runs ``AdminService.create_person``, which claims the normalised
address in the person's own transaction (moto DynamoDB)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.errors import PersonExists
from tests.helpers import TABLE


def items(dynamodb: Any, prefix: str) -> list[dict[str, Any]]:
    """Every stored item whose partition key starts with ``prefix``."""
    found = dynamodb.scan(TableName=TABLE)["Items"]
    return [item for item in found if item["pk"]["S"].startswith(prefix)]


@pytest.mark.parametrize(
    "again",
    [
        "ana@example.com",
        "Ana@Example.COM",
        "  ana@example.com ",
        "\uff41\uff4e\uff41@\uff45xample.com",
    ],
)
def test_the_same_email_twice_in_a_workspace_is_refused_and_writes_nothing(
    wired: wiring.Services, dynamodb: Any, again: str
) -> None:
    workspace = wired.admin.create_workspace("Acme")
    first = wired.admin.create_person(workspace.id, "ana@example.com")
    before = {prefix: items(dynamodb, prefix) for prefix in ("PERSON", "TOKEN", "PERSONEMAIL")}
    with pytest.raises(PersonExists) as refused:
        wired.admin.create_person(workspace.id, again)
    assert refused.value.code == "person_exists" and workspace.id in refused.value.message
    after = {prefix: items(dynamodb, prefix) for prefix in ("PERSON", "TOKEN", "PERSONEMAIL")}
    assert after == before
    assert [item["id"]["S"] for item in items(dynamodb, "PERSON#")] == [first.id]


def test_one_email_may_belong_to_persons_of_two_workspaces(wired: wiring.Services) -> None:
    acme = wired.admin.create_workspace("Acme")
    other = wired.admin.create_workspace("Other")
    first = wired.admin.create_person(acme.id, "ana@example.com")
    second = wired.admin.create_person(other.id, "ana@example.com")
    assert first.id != second.id
    assert wired.auth.authenticate(f"Bearer {second.token}").workspace_id == other.id


def test_concurrent_creations_of_one_email_leave_one_person(
    wired: wiring.Services, dynamodb: Any
) -> None:
    workspace = wired.admin.create_workspace("Acme")

    def create(number: int) -> str:
        try:
            return wired.admin.create_person(
                workspace.id, f"{' ' * (number % 2)}Ana@example.com"
            ).id
        except PersonExists:
            return "refused"

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(create, range(8)))
    winners = [result for result in results if result != "refused"]
    assert len(winners) == 1
    assert [item["id"]["S"] for item in items(dynamodb, "PERSON#")] == winners
    assert len(items(dynamodb, "PERSONEMAIL#")) == 1
