"""IAM proven by the calls the code makes (docs/issues.md#issue-12): a pytest plugin.

Every AWS API operation made by a Lambda entry point during the tests is recorded
(``infra/aws_calls.py``: a botocore hook, and ``FUNCTION`` set by a Chalice
middleware on ``app``), in this process (``chalice.test.Client``, the job tests'
``lambda_.invoke``) and in the local servers the end-to-end tests start (which append
to the file named by ``PINEWORK_AWS_CALL_LOG``). Each call is mapped to the IAM
permissions it needs (``infra/iam_audit.py``) and checked against its function's role
in the template (``infra/iam.py``):

* a call the role does not allow fails the test that made it;
* after a whole-suite run, a permission a role grants that no call used fails the run.

Every run writes what it saw to ``build/aws-calls.json`` (function, action, resource,
count).

Under pytest-xdist (``make test`` runs the suite on several workers) each worker
checks its own tests' calls and hands every call it saw to the controller when it
finishes (``config.workeroutput``); the controller alone writes the report and judges
the unused permissions, over the calls of every worker. A worker lost before it handed
its calls over makes the run not a whole-suite one (its tests failed anyway).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from chalicelib.settings import REVIEW_QUEUE_NAME
from infra import local_server
from infra.aws_calls import AwsCall, CallRecorder, attribution_middleware, read_calls
from infra.iam_audit import Audit, Stack
from tests.helpers import BUCKET, TABLE

REPO = Path(__file__).resolve().parents[1]
RECORDER = CallRecorder("tests")
RECORDER.install()  # before any test builds a client (moto hooks botocore the same way)
CALL_LOG = Path(tempfile.mkdtemp(prefix="pinework-aws-calls-")) / "local_server.jsonl"
REPORT = REPO / "build" / "aws-calls.json"


WORKER_OUTPUT = "pinework_aws_calls"
"""The key of a worker's calls in pytest-xdist's ``workeroutput``."""


class IamCheck:
    """The plugin's state: every call seen (each distinct call, as its JSON line, with
    the number of times it was made), where the local servers' log was read to, the
    tests deselected and the xdist workers lost."""

    def __init__(self) -> None:
        self.audit = Audit()
        self.seen: Counter[str] = Counter()
        self.log_offset = 0
        self.deselected = 0
        self.lost_workers = 0
        self.unused: list[str] = []

    def new_calls(self, start: int) -> list[AwsCall]:
        """Calls recorded since ``start`` (this process) plus the local servers' new ones."""
        mine = RECORDER.calls[start:]
        theirs, self.log_offset = read_calls(CALL_LOG, self.log_offset)
        self.seen.update(call.to_json() for call in mine + theirs)
        return mine + theirs

    def calls(self) -> list[tuple[AwsCall, int]]:
        """Each distinct call seen and how many times it was made."""
        return [(AwsCall.from_json(line), count) for line, count in self.seen.items()]

    def worker_output(self) -> dict[str, Any]:
        """What an xdist worker hands the controller: its calls (JSON line -> count) and
        the number of tests it deselected (plain data: execnet sends it)."""
        return {"seen": dict(self.seen), "deselected": self.deselected}

    def add_worker(self, output: dict[str, Any] | None) -> None:
        """Add a finished worker's ``worker_output``; ``None`` (a worker lost before it
        handed its calls over) is counted in ``lost_workers``."""
        if output is None:
            self.lost_workers += 1
            return
        self.seen.update(output["seen"])
        self.deselected += output["deselected"]


CHECK = IamCheck()


def pytest_configure(config: pytest.Config) -> None:
    """Point local servers at the call log; attribute ``app``'s entry points; judge each
    call in the environment it was made in (the tests' table and bucket, or the local
    server's)."""
    CHECK.audit = Audit(
        {
            "tests": Stack(table=TABLE, bucket=BUCKET, queue=REVIEW_QUEUE_NAME),
            "local_server": Stack(
                table=local_server.TABLE, bucket=local_server.BUCKET, queue=REVIEW_QUEUE_NAME
            ),
        }
    )
    os.environ["PINEWORK_AWS_CALL_LOG"] = str(CALL_LOG)
    from app import app

    app.register_middleware(attribution_middleware, "all")


def pytest_deselected(items: list[pytest.Item]) -> None:
    """Count deselected tests: a run without them is not the whole suite (under xdist
    every worker deselects the same tests, and the controller adds the workers' counts:
    zero stays zero)."""
    CHECK.deselected += len(items)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist's controller: take a finished worker's calls (none from a crashed one)."""
    output = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
    CHECK.add_worker(None if error else output)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Fail the test if one of its calls is not allowed by its function's role."""
    start = len(RECORDER.calls)
    outcome = yield
    denied = CHECK.audit.denied(CHECK.new_calls(start))
    if denied:
        raise AssertionError(
            "AWS calls the function's IAM role does not allow (infra/iam.py):\n  "
            + "\n  ".join(denied)
        )
    return outcome


def whole_suite(session: pytest.Session) -> bool:
    """Whether this run ran every test of the suite (no file, -k, -m or deselection)."""
    config = session.config
    testpaths = [str(REPO / path) for path in config.getini("testpaths")]
    args = [str(Path(arg).resolve()) for arg in config.args]
    return (
        args in ([], testpaths, [str(REPO)])
        and not config.getoption("keyword")
        and not config.getoption("markexpr")
        and CHECK.deselected == 0
        and CHECK.lost_workers == 0
        and not session.shouldstop
        and session.testsfailed == 0
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the report; after a whole-suite run, fail on permissions nothing used.
    An xdist worker only hands its calls to the controller, which does both."""
    CHECK.new_calls(len(RECORDER.calls))
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[WORKER_OUTPUT] = CHECK.worker_output()
        return
    calls = CHECK.calls()
    used: Counter[tuple[str, str, str]] = Counter()
    for call, count in calls:
        for permission in CHECK.audit.permissions(call):
            used[(permission.function, permission.action, permission.resource)] += count
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(
        json.dumps(
            [
                {"function": f, "action": a, "resource": r, "calls": n}
                for (f, a, r), n in sorted(used.items())
            ],
            indent=1,
        )
    )
    if whole_suite(session):
        CHECK.unused = CHECK.audit.unused(call for call, _ in calls)
        if CHECK.unused:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say what the IAM check found."""
    if CHECK.unused:
        terminalreporter.section("IAM: permissions no call used (infra/iam.py)", red=True)
        for line in CHECK.unused:
            terminalreporter.write_line(line)
