"""A fake Pinework API on ``httpx.MockTransport``, and wire shapes, for the client and CLI tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

BASE_URL = "http://pinework.test"
API = "/api/v1"

Handler = Callable[[httpx.Request], httpx.Response]


@dataclass
class FakeApi:
    """Routes ``(method, path)`` to canned responses and records every request."""

    routes: dict[tuple[str, str], Handler] = field(default_factory=dict)
    requests: list[httpx.Request] = field(default_factory=list)

    def on(
        self,
        method: str,
        path: str,
        status: int = 200,
        body: Any = None,
        *,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer ``method`` ``/api/v1{path}`` with ``body`` as JSON (or raw ``content``)."""

        def handler(request: httpx.Request) -> httpx.Response:
            if content is not None:
                return httpx.Response(status, content=content, headers=headers)
            return httpx.Response(status, json=body, headers=headers)

        self.routes[(method, API + path)] = handler

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        # The raw (still percent-encoded) path, so that an escaped "/" stays one segment.
        path = request.url.raw_path.split(b"?", 1)[0].decode("ascii")
        handler = self.routes.get((request.method, path))
        if handler is None:
            return httpx.Response(
                404,
                json={"error": {"code": "no_route", "message": f"{request.method} {request.url}"}},
            )
        return handler(request)

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    @property
    def last(self) -> httpx.Request:
        assert self.requests, "no request was sent"
        return self.requests[-1]

    def last_json(self) -> Any:
        return json.loads(self.last.content)


def memory_json(**overrides: Any) -> dict[str, Any]:
    """A memory object as docs/reference.md#3-the-memory-object puts it on the wire."""
    memory: dict[str, Any] = {
        "id": "mem_01JABCDEF0000000000000000",
        "object": "memory",
        "agentId": "agt_1",
        "kind": "fact",
        "date": None,
        "text": "The deploy bucket is in eu-west-1.",
        "expiresAt": "2026-04-01T00:00:00Z",
        "expired": False,
        "status": "active",
        "archiveReason": None,
        "archivedAt": None,
        "supersedes": None,
        "supersededBy": None,
        "runId": "run_01",
        "taskKey": "PIN-42",
        "savedByAgentId": "agt_1",
        "editedByPersonId": None,
        "recallCount": 2,
        "lastRecalledAt": None,
        "createdAt": "2026-01-01T10:00:00Z",
        "updatedAt": "2026-01-01T10:00:00Z",
    }
    memory.update(overrides)
    return memory
