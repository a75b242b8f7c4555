"""The real CLI against the real local server (docs/issues.md#issue-2): `python -m
infra.local_server` in a subprocess on free ports with a temporary data folder, restarted once to
prove stored data survives."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from tests.helpers import REPO, LocalServer, cli


def test_cli_against_local_server_and_data_survives_restart(server: LocalServer) -> None:
    banner = server.start()
    demo = server.demo()
    assert f"export PINEWORK_TOKEN={demo['agentToken']}" in banner
    assert f"export PINEWORK_API_URL=http://127.0.0.1:{server.api_port}" in banner
    agent = demo["agentToken"]
    unknown = httpx.get(f"http://127.0.0.1:{server.api_port}/api/v1/nothing", timeout=10)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    # A browser at an address with no page gets the dashboard's 404 page, not JSON; the
    # API's unknown paths stay JSON whatever the browser accepts.
    html = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    page = httpx.get(f"http://127.0.0.1:{server.api_port}/agent/typo", headers=html, timeout=10)
    assert page.status_code == 404 and page.headers["Content-Type"].startswith("text/html")
    assert "no dashboard page at this address" in page.text and "/sign-in" in page.text
    api_path = httpx.get(f"http://127.0.0.1:{server.api_port}/api/v1/x", headers=html, timeout=10)
    assert api_path.status_code == 404 and api_path.json()["error"]["code"] == "not_found"
    traced = httpx.request("TRACE", f"http://127.0.0.1:{server.api_port}/api/v1/memories")
    assert traced.status_code == 405 and traced.json()["error"]["code"] == "method_not_allowed"
    chunked = httpx.post(
        f"http://127.0.0.1:{server.api_port}/api/v1/memories",
        headers={"Authorization": f"Bearer {agent}", "Content-Type": "application/json"},
        content=iter([b'{"text": "sent in ', b'chunks"}']),  # an iterator is sent chunked
    )
    assert chunked.status_code == 201 and chunked.json()["text"] == "sent in chunks"
    assert_raw_http_edges(server.api_port, agent)

    saved = cli(server, agent, "memory", "save", "Deploys need the VPN", "--json", task="PIN-9")
    assert saved.returncode == 0, saved.stderr
    fact = json.loads(saved.stdout)
    assert fact["text"] == "Deploys need the VPN" and fact["taskKey"] == "PIN-9"

    day = cli(server, agent, "memory", "day", "shipped it", "--json", task="PIN-9")
    assert day.returncode == 0 and "[PIN-9] shipped it" in json.loads(day.stdout)["text"]

    recalled = cli(server, agent, "memory", "recall", "--query", "VPN deploys", "--json")
    assert recalled.returncode == 0, recalled.stderr
    assert json.loads(recalled.stdout)["memories"][0]["memory"]["id"] == fact["id"]

    started = cli(
        server, agent, "memory", "start", "--session", "s1", "--task", "VPN deploys", task="PIN-9"
    )
    assert started.returncode == 0 and started.stdout.startswith("--- MEMORY ---")
    assert fact["id"] in started.stdout
    again = cli(server, agent, "memory", "start", "--session", "s1", "--resumed")
    assert again.returncode == 0 and "skipped: resumed_session_recalled" in again.stdout
    log = cli(
        server, demo["personToken"], "memory", "recalls", "--agent", demo["agentId"], "--json"
    )
    assert log.returncode == 0, log.stderr
    assert [e["kind"] for e in json.loads(log.stdout)["data"]] == ["start", "on_demand"]

    missing = cli(server, agent, "memory", "show", "mem_01JD0000000000000000000000")
    assert missing.returncode == 1 and "memory_not_found" in missing.stderr

    no_reason = cli(server, agent, "memory", "archive", fact["id"])
    assert no_reason.returncode != 0

    person = demo["personToken"]
    vetoed = cli(server, person, "memory", "veto", fact["id"], "--json")
    assert vetoed.returncode == 0 and json.loads(vetoed.stdout)["archiveReason"] == "vetoed"
    back = cli(server, agent, "memory", "unarchive", fact["id"], "--json")
    assert back.returncode == 1
    assert json.loads(back.stdout)["error"]["code"] == "memory_veto_human_only"

    workspace = cli(server, "", "admin", "create-workspace", "--name", "Acme", "--json")
    assert workspace.returncode == 0, workspace.stderr
    workspace_id = json.loads(workspace.stdout)["id"]
    issued = cli(
        server, "", "admin", "create-agent", "--workspace", workspace_id, "--name", "b", "--json"
    )
    new_agent = json.loads(issued.stdout)
    assert new_agent["id"].startswith("agt_") and new_agent["token"]
    listed = cli(server, new_agent["token"], "memory", "list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout)["data"] == []

    server.stop()
    banner = server.start()
    assert server.demo() == demo  # the same demo principals, not new ones
    shown = cli(server, person, "memory", "show", fact["id"], "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["archiveReason"] == "vetoed"
    history = cli(server, person, "memory", "history", fact["id"], "--json")
    assert [r["action"] for r in json.loads(history.stdout)["data"]] == ["create", "veto"]
    still = cli(server, new_agent["token"], "memory", "list", "--json")
    assert still.returncode == 0  # tokens issued by admin survive too

    # With no endpoint given, the admin commands find this moved server (its ports are not
    # the defaults) through its record in the data folder (docs/operators.md).
    moved = {
        name: value
        for name, value in server.env.items()
        if name not in ("PINEWORK_DYNAMODB_PORT", "PINEWORK_DYNAMODB_ENDPOINT")
    }
    executable = shutil.which("pinework", path=str(Path(sys.executable).parent)) or "pinework"
    found = subprocess.run(
        [executable, "admin", "create-workspace", "--name", "Moved", "--json"],
        env=moved,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["id"].startswith("wsp_")


def test_a_second_server_on_the_same_data_folder_refuses_to_start(server: LocalServer) -> None:
    # A port taken between LocalServer's choice and the server's bind (another test
    # worker's server) is tried again on new ports (infra/local_process.py).
    with socket.socket() as holder:
        taken = server.dynamodb_port
        holder.bind(("127.0.0.1", taken))
        holder.listen()
        server.start()
    assert server.dynamodb_port != taken
    assert httpx.get(f"http://127.0.0.1:{server.api_port}/api/v1/openapi.json").status_code == 200
    second = LocalServer(server.data_dir)
    result = subprocess.run(
        [sys.executable, "-m", "infra.local_server"],
        cwd=REPO,
        env=second.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    assert "Another local server is using" in result.stderr


def test_a_bad_or_taken_port_stops_the_server_before_it_writes_anything(tmp_path: Path) -> None:
    blocked = LocalServer(tmp_path / "data")

    def run(**env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "infra.local_server"],
            cwd=REPO,
            env={**blocked.env, **env},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    result = run(PINEWORK_PORT="abc")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "PINEWORK_PORT must be a port number from 1 to 65535, not 'abc'" in result.stderr
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", blocked.dynamodb_port))
        holder.listen()
        result = run()
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "set PINEWORK_DYNAMODB_PORT to a free port" in result.stderr
    result = run(PINEWORK_PORT=str(blocked.dynamodb_port))
    assert result.returncode != 0 and "need two different ports" in result.stderr
    assert not blocked.data_dir.exists()  # no demo tokens for a server that never ran


def _exchange(port: int, request: bytes) -> bytes:
    """Send raw bytes on one connection and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
        return received


