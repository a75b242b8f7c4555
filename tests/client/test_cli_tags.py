"""Tags in the CLI and the Python client (docs/reference.md#tags): ``memory save --tag``,
``memory list --tag/--any-tag``, ``memory edit --tag/--clear-tags``, ``show``."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from pinework import Client, cli
from tests.client.fake_api import FakeApi, memory_json
from tests.helpers import InjectedCliRunner

ENV = {"PINEWORK_API_URL": "http://pinework.test", "PINEWORK_TOKEN": "tok_person"}
MEMORY_ID = "mem_01JABCDEF0000000000000000"


@pytest.fixture
def runner(fake_api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for name in ("PINEWORK_API_URL", "PINEWORK_TOKEN", "PINEWORK_RUN", "PINEWORK_TASK"):
        monkeypatch.delenv(name, raising=False)
    return InjectedCliRunner(
        cli.Connections(client=lambda: Client.from_env(transport=fake_api.transport))
    )


def _run(runner: CliRunner, *args: str) -> str:
    result = runner.invoke(cli.app, list(args), env=ENV)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_save_sends_every_tag(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("POST", "/memories", 201, memory_json(tags=["billing", "q3"]))
    _run(runner, "memory", "save", "A fact", "--tag", "Billing", "--tag", "q3")
    assert fake_api.last_json() == {"text": "A fact", "tags": ["Billing", "q3"]}


def test_save_without_tags_sends_none(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("POST", "/memories", 201, memory_json())
    _run(runner, "memory", "save", "A fact")
    assert "tags" not in fake_api.last_json()


def test_list_sends_the_tag_filters(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("GET", "/memories", 200, {"object": "list", "data": [], "nextToken": None})
    _run(
        runner,
        *["memory", "list", "--agent", "agt_1", "--tag", "billing", "--tag", "q3"],
        *["--any-tag", "ops", "--any-tag", "support"],
    )
    params = dict(fake_api.last.url.params)
    assert params["tag"] == "billing,q3" and params["anyTag"] == "ops,support"


def test_edit_replaces_or_clears_the_tags(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("GET", f"/memories/{MEMORY_ID}", 200, memory_json(tags=["old"]))
    fake_api.on("PATCH", f"/memories/{MEMORY_ID}", 200, memory_json(tags=["new"]))
    _run(runner, "memory", "edit", MEMORY_ID, "--tag", "new")
    assert fake_api.last_json() == {"tags": ["new"]}
    _run(runner, "memory", "edit", MEMORY_ID, "--clear-tags")
    assert fake_api.last_json() == {"tags": []}
    refused = runner.invoke(cli.app, ["memory", "edit", MEMORY_ID, "--tag", "a", "--clear-tags"])
    assert refused.exit_code == 2


def test_show_prints_the_tags(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("GET", f"/memories/{MEMORY_ID}", 200, memory_json(tags=["billing", "q3"]))
    assert "tags:             billing, q3" in _run(runner, "memory", "show", MEMORY_ID)


def test_list_sends_each_metadata_condition_apart(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("GET", "/memories", 200, {"object": "list", "data": [], "nextToken": None})
    _run(
        runner,
        *["memory", "list", "--agent", "agt_1", "--meta-filter", "place:Paris, France"],
        *["--meta-filter", "n:gte:-2.5"],
    )
    assert fake_api.last.url.params.get_list("meta") == ["place:Paris, France", "n:gte:-2.5"]


def test_recall_sends_the_filters_in_the_body(runner: CliRunner, fake_api: FakeApi) -> None:
    answer = {"object": "recall", "recallId": None, "memories": [], "block": "", "fallback": None}
    fake_api.on("POST", "/memories/recall", 200, answer)
    runner.invoke(
        cli.app,
        ["memory", "recall", "--query", "deploys", "--tag", "ops", "--meta-filter", "a:in:x|y"],
        env=ENV,
    )
    assert fake_api.last_json() == {"query": "deploys", "tags": ["ops"], "meta": ["a:in:x|y"]}
    client = Client.from_env(transport=fake_api.transport)
    fake_api.on("POST", "/memories/recall/start", 200, answer)
    client.recall_start("s1", task="deploys", meta=["project:billing"], any_tags=["a"])
    sent = fake_api.last_json()
    assert sent["meta"] == ["project:billing"] and sent["anyTags"] == ["a"]
    assert "tags" not in sent
