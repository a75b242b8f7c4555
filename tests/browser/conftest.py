"""Real-browser fixtures (docs/reference.md#13-dashboard, docs/issues.md#issue-13): Debian's
Chromium driven by Playwright against the local server (``python -m infra.local_server``) on free
ports with its own data folder, seeded with ``tests/browser/seed.py``.

Playwright's own browser download is never used (it is not reachable here): the
browser is ``/usr/bin/chromium`` (``apt-get install -y chromium``). Without it the
tests skip with a message, except in CI (``CI`` set, as ``.ci/run`` does), where a
missing browser fails them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.support import CHROMIUM, CHROMIUM_ARGS, CSP_PROBE, REPO, Server
from tests.helpers import LocalServer


def _browser_or_skip() -> None:
    if CHROMIUM.exists():
        return
    message = f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"
    if os.environ.get("CI"):
        pytest.fail(f"{message}: CI must run the browser tests.")
    pytest.skip(message)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``python -m infra.local_server`` on free ports with its own data, seeded."""
    _browser_or_skip()
    data_dir = tmp_path_factory.mktemp("dashboard-data")
    running = LocalServer(
        data_dir,
        {
            "OPENBLAS_NUM_THREADS": "1",
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_DEFAULT_REGION": "us-east-1",
        },
    )
    try:
        banner = running.start(timeout=180).splitlines()
        link = next(line.split(": ", 1)[1].strip() for line in banner if "one-time link" in line)
        endpoint = f"http://127.0.0.1:{running.dynamodb_port}"
        demo = json.loads((data_dir / "demo.json").read_text(encoding="utf-8"))
        seeded = subprocess.run(
            [sys.executable, "-m", "tests.browser.seed", endpoint, str(data_dir / "demo.json")],
            cwd=REPO,
            env=running.env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert seeded.returncode == 0, seeded.stderr
        yield Server(
            url=f"http://127.0.0.1:{running.api_port}",
            endpoint=endpoint,
            data_dir=data_dir,
            demo=demo,
            link=link,
            seeded=json.loads(seeded.stdout.strip().splitlines()[-1]),
        )
    finally:
        running.stop()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Debian's Chromium through Playwright (never Playwright's own download).

    Module-scoped: Playwright's sync API keeps an event loop running on the main
    thread while it is open, and later tests call ``asyncio.run`` (the MCP client)."""
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A fresh browser context (no cookies) at 1280x800, counting CSP violations,
    page errors and dialogs (none may happen)."""
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    context.add_init_script(CSP_PROBE)
    opened = context.new_page()
    opened.errors = []
    opened.dialogs = []
    opened.on("pageerror", lambda error: opened.errors.append(str(error)))

    def dismiss(dialog: Any) -> None:
        opened.dialogs.append(dialog.message)
        dialog.dismiss()

    opened.on("dialog", dismiss)
    yield opened
    context.close()
