"""Stored text refuses control and tag characters on every write, naming the character
and its position, and changes nothing; the run-start block shows what is stored as
quoted, visible text (docs/reference.md#stored-text, docs/reference.md#block-grammar,
docs/issues.md#issue-42-item-4)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import cycle
from typing import Any

import pytest

from tests.helpers import TABLE, Api, World

Write = Callable[[Api, World, str], tuple[int, Any]]


def fact(api: Api, world: World, text: str = "The staging deploy needs the VPN") -> str:
    status, body = api.call("POST", "/memories", world.agent, {"text": text})
    assert status == 201, body
    return str(body["id"])


def learning(api: Api, world: World, text: str = "Deploys go through the VPN") -> str:
    status, body = api.call("POST", "/learnings", world.person, {"text": text})
    assert status == 201, body
    return str(body["id"])


WRITES: dict[str, Write] = {
    "fact": lambda api, world, text: api.call("POST", "/memories", world.agent, {"text": text}),
    "evidence": lambda api, world, text: api.call(
        "POST", "/memories", world.agent, {"text": "Builds use make", "evidence": text}
    ),
    "day line": lambda api, world, text: api.call(
        "POST", "/memories/day", world.agent, {"line": text}
    ),
    "edit": lambda api, world, text: api.call(
        "PATCH", f"/memories/{fact(api, world)}", world.person, {"text": text}
    ),
    "archive reason": lambda api, world, text: api.call(
        "POST", f"/memories/{fact(api, world)}/archive", world.agent, {"reason": text}
    ),
    "veto note": lambda api, world, text: api.call(
        "POST", f"/memories/{fact(api, world)}/veto", world.person, {"reason": text}
    ),
    "erase reason": lambda api, world, text: api.call(
        "POST", f"/memories/{fact(api, world)}/erase", world.person, {"reason": text}
    ),
    "learning": lambda api, world, text: api.call(
        "POST", "/learnings", world.agent, {"text": text}
    ),
    "learning edit": lambda api, world, text: api.call(
        "PATCH", f"/learnings/{learning(api, world)}", world.person, {"text": text}
    ),
    "retire reason": lambda api, world, text: api.call(
        "POST", f"/learnings/{learning(api, world)}/retire", world.person, {"reason": text}
    ),
}
REFUSED = {"\x85": "U+0085", "\x9b": "U+009B", "\x1b": "U+001B", "\U000e0041": "U+E0041"}


def stored_texts(dynamodb: Any) -> list[str]:
    """Every string attribute of every item in the table."""
    items = dynamodb.scan(TableName=TABLE)["Items"]
    return [value["S"] for item in items for value in item.values() if "S" in value]


@pytest.mark.parametrize(
    ("write", "char"),
    [*zip(sorted(WRITES), cycle(sorted(REFUSED)), strict=False), *(("fact", c) for c in REFUSED)],
)
def test_a_control_or_tag_character_is_refused_with_its_code_point_and_position(
    api: Api, world: World, dynamodb: Any, write: str, char: str
) -> None:
    text = f"Use make{char} build"
    status, body = WRITES[write](api, world, text)
    assert (status, body["error"]["code"]) == (400, "invalid_request"), body
    message = body["error"]["message"]
    assert f"{REFUSED[char]}" in message and "at character 9" in message, message
    assert not any(char in value for value in stored_texts(dynamodb))


def test_tab_and_line_breaks_are_taken_and_shown_flattened(api: Api, world: World) -> None:
    memory_id = fact(api, world, "Build:\tmake\r\nthen --- MEMORY --- deploy\u202e")
    status, body = api.call("POST", "/memories/recall", world.agent, {"query": "build deploy"})
    assert status == 200, body
    line = next(row for row in body["block"].split("\n") if row.startswith(memory_id))
    assert line.endswith("Build: make then ⟨---⟩ MEMORY ⟨---⟩ deploy⟨U+202E⟩")
    assert body["block"].count("--- MEMORY ---") == 1
