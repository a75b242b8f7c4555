"""Metadata filters on the memory list, recall, recall preview and run-start recall
through the HTTP API (docs/reference.md#metadata-filters, docs/issues.md#issue-46-item-2)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from tests.helpers import TABLE, Api, World, error_code, pages, recalled_ids, save


def _listed(api: Api, world: World, *conditions: str, extra: str = "", limit: int = 2) -> Any:
    """The texts of every page of the agent's list filtered by ``conditions``."""
    query = "&".join(f"meta={quote(one, safe='')}" for one in conditions)
    path = f"/memories?agentId={world.agent.id}&limit={limit}&{query}{extra}"
    return [[memory["text"] for memory in page] for page in pages(api, world.person, path)]


def _flat(listed: list[list[str]]) -> list[str]:
    return [text for page in listed for text in page]


def test_a_filtered_page_is_never_empty_while_matches_remain(api: Api, world: World) -> None:
    expected = []
    for number in range(30):
        project = "billing" if number % 9 == 4 else "support"
        save(api, world, f"fact {number}", metadata={"project": project, "n": number})
        if project == "billing":
            expected.insert(0, f"fact {number}")
    listed = _listed(api, world, "project:billing")
    assert _flat(listed) == expected and len(expected) == 3
    assert [len(page) for page in listed] == [2, 1]
    assert _listed(api, world, "Project:eq:billing", limit=3) == [expected]
    assert _listed(api, world, "project:nothing") == [[]]
    assert _listed(api, world, "project:billing", extra="&kind=day") == [[]]


def test_ranges_order_negative_and_decimal_numbers(api: Api, world: World) -> None:
    values = [-12.5, -3, -0.25, 0, 0.5, 2, 2.25, 10, 100, "2", True]
    for value in values:
        save(api, world, f"amount {value!r}", metadata={"amount": value})
    between = _listed(api, world, "amount:gte:-3", "amount:lt:2.25", limit=10)
    assert sorted(_flat(between)) == sorted(f"amount {v!r}" for v in (-3, -0.25, 0, 0.5, 2))
    above = _flat(_listed(api, world, "amount:gt:-0.25", "amount:lte:10", limit=10))
    assert sorted(above) == sorted(f"amount {v!r}" for v in (0, 0.5, 2, 2.25, 10))
    below = _flat(_listed(api, world, "amount:lt:-3.0", limit=10))
    assert below == ["amount -12.5"]
    # equality on a text that reads as a number names the number and the string
    assert sorted(_flat(_listed(api, world, "amount:2", limit=10))) == ["amount '2'", "amount 2"]
    assert _flat(_listed(api, world, "amount:2.0")) == ["amount 2"]
    assert _flat(_listed(api, world, "amount:true")) == ["amount True"]
    assert _flat(_listed(api, world, "amount:1e2")) == ["amount 100"]


def test_in_dates_and_tags_combine(api: Api, world: World) -> None:
    rows = [
        ("acme", "2026-11-30", ["vip"]),
        ("globex", "2026-12-01T10:00:00+02:00", []),
        ("acme", "2026-12-05", ["vip"]),
        ("initech", "2026-12-09", ["vip"]),
    ]
    for number, (customer, due, tags) in enumerate(rows):
        metadata = {"customer": customer, "due": due}
        save(api, world, f"row {number}", metadata=metadata, tags=tags)
    assert _flat(_listed(api, world, "customer:in:acme|globex")) == ["row 2", "row 1", "row 0"]
    # dates compare as moments: 10:00+02:00 is 08:00 UTC on the 1st
    assert _flat(_listed(api, world, "due:gte:2026-12-01")) == ["row 3", "row 2", "row 1"]
    assert _flat(_listed(api, world, "due:gt:2026-12-01T08:00:00Z")) == ["row 3", "row 2"]
    assert _flat(_listed(api, world, "due:2026-12-01T08:00Z")) == ["row 1"]
    tagged = _listed(api, world, "customer:in:acme|initech", "due:lt:2026-12-08", extra="&tag=vip")
    assert _flat(tagged) == ["row 2", "row 0"]
    assert _listed(api, world, "customer:acme", extra="&anyTag=none") == [[]]


