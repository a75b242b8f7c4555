"""``pinework admin erase-…``, ``export`` and ``import`` as the operator runs them
(docs/reference.md#16-data-lifecycle): on moto through the wired admin service."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chalicelib import wiring
from pinework import cli
from tests.helpers import Api, InjectedCliRunner, World, save


def test_erase_asks_counts_dry_and_erases_once(
    api: Api, world: World, wired: wiring.Services, s3: Any
) -> None:
    save(api, world, "The payroll database is pg-payroll-4471")
    runner = InjectedCliRunner(cli.Connections(admin=lambda: wired.admin))
    refused = runner.invoke(cli.app, ["admin", "erase-agent", world.agent.id], input="n\n")
    assert refused.exit_code == 1
    unanswered = runner.invoke(cli.app, ["admin", "erase-agent", world.agent.id], input="")
    assert unanswered.exit_code == 1 and "nothing changed; pass --yes" in unanswered.stderr
    dry = runner.invoke(cli.app, ["admin", "erase-agent", world.agent.id, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "dry run, nothing changed" in dry.stdout and "MEMORY 1" in dry.stdout
    args = ["admin", "erase-agent", world.agent.id, "--yes", "--by", "ticket 9"]
    done = runner.invoke(cli.app, args)
    assert done.exit_code == 0, done.output
    assert f"erased agent {world.agent.id}" in done.stdout
    again = runner.invoke(cli.app, [*args, "--json"])
    assert json.loads(again.stdout)["alreadyErased"] is True
    assert json.loads(again.stdout)["erasedBy"] == "ticket 9"
    wrong = runner.invoke(cli.app, ["admin", "erase-person", world.agent.id, "--yes", "--json"])
    assert wrong.exit_code != 0 and "invalid_request" in wrong.stdout + wrong.stderr


def test_export_then_import_through_the_cli(
    api: Api, world: World, wired: wiring.Services, s3: Any, tmp_path: Path
) -> None:
    save(api, world, "The payroll database is pg-payroll-4471")
    runner = InjectedCliRunner(cli.Connections(admin=lambda: wired.admin))
    out = tmp_path / "acme.jsonl"
    result = runner.invoke(
        cli.app, ["admin", "export", "--workspace", world.workspace_id, "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert json.loads(lines[0])["format"] == "pinework-export"
    assert json.loads(lines[-1])["type"] == "end"
    # into the same stage with its ids kept: everything is already there
    result = runner.invoke(cli.app, ["admin", "import", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["itemCount"] == 0 and report["alreadyThere"] == len(lines) - 2
    both = runner.invoke(cli.app, ["admin", "export", "-o", str(out)])
    assert both.exit_code != 0  # neither --workspace nor --agent
    missing = runner.invoke(cli.app, ["admin", "import", str(tmp_path / "none.jsonl")])
    assert missing.exit_code != 0
