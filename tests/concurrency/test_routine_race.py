"""Concurrent first saves create exactly one routine (docs/reference.md#9-review, conditional
put)."""

from __future__ import annotations

from chalicelib import wiring
from chalicelib.models.principal import Principal
from chalicelib.models.requests import SaveFactRequest
from chalicelib.services.run_context import RunContext
from tests.helpers import run_together


def test_concurrent_first_saves_create_exactly_one_routine(
    wired: wiring.Services, agent: Principal
) -> None:
    created = run_together(
        12,
        lambda n: wired.routines.ensure_routine(agent.workspace_id, agent.id),
    )
    assert created.count(True) == 1 and created.count(False) == 11
    saved = run_together(
        8,
        lambda n: wired.memories.save(agent, SaveFactRequest(text=f"fact {n}"), RunContext()),
    )
    assert not [result for result in saved if isinstance(result, Exception)]
    assert [r.agent_id for r in wired.routines.list(agent, None)[0]] == [agent.id]