def test_status_changes_and_edits_move_the_entries(api: Api, world: World) -> None:
    first = save(api, world, "First", metadata={"project": "billing"})
    save(api, world, "Second", metadata={"project": "billing"})
    path = f"/memories/{first['id']}"
    assert api.call("POST", f"{path}/archive", world.agent, {"reason": "done"})[0] == 200
    assert _listed(api, world, "project:billing") == [["Second"]]
    assert _listed(api, world, "project:billing", extra="&status=archived") == [["First"]]
    assert _listed(api, world, "project:billing", extra="&all=true") == [["Second", "First"]]
    assert api.call("POST", f"{path}/unarchive", world.agent)[0] == 200
    status, edited = api.call("PATCH", path, world.person, {"metadata": {"project": "ops"}})
    assert status == 200, edited
    assert _listed(api, world, "project:billing", extra="&all=true") == [["Second"]]
    assert _listed(api, world, "project:ops") == [["First"]]


def _entries(dynamodb: Any, world: World) -> list[dict[str, Any]]:
    """The raw items of the agent's metadata index partition."""
    found = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"MEMORYMETA#{world.agent.id}"}},
    )
    return list(found["Items"])


def test_erasure_leaves_no_entry(api: Api, world: World, dynamodb: Any) -> None:
    saved = save(api, world, metadata={"project": "billing", "n": 3})
    assert len(_entries(dynamodb, world)) == 2
    status, _ = api.call("POST", f"/memories/{saved['id']}/erase", world.person, {"reason": "x"})
    assert status == 200
    assert _listed(api, world, "project:billing", extra="&all=true") == [[]]
    assert _entries(dynamodb, world) == []


@pytest.mark.parametrize(
    "condition",
    [
        "project",
        "9key:billing",
        "project:gte:true",
        "n:in:" + "|".join(str(number) for number in range(11)),
        "n:gt:1e9999",
        "n:eq:" + "x" * 201,
    ],
)
def test_bad_filters_are_refused(api: Api, world: World, condition: str) -> None:
    path = f"/memories?agentId={world.agent.id}&meta={quote(condition, safe='')}"
    assert error_code(api.call("GET", path, world.person)) == (400, "metadata_filter_invalid")
    body = {"query": "deploys", "count": False, "meta": [condition]}
    response = api.call("POST", "/memories/recall", world.agent, body)
    assert error_code(response) == (400, "metadata_filter_invalid")


def test_too_many_conditions_and_no_agent_are_refused(api: Api, world: World) -> None:
    six = "&".join(f"meta=k{number}:1" for number in range(6))
    response = api.call("GET", f"/memories?agentId={world.agent.id}&{six}", world.person)
    assert error_code(response) == (400, "metadata_filter_invalid")
    response = api.call("GET", "/memories?meta=project:billing", world.person)
    assert error_code(response) == (400, "invalid_request")
    as_of = f"/memories?agentId={world.agent.id}&meta=a:b&asOf=2026-01-01T00:00:00Z"
    assert api.call("GET", as_of, world.person)[0] == 400


def test_a_value_with_a_comma_is_one_condition(api: Api, world: World) -> None:
    save(api, world, "Comma", metadata={"place": "Paris, France"})
    save(api, world, "Other", metadata={"place": "Paris"})
    assert _listed(api, world, "place:Paris, France") == [["Comma"]]
    assert _listed(api, world, "place:Paris") == [["Other"]]


def test_recall_and_run_start_rank_only_matching_facts(api: Api, world: World) -> None:
    plain = save(api, world, "The staging deploy needs the VPN turned on")
    billing = save(
        api,
        world,
        "Staging deploys of billing run on the blue cluster",
        metadata={"project": "billing", "priority": 2},
    )
    save(api, world, "Support rota changes on Mondays", metadata={"project": "support"})
    query = "How do I deploy to staging?"

    def recalled(**filters: object) -> list[str]:
        return recalled_ids(api, world.agent, query, **filters)

    assert plain["id"] in recalled()
    assert recalled(meta=["project:billing"]) == [billing["id"]]
    assert recalled(meta=["priority:gte:3"]) == []
    assert recalled(meta=["project:in:billing|support"], tags=["none"]) == []
    body = {
        "sessionId": "s-meta",
        "resumed": False,
        "task": query,
        "meta": ["project:billing"],
    }
    status, started = api.call("POST", "/memories/recall/start", world.agent, body)
    assert status == 200, started
    assert [item["memory"]["id"] for item in started["memories"]] == [billing["id"]]
    body = {"sessionId": "s-bad", "resumed": False, "task": query, "meta": ["bad"]}
    response = api.call("POST", "/memories/recall/start", world.agent, body)
    assert error_code(response) == (400, "metadata_filter_invalid")
