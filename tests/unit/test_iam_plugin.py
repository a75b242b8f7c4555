"""``tests/iam_plugin.py`` under pytest-xdist (docs/contributing.md#checking-a-change):
the controller judges the unused permissions over the calls of every worker, and a lost
worker makes the run not a whole-suite one."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import execnet
import pytest

from infra.aws_calls import AwsCall, naming_params
from tests import iam_plugin
from tests.helpers import TABLE
from tests.iam_plugin import IamCheck


def call(function: str, operation: str, **params: object) -> AwsCall:
    return AwsCall(function, "dynamodb", operation, "us-east-1", naming_params(operation, params))


def worker(*calls: AwsCall, deselected: int = 0) -> dict[str, Any]:
    """A worker's output as the controller receives it (through execnet's serializer)."""
    check = IamCheck()
    check.seen.update(made.to_json() for made in calls)
    check.deselected = deselected
    output = execnet.loads(execnet.dumps(check.worker_output()))
    assert isinstance(output, dict)
    return output


def test_the_controller_judges_the_calls_of_every_worker() -> None:
    get = call("api_handler", "GetItem", TableName=TABLE)
    query = call("review_worker", "Query", TableName=TABLE, IndexName="byAgentKind")
    put = call("review_worker", "PutItem", TableName=TABLE)
    audit = iam_plugin.CHECK.audit  # the tests' and the local server's stacks
    controller = IamCheck()
    controller.add_worker(worker(get, get, query))
    controller.add_worker(worker(get, put))
    assert sorted((made.operation, count) for made, count in controller.calls()) == [
        ("GetItem", 3),
        ("PutItem", 1),
        ("Query", 1),
    ]
    every_call = [get, get, query, get, put]
    assert audit.unused(made for made, _ in controller.calls()) == audit.unused(every_call)
    # Each worker's calls count: without the second worker's, more grants look unused.
    alone = IamCheck()
    alone.add_worker(worker(get, get, query))
    assert set(audit.unused(made for made, _ in alone.calls())) > set(audit.unused(every_call))


def session(**changes: Any) -> Any:
    """A session of a whole-suite run (``python -m pytest`` with no argument, nothing
    failed), with ``changes`` applied."""
    config = SimpleNamespace(getini=lambda name: ["tests"], args=[], getoption=lambda name: "")
    return SimpleNamespace(**{"config": config, "shouldstop": False, "testsfailed": 0, **changes})


def test_a_lost_or_deselecting_worker_makes_the_run_partial(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    controller = IamCheck()
    # the plugin's own hooks judge this test's calls through CHECK meanwhile: with the
    # stacks they were made in (a local server's calls may land while it runs)
    controller.audit = iam_plugin.CHECK.audit
    monkeypatch.setattr(iam_plugin, "CHECK", controller)
    controller.add_worker(worker())
    assert iam_plugin.whole_suite(session())
    assert not iam_plugin.whole_suite(session(testsfailed=1))
    controller.add_worker(worker(deselected=2))
    assert not iam_plugin.whole_suite(session())
    controller.deselected = 0
    controller.add_worker(None)
    assert controller.lost_workers == 1
    assert not iam_plugin.whole_suite(session())
