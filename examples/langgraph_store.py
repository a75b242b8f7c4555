"""A LangGraph graph whose long-term store is Pinework (docs/integrations/langgraph.md).

Two runs of one ``StateGraph`` compiled with ``store=PineworkStore(...)``: the first writes
what it learnt (an item with ``text``, so also a fact of the agent, and a plain settings item);
the second, in a new thread, searches the store by meaning (a recall preview: nothing counted)
and reads the settings back. The script prints what each run did.

Runs offline against ``make serve``: ``PINEWORK_API_URL`` (default http://127.0.0.1:8000) and
``PINEWORK_TOKEN`` (default: the demo agent's token in ``.pinework-local/demo.json``). No model:
the nodes are plain functions.

    .venv/bin/python examples/langgraph_store.py
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from pinework import Client
from pinework.integrations.langgraph import PineworkStore

FACT = "The staging deploy of the uploader needs the VPN turned on."
QUESTION = "How do I deploy the uploader to staging?"


class State(TypedDict):
    """What a run carries: the project, what it learnt or asks, and its report."""

    project: str
    learnt: str
    question: str
    report: str


def learn(state: State, *, store: BaseStore) -> dict[str, Any]:
    """Write what the run learnt (a fact) and the project's settings (an entry only)."""
    if not state["learnt"]:
        return {}
    namespace = ("example", state["project"])
    store.put(namespace, "vpn", {"text": state["learnt"], "source": "run 1"})
    store.put(namespace, "settings", {"region": "eu-west-1", "retries": 5})
    return {"report": "stored vpn and settings"}


def answer(state: State, runtime: Runtime[None]) -> dict[str, Any]:
    """Search the project's items by meaning and read its settings."""
    if not state["question"]:
        return {}
    assert runtime.store is not None
    namespace = ("example", state["project"])
    found = runtime.store.search(namespace, query=state["question"], limit=3)
    settings = runtime.store.get(namespace, "settings")
    hits = ", ".join(f"{item.key} (score {item.score:.2f})" for item in found if item.score)
    return {"report": f"found: {hits or 'nothing'}; settings: {settings and settings.value}"}


def token_from_env() -> str:
    """``PINEWORK_TOKEN``, else the demo agent's token that ``make serve`` wrote."""
    token = os.environ.get("PINEWORK_TOKEN", "").strip()
    if token:
        return token
    demo = Path(__file__).resolve().parents[1] / ".pinework-local" / "demo.json"
    if not demo.exists():
        raise SystemExit(f"Set PINEWORK_TOKEN, or start `make serve` (it writes {demo}).")
    return str(json.loads(demo.read_text())["agentToken"])


def main() -> None:
    """Run the graph twice and print the reports."""
    url = os.environ.get("PINEWORK_API_URL", "").strip() or "http://127.0.0.1:8000"
    with Client(url, token=token_from_env()) as client:
        graph = (
            StateGraph(State)
            .add_node("learn", learn)
            .add_node("answer", answer)
            .add_edge(START, "learn")
            .add_edge("learn", "answer")
            .compile(store=PineworkStore(client))
        )
        project = f"uploader-{uuid.uuid4().hex[:8]}"
        first = graph.invoke({"project": project, "learnt": FACT, "question": "", "report": ""})
        sys.stdout.write(f"run 1 {first['report']}\n")
        second = graph.invoke(
            {"project": project, "learnt": "", "question": QUESTION, "report": ""}
        )
        sys.stdout.write(f"run 2 {second['report']}\n")


if __name__ == "__main__":
    main()
