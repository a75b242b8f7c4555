"""Claude's memory tool with its ``/memories`` directory kept in Pinework
(docs/integrations/claude-memory-tool.md).

The Anthropic SDK's tool runner (``client.beta.messages.tool_runner``) runs a conversation in
which the model views ``/memories``, creates ``/memories/<project>/notes.md``, edits it
(``str_replace``, then ``insert``) and answers. The file is a key-value entry of the token's
workspace; the script prints each tool result, the final answer and the entry as Pinework
stores it.

Runs offline against ``make serve``: ``PINEWORK_API_URL`` (default http://127.0.0.1:8000) and
``PINEWORK_TOKEN`` (default: the demo agent's token in ``.pinework-local/demo.json``). The
model is scripted (an ``httpx2.MockTransport`` answers ``/v1/messages``: no Anthropic key, no
network); set ``PINEWORK_EXAMPLE_MODEL`` (e.g. ``claude-sonnet-4-5``, with
``ANTHROPIC_API_KEY``) to let a real model decide instead.

    .venv/bin/python examples/claude_memory_tool.py
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import anthropic
import httpx2

from pinework import Client
from pinework.integrations.claude_memory import PineworkMemoryTool

NOTES = "# Uploader\n\n- retries: 3\n"


def script(project: str) -> list[dict[str, Any]]:
    """The scripted model's tool calls, one assistant turn each."""
    path = f"/memories/{project}/notes.md"
    return [
        {"command": "view", "path": "/memories"},
        {"command": "create", "path": path, "file_text": NOTES},
        {"command": "str_replace", "path": path, "old_str": "retries: 3", "new_str": "retries: 5"},
        {"command": "insert", "path": path, "insert_line": 3, "insert_text": "- backoff: yes"},
        {"command": "view", "path": path},
    ]


class ScriptedModel:
    """Answers ``POST /v1/messages`` with the next scripted turn (a ``memory`` tool call,
    then a final text) and keeps the tool results it is sent."""

    def __init__(self, calls: list[dict[str, Any]]) -> None:
        self.calls = list(calls)
        self.turn = 0
        self.results: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        """One model turn."""
        body = json.loads(request.content)
        last = body["messages"][-1]
        if last["role"] == "user" and isinstance(last["content"], list):
            self.results += [b for b in last["content"] if b.get("type") == "tool_result"]
        self.turn += 1
        if self.turn <= len(self.calls):
            content: list[dict[str, Any]] = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{self.turn:02d}",
                    "name": "memory",
                    "input": self.calls[self.turn - 1],
                }
            ]
            stop = "tool_use"
        else:
            content = [{"type": "text", "text": "Noted: the uploader retries 5 times."}]
            stop = "end_turn"
        message = {
            "id": f"msg_{self.turn:02d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }
        return httpx2.Response(200, json=message)


def token_from_env() -> str:
    """``PINEWORK_TOKEN``, else the demo agent's token that ``make serve`` wrote."""
    token = os.environ.get("PINEWORK_TOKEN", "").strip()
    if token:
        return token
    demo = Path(__file__).resolve().parents[1] / ".pinework-local" / "demo.json"
    if not demo.exists():
        raise SystemExit(f"Set PINEWORK_TOKEN, or start `make serve` (it writes {demo}).")
    return str(json.loads(demo.read_text())["agentToken"])


def model_client(project: str) -> tuple[anthropic.Anthropic, str, ScriptedModel | None]:
    """The Anthropic client and model name: a real model when ``PINEWORK_EXAMPLE_MODEL`` is
    set, else the scripted one (returned too, to print what it was sent)."""
    real = os.environ.get("PINEWORK_EXAMPLE_MODEL", "").strip()
    if real:
        return anthropic.Anthropic(), real, None
    scripted = ScriptedModel(script(project))
    http = httpx2.Client(transport=httpx2.MockTransport(scripted))
    return anthropic.Anthropic(api_key="scripted", http_client=http), "scripted-model", scripted


def main() -> None:
    """Run the conversation and print the tool results, the answer and the stored entry."""
    url = os.environ.get("PINEWORK_API_URL", "").strip() or "http://127.0.0.1:8000"
    project = f"uploader-{uuid.uuid4().hex[:8]}"
    llm, model, scripted = model_client(project)
    with Client(url, token=token_from_env()) as client, llm:
        runner = llm.beta.messages.tool_runner(
            model=model,
            max_tokens=1024,
            max_iterations=10,
            tools=[PineworkMemoryTool(client)],
            messages=[
                {
                    "role": "user",
                    "content": f"Keep notes on the project {project}: the uploader retries 5 "
                    "times, with backoff. Keep them in /memories.",
                }
            ],
        )
        final = runner.until_done()
        for result in scripted.results if scripted else []:
            error = " (error)" if result.get("is_error") else ""
            sys.stdout.write(f"tool result{error}:\n{result['content']}\n\n")
        text = "".join(block.text for block in final.content if block.type == "text")
        sys.stdout.write(f"final answer: {text}\n")
        stored = client.kv_recall(f"memories/{project}/notes.md")
        sys.stdout.write(f"stored: {json.dumps(getattr(stored, 'value', None))}\n")


if __name__ == "__main__":
    main()
