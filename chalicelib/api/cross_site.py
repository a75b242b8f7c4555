"""Requests from the wrong place (docs/reference.md#cross-site, docs/issues.md#issue-21-item-3):
which ``Host`` and browser ``Origin`` the API answers, and the guard of the routes any
caller may use without a token (the key-value routes).

A browser on another site can send a ``text/plain`` (or untyped) POST without a CORS
preflight, and it carries the visitor's network address, so it could write into the
visitor's anonymous key-value scope. Browsers label such requests (``Origin``,
``Sec-Fetch-Site``, which no page can set); callers that are not browsers (curl, the
SDKs, agents) send neither and pass. ``Origin`` is compared with configured hosts,
never with ``Host``: under DNS rebinding both are the attacker's. Choices:
docs/DECISIONS.md#requests-from-the-wrong-place-sign-in-links-and-offboarding-issue-21-items-3-and-4
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from chalicelib.errors import Forbidden, UnsupportedMediaType
from chalicelib.settings import Settings

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
"""Host names always allowed, with any port (the local server)."""
_FOREIGN_FETCH_SITES = frozenset({"cross-site", "same-site"})
"""``Sec-Fetch-Site`` values of a page on another origin: a sibling subdomain is as
foreign as another site."""
GUARDED_HEADERS = ("host", "origin", "content-type", "sec-fetch-site")
"""Headers the guards decide on: a request may carry each at most once."""


def _split_host(value: str) -> tuple[str, str | None] | None:
    """``host[:port]`` -> (lower-case host, port or None); None when it is not one."""
    value = value.strip().lower()
    if not value or any(char in value for char in "/\\@?#") or not value.isascii():
        return None
    try:
        parts = urlsplit("//" + value)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    bracketed = f"[{host}]" if ":" in host else host
    return bracketed, None if port is None else str(port)


def _host_matches(host: str, port: str | None, entry: str) -> bool:
    wanted = _split_host(entry.removeprefix("*."))
    if wanted is None:
        return False
    name, wanted_port = wanted
    if wanted_port is not None and wanted_port != port:
        return False
    if entry.strip().startswith("*."):
        return host.endswith("." + name)
    return host == name


def gateway_domain(request: Any) -> str | None:
    """The name API Gateway received the request on (``requestContext.domainName``:
    the execute-api name or a custom domain mapped to this API), or None off AWS.

    The gateway routes by that name, so it is one of this API's names whatever a
    page's DNS says; the local server's events never carry it."""
    context = getattr(request, "context", None) or {}
    value = context.get("domainName")
    return value if isinstance(value, str) and value else None


def allowed_host_entries(settings: Settings, gateway: str | None = None) -> list[str]:
    """The loopback names, the configured ones (``PINEWORK_ALLOWED_HOSTS``) and the
    name API Gateway received the request on (``gateway_domain``)."""
    configured = [item.strip() for item in settings.allowed_hosts.split(",") if item.strip()]
    return [*LOOPBACK_HOSTS, *configured, *([gateway] if gateway else [])]


def host_allowed(value: str, settings: Settings, gateway: str | None = None) -> bool:
    """Whether a ``Host`` (``name[:port]``) names this API.

    Allowed: ``localhost``, ``127.0.0.1``, ``[::1]`` with any port; each entry of
    ``PINEWORK_ALLOWED_HOSTS`` (``name`` with any port, ``name:port``, or ``*.suffix``
    for any name below ``suffix``); on AWS the name API Gateway received the request on
    (``gateway``) (docs/reference.md#cross-site).
    """
    split = _split_host(value)
    if split is None:
        return False
    host, port = split
    entries = allowed_host_entries(settings, gateway)
    return any(_host_matches(host, port, entry) for entry in entries)


def origin_listed(origin: str | None, extra_origins: str) -> bool:
    """Whether ``origin`` is exactly one of ``extra_origins`` (comma-separated
    ``scheme://host[:port]``, case and a trailing ``/`` ignored)."""
    if origin is None:
        return False
    listed = {item.strip().rstrip("/").lower() for item in extra_origins.split(",")} - {""}
    return origin.strip().rstrip("/").lower() in listed


def origin_allowed(
    origin: str, settings: Settings, extra_origins: str = "", gateway: str | None = None
) -> bool:
    """Whether a browser ``Origin`` may call the API: ``http(s)`` on an allowed host
    (``host_allowed``), or exactly one of ``extra_origins`` (comma-separated
    ``scheme://host[:port]``: ``PINEWORK_MCP_ALLOWED_ORIGINS`` for ``/mcp``).
    ``null`` and other schemes are refused (docs/reference.md#cross-site)."""
    text = origin.strip()
    if origin_listed(text, extra_origins):
        return True
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or parts.path not in ("", "/") or parts.query:
        return False
    return host_allowed(parts.netloc, settings, gateway)


def is_json_media_type(content_type: str | None) -> bool:
    """True for ``application/json``, alone or with ``charset=utf-8`` (any case)."""
    if content_type is None:
        return False
    kind, *parameters = (part.strip().lower() for part in content_type.split(";"))
    if kind != "application/json":
        return False
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip() != "charset" or value.strip().strip('"') not in ("utf-8", "utf8"):
            return False
    return True


def repeated_headers(request: Any) -> list[str]:
    """The ``GUARDED_HEADERS`` a request carries more than once (lower case, sorted).

    Read from the event's ``multiValueHeaders`` (API Gateway's REST proxy event keeps
    every value there, and only the last in ``headers``; the local server writes both
    the same way, ``infra/local_server.py``). An event without them (the test client)
    has none repeated (docs/reference.md#cross-site)."""
    event = request.to_original_event() or {}
    counts: dict[str, int] = {}
    for name, values in (event.get("multiValueHeaders") or {}).items():
        key = str(name).lower()
        if key in GUARDED_HEADERS and isinstance(values, list):
            counts[key] = counts.get(key, 0) + len(values)
    return sorted(name for name, count in counts.items() if count > 1)


def refuse_repeated_headers(request: Any) -> None:
    """Refuse a request that sends a guarded header twice (``repeated_headers``): one
    layer could read the first value and another the last.

    Raises:
        Forbidden: ``Host``, ``Origin``, ``Content-Type`` or ``Sec-Fetch-Site`` is
            sent more than once.
    """
    repeated = repeated_headers(request)
    if repeated:
        raise Forbidden(f"The request sends {', '.join(repeated)} more than once; send each once.")


def refuse_foreign_fetch_site(headers: Any) -> None:
    """Refuse a request a browser labels as made by a page on another site.

    Raises:
        Forbidden: ``Sec-Fetch-Site`` is ``cross-site`` or ``same-site``.
    """
    site = (headers.get("sec-fetch-site") or "").strip().lower()
    if site in _FOREIGN_FETCH_SITES:
        raise Forbidden(
            "A page on another site made this request (Sec-Fetch-Site: "
            f"{site}); it was refused. Call the API from a program, not a web page."
        )


def refuse_cross_site(headers: Any, settings: Settings, gateway: str | None = None) -> None:
    """Refuse a request a page on another site made a browser send (``gateway``: the
    name API Gateway received it on, ``gateway_domain``).

    Raises:
        Forbidden: ``Sec-Fetch-Site`` is ``cross-site`` or ``same-site``, or an
            ``Origin`` is sent that is not an allowed origin (``origin_allowed``).
    """
    refuse_foreign_fetch_site(headers)
    origin = headers.get("origin")
    if origin is not None and not origin_allowed(origin, settings, gateway=gateway):
        raise Forbidden(
            f"Requests from the web origin {origin[:100]!r} are refused; call the API "
            "from a program (no Origin header), or from this API's own host."
        )


def require_json(headers: Any, raw_body: bytes | None) -> None:
    """Refuse a body that is not declared JSON.

    Raises:
        UnsupportedMediaType: a ``Content-Type`` other than ``application/json``
            (``charset=utf-8`` allowed), or a body without one.
    """
    content_type = headers.get("content-type")
    if content_type is None and not raw_body:
        return
    if not is_json_media_type(content_type):
        raise UnsupportedMediaType(
            "Send the body as JSON with Content-Type: application/json "
            f"(got {str(content_type)[:100]!r})."
        )


def same_site_json_only(
    current_request: Callable[[], Any], settings: Callable[[], Settings]
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A view decorator: ``refuse_repeated_headers``, ``refuse_cross_site`` then
    ``require_json`` before the view runs (below ``endpoint``, so a refusal is the
    error envelope; nothing is read or written first).

    Args:
        current_request: returns the Chalice request being answered.
        settings: returns the settings (read per request: tests install their own).
    """

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(view)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            request = current_request()
            refuse_repeated_headers(request)
            refuse_cross_site(request.headers, settings(), gateway_domain(request))
            require_json(request.headers, request.raw_body)
            return view(*args, **kwargs)

        return guarded

    return decorate
