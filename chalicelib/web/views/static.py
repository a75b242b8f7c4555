"""The dashboard's own static files (docs/reference.md#13-dashboard: vendored, served by the app, no
CDN).

Only the files listed here are served, as text (API Gateway passes text bodies
through; none of them is binary). A URL carrying the file's current version
(``?v=<hash>``, as every page writes it) may be cached for a year.
"""

from __future__ import annotations

from chalicelib.errors import NotFound
from chalicelib.web.http import WebRequest, WebResponse
from chalicelib.web.render import STATIC, asset_version
from chalicelib.wiring import Services

CONTENT_TYPES = {
    "dashboard.css": "text/css; charset=utf-8",
    "dashboard.js": "text/javascript; charset=utf-8",
    "htmx.min.js": "text/javascript; charset=utf-8",
    "favicon.svg": "image/svg+xml",
    "htmx.LICENSE.txt": "text/plain; charset=utf-8",
}


def static_file(request: WebRequest, services: Services, name: str) -> WebResponse:
    """``GET /static/{name}``: one of ``CONTENT_TYPES``' files.

    Raises:
        NotFound: any other name.
    """
    if name not in CONTENT_TYPES:
        raise NotFound(f"No static file {name!r}.")
    return WebResponse(
        body=(STATIC / name).read_text(encoding="utf-8"),
        content_type=CONTENT_TYPES[name],
        cacheable=request.param("v") == asset_version(name),
    )
