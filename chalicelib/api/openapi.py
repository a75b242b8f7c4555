"""``GET /api/v1/openapi.json``: the OpenAPI 3.1 document of the API (docs/issues.md#issue-15,
docs/reference.md#14-operations), without authentication. The document is built by
``chalicelib/api/openapi_document.py`` on the first request, once per process:
its imports (the operation table, JSON schema generation) are not paid at cold start.
"""

from __future__ import annotations

import functools
from typing import Any

from chalice.app import Blueprint, Response

from chalicelib.api.http import ANY_CONTENT, endpoint, json_response, reject_other_methods

openapi_api = Blueprint(__name__)


@openapi_api.route("/openapi.json", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def openapi_document() -> Response:
    """The OpenAPI 3.1 document (no authentication)."""
    return json_response(document_for(openapi_api.current_app))


reject_other_methods(openapi_api, {"/openapi.json": ["GET"]})


@functools.cache
def document_for(app: Any) -> dict[str, Any]:
    """The document of a Chalice app, built once per app (routes do not change)."""
    from chalicelib.api.openapi_document import build_document

    return build_document(app.routes)
