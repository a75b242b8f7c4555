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


class IamCheck:
    """The plugin's state: every call seen, and where the local servers' log was read to."""

    def __init__(self) -> None:
        self.audit = Audit()
        self.calls: list[AwsCall] = []
        self.log_offset = 0
        self.deselected = 0
        self.unused: list[str] = []

    def new_calls(self, start: int) -> list[AwsCall]:
        """Calls recorded since ``start`` (this process) plus the local servers' new ones."""
        mine = RECORDER.calls[start:]
        theirs, self.log_offset = read_calls(CALL_LOG, self.log_offset)
        self.calls += mine + theirs
        return mine + theirs


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
    """Count deselected tests: a run without them is not the whole suite."""
    CHECK.deselected += len(items)


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
        and not session.shouldstop
        and session.testsfailed == 0
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the report; after a whole-suite run, fail on permissions nothing used."""
    CHECK.new_calls(len(RECORDER.calls))
    used = Counter(
        (permission.function, permission.action, permission.resource)
        for call in CHECK.calls
        for permission in CHECK.audit.permissions(call)
    )
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
        CHECK.unused = CHECK.audit.unused(CHECK.calls)
        if CHECK.unused:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say what the IAM check found."""
    if CHECK.unused:
        terminalreporter.section("IAM: permissions no call used (infra/iam.py)", red=True)
        for line in CHECK.unused:
            terminalreporter.write_line(line)
