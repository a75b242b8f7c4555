"""The dashboard's view of HTTP, without Chalice (docs/reference.md#13-dashboard,
docs/issues.md#issue-13): a request and a response as plain values, forms, cookies, the same-origin
check and the security headers every page carries.

``chalicelib/api/dashboard`` turns a Chalice request into a ``WebRequest`` and a
``WebResponse`` back into a Chalice ``Response``; nothing here imports Chalice.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from chalicelib.errors import Forbidden, InvalidRequest
from chalicelib.limits import NEXT_PATH_MAX_CHARS

SESSION_COOKIE = "pinework_session"
"""The session cookie's name on loopback (plain HTTP)."""
SECURE_SESSION_COOKIE = "__Host-pinework_session"
"""Its name everywhere else: ``__Host-`` makes the browser insist on Secure, Path=/
and no Domain."""
FORM_MAX_BYTES = 64 * 1024
"""The largest form body a page accepts (the largest field, a day row's text, is
8,000 characters)."""

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ]
)
"""No inline script or style, nothing from another host, no framing
(docs/reference.md#13-dashboard)."""


@dataclass(frozen=True)
class WebRequest:
    """One request to the dashboard.

    Attributes:
        method: ``GET``, ``POST``…
        path: the path within the app (``/agents/agt_…``), without the stage prefix.
        base: what precedes ``path`` in the browser's URL (``/api`` on an API Gateway
            stage URL, ``""`` locally): every link and redirect starts with it.
        query: query parameters, each with all its values.
        headers: header names in lower case.
        body: the raw body.
        source_ip: the connection's address as the gateway saw it.
        repeated_headers: the guarded headers (``Host``, ``Origin``, ``Content-Type``,
            ``Sec-Fetch-Site``) the request sent more than once, lower case.
    """

    method: str
    path: str
    base: str = ""
    query: Mapping[str, list[str]] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    source_ip: str = ""
    repeated_headers: tuple[str, ...] = ()

    def param(self, name: str) -> str | None:
        """A query parameter's value (None when absent).

        Raises:
            InvalidRequest: it was given more than once.
        """
        values = self.query.get(name) or []
        if len(values) > 1:
            raise InvalidRequest(f"Query parameter {name!r} is given more than once.")
        return values[0] if values else None

    def form(self) -> dict[str, str]:
        """The body as an ``application/x-www-form-urlencoded`` form (a field given
        twice keeps its last value).

        Raises:
            InvalidRequest: too large, not UTF-8, or another content type.
        """
        if len(self.body) > FORM_MAX_BYTES:
            raise InvalidRequest("The form is too large.")
        kind = self.headers.get("content-type", "").split(";")[0].strip().lower()
        if self.body and kind != "application/x-www-form-urlencoded":
            raise InvalidRequest("Send the form as application/x-www-form-urlencoded.")
        try:
            text = self.body.decode("utf-8")
            return dict(parse_qsl(text, keep_blank_values=True, errors="strict"))
        except (UnicodeDecodeError, ValueError) as error:
            raise InvalidRequest("The form is not valid UTF-8.") from error

    def cookie(self, name: str) -> str | None:
        """A cookie's value, or None. Each ``name=value`` pair is read on its own, so
        another site's odd cookie on the same host (``localhost`` is shared by every
        local app) does not hide ours, as it can with ``http.cookies.SimpleCookie``."""
        for pair in self.headers.get("cookie", "").split(";"):
            key, sep, value = pair.strip().partition("=")
            if sep and key == name:
                return value.strip().strip('"') or None
        return None

    @property
    def htmx(self) -> bool:
        """True for a partial update asked by htmx (``HX-Request: true``)."""
        return self.headers.get("hx-request") == "true"

    @property
    def loopback(self) -> bool:
        """True when both the connection and the Host name are loopback (the local server)."""
        host = urlsplit("//" + self.headers.get("host", "localhost")).hostname or ""
        return _is_loopback(self.source_ip or "127.0.0.1") and (
            host == "localhost" or _is_loopback(host)
        )

    @property
    def secure(self) -> bool:
        """True everywhere but loopback: cookies get ``Secure`` (docs/reference.md#13-dashboard)."""
        return not self.loopback

    @property
    def origin(self) -> str:
        """This app's origin as the browser sees it (``https://host`` behind a gateway)."""
        scheme = self.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
        if scheme not in ("http", "https"):
            scheme = "http" if self.loopback else "https"
        return f"{scheme}://{self.headers.get('host', 'localhost')}"

    @property
    def session_cookie_name(self) -> str:
        """Which session cookie this request uses (``__Host-`` unless loopback)."""
        return SECURE_SESSION_COOKIE if self.secure else SESSION_COOKIE

    def url(self, path: str) -> str:
        """A URL path within the app, with the stage prefix (``base``)."""
        return self.base + path


