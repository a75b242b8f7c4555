"""Run one release's code against a table of given indexes on moto and print what it
answers, for the release rehearsal (``tests/unit/test_release_rehearsal.py``).

Run as ``python tests/release_driver.py TABLE.json`` with the release's tree first on
``PYTHONPATH`` and as the working folder (this checkout's or an earlier release's,
unpacked with ``git archive``): it imports only that tree's ``app``, ``chalicelib`` and
``infra``, so it must keep to what every release has (``wiring.build_services``,
``Settings``, the admin service, ``infra.iam.grants``). ``TABLE.json`` holds the
``CreateTable`` arguments. It prints one JSON object: ``routes`` (``"METHOD path"`` ->
status: every method a route has, called once as a person with an empty body),
``flow`` (the calls that read the list indexes, each ``[name, status]``) and
``queries`` (function -> the GSIs its role may query).
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

for name, value in {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "PINEWORK_RERANKER": "off",
    "PINEWORK_MODEL_SOURCE": "local",
}.items():
    os.environ[name] = value

import boto3  # noqa: E402
from moto import mock_aws  # noqa: E402

BUCKET = "rehearsal"
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def main() -> None:
    """See the module doc."""
    definition = json.loads(open(sys.argv[1]).read())  # noqa: SIM115
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**definition)
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        # the default review and lifecycle queues (Settings built here name none): reviews
        # go through the first, erasures and exports through the second (0.1.0: the first)
        sqs = boto3.client("sqs", region_name="us-east-1")
        for queue in ("pinework-reviews", "pinework-lifecycle"):
            sqs.create_queue(QueueName=queue)
        json.dump(run(client, s3, definition["TableName"]), sys.stdout)


def run(client: Any, s3: Any, table: str) -> dict[str, Any]:
    """Every route once, then a flow that reads every list index."""
    from chalice.test import Client

    from app import app
    from chalicelib import wiring
    from chalicelib.settings import Settings
    from infra import iam

    services = wiring.build_services(
        Settings(table_name=table, bucket_name=BUCKET, read_concurrency=1), client=client, s3=s3
    )
    wiring.install(services)
    workspace = services.admin.create_workspace("Rehearsal")
    agent = services.admin.create_agent(workspace.id, "builder")
    person = services.admin.create_person(workspace.id, "ana@example.com")
    ids = {"agent_id": agent.id, "workspace_id": workspace.id}

    def call(method: str, path: str, token: str, body: Any = None) -> int:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
        payload = json.dumps(body).encode() if body is not None else b""
        return int(http.request(method, path, headers=headers, body=payload).status_code)

    with Client(app) as test_client:
        http = test_client.http
        flow = []
        saved = call("POST", "/api/v1/memories", agent.token, {"text": "Deploys need the VPN"})
        flow.append(["remember", saved])
        for name, path, token in (
            ("list", "/api/v1/memories", agent.token),  # byWorkspaceShard and byAgentKind
            ("list by agent", f"/api/v1/memories?agentId={agent.id}", person.token),
            ("list by status", "/api/v1/memories?status=archived&all=true", person.token),
            ("routines", "/api/v1/routines", person.token),  # byRoutineStatus
            ("pending reviews", "/api/v1/reviews/pending", person.token),
        ):
            flow.append([name, call("GET", path, token)])
        recall = {"query": "VPN", "agentId": agent.id}
        flow.append(["recall", call("POST", "/api/v1/memories/recall", agent.token, recall)])
        routes = {}
        for path, methods in sorted(app.routes.items()):
            filled = PLACEHOLDER.sub(lambda found: ids.get(found.group(1), "x1"), path)
            for method, entry in sorted(methods.items()):
                if entry.view_name.startswith("not_allowed") or method == "HEAD":
                    continue  # the 405 every route answers for a method it has not
                body: dict[str, Any] | None = {} if method in ("POST", "PUT", "PATCH") else None
                routes[f"{method} {path}"] = call(method, filled, person.token, body)
    queries = {
        function: sorted(
            str(resource["Fn::Sub"][0]).rsplit("/index/", 1)[1]
            for grant in iam.grants(function)
            if "dynamodb:Query" in grant.actions
            for resource in grant.resources
            if "/index/" in str(resource)
        )
        for function in iam.FUNCTIONS
    }
    return {"routes": routes, "flow": flow, "queries": queries}


if __name__ == "__main__":
    main()
