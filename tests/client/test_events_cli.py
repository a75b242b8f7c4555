"""``pinework events tail`` and ``Client.list_events`` against the real app
(docs/reference.md#change-events): one page with its cursor, the JSON as sent, a bad
cursor's error, and ``--follow``'s polling loop (``cli_events.follow``)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import httpx
import pytest

from chalicelib.ids import FixedClock
from chalicelib.storage.events import SETTLE
from pinework import Client, cli
from pinework.cli_events import follow
from tests.helpers import Actor, InjectedCliRunner, World


def run(transport: httpx.MockTransport, actor: Actor, *args: str) -> Any:
    runner = InjectedCliRunner(cli.Connections(client=lambda: Client.from_env(transport=transport)))
    env = {"PINEWORK_API_URL": "http://pinework.test", "PINEWORK_TOKEN": actor.token}
    return runner.invoke(cli.app, ["events", *args], env=env)


def saved(transport: httpx.MockTransport, world: World, text: str) -> str:
    with Client("http://pinework.test", token=world.agent.token, transport=transport) as agent:
        return agent.save_fact(text).id


def test_tail_prints_a_page_and_its_cursor_and_continues_after_it(
    app_transport: httpx.MockTransport, world: World, clock: FixedClock
) -> None:
    first = saved(app_transport, world, "The deploy bucket is in eu-west-1")
    second = saved(app_transport, world, "Builds run on arm64 runners")
    clock.set(clock.now() + SETTLE + timedelta(seconds=1))
    page = run(app_transport, world.person, "tail", "--limit", "1")
    assert page.exit_code == 0, page.output
    line, cursor = page.stdout.splitlines()
    assert line.split()[2:] == ["pinework.memory.saved", first]
    assert cursor.startswith("cursor: evt_")
    rest = run(app_transport, world.agent, "tail", "--after", cursor.split()[1], "--json")
    body = json.loads(rest.stdout)
    assert [event["subject"] for event in body["data"]] == [second]
    assert body["hasMore"] is False and body["nextCursor"] == body["data"][0]["id"]
    empty = run(app_transport, world.other_agent, "tail")
    assert empty.exit_code == 0 and empty.stdout.strip() == "no events"


def test_a_bad_cursor_is_refused_with_its_code(
    app_transport: httpx.MockTransport, world: World
) -> None:
    refused = run(app_transport, world.person, "tail", "--after", "mem_x")
    assert refused.exit_code == 1 and "invalid_request" in refused.output
    assert "nextCursor" in refused.output


def test_follow_polls_and_yields_each_event_once_in_order(
    app_transport: httpx.MockTransport, world: World, clock: FixedClock
) -> None:
    ids = [saved(app_transport, world, f"Fact {n} about the deploys") for n in range(3)]
    polls: list[float] = []

    def sleep(seconds: float) -> None:
        # a poll that found nothing ready: time passes, another fact is saved
        polls.append(seconds)
        if len(polls) == 3:
            raise KeyboardInterrupt
        ids.append(saved(app_transport, world, f"Fact saved during poll {len(polls)}"))
        clock.set(clock.now() + SETTLE + timedelta(seconds=1))

    with Client("http://pinework.test", token=world.person.token, transport=app_transport) as c:
        seen: list[str] = []
        with pytest.raises(KeyboardInterrupt):
            for event in follow(c, None, 2, 7.5, sleep):
                seen.append(event.subject)
    assert seen == ids and polls == [7.5, 7.5, 7.5]
