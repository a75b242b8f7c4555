"""Cold start (docs/issues.md#issue-12): the import time of the Lambda handler module (``app``) as a
ratio to a hello-world Chalice app that imports boto3, measured side by side in one
run, and what a recall's first call costs once the heavy pieces load on first use.

Each import is timed in a fresh ``python`` process (as a Lambda cold start is), the
two apps alternating, ``--repeat`` times, with every module's bytecode compiled
beforehand for both; the figures are medians. Then, on the
embedded DynamoDB (moto's server) holding one agent's facts, fresh processes import
``app`` and time their first run-start recall, then a second one (both through
``chalice.test.Client``): the difference is what the first call pays for loading
numpy and the embedder, the tokenizer and the relevance model.

Usage: ``.venv/bin/python bench/cold_start.py [--repeat 9] [--facts 40]``
"""

from __future__ import annotations

import argparse
import compileall
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import boto3

from chalicelib import wiring
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import SaveFactRequest
from chalicelib.services.run_context import RunContext
from chalicelib.settings import Settings
from infra.local_dynamodb import EmbeddedAWS
from infra.tables import create_table

REPO = Path(__file__).resolve().parent.parent
HELLO_APP = """
import boto3
from chalice import Chalice

app = Chalice(app_name="hello")


@app.route("/")
def index():
    return {"hello": "world"}
"""
TIME_IMPORT = (
    "import time; t, c = time.perf_counter(), time.process_time(); import app; "
    "print(time.perf_counter() - t, time.process_time() - c)"
)
HEAVY = ("numpy", "tiktoken", "detect_secrets")
FIRST_RECALL = textwrap.dedent(
    """
    import json, sys, time
    started = time.perf_counter()
    import app
    imported = time.perf_counter()
    heavy_at_import = sorted(name for name in {heavy!r} if name in sys.modules)
    from chalice.test import Client
    headers = {{"Authorization": "Bearer " + sys.argv[1], "Content-Type": "application/json"}}
    body = json.dumps({{"query": "how do we deploy the billing api"}})
    timings = []
    with Client(app.app) as client:
        for _ in range(3):
            before = time.perf_counter()
            response = client.http.post("/api/v1/memories/recall", headers=headers, body=body)
            timings.append(time.perf_counter() - before)
            assert response.status_code == 200, response.body
    print(json.dumps({{"import": imported - started, "recalls": timings,
        "heavy_at_import": heavy_at_import}}))
    """
).format(heavy=HEAVY)
FACTS = [
    "Deploy the billing API with `make deploy STAGE=prod` from the release branch",
    "The staging database is db-stg-2 in eu-west-1",
    "Billing API health checks live at /healthz on port 8080",
    "Use pnpm, never npm, in the web repository",
    "Feature flags are read from LaunchDarkly at boot",
    "The on-call rotation changes on Mondays at 09:00 UTC",
    "Invoices are generated nightly at 02:00 UTC by the invoicer job",
    "Run the database migrations before deploying the billing API",
]


def import_seconds(project: Path, env: dict[str, str]) -> tuple[float, float]:
    """``(wall, CPU)`` seconds to ``import app`` in a fresh interpreter in ``project``."""
    done = subprocess.run(
        [sys.executable, "-c", TIME_IMPORT],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu = done.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a Lambda-like child: no bytecode writes, one BLAS thread."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PINEWORK_")}
    env.update(PYTHONDONTWRITEBYTECODE="1", OPENBLAS_NUM_THREADS="1", **extra)
    env["PYTHONPATH"] = str(REPO)
    return env


def compile_bytecode(*paths: Path) -> None:
    """Write the bytecode of ``paths`` (files or folders) as an import would, so no run
    pays for compiling source: pip compiled the libraries of both apps at install, and
    ``PYTHONDONTWRITEBYTECODE`` (set on some machines) would leave ours uncompiled."""
    for path in paths:
        if path.is_dir():
            compileall.compile_dir(path, quiet=1)
        else:
            compileall.compile_file(path, quiet=1)


