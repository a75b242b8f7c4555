"""Tags on facts and the tag filters of the memory list through the HTTP API
(docs/reference.md#tags, docs/issues.md#issue-46 items 1 and 2)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import Api, World, error_code, pages, recalled_ids, save


def _edit(api: Api, world: World, memory: dict[str, Any], body: dict[str, Any]) -> Any:
    return api.send(
        "PATCH",
        f"/memories/{memory['id']}",
        world.person,
        body,
        headers={"If-Match": f'"{memory["id"]}.v1"'},
    )


def _listed(api: Api, world: World, query: str, limit: int = 2) -> list[list[str]]:
    path = f"/memories?agentId={world.agent.id}&limit={limit}&{query}"
    return [[memory["text"] for memory in page] for page in pages(api, world.person, path)]


def test_tags_are_normalized_on_save_and_shown(api: Api, world: World) -> None:
    saved = save(api, world, tags=["  Billing ", "customer:ACME", "billing", "v1.2_x-y"])
    assert saved["tags"] == ["billing", "customer:acme", "v1.2_x-y"]
    status, body = api.call("GET", f"/memories/{saved['id']}", world.agent)
    assert status == 200 and body["tags"] == saved["tags"]
    assert save(api, world, "Untagged fact")["tags"] == []


@pytest.mark.parametrize(
    "tags",
    [
        [""],
        ["   "],
        ["a" * 41],
        ["has space"],
        ["-starts-with-dash"],
        ["hash#tag"],
        ["café"],
        [f"t{number}" for number in range(11)],
    ],
)
def test_invalid_tags_are_refused_and_nothing_is_stored(
    api: Api, world: World, tags: list[str]
) -> None:
    response = api.call("POST", "/memories", world.agent, {"text": "Tagged fact", "tags": tags})
    assert error_code(response) == (400, "memory_tag_invalid")
    assert pages(api, world.agent, "/memories?limit=5") == [[]]


def test_a_tag_at_the_limits_is_accepted(api: Api, world: World) -> None:
    tags = ["a" * 40, *(f"t{number}" for number in range(9))]
    assert len(save(api, world, tags=tags)["tags"]) == 10


def test_a_tag_that_is_not_a_string_is_invalid_request(api: Api, world: World) -> None:
    response = api.call("POST", "/memories", world.agent, {"text": "Fact", "tags": [3]})
    assert error_code(response) == (400, "invalid_request")


def test_a_secret_tag_is_refused(api: Api, world: World) -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    response = api.call("POST", "/memories", world.agent, {"text": "Fact", "tags": [secret]})
    assert error_code(response) == (400, "secret_in_memory")
    assert pages(api, world.agent, "/memories?limit=5") == [[]]


def test_edit_changes_tags_with_history_and_etag(api: Api, world: World) -> None:
    saved = save(api, world, tags=["billing"])
    status, headers, body = _edit(api, world, saved, {"tags": ["Support", "billing"]})
    assert status == 200 and body["tags"] == ["billing", "support"]
    assert headers["ETag"] == f'"{saved["id"]}.v2"'
    assert body["editedByPersonId"] == world.person.id
    status, history = api.call("GET", f"/memories/{saved['id']}/history", world.person)
    edit = history["data"][-1]
    assert (edit["action"], edit["before"]["tags"], edit["after"]["tags"]) == (
        "edit",
        ["billing"],
        ["billing", "support"],
    )
    assert _listed(api, world, "tag=support") == [[saved["text"]]]


def test_edit_with_a_stale_if_match_changes_nothing(api: Api, world: World) -> None:
    saved = save(api, world, tags=["billing"])
    assert _edit(api, world, saved, {"tags": ["support"]})[0] == 200
    status, _, body = _edit(api, world, saved, {"tags": ["other"]})
    assert (status, body["error"]["code"]) == (412, "precondition_failed")
    assert api.call("GET", f"/memories/{saved['id']}", world.person)[1]["tags"] == ["support"]
    assert _listed(api, world, "tag=other") == [[]]


def test_invalid_edit_changes_nothing(api: Api, world: World) -> None:
    saved = save(api, world, tags=["billing"])
    status, _, body = _edit(api, world, saved, {"tags": ["no spaces allowed"]})
    assert (status, body["error"]["code"]) == (400, "memory_tag_invalid")
    current = api.call("GET", f"/memories/{saved['id']}", world.person)[1]
    assert current == saved
    history = api.call("GET", f"/memories/{saved['id']}/history", world.person)[1]
    assert [record["action"] for record in history["data"]] == ["create"]


def test_the_same_tags_in_another_order_write_nothing(api: Api, world: World) -> None:
    saved = save(api, world, tags=["a", "b"])
    status, headers, body = _edit(api, world, saved, {"tags": ["B", "a", "a"]})
    assert status == 200 and headers["ETag"] == f'"{saved["id"]}.v1"' and body == saved


def test_edit_removes_every_tag(api: Api, world: World) -> None:
    saved = save(api, world, tags=["billing"])
    assert _edit(api, world, saved, {"tags": []})[2]["tags"] == []
    assert _listed(api, world, "tag=billing") == [[]]


def test_superseding_save_keeps_the_tags_unless_it_sends_its_own(api: Api, world: World) -> None:
    old = save(api, world, "Old fact", tags=["billing"])
    kept = save(api, world, "Newer fact", supersedes=old["id"])
    assert kept["tags"] == ["billing"]
    replaced = save(api, world, "Newest fact", supersedes=kept["id"], tags=["support"])
    assert replaced["tags"] == ["support"]
    assert _listed(api, world, "tag=billing") == [[]]
    assert _listed(api, world, "tag=billing&all=true") == [["Newer fact", "Old fact"]]


def _many(api: Api, world: World) -> dict[str, list[str]]:
    """Thirty facts, most without the tags the filters ask, so a page cut before the
    filter would be empty; returns the texts of each tagged group, newest first."""
    groups: dict[str, list[str]] = {"both": [], "billing": [], "support": []}
    for number in range(30):
        tags: list[str] = []
        if number % 10 == 3:
            tags = ["billing", "support"]
            groups["both"].insert(0, f"fact {number}")
        elif number % 10 == 6:
            tags = ["billing"]
            groups["billing"].insert(0, f"fact {number}")
        elif number % 10 == 8:
            tags = ["support", "other"]
            groups["support"].insert(0, f"fact {number}")
        save(api, world, f"fact {number}", tags=tags)
    return groups


def test_filters_apply_before_paging(api: Api, world: World) -> None:
    groups = _many(api, world)
    both, billing, support = groups["both"], groups["billing"], groups["support"]
    all_of = _listed(api, world, "tag=billing&tag=SUPPORT")
    assert all_of == [both[:2], both[2:]]
    assert _listed(api, world, "tag=billing,support", limit=3) == [both]
    any_of = _listed(api, world, "anyTag=billing&anyTag=support", limit=4)
    expected = sorted(both + billing + support, key=lambda text: -int(text.split()[1]))
    assert [text for page in any_of for text in page] == expected
    assert all(len(page) == 4 for page in any_of[:-1]) and any_of[-1]
    mixed = _listed(api, world, "tag=support&anyTag=other,nothing")
    assert mixed == [support[:2], support[2:]]
    assert _listed(api, world, "tag=absent") == [[]]
    assert _listed(api, world, "tag=billing&kind=day") == [[]]


def test_archive_removes_a_fact_from_the_filtered_live_list(api: Api, world: World) -> None:
    first = save(api, world, "First", tags=["billing"])
    save(api, world, "Second", tags=["billing"])
    status, _ = api.call(
        "POST", f"/memories/{first['id']}/archive", world.agent, {"reason": "done"}
    )
    assert status == 200
    assert _listed(api, world, "tag=billing") == [["Second"]]
    assert _listed(api, world, "tag=billing&status=archived") == [["First"]]
    assert _listed(api, world, "anyTag=billing&all=true") == [["Second", "First"]]
    assert api.call("POST", f"/memories/{first['id']}/unarchive", world.agent)[0] == 200
    assert _listed(api, world, "tag=billing") == [["Second", "First"]]


def test_erase_removes_the_tags(api: Api, world: World) -> None:
    saved = save(api, world, tags=["billing"])
    status, body = api.call(
        "POST", f"/memories/{saved['id']}/erase", world.person, {"reason": "asked"}
    )
    assert status == 200 and body["tags"] == []
    assert _listed(api, world, "anyTag=billing&all=true") == [[]]
    history = api.call("GET", f"/memories/{saved['id']}/history", world.person)[1]
    assert all(
        (record[side] or {}).get("tags") in (None, [])
        for record in history["data"]
        for side in ("before", "after")
    )


def test_another_workspace_sees_nothing(api: Api, world: World) -> None:
    save(api, world, tags=["billing"])
    path = f"/memories?agentId={world.agent.id}&tag=billing"
    assert api.call("GET", path, world.outsider)[0] in (400, 403, 404)
    own = api.call("GET", "/memories?tag=billing", world.outsider_agent)
    assert own == (200, {"object": "list", "data": [], "nextToken": None}) or (
        own[0] == 200 and own[1]["data"] == []
    )


def test_an_agent_filters_its_own_facts(api: Api, world: World) -> None:
    save(api, world, "Mine", tags=["billing"])
    status, body = api.call("GET", "/memories?tag=billing", world.agent)
    assert status == 200 and [memory["text"] for memory in body["data"]] == ["Mine"]
    status, _ = api.call(
        "GET", f"/memories?tag=billing&agentId={world.agent.id}", world.other_agent
    )
    assert status == 403


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("tag=", "memory_tag_invalid"),
        ("tag=a%20b", "memory_tag_invalid"),
        ("anyTag=" + ",".join(f"t{n}" for n in range(11)), "memory_tag_invalid"),
        ("tag=a&tag=b&anyTag=" + ",".join(f"t{n}" for n in range(9)), "memory_tag_invalid"),
        ("limit=1&limit=2", "invalid_request"),
    ],
)
def test_bad_filters_are_refused(api: Api, world: World, query: str, code: str) -> None:
    response = api.call("GET", f"/memories?agentId={world.agent.id}&{query}", world.person)
    assert error_code(response) == (400, code)


def test_a_workspace_wide_tag_filter_needs_an_agent(api: Api, world: World) -> None:
    response = api.call("GET", "/memories?tag=billing", world.person)
    assert error_code(response) == (400, "invalid_request")


def test_day_rows_take_no_tags(api: Api, world: World) -> None:
    status, day = api.call("POST", "/memories/day", world.agent, {"line": "Worked"})
    assert status == 201 and day["tags"] == []
    status, _, body = _edit(api, world, day, {"tags": ["billing"]})
    assert (status, body["error"]["code"]) == (400, "memory_tag_invalid")


def test_a_filtered_recall_ranks_only_the_matching_facts(api: Api, world: World) -> None:
    untagged = save(api, world, "The staging deploy needs the VPN turned on")
    billing = save(
        api, world, "Staging deploys of billing run on the blue cluster", tags=["billing"]
    )
    save(api, world, "Support rota changes on Mondays", tags=["support"])
    query = "How do I deploy to staging?"

    def recalled(**filters: object) -> list[str]:
        return recalled_ids(api, world.agent, query, **filters)

    assert untagged["id"] in recalled()
    assert recalled(tags=["Billing"]) == [billing["id"]]
    assert untagged["id"] not in recalled(anyTags=["billing", "support"])
    assert recalled(tags=["billing", "support"]) == []
    response = api.call(
        "POST", "/memories/recall", world.agent, {"query": query, "tags": ["not valid"]}
    )
    assert error_code(response) == (400, "memory_tag_invalid")
