"""The real local server as a child process (``python -m infra.local_server``, what
``make serve`` runs) on free ports with its own data folder: the end-to-end tests, the
browser tests and ``bench/recall_scale.py`` start it the same way.

Tests run on parallel workers (``make test``), each starting its own servers: a port
found free may be taken by another process before the server binds it, so a start
refused for a taken port is tried again on new ports (``START_ATTEMPTS``)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


START_ATTEMPTS = 3
"""How many times ``LocalServer.start`` tries, on new ports, when a port is taken."""
PORT_TAKEN = ("Cannot use 127.0.0.1:", "Cannot serve the API on")
"""The local server's messages for a port taken when it binds (``infra/local_server.py``)."""


def free_port(*taken: int) -> int:
    """A TCP port free on loopback right now, none of ``taken``."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in taken:
            return port


class LocalServer:
    """Starts and stops `python -m infra.local_server` with its own ports and data.

    Args:
        data_dir: the server's data folder (``PINEWORK_DATA_DIR``).
        extra_env: variables added to the server's environment.
    """

    def __init__(self, data_dir: Path, extra_env: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.extra_env = dict(extra_env or {})
        self.api_port = free_port()
        self.dynamodb_port = free_port(self.api_port)
        self.process: subprocess.Popen[str] | None = None
        self.output: deque[str] = deque(maxlen=2000)

    @property
    def env(self) -> dict[str, str]:
        """The server's environment: its ports and data folder."""
        return {
            **os.environ,
            **self.extra_env,
            "PINEWORK_PORT": str(self.api_port),
            "PINEWORK_DYNAMODB_PORT": str(self.dynamodb_port),
            "PINEWORK_DATA_DIR": str(self.data_dir),
        }

    def start(self, timeout: float = 120) -> str:
        """Start the server and wait for its banner (at most ``timeout`` seconds a try);
        return the banner. A start refused for a taken port is tried again on two new ports, at
        most ``START_ATTEMPTS`` times in all; any other failure raises ``RuntimeError``
        with the server's output."""
        for _ in range(START_ATTEMPTS - 1):
            try:
                return self._start_once(timeout)
            except RuntimeError as error:
                if not any(message in str(error) for message in PORT_TAKEN):
                    raise
            self.api_port = free_port()
            self.dynamodb_port = free_port(self.api_port)
        return self._start_once(timeout)

    def _start_once(self, timeout: float) -> str:
        """One start on the current ports (see ``start``)."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "infra.local_server"],
            cwd=REPO_ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        banner = []
        deadline = time.monotonic() + timeout
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            banner.append(line)
            if "Press Ctrl+C" in line:
                self._keep_reading(self.process.stdout)
                return "".join(banner)
        self.stop()
        raise RuntimeError("local server did not start:\n" + "".join(banner))

    def _keep_reading(self, stdout: Any) -> None:
        """Read the server's output from now on (the last 2,000 lines stay in
        ``output``): it logs every request, and a full pipe would stop it mid-write."""

        def pump() -> None:
            for line in stdout:
                self.output.append(line)

        threading.Thread(target=pump, daemon=True).start()

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 20 s) and close its output pipe;
        the data folder stays."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None

    def demo(self) -> dict[str, str]:
        """The demo workspace's ids and tokens the server wrote at its first start."""
        return dict(json.loads((self.data_dir / "demo.json").read_text()))
