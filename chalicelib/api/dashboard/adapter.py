"""Chalice <-> the dashboard's plain request and response (``chalicelib.web.http``),
and the wrappers every dashboard route goes through (docs/reference.md#13-dashboard,
docs/issues.md#issue-13):

* ``page``: a signed-in page. No live session: to the sign-in page. A POST must
  come from this origin and carry the session's CSRF token. A service error that
  the view did not place next to a form becomes an error page with the API's code
  and message (a throttled store: 429 ``rate_limited`` with ``Retry-After``, as the
  API answers); anything unexpected a logged 500 page. Every answer carries the
  security headers (CSP, no framing, no referrer, ``no-store``).
* ``public``: the sign-in routes and static files (no session needed).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from chalice.app import Response

from chalicelib.api.cross_site import repeated_headers
from chalicelib.api.http import _WRAPPED_VIEWS
from chalicelib.api.observe import note_error, note_principal
from chalicelib.errors import AgentNotInWorkspace, PineworkError, RateLimited
from chalicelib.limits import THROTTLED_RETRY_AFTER_SECONDS
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.http import WebRequest, WebResponse, check_same_origin, security_headers
from chalicelib.web.views.auth import error_page, to_sign_in
from chalicelib.wiring import Services, services

logger = logging.getLogger(__name__)

PageView = Callable[..., WebResponse]
PublicView = Callable[..., WebResponse]
INTERNAL = FormError("internal_error", "Something went wrong on our side; try again.")


def web_request(request: Any) -> WebRequest:
    """The plain form of a Chalice request: the path within the app, the stage
    prefix the browser's URL carries (``base``), query, headers, body, peer, and the
    guarded headers sent more than once (``cross_site.repeated_headers``)."""
    params = request.uri_params or {}
    path = request.path
    for name, value in params.items():
        path = path.replace("{" + name + "}", value)
    context = request.context or {}
    full = str(context.get("path") or path)
    base = ""
    if path == "/":
        base = full.rstrip("/")
    elif full.endswith(path):
        base = full[: -len(path)]
    query = request.query_params
    return WebRequest(
        method=request.method,
        path=path,
        base=base,
        query={} if query is None else {name: query.getlist(name) for name in query},
        headers={name.lower(): value for name, value in request.headers.items()},
        body=request.raw_body or b"",
        source_ip=str((context.get("identity") or {}).get("sourceIp") or ""),
        repeated_headers=tuple(repeated_headers(request)),
    )


def to_response(request: WebRequest, response: WebResponse) -> Response:
    """A Chalice response with the dashboard's security headers."""
    response = _with_retry_after(response)
    headers: dict[str, str | list[str]] = dict(security_headers(request, response))
    return Response(body=response.body, status_code=response.status, headers=headers)


def failure_page(
    request: WebRequest, error: PineworkError, signed_in: bool, web: WebContext | None = None
) -> WebResponse:
    """The error page of a service error no view placed next to a form: its code's
    status and message; ``Retry-After`` when the store was throttled
    (docs/reference.md#6-errors). With the signed-in person's ``web``, the page keeps the
    navigation and the person's menu (docs/reference.md#13-dashboard)."""
    if isinstance(error, AgentNotInWorkspace):
        # The dashboard's agent ids are in paths: another workspace's answer as missing
        # ones (docs/reference.md#ids-in-paths).
        error = error.as_missing()
    note_error(error.code)
    shown = FormError.of(error)
    if web is not None and not request.htmx:
        response = web.page(
            "error.html", status=shown.status, error=shown, signed_in=True, nav=None
        )
    else:
        response = error_page(request, shown, signed_in=signed_in)
    if isinstance(error, RateLimited):
        response.headers["Retry-After"] = str(error.retry_after_seconds)
    return response


def _with_retry_after(response: WebResponse) -> WebResponse:
    """A 429 a view made itself (a throttled save shown next to its form) says when
    to try again, as every ``rate_limited`` answer does."""
    if response.status == 429:
        response.headers.setdefault("Retry-After", str(THROTTLED_RETRY_AFTER_SECONDS))
    return response


def page(blueprint: Any) -> Callable[[PageView], Callable[..., Response]]:
    """Wrap a signed-in view ``view(web: WebContext, **uri_params)``."""

    def decorate(view: PageView) -> Callable[..., Response]:
        @functools.wraps(view)
        def wrapped(**params: Any) -> Response:
            request = web_request(blueprint.current_request)
            wired = services()
            try:
                response = _signed_in(request, wired, view, params)
            except PineworkError as error:
                response = failure_page(request, error, signed_in=True)
            except Exception:
                logger.exception("unhandled error in %s", view.__name__)
                note_error(INTERNAL.code)
                response = error_page(request, INTERNAL, signed_in=True)
            return to_response(request, response)

        _WRAPPED_VIEWS.add(view.__name__)
        return wrapped

    return decorate


def public(blueprint: Any) -> Callable[[PublicView], Callable[..., Response]]:
    """Wrap a view ``view(request: WebRequest, services: Services, **uri_params)`` that
    needs no session (sign-in, sign-out, static files)."""

    def decorate(view: PublicView) -> Callable[..., Response]:
        @functools.wraps(view)
        def wrapped(**params: Any) -> Response:
            request = web_request(blueprint.current_request)
            try:
                response = view(request, services(), **params)
            except PineworkError as error:
                response = failure_page(request, error, signed_in=False)
            except Exception:
                logger.exception("unhandled error in %s", view.__name__)
                note_error(INTERNAL.code)
                response = error_page(request, INTERNAL, signed_in=False)
            return to_response(request, response)

        _WRAPPED_VIEWS.add(view.__name__)
        return wrapped

    return decorate


def _signed_in(
    request: WebRequest, wired: Services, view: PageView, params: dict[str, Any]
) -> WebResponse:
    sessions = wired.dashboard.sessions
    cookie = request.cookie(request.session_cookie_name)
    signed_in = sessions.resume(cookie)
    if signed_in is None:
        return to_sign_in(request, ended=cookie is not None)
    note_principal(signed_in.principal)  # the request's log line names the person
    if request.method != "GET":
        check_same_origin(request)
        sessions.check_csrf(signed_in.session, request.form().get("csrf"))
    web = WebContext(request, wired, signed_in, wired.clock.now())
    try:
        return view(web, **params)
    except PineworkError as error:
        return failure_page(request, error, signed_in=True, web=web)
