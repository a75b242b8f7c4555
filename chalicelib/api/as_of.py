"""The as-of answers of ``GET /memories`` and ``GET /memories/{id}``
(docs/reference.md#as-of-a-moment): render what ``MemoryAsOf`` rebuilt. The routes stay in
``memories.py``; they hand over here when the query string has ``asOf``."""

from __future__ import annotations

from typing import Any

from chalice.app import Response

from chalicelib.api.context import CallContext
from chalicelib.api.http import json_response, validate
from chalicelib.models.as_of import AsOfListQuery
from chalicelib.models.responses import MemoryList, MemoryObject
from chalicelib.services.paging import encode_next_token


def as_of_memory(call: CallContext, memory_id: str, as_of: str) -> Response:
    """One memory as it was at ``as_of``: the memory object, ``expired`` as of then, no
    ``ETag`` (it names no version a change could be made over).

    Raises:
        AsOfInvalid, AsOfInFuture, AsOfBeforeWorkspace, MemoryNotFound, MemoryNotOwn.
    """
    then, moment = call.services.as_of.get(call.principal, memory_id, as_of)
    return json_response(then.to_wire(moment))


def as_of_list(call: CallContext, params: dict[str, Any]) -> Response:
    """A page of one agent's memories as they were at ``asOf``, newest first, as
    ``MemoryList``.

    Raises:
        InvalidRequest (the query), AsOfInvalid, AsOfInFuture, AsOfBeforeWorkspace,
        MemoryNotOwn, MemoryAgentRequired, Forbidden.
    """
    query = validate(params, AsOfListQuery)
    page = call.services.as_of.list(call.principal, query)
    return json_response(
        MemoryList(
            data=[
                MemoryObject.model_validate(memory.to_wire(page.moment)) for memory in page.memories
            ],
            next_token=encode_next_token(page.continue_after),
        ).wire()
    )
