"""The TypeScript client (docs/integrations/typescript.md, docs/issues.md#issue-27-item-5): its
committed OpenAPI document is the app's, its types are what openapi-typescript makes of that
document, it type-checks and its Node tests pass, and its example saves and recalls a fact
against the real local server.

The Node tests run on a copy of ``clients/typescript`` (``npm ci`` there), never touching the
checkout's ``node_modules``. Without ``node`` and ``npm`` they fail: CI installs them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import pinework
from scripts import typescript_client
from tests.helpers import LocalServer

FACT = "The uploader sends 8 MiB chunks and retries a failed chunk 5 times with backoff."
NPM_QUIET = {"npm_config_fund": "false", "npm_config_audit": "false"}


def require_node() -> None:
    """Fail (not skip) the calling test when Node.js or npm is missing."""
    missing = [name for name in ("node", "npm", "npx") if shutil.which(name) is None]
    if missing:
        pytest.fail(
            f"{', '.join(missing)} not on PATH: install nodejs (20 or later) and npm to test "
            "the TypeScript client (CI installs them)",
            pytrace=False,
        )


def run(command: list[str], cwd: Path, **env: str) -> str:
    """Run ``command`` in ``cwd``; its output, or a failure of the test with that output."""
    done = subprocess.run(
        command,
        cwd=cwd,
        env={**os.environ, **NPM_QUIET, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = done.stdout + done.stderr
    if done.returncode != 0:
        pytest.fail(f"`{' '.join(command)}` exited {done.returncode}:\n{output[-4000:]}")
    return output


@pytest.fixture(scope="module")
def copy_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for the module's copy of the client (made by ``installed``)."""
    return tmp_path_factory.mktemp("typescript")


def installed(root: Path) -> Path:
    """``clients/typescript`` copied under ``root`` with ``npm ci`` run (once per module)."""
    require_node()
    client = root / "client"
    if not (client / "node_modules" / ".package-lock.json").is_file():
        shutil.rmtree(client, ignore_errors=True)
        shutil.copytree(
            typescript_client.CLIENT,
            client,
            ignore=shutil.ignore_patterns("node_modules", "dist"),
        )
        run(["npm", "ci"], client)
    return client


def built(root: Path) -> Path:
    """The installed copy with ``npm run build`` (strict ``tsc``) run."""
    client = installed(root)
    if not (client / "dist" / "examples" / "quickstart.js").is_file():
        run(["npm", "run", "build"], client)
    return client


def test_the_committed_document_is_the_apps() -> None:
    committed = typescript_client.DOCUMENT.read_text(encoding="utf-8")
    assert committed == typescript_client.document_text(), (
        "clients/typescript/openapi.json is not the app's OpenAPI document: run "
        "`python scripts/typescript_client.py write` (it also regenerates src/schema.d.ts)"
    )


def test_the_types_are_generated_from_the_document_and_the_client_builds_and_passes(
    copy_root: Path,
) -> None:
    client = installed(copy_root)
    document = typescript_client.DOCUMENT.read_text(encoding="utf-8")
    generated = typescript_client.schema_text(document, client=client)
    assert generated == typescript_client.SCHEMA.read_text(encoding="utf-8"), (
        "clients/typescript/src/schema.d.ts is not what openapi-typescript makes of "
        "openapi.json: run `python scripts/typescript_client.py write`"
    )
    run(["npm", "run", "build"], client)
    output = run(["npm", "test"], client)
    passed = re.search(r"^# pass (\d+)$", output, re.MULTILINE)
    assert passed and int(passed.group(1)) >= 5 and "\n# fail 0\n" in output, output


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LocalServer]:
    """The real local server (``make serve``) on free ports with its own data folder."""
    running = LocalServer(tmp_path / "data")
    running.start()
    yield running
    running.stop()


def test_the_example_saves_and_recalls_a_fact_on_the_local_server(
    copy_root: Path, server: LocalServer
) -> None:
    client = built(copy_root)
    url = f"http://127.0.0.1:{server.api_port}"
    token = server.demo()["agentToken"]
    output = run(
        ["node", "dist/examples/quickstart.js"],
        client,
        PINEWORK_API_URL=url,
        PINEWORK_TOKEN=token,
        PINEWORK_EXAMPLE_FACT=FACT,
    )
    saved, _, rest = output.partition("\n")
    assert saved.startswith("saved mem_") and saved.endswith(f": {FACT}"), output
    assert FACT in rest.partition("\n")[2], f"the recall block lacks the fact:\n{output}"
    memory_id = saved.removeprefix("saved ").partition(":")[0]
    with pinework.Client(url, token=token) as reader:
        memory = reader.get_memory(memory_id)
        assert (memory.text, memory.task_key, memory.run_id) == (FACT, "PIN-42", "run_quickstart")
        assert memory.recall_count == 1
