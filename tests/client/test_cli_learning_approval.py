"""``pinework admin set-learning-approval`` (docs/reference.md#learning-approval): a workspace
whose ``learningApproval`` is ``none`` makes an agent's proposed learning active at once."""

from __future__ import annotations

import json
from typing import Any

from chalice.test import Client as ChaliceClient

from chalicelib import wiring
from chalicelib.models.principal import Workspace
from chalicelib.storage.directory import DynamoDBDirectoryRepository
from chalicelib.storage.dynamodb import DynamoDBTable
from pinework import cli
from tests.helpers import TABLE, Api, InjectedCliRunner, World


def test_agents_proposals_go_live_at_once_when_the_workspace_says_so(
    wired: wiring.Services, world: World, dynamodb: Any
) -> None:
    runner = InjectedCliRunner(cli.Connections(admin=lambda: wired.admin))
    workspace = world.workspace_id
    directory = DynamoDBDirectoryRepository(DynamoDBTable(dynamodb, TABLE))

    def stored() -> Workspace:
        found = directory.get_workspace(workspace)
        assert found is not None
        return found

    def admin(*args: str) -> Any:
        return runner.invoke(cli.app, ["admin", *args], env={})

    from app import app

    with ChaliceClient(app) as client:
        api = Api(client)
        first = api.call("POST", "/learnings", world.agent, {"text": "Logs ship to Loki"})[1]
        assert first["state"] == "proposed"  # the default: a person decides

        refused = admin("set-learning-approval", "--workspace", workspace, "none", "--json")
        assert refused.exit_code == 1 and "unread by a person" in refused.output
        declined = runner.invoke(
            cli.app,
            ["admin", "set-learning-approval", "--workspace", workspace, "none"],
            input="n\n",
            env={},
        )
        assert declined.exit_code == 1 and "prompt injection" in declined.output
        # no answer at all (no terminal): a no that says how to confirm, never silent
        unanswered = runner.invoke(
            cli.app,
            ["admin", "set-learning-approval", "--workspace", workspace, "none"],
            input="",
            env={},
        )
        assert unanswered.exit_code == 1 and "pass --yes" in unanswered.stderr
        assert stored().learning_approval == "required"
        done = admin("set-learning-approval", "--workspace", workspace, "none", "--json", "--yes")
        assert done.exit_code == 0, done.output
        recorded = stored()
        assert (recorded.learning_approval_set_by, recorded.learning_approval_set_at) == (
            "operator",
            wired.clock.now(),
        )
        assert json.loads(done.stdout) == {"id": workspace, "learningApproval": "none"}
        status, live = api.call("POST", "/learnings", world.agent, {"text": "Builds run on arm64"})
        assert (status, live["state"], live["decidedBy"]) == (201, "active", None)
        assert wired.admin.set_learning_approval(workspace, "REQUIRED").learning_approval == (
            "required"
        )
        later = api.call("POST", "/learnings", world.agent, {"text": "Tests run in CI twice"})[1]
        assert later["state"] == "proposed"
        bad = admin("set-learning-approval", "--workspace", workspace, "sometimes")
        assert bad.exit_code == 1 and "learningApproval must be" in bad.output
