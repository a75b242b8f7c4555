"""The agents overview reads its agents in parallel (``Settings.read_concurrency``) against
the embedded server, which serves one request at a time as DynamoDB answers each
atomically; in-process moto is not thread-safe, so the API tests read serially."""

from __future__ import annotations

from chalicelib import wiring
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import SaveFactRequest
from chalicelib.services.run_context import RunContext


def test_overview_rows_read_in_parallel_match_each_agent(
    wired: wiring.Services, agent: Principal
) -> None:
    workspace = agent.workspace_id
    agents = [agent]
    for number in range(11):
        issued = wired.admin.create_agent(workspace, f"agent-{number:02d}")
        agents.append(Principal(kind=PrincipalKind.AGENT, id=issued.id, workspace_id=workspace))
    for position, each in enumerate(agents):
        for fact in range(position % 4):
            wired.memories.save(
                each, SaveFactRequest(text=f"fact {fact} of {position}"), RunContext()
            )
    person = wired.admin.create_person(workspace, "overview@example.com")
    viewer = wired.auth.authenticate(f"Bearer {person.token}")
    listed = wired.dashboard.workspace.agents(viewer)
    for _ in range(3):
        rows = wired.dashboard.overview.rows(viewer, listed)
        assert [row.agent.id for row in rows] == [a.id for a in listed]
        by_id = {row.agent.id: row.counts.live_facts for row in rows}
        assert by_id == {each.id: position % 4 for position, each in enumerate(agents)}