def import_ratio(repeat: int) -> dict[str, float]:
    """Median import seconds (wall and CPU) of ``app`` and of the hello-world app, and
    their ratios. CPU time is the steadier figure on a shared machine: it leaves out
    the time the process waited for a core."""
    compile_bytecode(REPO / "app.py", REPO / "chalicelib")
    with tempfile.TemporaryDirectory(prefix="pinework-hello-") as folder:
        hello = Path(folder)
        (hello / "app.py").write_text(HELLO_APP)
        compile_bytecode(hello / "app.py")
        hello_env = clean_env()
        hello_env.pop("PYTHONPATH")
        import_seconds(hello, hello_env)  # warm the file cache for both
        import_seconds(REPO, clean_env())
        ours, theirs = [], []
        for _ in range(repeat):
            ours.append(import_seconds(REPO, clean_env()))
            theirs.append(import_seconds(hello, hello_env))
    figures = {}
    for index, kind in enumerate(("wall", "cpu")):
        app_median = statistics.median(run[index] for run in ours)
        hello_median = statistics.median(run[index] for run in theirs)
        figures[f"app_{kind}"] = app_median
        figures[f"hello_{kind}"] = hello_median
        figures[f"ratio_{kind}"] = app_median / hello_median
    return figures


def seeded_store(endpoint: str, count: int) -> str:
    """An agent with ``count`` facts on the embedded DynamoDB; returns its token."""
    settings = Settings(table_name="pinework-bench", dynamodb_endpoint=endpoint)
    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    create_table(client, settings.table_name)
    services = wiring.build_services(settings, client=client)
    workspace = services.admin.create_workspace("Bench")
    agent = services.admin.create_agent(workspace.id, "bench-agent")
    principal = Principal(kind=PrincipalKind.AGENT, id=agent.id, workspace_id=workspace.id)
    for number in range(count):
        text = f"{FACTS[number % len(FACTS)]} (note {number})"
        services.memories.save(principal, SaveFactRequest(text=text), RunContext())
    return agent.token


def first_recalls(endpoint: str, token: str, repeat: int) -> list[dict[str, Any]]:
    """Fresh processes: import ``app``, then three recalls; their timings."""
    env = clean_env(
        PINEWORK_TABLE_NAME="pinework-bench",
        PINEWORK_DYNAMODB_ENDPOINT=endpoint,
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
    )
    runs = []
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-c", FIRST_RECALL, token],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--facts", type=int, default=40)
    arguments = parser.parse_args()

    imports = import_ratio(arguments.repeat)
    for kind in ("wall", "cpu"):
        print(
            f"import app: {imports[f'app_{kind}'] * 1000:.0f} ms {kind}; hello-world Chalice "
            f"+ boto3: {imports[f'hello_{kind}'] * 1000:.0f} ms; ratio "
            f"{imports[f'ratio_{kind}']:.2f}x (median of {arguments.repeat} fresh processes each)"
        )

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(name, "bench")  # the embedded server takes any
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    aws = EmbeddedAWS()
    endpoint = aws.start()
    try:
        token = seeded_store(endpoint, arguments.facts)
        runs = first_recalls(endpoint, token, max(3, arguments.repeat // 3))
    finally:
        aws.stop()
    first = statistics.median(run["recalls"][0] for run in runs)
    warm = statistics.median(statistics.median(run["recalls"][1:]) for run in runs)
    loaded = sorted({name for run in runs for name in run["heavy_at_import"]})
    print(
        f"first recall after a cold import: {first * 1000:.0f} ms; warm recall: "
        f"{warm * 1000:.0f} ms; the first call pays {(first - warm) * 1000:.0f} ms "
        f"({arguments.facts} facts, embedded DynamoDB, median of {len(runs)} processes)"
    )
    print(f"heavy modules loaded by `import app`: {', '.join(loaded) or 'none'}")


if __name__ == "__main__":
    main()
