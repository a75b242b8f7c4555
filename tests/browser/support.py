"""Helpers of the real-browser tests (the fixtures are in ``conftest.py``): the running
server's description, signing in, screenshots, axe-core, the session's stored key."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("PINEWORK_CHROMIUM", "/usr/bin/chromium"))
"""Debian's Chromium (``apt-get install -y chromium``); Playwright's own is never used."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = REPO / "build" / "screenshots"
AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
CSP_PROBE = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || ''));
});
"""
"""Counts the page's CSP violations (an init script: it runs before the page's own)."""


@dataclass
class Server:
    """The running local server and what the seed made."""

    url: str
    endpoint: str
    data_dir: Path
    demo: dict[str, str]
    link: str
    seeded: dict[str, Any] = field(default_factory=dict)

    def agent(self, name: str) -> str:
        """The id of a seeded agent (``builder`` is the demo agent)."""
        return str(self.seeded["agents"][name])

    def table(self) -> Any:
        """A boto3 DynamoDB client on the server's embedded DynamoDB."""
        return boto3.client(
            "dynamodb",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id="local",
            aws_secret_access_key="local",
        )

    def admin(self, monkeypatch: Any) -> Any:
        """``pinework admin``'s service on the server's embedded DynamoDB (its dummy
        credentials set for the test with ``monkeypatch``)."""
        from pinework.admin import open_admin_service

        for name, value in (("AWS_ACCESS_KEY_ID", "local"), ("AWS_SECRET_ACCESS_KEY", "local")):
            monkeypatch.setenv(name, value)
        return open_admin_service({"PINEWORK_DYNAMODB_ENDPOINT": self.endpoint})


def sign_in(page: Any, server: Server, token: str | None = None) -> None:
    """Sign in through the form with a token (the demo person's by default)."""
    page.goto(server.url + "/sign-in")
    page.get_by_label("Your person token").fill(token or server.demo["personToken"])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(server.url + "/")


def screenshot(page: Any, name: str) -> Path:
    """Save the page as ``build/screenshots/<name>.png`` (a test artifact)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's serious and critical findings on the current page (vendored
    ``axe.min.js``, evaluated by the test, not served by the app)."""
    page.evaluate(AXE.read_text(encoding="utf-8"))
    found = page.evaluate(
        """async () => {
          const result = await axe.run(document, {resultTypes: ['violations']});
          return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 5).map(n => n.target.join(' '))}));
        }"""
    )
    return [item for item in found if item["impact"] in ("serious", "critical")]


def session_hash(page: Any) -> str:
    """The stored key of the page's session: SHA-256 of its (HttpOnly) cookie."""
    cookie = next(c for c in page.context.cookies() if c["name"] == "pinework_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    return hashlib.sha256(cookie["value"].encode()).hexdigest()
