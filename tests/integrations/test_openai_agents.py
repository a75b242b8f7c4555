"""The OpenAI Agents SDK integration (docs/integrations/openai-agents.md): a real
``Runner.run`` with a scripted model over the real Chalice app in-process, and the example
script against the real local server."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from agents import (
    Agent,
    Model,
    ModelResponse,
    ModelSettings,
    RunConfig,
    Runner,
    RunResult,
    ToolCallOutputItem,
    Usage,
)
from agents.agent_output import AgentOutputSchemaBase
from agents.exceptions import UserError
from agents.handoffs import Handoff
from agents.items import TResponseInputItem, TResponseOutputItem, TResponseStreamEvent
from agents.models.interface import ModelTracing
from agents.tool import Tool
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from pinework import AsyncClient, Client
from pinework.integrations.openai_agents import (
    PineworkRun,
    memory_instructions,
    pinework_tools,
)
from tests.helpers import World, example_run

BASE_URL = "http://pinework.test"
BASE = "You are the builder agent."
REPO = Path(__file__).resolve().parents[2]


def call(name: str, arguments: dict[str, Any], call_id: str) -> TResponseOutputItem:
    """A function-tool call as the Responses API returns it."""
    return ResponseFunctionToolCall(
        id=call_id,
        call_id=call_id,
        type="function_call",
        name=name,
        arguments=json.dumps(arguments),
    )


def say(text: str) -> TResponseOutputItem:
    """A final assistant message."""
    return ResponseOutputMessage(
        id="msg_1",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(text=text, type="output_text", annotations=[], logprobs=[])],
    )


class ScriptedModel(Model):
    """A ``Model`` that answers each call with the next pre-set output (no network) and
    keeps the system instructions and input of every call."""

    def __init__(self, *steps: list[TResponseOutputItem]) -> None:
        self.steps = list(steps)
        self.instructions: list[str | None] = []
        self.inputs: list[str | list[TResponseInputItem]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],  # noqa: A002 (the SDK's name)
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        self.instructions.append(system_instructions)
        self.inputs.append(input)
        assert self.steps, "the model was called more often than scripted"
        return ModelResponse(output=self.steps.pop(0), usage=Usage(), response_id=None)

    def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],  # noqa: A002 (the SDK's name)
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("the tests do not stream")


def run_agent(
    transport: httpx.AsyncBaseTransport,
    token: str,
    model: ScriptedModel,
    context: Any,
    *,
    client_task: str | None = None,
) -> RunResult:
    """One ``Runner.run`` of an agent with the Pinework tools and memory instructions."""

    async def go() -> RunResult:
        async with AsyncClient(
            BASE_URL, token=token, task_key=client_task, transport=transport
        ) as client:
            agent = Agent[Any](
                name="builder",
                instructions=memory_instructions(BASE, client),
                tools=pinework_tools(client),
                model=model,
            )
            return await Runner.run(
                agent, "Go.", context=context, run_config=RunConfig(tracing_disabled=True)
            )

    return asyncio.run(go())


def tool_outputs(result: RunResult) -> list[str]:
    """What the tools returned to the model, in order."""
    return [str(item.output) for item in result.new_items if isinstance(item, ToolCallOutputItem)]


@pytest.fixture
def agent_client(app_transport: httpx.MockTransport, world: World) -> Iterator[Client]:
    """A sync client of the agent, for saving before and reading after a run."""
    with Client(BASE_URL, token=world.agent.token, transport=app_transport) as client:
        yield client


def test_a_run_saves_with_its_task_and_run_and_starts_with_its_memory(
    app_transport: httpx.MockTransport, world: World, agent_client: Client
) -> None:
    earlier = agent_client.save_fact("The staging deploy needs the VPN turned on.")
    model = ScriptedModel(
        [call("save_memory", {"text": "Staging deploys run from the bastion host."}, "c1")],
        [call("log_day", {"line": "deployed the uploader to staging"}, "c2")],
        [say("Done.")],
    )
    run = PineworkRun("chat-1", task="deploy to staging", run_id="run_1")
    result = run_agent(app_transport, world.agent.token, model, run)

    assert result.final_output == "Done."
    first = model.instructions[0]
    assert first is not None and first.startswith(BASE + "\n\n")
    assert "--- MEMORY ---" in first and f"{earlier.id} (2026-11-30) {earlier.text}" in first
    assert model.instructions == [first] * 3  # recalled once, the same block every turn
    saved, logged = tool_outputs(result)
    assert saved.startswith("Saved mem_") and logged == "Logged to the day log of 2026-11-30."

    memories = {m.kind + ":" + m.text: m for m in agent_client.list_memories().data}
    fact = memories["fact:Staging deploys run from the bastion host."]
    assert saved.startswith(f"Saved {fact.id} ")
    assert (fact.task_key, fact.run_id) == ("deploy to staging", "run_1")
    day = next(m for m in memories.values() if m.kind == "day")
    assert day.text == "12:00 [deploy to staging] deployed the uploader to staging"
    assert (day.task_key, day.run_id) == ("deploy to staging", "run_1")
    log = agent_client.recall_log().data
    assert [(e.kind, e.session_id, e.run_id, e.task_key) for e in log] == [
        ("start", "chat-1", "run_1", "deploy to staging")
    ]


def test_a_resumed_session_gets_no_block_and_a_new_one_does(
    app_transport: httpx.MockTransport, world: World, agent_client: Client
) -> None:
    agent_client.save_fact("The staging deploy needs the VPN turned on.")
    token = world.agent.token
    first, again, other = (ScriptedModel([say("ok")]) for _ in range(3))
    run_agent(app_transport, token, first, PineworkRun("chat-2", task="deploy to staging"))
    run_agent(
        app_transport,
        token,
        again,
        PineworkRun("chat-2", task="deploy to staging", resumed=True),
    )
    run_agent(
        app_transport,
        token,
        other,
        PineworkRun("chat-3", task="deploy to staging", resumed=True),
    )

    assert "The staging deploy needs the VPN" in str(first.instructions[0])
    assert again.instructions == [BASE]  # the server skipped it: recalled within 24 hours
    assert "The staging deploy needs the VPN" in str(other.instructions[0])  # never recalled


def test_a_refused_save_is_told_to_the_model_and_the_run_finishes(
    app_transport: httpx.MockTransport, world: World, agent_client: Client
) -> None:
    key = "AKIA" + "QX7" + "Z" * 13
    model = ScriptedModel(
        [call("save_memory", {"text": "x" * 501, "supersedes": None}, "c1")],
        [call("save_memory", {"text": f"use key {key} for s3"}, "c2")],
        [call("save_memory", {"text": "a fact", "supersedes": "mem_nope"}, "c3")],
        [say("I could not save it.")],
    )
    result = run_agent(app_transport, world.agent.token, model, PineworkRun("chat-4", task="t"))

    assert result.final_output == "I could not save it."
    too_long, secret, unknown = tool_outputs(result)
    assert too_long.startswith("Pinework refused this: memory_text_too_long: ")
    assert "500" in too_long  # the server's message says the limit
    assert secret.startswith("Pinework refused this: secret_in_memory: ")
    assert key not in secret
    assert unknown.startswith("Pinework refused this: memory_not_found: ")
    # the model saw the refusal as the call's output
    last_input = model.inputs[-1]
    assert isinstance(last_input, list)
    items: list[Any] = list(last_input)
    outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
    assert outputs == [too_long, secret, unknown]
    assert agent_client.list_memories().data == []


def test_recall_memory_returns_the_relevant_fact(
    app_transport: httpx.MockTransport, world: World, agent_client: Client
) -> None:
    vpn = agent_client.save_fact("The staging deploy needs the VPN turned on.")
    agent_client.save_fact("Lunch is at noon on Fridays.")
    model = ScriptedModel(
        [call("recall_memory", {"query": "How do I deploy to staging with the VPN?"}, "c1")],
        [say("Turn the VPN on.")],
    )
    context = {"session_id": "chat-5", "task": "PIN-7", "run_id": "run_5"}  # any mapping
    result = run_agent(app_transport, world.agent.token, model, context)

    (block,) = tool_outputs(result)
    assert block.startswith("--- MEMORY ---") and block.endswith("--- END MEMORY ---")
    assert f"{vpn.id} (2026-11-30) {vpn.text}" in block and "Lunch" not in block
    kinds = [(e.kind, e.run_id, e.task_key) for e in agent_client.recall_log().data]
    assert ("on_demand", "run_5", "PIN-7") in kinds


def test_a_failed_recall_leaves_the_base_instructions(
    app_transport: httpx.MockTransport,
    world: World,
    agent_client: Client,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def failing(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/memories/recall/start"):
            raise httpx.ConnectError("refused", request=request)
        return app_transport.handle_request(request)

    model = ScriptedModel([call("log_day", {"line": "still working"}, "c1")], [say("ok")])
    with caplog.at_level(logging.WARNING, logger="pinework.integrations.openai_agents"):
        result = run_agent(
            httpx.MockTransport(failing), world.agent.token, model, PineworkRun("chat-6", task="t")
        )

    assert result.final_output == "ok" and model.instructions == [BASE, BASE]
    (warning,) = caplog.records
    assert "chat-6" in warning.getMessage() and "connection_error" in warning.getMessage()
    assert tool_outputs(result) == ["Logged to the day log of 2026-11-30."]  # tools still work


def test_agents_that_hand_off_share_the_run_start_recall(
    app_transport: httpx.MockTransport, world: World, agent_client: Client
) -> None:
    fact = agent_client.save_fact("The staging deploy needs the VPN turned on.")
    model = ScriptedModel([call("transfer_to_reviewer", {}, "c1")], [say("reviewed")])

    async def go() -> RunResult:
        async with AsyncClient(
            BASE_URL, token=world.agent.token, transport=app_transport
        ) as client:
            reviewer = Agent[Any](
                name="reviewer",
                instructions=memory_instructions("You review.", client),
                model=model,
            )
            builder = Agent[Any](
                name="builder",
                instructions=memory_instructions(BASE, client),
                handoffs=[reviewer],
                model=model,
            )
            run = PineworkRun("chat-9", task="deploy to staging")
            return await Runner.run(
                builder, "Go.", context=run, run_config=RunConfig(tracing_disabled=True)
            )

    result = asyncio.run(go())
    assert result.final_output == "reviewed" and result.last_agent.name == "reviewer"
    builder_told, reviewer_told = model.instructions
    assert builder_told is not None and reviewer_told is not None
    assert builder_told.startswith(BASE) and reviewer_told.startswith("You review.\n\n")
    assert builder_told.split("\n\n", 1)[1] == reviewer_told.split("\n\n", 1)[1]
    assert fact.id in reviewer_told
    assert [e.kind for e in agent_client.recall_log().data] == ["start"]  # recalled once


def test_the_client_task_is_used_when_the_run_has_none_and_a_run_is_required(
    app_transport: httpx.MockTransport, world: World, agent_client: Client
) -> None:
    model = ScriptedModel([call("log_day", {"line": "started"}, "c1")], [say("ok")])
    run_agent(app_transport, world.agent.token, model, PineworkRun("chat-8"), client_task="PIN-9")
    (day,) = agent_client.list_memories(kind="day").data
    assert day.text == "12:00 [PIN-9] started" and day.run_id is None

    with pytest.raises(UserError, match="PineworkRun"):
        run_agent(app_transport, world.agent.token, ScriptedModel([say("ok")]), None)


def test_the_example_runs_against_the_local_server(tmp_path: Path) -> None:
    with example_run(tmp_path, "openai_agents.py") as (done, client):
        facts = client.list_memories(kind="fact").data
        days = client.list_memories(kind="day").data
    told = done.stdout.split("run 2 was told:", 1)[1]  # the second run's instructions
    assert "--- MEMORY ---" in told and "exponential backoff, at most 5 tries." in told
    assert any(f.task_key == "PIN-42" and f.run_id for f in facts)
    assert days and "[PIN-42]" in days[0].text
