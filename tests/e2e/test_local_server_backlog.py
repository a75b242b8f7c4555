"""The local server's listening socket queues a burst of new connections (docs/issues.md#issue-14):
with the standard library's backlog of 5, 23-28 of 50 simultaneous connections
were reset. Here the accept loop is held back while 64 clients connect, so the
queue alone must hold them; then every one gets its answer."""

from __future__ import annotations

import selectors
import socket
import threading
import time

from chalice import Chalice

from infra.local_server import LISTEN_BACKLOG, _local_api_server
from tests.helpers import free_port

CLIENTS = 64


def test_the_backlog_takes_at_least_128() -> None:
    assert LISTEN_BACKLOG >= 128


def test_64_simultaneous_connections_are_queued_and_answered() -> None:
    app = Chalice(app_name="backlog-probe")

    @app.route("/ping")
    def ping() -> dict[str, bool]:
        return {"pong": True}

    port = free_port()
    server = _local_api_server(app, port)  # bound and listening; not accepting yet
    clients = [socket.socket() for _ in range(CLIENTS)]
    serving = threading.Thread(target=server.server.serve_forever, daemon=True)
    try:
        for client in clients:
            client.setblocking(False)
            client.connect_ex(("127.0.0.1", port))
        connected = _connected_within(clients, seconds=3.0)
        assert connected == CLIENTS  # a SYN that finds the queue full goes unanswered

        serving.start()
        answers = []
        for client in clients:
            client.setblocking(True)
            client.settimeout(20)
            client.sendall(b"GET /ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        for client in clients:
            answers.append(_read_all(client))  # a reset raises ConnectionResetError
        assert all(answer.startswith(b"HTTP/1.1 200") for answer in answers)
        assert all(answer.endswith(b'{"pong":true}') for answer in answers)
    finally:
        for client in clients:
            client.close()
        if serving.is_alive():
            server.server.shutdown()  # waits for serve_forever, so only once it runs
        server.server.server_close()


def _connected_within(clients: list[socket.socket], seconds: float) -> int:
    """How many non-blocking connects complete (the socket becomes writable with no
    error) within ``seconds``."""
    selector = selectors.DefaultSelector()
    for client in clients:
        selector.register(client, selectors.EVENT_WRITE)
    done = 0
    deadline = time.monotonic() + seconds
    while done < len(clients) and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=max(0.0, deadline - time.monotonic())):
            client = key.fileobj
            assert isinstance(client, socket.socket)
            selector.unregister(client)
            if client.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                done += 1
    selector.close()
    return done


def _read_all(client: socket.socket) -> bytes:
    chunks = []
    while chunk := client.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)
