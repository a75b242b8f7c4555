"""The contract, fuzzed (issue 15 item 2): Schemathesis reads ``/api/v1/openapi.json``
from the local server (free ports, a temporary data folder) and sends thousands of
generated requests to every route, as an agent and as a person, with a fixed seed:
examples, boundary ("coverage") cases, random valid and invalid requests, and
stateful sequences along the document's links (save -> archive -> unarchive).

Every check runs but ``positive_data_acceptance`` (a request the schema allows may
still be refused: an id that does not exist, a ``nextToken`` the server never gave,
a whitespace-only text). So: no 5xx, every status, content type, header and body as
documented, invalid requests refused, 401 without a token, 405 with ``Allow`` for
other methods. The counts are printed. ``PINEWORK_FUZZ_EXAMPLES`` changes the number
of examples per operation and phase (default 40, about 6,000 requests).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_local_server import REPO, LocalServer

SEED = 20261130
EXAMPLES = int(os.environ.get("PINEWORK_FUZZ_EXAMPLES", "40"))
MIN_REQUESTS = 5000
CONFIG = Path(__file__).with_name("schemathesis.toml")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    running = LocalServer(tmp_path_factory.mktemp("fuzz") / "data")
    running.start()
    yield running
    running.stop()


def fuzz(server: LocalServer, token: str, counts: Path) -> subprocess.CompletedProcess[str]:
    """One Schemathesis run as the principal of ``token``; counts go to ``counts``."""
    executable = Path(sys.executable).with_name("schemathesis")
    command = [
        str(executable),
        "--config-file",
        str(CONFIG),
        "run",
        f"http://127.0.0.1:{server.api_port}/api/v1/openapi.json",
        "--checks",
        "all",
        "--exclude-checks",
        "positive_data_acceptance",
        "--max-examples",
        str(EXAMPLES),
        "--seed",
        str(SEED),
        "--generation-database",
        "none",
        "--workers",
        "2",
        "--request-timeout",
        "60",
        "--no-color",
    ]
    env = {
        **os.environ,
        "PINEWORK_FUZZ_TOKEN": token,
        "PINEWORK_FUZZ_COUNTS": str(counts),
        "SCHEMATHESIS_HOOKS": "tests.e2e.fuzz_hooks",
        "PYTHONPATH": str(REPO),
    }
    return subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=2400, check=False
    )


def summary(output: str) -> str:
    """Schemathesis' closing summary (its counts, phases and failures)."""
    start = output.rfind("SUMMARY")
    return output[start - 40 :] if start >= 0 else output[-3000:]


def test_fuzzing_finds_no_server_error_and_no_departure_from_the_document(
    server: LocalServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = server.demo()
    totals: Counter[str] = Counter()
    by_status: Counter[str] = Counter()
    runs = {}
    for principal in ("agent", "person"):
        counts_file = tmp_path / f"{principal}-counts.json"
        run = fuzz(server, demo[f"{principal}Token"], counts_file)
        counts = json.loads(counts_file.read_text()) if counts_file.exists() else {}
        runs[principal] = run
        for key, number in counts.items():
            totals[principal] += number
            by_status[key.rsplit(" ", 1)[1][0] + "xx"] += number
        with capsys.disabled():
            print(f"\n--- Schemathesis as the demo {principal} (seed {SEED}) ---")
            print(summary(run.stdout))
    with capsys.disabled():
        print(
            f"Requests: {sum(totals.values())} ({totals['agent']} as the agent, "
            f"{totals['person']} as the person); by status: {dict(sorted(by_status.items()))}"
        )
    for principal, run in runs.items():
        assert run.returncode == 0, f"as the {principal}:\n{run.stdout[-20000:]}\n{run.stderr}"
    assert by_status["5xx"] == 0
    assert sum(totals.values()) >= MIN_REQUESTS
    assert totals["agent"] > 0 and totals["person"] > 0