@dataclass
class WebResponse:
    """What a view answers: status, HTML (or text) and headers.

    Attributes:
        status: the HTTP status.
        body: the body (text; the dashboard serves no binary).
        content_type: the ``Content-Type``.
        headers: more headers (``Location``, ``Set-Cookie``, ``HX-Redirect``…).
        cacheable: a static asset (cached for a year; its URL names its version);
            everything else is ``no-store``.
    """

    status: int = 200
    body: str = ""
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    cacheable: bool = False


def redirect(request: WebRequest, path: str, status: int = 303) -> WebResponse:
    """A redirect to ``path`` within the app; for htmx, ``HX-Redirect`` (a full page load)."""
    location = request.url(path)
    if request.htmx:
        return WebResponse(status=200, headers={"HX-Redirect": location})
    return WebResponse(status=status, headers={"Location": location})


def session_cookie(request: WebRequest, value: str, max_age: int) -> str:
    """A ``Set-Cookie`` value for the session: HttpOnly, SameSite=Strict, Path=/,
    Secure outside loopback; ``max_age`` 0 deletes it."""
    parts = [
        f"{request.session_cookie_name}={value}",
        "Path=/",
        "HttpOnly",
        "SameSite=Strict",
        f"Max-Age={max_age}",
    ]
    if request.secure:
        parts.append("Secure")
    return "; ".join(parts)


def check_same_origin(request: WebRequest) -> None:
    """Refuse a state-changing request another site made the browser send.

    Browsers send ``Origin`` with every POST, and ``Sec-Fetch-Site``. Under this
    dashboard's ``Referrer-Policy: no-referrer`` a form's ``Origin`` is ``null`` (Fetch
    standard), so then ``Sec-Fetch-Site`` (which no page can set) must say
    ``same-origin``. The CSRF token is checked besides (``DashboardSessions.check_csrf``).
    A guarded header sent twice is refused first: the gateway and a proxy could each
    read a different one (docs/reference.md#cross-site).

    Raises:
        Forbidden: a guarded header sent more than once, another origin, or neither a
            real origin nor ``Sec-Fetch-Site: same-origin``.
    """
    if request.repeated_headers:
        raise Forbidden(
            f"The request sends {', '.join(request.repeated_headers)} more than once; "
            "it was refused."
        )
    origin = request.headers.get("origin")
    if origin is not None and origin != "null":
        if origin.rstrip("/") != request.origin:
            raise Forbidden("This request came from another site; it was refused.")
        return
    if request.headers.get("sec-fetch-site") != "same-origin":
        raise Forbidden("This request did not come from the dashboard; it was refused.")


def security_headers(request: WebRequest, response: WebResponse) -> dict[str, str]:
    """The headers every dashboard answer carries: CSP, no framing, no sniffing, no
    referrer; ``no-store`` except for versioned static assets; HSTS over HTTPS."""
    headers = {
        "Content-Type": response.content_type,
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Resource-Policy": "same-origin",
        "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
        "Cache-Control": (
            "public, max-age=31536000, immutable" if response.cacheable else "no-store"
        ),
    }
    if request.secure:
        headers["Strict-Transport-Security"] = "max-age=31536000"
    return {**headers, **response.headers}


def safe_next(path: str | None) -> str:
    """A ``next`` path to go to after sign-in or a form: a path within the app, as ASCII
    (docs/reference.md#13-dashboard).

    Anything that is not a path of this origin is ``/``: no leading ``/``; ``//`` or
    ``/\\`` (another host); a backslash or a control character anywhere; the same
    once percent-decoded (``/%2F%2Fevil``); a lone surrogate; longer than
    ``NEXT_PATH_MAX_CHARS``. Other characters outside ASCII's URL set are
    percent-encoded as UTF-8, so the answer's ``Location`` is always ASCII.
    """
    if not path or _leaves_the_app(path) or _leaves_the_app(unquote(path, errors="replace")):
        return "/"
    try:
        encoded = quote(path, safe=_URL_CHARACTERS, errors="strict")
    except UnicodeEncodeError:
        return "/"
    return encoded if len(encoded) <= NEXT_PATH_MAX_CHARS else "/"


_URL_CHARACTERS = "/?#[]@!$&'()*+,;=:-._~%"
"""What ``safe_next`` keeps as is: RFC 3986's reserved and unreserved characters
(letters and digits always), and ``%`` of the escapes already there."""


def _leaves_the_app(path: str) -> bool:
    if not path.startswith("/") or path[1:2] in ("/", "\\") or "\\" in path:
        return True
    return any(ord(character) < 0x20 or 0x7F <= ord(character) <= 0x9F for character in path)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
