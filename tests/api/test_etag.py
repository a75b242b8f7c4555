"""No lost edits (docs/issues.md#issue-15-item-4): ``ETag`` on every memory answer, ``If-Match`` on
PATCH, veto, archive and unarchive; a stale tag is 412 ``precondition_failed`` and
nothing changes; without ``If-Match`` nothing changes from before."""

from __future__ import annotations

from typing import Any

from tests.helpers import Api, World


def save(
    api: Api, world: World, text: str = "The build cache lives in S3"
) -> tuple[dict[str, Any], str]:
    status, headers, body = api.send("POST", "/memories", world.agent, {"text": text})
    assert status == 201, body
    return body, headers["ETag"]


def history_length(api: Api, world: World, memory_id: str) -> int:
    status, body = api.call("GET", f"/memories/{memory_id}/history", world.person)
    assert status == 200
    return len(body["data"])


def test_every_memory_answer_carries_its_version_as_etag(api: Api, world: World) -> None:
    memory, tag = save(api, world)
    assert tag == f'"{memory["id"]}.v1"'
    status, headers, _ = api.send("GET", f"/memories/{memory['id']}", world.agent)
    assert status == 200 and headers["ETag"] == tag
    status, headers, archived = api.send(
        "POST", f"/memories/{memory['id']}/archive", world.agent, {"reason": "moved"}
    )
    assert status == 200 and headers["ETag"] == f'"{memory["id"]}.v2"'
    assert archived["status"] == "archived"
    status, headers, _ = api.send("POST", f"/memories/{memory['id']}/unarchive", world.agent, {})
    assert headers["ETag"] == f'"{memory["id"]}.v3"'
    status, headers, day = api.send("POST", "/memories/day", world.agent, {"line": "started"})
    assert status == 201 and headers["ETag"] == f'"{day["id"]}.v1"'
    status, headers, _ = api.send("POST", "/memories/day", world.agent, {"line": "went on"})
    assert status == 200 and headers["ETag"] == f'"{day["id"]}.v2"'


def test_lists_carry_no_etag(api: Api, world: World) -> None:
    save(api, world)
    status, headers, _ = api.send("GET", "/memories", world.agent)
    assert status == 200 and "ETag" not in headers


def test_two_persons_edit_one_memory_and_the_second_edit_is_refused(api: Api, world: World) -> None:
    memory, _ = save(api, world)
    # Both persons read the memory in their own tab.
    _, first_read, _ = api.send("GET", f"/memories/{memory['id']}", world.person)
    _, second_read, _ = api.send("GET", f"/memories/{memory['id']}", world.person)
    path = f"/memories/{memory['id']}"
    status, headers, edited = api.send(
        "PATCH",
        path,
        world.person,
        {"text": "The build cache lives in S3 (eu-west-1)"},
        headers={"If-Match": first_read["ETag"]},
    )
    assert status == 200 and headers["ETag"] == f'"{memory["id"]}.v2"'
    assert edited["editedByPersonId"] == world.person.id
    status, _, refused = api.send(
        "PATCH",
        path,
        world.person,
        {"text": "The build cache moved to GCS"},
        headers={"If-Match": second_read["ETag"]},
    )
    assert status == 412 and refused["error"]["code"] == "precondition_failed"
    _, now = api.call("GET", path, world.person)
    assert now["text"] == "The build cache lives in S3 (eu-west-1)"
    assert history_length(api, world, memory["id"]) == 2  # create + the first edit


def test_a_stale_if_match_changes_nothing_on_archive_veto_and_unarchive(
    api: Api, world: World
) -> None:
    memory, tag = save(api, world)
    path = f"/memories/{memory['id']}"
    api.call("PATCH", path, world.person, {"text": "The build cache lives in S3, bucket b1"})
    stale = {"If-Match": tag}
    for action, body, actor in (
        ("archive", {"reason": "old"}, world.agent),
        ("veto", {}, world.person),
    ):
        status, _, refused = api.send("POST", f"{path}/{action}", actor, body, headers=stale)
        assert status == 412 and refused["error"]["code"] == "precondition_failed", action
    _, read, _ = api.send("GET", path, world.person)
    current = {"If-Match": read["ETag"]}
    assert read["ETag"] == f'"{memory["id"]}.v2"'
    _, after = api.call("GET", path, world.person)
    assert after["status"] == "active"
    status, headers, _ = api.send(
        "POST", f"{path}/archive", world.agent, {"reason": "old"}, headers=current
    )
    assert status == 200
    status, _, refused = api.send("POST", f"{path}/unarchive", world.agent, {}, headers=current)
    assert status == 412 and refused["error"]["code"] == "precondition_failed"
    status, _, back = api.send(
        "POST", f"{path}/unarchive", world.agent, {}, headers={"If-Match": headers["ETag"]}
    )
    assert status == 200 and back["status"] == "active"
    assert history_length(api, world, memory["id"]) == 4


def test_if_match_forms(api: Api, world: World) -> None:
    memory, tag = save(api, world)
    path = f"/memories/{memory['id']}"
    for year, accepted in ((2030, "*"), (2031, "W/{tag}"), (2032, '"mem_other.v1", {tag}')):
        status, headers, body = api.send(
            "PATCH",
            path,
            world.person,
            {"expiresAt": f"{year}-01-01"},
            headers={"If-Match": accepted.format(tag=tag)},
        )
        assert status == 200, (accepted, body)
        assert headers["ETag"] != tag
        tag = headers["ETag"]
    _, other_tag = save(api, world, "Deploys run at noon")
    status, _, body = api.send(
        "PATCH", path, world.person, {"expiresAt": "2033-01-01"}, headers={"If-Match": other_tag}
    )
    assert status == 412, "another memory's tag never matches"
    for malformed in ("", "v1", '"unterminated', 'abc, "x"'):
        status, _, body = api.send(
            "PATCH", path, world.person, {"text": "x y z"}, headers={"If-Match": malformed}
        )
        assert status == 400 and body["error"]["code"] == "invalid_request", malformed
    _, after = api.call("GET", path, world.person)
    assert after["text"] == memory["text"]


def test_without_if_match_edits_apply_as_before(api: Api, world: World) -> None:
    memory, _ = save(api, world)
    path = f"/memories/{memory['id']}"
    assert api.call("PATCH", path, world.person, {"text": "first edit of it"})[0] == 200
    assert api.call("PATCH", path, world.person, {"text": "second edit of it"})[0] == 200
    assert api.call("GET", path, world.person)[1]["text"] == "second edit of it"


def test_a_missing_memory_is_404_whatever_the_if_match(api: Api, world: World) -> None:
    status, _, body = api.send(
        "PATCH",
        "/memories/mem_01JD0000000000000000000000",
        world.person,
        {"text": "x"},
        headers={"If-Match": '"mem_01JD0000000000000000000000.v1"'},
    )
    assert status == 404 and body["error"]["code"] == "memory_not_found"


def test_bad_input_is_400_even_with_a_stale_if_match(api: Api, world: World) -> None:
    memory, tag = save(api, world)
    path = f"/memories/{memory['id']}"
    api.call("PATCH", path, world.person, {"text": "moved on to version two"})
    for body in ({"text": ""}, {"expiresAt": "yesterday-ish"}, {"text": "x" * 501}):
        status, _, refused = api.send("PATCH", path, world.person, body, headers={"If-Match": tag})
        assert status == 400, (body, refused)
    status, _, refused = api.send(
        "PATCH", path, world.person, {"text": "a good new text"}, headers={"If-Match": tag}
    )
    assert status == 412 and refused["error"]["code"] == "precondition_failed"
