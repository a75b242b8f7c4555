"""``pinework kv remember|forget --if-revision`` (docs/reference.md#kv-revisions), through
the real app: a write from a stale read is refused and changes nothing."""

from __future__ import annotations

import json
from typing import Any

import httpx

from pinework import Client, cli
from tests.helpers import Actor, InjectedCliRunner, World


def kv(transport: httpx.MockTransport, actor: Actor, *args: str) -> Any:
    runner = InjectedCliRunner(cli.Connections(client=lambda: Client.from_env(transport=transport)))
    env = {"PINEWORK_API_URL": "http://pinework.test", "PINEWORK_TOKEN": actor.token}
    return runner.invoke(cli.app, ["kv", *args], env=env)


def test_the_cli_writes_only_over_the_revision_it_read(
    app_transport: httpx.MockTransport, world: World
) -> None:
    created = kv(app_transport, world.agent, "remember", "notes", "a", "--if-revision", "0")
    assert (
        created.exit_code == 0 and created.stdout == "stored notes (ttl: permanent, revision 1)\n"
    )
    read = json.loads(kv(app_transport, world.person, "recall", "notes", "--json").stdout)
    assert read["revision"] == 1
    kv(app_transport, world.agent, "remember", "notes", "b")  # someone writes meanwhile
    stale = kv(app_transport, world.person, "remember", "notes", "c", "--if-revision", "1")
    assert stale.exit_code == 1 and "error: precondition_failed:" in stale.stderr
    refused = kv(app_transport, world.person, "forget", "notes", "--if-revision", "1")
    assert refused.exit_code == 1 and "precondition_failed" in refused.stderr
    assert kv(app_transport, world.agent, "recall", "notes").stdout == "b\n"
    gone = kv(app_transport, world.person, "forget", "notes", "--if-revision", "2")
    assert gone.exit_code == 0 and gone.stdout == "forgot notes\n"
    negative = kv(app_transport, world.agent, "remember", "k", "v", "--if-revision", "-1")
    assert negative.exit_code == 2  # a usage error, nothing sent
