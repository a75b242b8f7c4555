"""The local server: ``make serve`` runs ``python -m infra.local_server``.

It starts the embedded DynamoDB on loopback (moto, no AWS account, no Docker)
with its journal in the git-ignored ``.pinework-local/`` folder, creates the
table, bootstraps a demo workspace with one agent and one person (kept across
restarts), prints their tokens and the ``export`` lines for the CLI, and serves
the Chalice app on http://127.0.0.1:8000.

Environment: ``PINEWORK_PORT`` (API, default 8000), ``PINEWORK_DYNAMODB_PORT``
(embedded DynamoDB, default 8001), ``PINEWORK_DATA_DIR`` (default
``.pinework-local`` in the checkout).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import boto3

from infra.local_dynamodb import EmbeddedAWS
from infra.tables import create_table
from infra.template import NOT_FOUND_BODY

REPO = Path(__file__).resolve().parent.parent
TABLE = "pinework-local"
HOST = "127.0.0.1"


def _ensure_demo(data_dir: Path, settings: Any) -> dict[str, str]:
    """Create the demo workspace, agent and person once; reuse them afterwards."""
    from chalicelib.wiring import build_admin_service

    demo_file = data_dir / "demo.json"
    admin = build_admin_service(settings)
    if demo_file.exists():
        demo: dict[str, str] = json.loads(demo_file.read_text())
        if admin.workspace_exists(demo["workspaceId"]):
            return demo
    workspace = admin.create_workspace("Demo")
    agent = admin.create_agent(workspace.id, "demo-agent")
    person = admin.create_person(workspace.id, "demo@example.com")
    demo = {
        "workspaceId": workspace.id,
        "agentId": agent.id,
        "agentToken": agent.token,
        "personId": person.id,
        "personToken": person.token,
    }
    demo_file.write_text(json.dumps(demo, indent=2))
    return demo


def _banner(api_url: str, endpoint: str, demo: dict[str, str], replayed: int) -> str:
    return "\n".join(
        [
            "",
            "Pinework Memory — local server",
            f"  API:                {api_url}/api/v1",
            f"  embedded DynamoDB:  {endpoint} (replayed {replayed} stored writes)",
            f"  workspace:          {demo['workspaceId']}",
            f"  demo agent:         {demo['agentId']}",
            f"  demo person:        {demo['personId']}",
            "",
            "Use the CLI as the demo agent:",
            f"  export PINEWORK_API_URL={api_url}",
            f"  export PINEWORK_TOKEN={demo['agentToken']}",
            "As the demo person instead:",
            f"  export PINEWORK_TOKEN={demo['personToken']}",
            "",
            "Press Ctrl+C to stop; data stays in the data folder.",
            "",
        ]
    )


def _lock_data_dir(data_dir: Path) -> Any:
    """Hold an exclusive lock on the data folder for the server's life.

    Two servers replaying and appending one journal would diverge and lose
    acknowledged writes, so a second one refuses to start.
    """
    handle = (data_dir / "server.lock").open("w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(
            f"Another local server is using {data_dir}. Stop it, or give this one its own "
            "folder with PINEWORK_DATA_DIR."
        )
    return handle


def _local_api_server(app: Any, port: int) -> Any:
    """Chalice's threaded local server, with unknown routes answered in our envelope
    (as the deployed API's GatewayResponse does, see ``infra/template.py``)."""
    from chalice.config import Config
    from chalice.local import (
        ChaliceRequestHandler,
        CustomLocalChalice,
        ForbiddenError,
        LocalChalice,
        LocalDevServer,
    )

    class EnvelopeRequestHandler(ChaliceRequestHandler):  # type: ignore[misc]
        def _send_error_response(self, error: Any) -> None:
            if isinstance(error, ForbiddenError):
                body = json.dumps(NOT_FOUND_BODY).encode()
                self._send_http_response(404, {"Content-Type": "application/json"}, body)
                return
            super()._send_error_response(error)

    # What chalice.local.create_local_server does, with our handler.
    CustomLocalChalice.__bases__ = (LocalChalice, app.__class__)
    app.__class__ = CustomLocalChalice
    return LocalDevServer(
        app, Config.create(chalice_stage="local"), HOST, port, handler_cls=EnvelopeRequestHandler
    )


def main() -> None:
    """Start everything and serve until interrupted."""
    api_port = int(os.environ.get("PINEWORK_PORT", "8000"))
    dynamodb_port = int(os.environ.get("PINEWORK_DYNAMODB_PORT", "8001"))
    data_dir = Path(os.environ.get("PINEWORK_DATA_DIR", REPO / ".pinework-local"))
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = _lock_data_dir(data_dir)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)

    aws = EmbeddedAWS(HOST, dynamodb_port, journal=data_dir / "dynamodb.journal")
    endpoint = aws.start()
    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    create_table(client, TABLE)
    os.environ["PINEWORK_TABLE_NAME"] = TABLE
    os.environ["PINEWORK_DYNAMODB_ENDPOINT"] = endpoint

    from chalicelib.settings import Settings

    demo = _ensure_demo(data_dir, Settings.from_env())

    sys.path.insert(0, str(REPO))
    from app import app

    try:
        server = _local_api_server(app, api_port)
    except OSError as error:
        aws.stop()
        sys.exit(
            f"Cannot serve the API on {HOST}:{api_port} ({error.strerror}); "
            "stop what uses it or set PINEWORK_PORT."
        )
    api_url = f"http://{HOST}:{api_port}"
    print(_banner(api_url, endpoint, demo, aws.replayed), flush=True)

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.server.serve_forever()
    finally:
        aws.stop()
        lock.close()
        print("Pinework Memory local server stopped.", flush=True)


if __name__ == "__main__":
    main()
