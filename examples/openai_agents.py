"""An OpenAI Agents SDK agent with Pinework memory (docs/integrations/openai-agents.md).

Two runs of one agent on the task ``PIN-42``: the first saves a fact and a day line with the
Pinework tools; the second, in a new session, starts with them in its instructions (the
run-start ``--- MEMORY ---`` block), which the script prints.

Runs offline against ``make serve``: ``PINEWORK_API_URL`` (default http://127.0.0.1:8000) and
``PINEWORK_TOKEN`` (default: the demo agent's token in ``.pinework-local/demo.json``). The
model is scripted (no OpenAI key, no network); set ``PINEWORK_EXAMPLE_MODEL`` (e.g.
``gpt-4.1-mini``, with ``OPENAI_API_KEY``) to let a real model decide instead.

    .venv/bin/python examples/openai_agents.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agents import (
    Agent,
    Model,
    ModelResponse,
    Runner,
    Usage,
    set_tracing_disabled,
)
from agents.items import TResponseOutputItem, TResponseStreamEvent
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from pinework import AsyncClient
from pinework.integrations.openai_agents import PineworkRun, memory_instructions, pinework_tools

TASK = "PIN-42"
FACT = "PIN-42: the uploader must retry with exponential backoff, at most 5 tries."


class ScriptedModel(Model):
    """A model that answers with pre-set outputs and keeps the instructions it was given."""

    def __init__(self, *steps: list[TResponseOutputItem]) -> None:
        self.steps = list(steps)
        self.instructions: list[str | None] = []

    async def get_response(
        self, system_instructions: str | None, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        """The next pre-set output."""
        self.instructions.append(system_instructions)
        return ModelResponse(output=self.steps.pop(0), usage=Usage(), response_id=None)

    def stream_response(
        self, *args: Any, **kwargs: Any
    ) -> AsyncIterator[TResponseStreamEvent]:  # pragma: no cover - not streamed here
        """Not used by this example."""
        raise NotImplementedError


def tool_call(name: str, arguments: dict[str, Any]) -> TResponseOutputItem:
    """A function-tool call, as a model answers one."""
    call_id = f"call_{uuid.uuid4().hex[:8]}"
    return ResponseFunctionToolCall(
        id=call_id,
        call_id=call_id,
        type="function_call",
        name=name,
        arguments=json.dumps(arguments),
    )


def message(text: str) -> TResponseOutputItem:
    """A final answer."""
    content = ResponseOutputText(text=text, type="output_text", annotations=[], logprobs=[])
    return ResponseOutputMessage(
        id="msg_1", type="message", role="assistant", status="completed", content=[content]
    )


def token_from_env() -> str:
    """``PINEWORK_TOKEN``, else the demo agent's token that ``make serve`` wrote."""
    token = os.environ.get("PINEWORK_TOKEN", "").strip()
    if token:
        return token
    demo = Path(__file__).resolve().parents[1] / ".pinework-local" / "demo.json"
    if not demo.exists():
        raise SystemExit(f"Set PINEWORK_TOKEN, or start `make serve` (it writes {demo}).")
    return str(json.loads(demo.read_text())["agentToken"])


def model_for(*steps: list[TResponseOutputItem]) -> Model | str:
    """The real model named by ``PINEWORK_EXAMPLE_MODEL``, else a scripted one."""
    return os.environ.get("PINEWORK_EXAMPLE_MODEL") or ScriptedModel(*steps)


async def main() -> None:
    """Run the agent twice and print what it did and what the second run was told."""
    if not os.environ.get("PINEWORK_EXAMPLE_MODEL"):
        set_tracing_disabled(True)
    url = os.environ.get("PINEWORK_API_URL", "").strip() or "http://127.0.0.1:8000"
    async with AsyncClient(url, token=token_from_env()) as client:
        first = model_for(
            [tool_call("save_memory", {"text": FACT, "supersedes": None})],
            [tool_call("log_day", {"line": "found why uploads fail under load"})],
            [message("Saved what I learnt about the uploader.")],
        )
        agent = Agent[PineworkRun](
            name="builder",
            instructions=memory_instructions("You fix bugs in the uploader.", client),
            tools=pinework_tools(client),
            model=first,
        )
        run = PineworkRun(f"session-{uuid.uuid4().hex[:8]}", task=TASK, run_id="run_example_1")
        result = await Runner.run(agent, "Why do uploads fail under load?", context=run)
        sys.stdout.write(f"run 1: {result.final_output}\n")

        second = model_for([message("I remember: exponential backoff, 5 tries.")])
        later = PineworkRun(f"session-{uuid.uuid4().hex[:8]}", task=TASK, run_id="run_example_2")
        result = await Runner.run(
            agent.clone(model=second), "How should the uploader retry?", context=later
        )
        sys.stdout.write(f"run 2: {result.final_output}\n")
        if isinstance(second, ScriptedModel):
            sys.stdout.write(f"run 2 was told:\n{second.instructions[0]}\n")


if __name__ == "__main__":
    asyncio.run(main())
