"""The dashboard's HTTP rules without a server: same-origin checks, cookies, forms,
``next`` paths and the security headers (docs/reference.md#13-dashboard,
docs/issues.md#issue-13)."""

from __future__ import annotations

import pytest

from chalicelib.errors import Forbidden, InvalidRequest
from chalicelib.web.http import (
    CONTENT_SECURITY_POLICY,
    WebRequest,
    WebResponse,
    check_same_origin,
    safe_next,
    security_headers,
    session_cookie,
)

LOCAL = {"host": "127.0.0.1:8000"}
DEPLOYED = {"host": "abc.execute-api.eu-west-1.amazonaws.com", "x-forwarded-proto": "https"}


def request(headers: dict[str, str], source_ip: str = "127.0.0.1", **extra: object) -> WebRequest:
    return WebRequest(method="POST", path="/x", headers=headers, source_ip=source_ip, **extra)  # type: ignore[arg-type]


def test_same_origin_post_passes_and_another_origin_is_refused() -> None:
    check_same_origin(request({**LOCAL, "origin": "http://127.0.0.1:8000"}))
    with pytest.raises(Forbidden):
        check_same_origin(request({**LOCAL, "origin": "http://evil.example"}))
    with pytest.raises(Forbidden):
        check_same_origin(request({**LOCAL, "origin": "http://127.0.0.1:9000"}))


def test_a_guarded_header_sent_twice_is_refused_even_when_the_last_value_is_fine() -> None:
    same_origin = {**LOCAL, "origin": "http://127.0.0.1:8000"}
    check_same_origin(request(same_origin))
    for name in ["origin", "host", "content-type", "sec-fetch-site"]:
        with pytest.raises(Forbidden, match=name):
            check_same_origin(request(same_origin, repeated_headers=(name,)))


def test_null_origin_needs_sec_fetch_site_same_origin() -> None:
    # Under Referrer-Policy: no-referrer a form's Origin is "null" (Fetch standard).
    check_same_origin(request({**LOCAL, "origin": "null", "sec-fetch-site": "same-origin"}))
    for site in ("cross-site", "same-site", "none"):
        with pytest.raises(Forbidden):
            check_same_origin(request({**LOCAL, "origin": "null", "sec-fetch-site": site}))
    with pytest.raises(Forbidden):
        check_same_origin(request(dict(LOCAL)))


def test_deployed_origin_is_https_and_the_gateway_host() -> None:
    deployed = request(
        {**DEPLOYED, "origin": "https://abc.execute-api.eu-west-1.amazonaws.com"},
        source_ip="203.0.113.9",
    )
    check_same_origin(deployed)
    assert deployed.secure and not deployed.loopback
    with pytest.raises(Forbidden):
        check_same_origin(
            request(
                {**DEPLOYED, "origin": "http://abc.execute-api.eu-west-1.amazonaws.com"},
                source_ip="203.0.113.9",
            )
        )


def test_session_cookie_is_httponly_strict_and_secure_outside_loopback() -> None:
    local = session_cookie(request(LOCAL), "v", 60)
    assert local.startswith("pinework_session=v;")
    assert "HttpOnly" in local and "SameSite=Strict" in local and "Path=/" in local
    assert "Secure" not in local
    remote = session_cookie(request(DEPLOYED, source_ip="203.0.113.9"), "v", 60)
    assert remote.startswith("__Host-pinework_session=v;")
    assert "Secure" in remote and "HttpOnly" in remote and "SameSite=Strict" in remote
    # A loopback peer with a public Host name (a proxy in front) is not loopback.
    proxied = request({"host": "dash.example.com"}, source_ip="127.0.0.1")
    assert proxied.secure


def test_form_parsing_refuses_other_types_large_and_bad_bodies() -> None:
    form = "application/x-www-form-urlencoded"
    ok = request({"content-type": form}, body=b"a=1&b=%3Cscript%3E&c=")
    assert ok.form() == {"a": "1", "b": "<script>", "c": ""}
    with pytest.raises(InvalidRequest):
        request({"content-type": "application/json"}, body=b'{"a":1}').form()
    with pytest.raises(InvalidRequest):
        request({"content-type": form}, body=b"a=" + b"x" * 70_000).form()
    with pytest.raises(InvalidRequest):
        request({"content-type": form}, body=b"a=%ff").form()


def test_cookie_and_repeated_query_parameters() -> None:
    jar = request({"cookie": "x=1; pinework_session=abc"})
    assert jar.cookie("pinework_session") == "abc"
    assert request({"cookie": 'bad"cookie'}).cookie("pinework_session") is None
    odd = request({"cookie": 'prefs={"a": [1, 2]}; pinework_session=abc; x'})
    assert odd.cookie("pinework_session") == "abc"
    assert request({"cookie": "pinework_session="}).cookie("pinework_session") is None
    twice = WebRequest(method="GET", path="/", query={"q": ["a", "b"]})
    with pytest.raises(InvalidRequest):
        twice.param("q")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("/agents/agt_1?kind=day", "/agents/agt_1?kind=day"),
        (None, "/"),
        ("https://evil.example/", "/"),
        ("//evil.example/x", "/"),
        ("/\\evil.example", "/"),
        ("javascript:alert(1)", "/"),
        ("/ok\r\nSet-Cookie: x=1", "/"),
        ("/agents/\u65e5\u672c?q=caf\u00e9", "/agents/%E6%97%A5%E6%9C%AC?q=caf%C3%A9"),
        ("/\U0001f600", "/%F0%9F%98%80"),
        ("/\u2028x", "/%E2%80%A8x"),
        ('/a b"<>', "/a%20b%22%3C%3E"),
        ("/agents/agt_1?kind=day&q=a%20b", "/agents/agt_1?kind=day&q=a%20b"),
        ("/\ud83d", "/"),
        ("/\x7f", "/"),
        ("/\x85x", "/"),
        ("/\tevil", "/"),
        ("/%2F%2Fevil.example", "/"),
        ("/%2f/evil.example", "/"),
        ("/%5Cevil.example", "/"),
        ("/x/%5C..", "/"),
        ("/%0d%0aSet-Cookie:%20x=1", "/"),
        ("\\evil.example", "/"),
        ("/\uff0f/evil.example", "/%EF%BC%8F/evil.example"),
        ("/" + "a" * 3000, "/"),
        ("", "/"),
    ],
)
def test_next_paths_stay_inside_the_app(given: str | None, expected: str) -> None:
    assert safe_next(given) == expected
    assert safe_next(expected) == expected  # a path made safe once stays as it is
    expected.encode("ascii")  # fits a Location header


def test_security_headers_forbid_inline_script_framing_and_caching() -> None:
    headers = security_headers(request(LOCAL), WebResponse())
    policy = headers["Content-Security-Policy"]
    assert policy == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy and "style-src 'self'" in policy
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["Cache-Control"] == "no-store"
    assert "Strict-Transport-Security" not in headers
    cached = security_headers(
        request(DEPLOYED, source_ip="198.51.100.1"), WebResponse(cacheable=True)
    )
    assert cached["Cache-Control"].startswith("public, max-age=31536000")
    assert cached["Strict-Transport-Security"].startswith("max-age=")
