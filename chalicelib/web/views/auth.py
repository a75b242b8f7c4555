"""Sign-in, one-time links and sign-out pages (docs/reference.md#13-dashboard,
docs/issues.md#issue-13).

A token is only ever sent in a form body (POST), never in a URL. Opening a one-time
link shows a confirmation page; only its same-origin POST uses the code (once) and
signs in, so another site cannot sign a visitor in as someone else (login CSRF).
"""

from __future__ import annotations

from urllib.parse import quote

from chalicelib.errors import NotFound, PineworkError, Unauthorized
from chalicelib.limits import SESSION_MAX_LIFETIME
from chalicelib.services.access.sessions import LINK_UNUSABLE
from chalicelib.web.context import NOTICES, FormError, WebContext
from chalicelib.web.http import (
    WebRequest,
    WebResponse,
    check_same_origin,
    redirect,
    safe_next,
    session_cookie,
)
from chalicelib.web.render import render
from chalicelib.wiring import Services

SESSION_ENDED = (
    "Your session has ended (signed out, idle for 12 hours, its token revoked, or ended by "
    "an admin). Sign in again."
)
_MAX_AGE = int(SESSION_MAX_LIFETIME.total_seconds())


def sign_in_form(
    request: WebRequest,
    *,
    error: FormError | None = None,
    notice: str | None = None,
    status: int = 200,
    next_path: str = "/",
    demo_file: str | None = None,
) -> WebResponse:
    """The sign-in page: paste a person token (or use ``pinework dashboard``);
    ``demo_file`` (the local server's ``demo.json``, ``Settings.demo_file``) is named
    as where the demo person's token is, and nothing is said of it on AWS."""
    body = render(
        "sign_in.html",
        base=request.base,
        person=None,
        error=error,
        notice=notice,
        next_path=safe_next(next_path),
        demo_file=demo_file,
    )
    return WebResponse(status=status, body=body)


def sign_in_page(request: WebRequest, services: Services) -> WebResponse:
    """``GET /sign-in``: the form, or straight on when a session is live."""
    next_path = safe_next(request.param("next"))
    if services.dashboard.sessions.resume(request.cookie(request.session_cookie_name)):
        return redirect(request, next_path)
    notice = NOTICES.get(request.param("done") or "")
    if request.param("ended"):
        notice = SESSION_ENDED
    error = None
    if request.param("link") == "unusable":
        error = FormError("unauthorized", LINK_UNUSABLE, "link")
    return sign_in_form(
        request,
        error=error,
        notice=notice,
        next_path=next_path,
        demo_file=services.settings.demo_file,
    )


def sign_in_submit(request: WebRequest, services: Services) -> WebResponse:
    """``POST /sign-in``: a person's token in the form body starts a session."""
    check_same_origin(request)
    form = request.form()
    next_path = safe_next(form.get("next"))
    try:
        issued = services.dashboard.sessions.sign_in_with_token(form.get("token", ""))
    except PineworkError as error:
        failure = FormError.of(error, "token")
        return sign_in_form(
            request,
            error=failure,
            status=failure.status,
            next_path=next_path,
            demo_file=services.settings.demo_file,
        )
    return _signed_in(request, services, issued.secret, next_path)


def _signed_in(request: WebRequest, services: Services, secret: str, path: str) -> WebResponse:
    """Set the new session's cookie and go on; a session the browser still held
    (another sign-in) is ended rather than left to expire."""
    old = request.cookie(request.session_cookie_name)
    if old and old != secret:
        services.dashboard.sessions.sign_out(old)
    response = redirect(request, path)
    response.headers["Set-Cookie"] = session_cookie(request, secret, _MAX_AGE)
    return response


def confirm_link(request: WebRequest, services: Services) -> WebResponse:
    """``GET /sign-in/link?code=…``: the confirmation page ("Continue as … in workspace
    …?"). Nothing is used or signed in: a page of another site that opens the link
    (login CSRF) signs nobody in (docs/reference.md#13-dashboard)."""
    code = request.param("code") or ""
    try:
        invitation = services.dashboard.sessions.describe_link(code)
    except Unauthorized:
        return redirect(request, "/sign-in?link=unusable")
    body = render(
        "sign_in_link.html",
        base=request.base,
        person=None,
        notice=None,
        invitation=invitation,
        code=code,
    )
    return WebResponse(body=body)


def sign_in_with_link(request: WebRequest, services: Services) -> WebResponse:
    """``POST /sign-in/link`` (the confirmation page's button, same origin only): use
    the one-time code of the form body, then redirect. A throttled store is the 429
    page, not "used already": the code was not consumed, so the link still works."""
    check_same_origin(request)
    try:
        issued = services.dashboard.sessions.sign_in_with_link(request.form().get("code", ""))
    except Unauthorized:
        return redirect(request, "/sign-in?link=unusable")
    return _signed_in(request, services, issued.secret, "/")


def sign_out(request: WebRequest, services: Services) -> WebResponse:
    """``POST /sign-out``: delete the session record and the cookie (CSRF-checked)."""
    check_same_origin(request)
    sessions = services.dashboard.sessions
    secret = request.cookie(request.session_cookie_name)
    signed_in = sessions.resume(secret)
    if signed_in is not None:
        sessions.check_csrf(signed_in.session, request.form().get("csrf"))
        sessions.sign_out(secret)
    response = redirect(request, "/sign-in?done=signed-out")
    response.headers["Set-Cookie"] = session_cookie(request, "", 0)
    return response


def to_sign_in(request: WebRequest, *, ended: bool) -> WebResponse:
    """Where a request without a live session goes: the sign-in page, coming back to
    this page (a GET) afterwards; an ended session's cookie is cleared."""
    back = request.path
    if request.method == "GET" and request.query:
        back += "?" + "&".join(
            f"{quote(name, errors='replace')}={quote(value, errors='replace')}"
            for name, values in request.query.items()
            for value in values
        )
    back = back if request.method == "GET" else "/"
    target = "/sign-in?next=" + quote(back, safe="", errors="replace")
    if ended:
        target += "&ended=1"
    response = redirect(request, target)
    if ended:
        response.headers["Set-Cookie"] = session_cookie(request, "", 0)
    return response


def error_page(request: WebRequest, error: FormError, signed_in: bool) -> WebResponse:
    """A page (or, for htmx, the page's alert region) showing an error's code and message."""
    if request.htmx:
        body = render("_alert.html", error=error)
        return WebResponse(
            status=error.status,
            body=body,
            headers={"HX-Retarget": "#page-alert", "HX-Reswap": "innerHTML"},
        )
    body = render(
        "error.html",
        base=request.base,
        person=None,
        notice=None,
        error=error,
        signed_in=signed_in,
    )
    return WebResponse(status=error.status, body=body)


PAGE_NOT_FOUND = (
    "There is no dashboard page at this address. Check the link, or start again from the agents."
)


def not_found_page(request: WebRequest, wired: Services) -> WebResponse:
    """``GET /not-found``: the 404 page a browser gets for an address with no page (the
    local server sends unknown non-API paths here; docs/reference.md#13-dashboard). A
    signed-in person keeps the navigation; anyone else gets the sign-in link."""
    error = FormError.of(NotFound(PAGE_NOT_FOUND))
    signed_in = wired.dashboard.sessions.resume(request.cookie(request.session_cookie_name))
    if signed_in is None:
        return error_page(request, error, signed_in=False)
    web = WebContext(request, wired, signed_in, wired.clock.now())
    return web.page("error.html", status=error.status, error=error, signed_in=True, nav=None)