def assert_raw_http_edges(port: int, token: str) -> None:
    """HEAD answers carry no body, so a kept-alive connection stays in step; a
    Content-Length that is not a number, or a chunked body with a malformed chunk size, is
    a 400 envelope, not a dropped connection."""
    auth = f"Authorization: Bearer {token}\r\n".encode()
    head = b"HEAD /api/v1/memories HTTP/1.1\r\nHost: x\r\n" + auth + b"\r\n"
    get = b"GET /api/v1/memories HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + auth + b"\r\n"
    answer = _exchange(port, head + get)
    first, _, rest = answer.partition(b"\r\n\r\n")
    assert first.startswith(b"HTTP/1.1 405")  # GET-only routes: HEAD is not allowed
    assert rest.startswith(b"HTTP/1.1 200"), rest[:80]  # no stray body in between
    for length in (
        b"abc",
        b"99999999999999999999999",
        "\u00b2".encode("latin-1"),
        b"2\r\nContent-Length: 5",
    ):
        bad_length = b"POST /api/v1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: " + length
        answer = _exchange(port, bad_length + b"\r\n" + auth + b"\r\n{}")
        assert answer.startswith(b"HTTP/1.1 400"), (length, answer[:60])
        body = json.loads(answer.partition(b"\r\n\r\n")[2])
        assert body["error"]["code"] == "invalid_request"
    chunked = b"POST /api/v1/memories HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
    for malformed in (
        b"zz\r\n{}\r\n0\r\n\r\n",
        b"-1\r\n",
        b"5\r\n{}\r\n0\r\n\r\n",
        b"FFFFFFFFF\r\n",
    ):
        answer = _exchange(port, chunked + auth + b"\r\n" + malformed)
        assert answer.startswith(b"HTTP/1.1 400"), (malformed, answer[:60])
        body = json.loads(answer.partition(b"\r\n\r\n")[2])
        assert body["error"]["code"] == "invalid_request" and "chunk" in body["error"]["message"]
