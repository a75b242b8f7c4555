"""A webhook delivery over HTTPS (docs/reference.md#webhook-urls): the connection goes to
the checked address, the URL's name is the TLS SNI and the ``Host``, the certificate is
checked against that name (not the address), and a redirect is a failure, never
followed. A real TLS receiver on 127.0.0.1 with a certificate made here."""

from __future__ import annotations

import datetime as dt
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from chalicelib.services.webhooks.urls import Target
from chalicelib.storage.webhook_http import HttpxSender

NAME = "receiver.test"


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for ``NAME`` (its own authority) and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, NAME)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(NAME)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[dict[str, Any]]:
    cert_path, key_path = certificate(tmp_path)
    seen: dict[str, Any] = {"sni": [], "hosts": [], "paths": [], "cert": cert_path}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            seen["hosts"].append(self.headers["Host"])
            seen["paths"].append(self.path)
            redirect = self.path == "/moved"
            self.send_response(302 if redirect else 204)
            if redirect:
                self.send_header("Location", f"https://{NAME}:{seen['port']}/in")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    context.sni_callback = lambda sock, name, ctx: seen["sni"].append(name)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    seen["port"] = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield seen
    server.shutdown()
    server.server_close()


def target(host: str, port: int, path: str) -> Target:
    return Target(f"https://{host}:{port}{path}", "https", host, port, "127.0.0.1")


def test_https_goes_to_the_checked_address_with_the_name_as_sni_and_host(
    tls_receiver: dict[str, Any],
) -> None:
    port = tls_receiver["port"]
    sender = HttpxSender(verify=ssl.create_default_context(cafile=str(tls_receiver["cert"])))
    result = sender.send(target(NAME, port, "/in"), {"content-type": "application/json"}, b"{}")
    assert result.ok and result.status_code == 204, result
    assert tls_receiver["sni"] == [NAME] and tls_receiver["hosts"] == [f"{NAME}:{port}"]


def test_the_certificate_is_checked_against_the_name_and_redirects_are_not_followed(
    tls_receiver: dict[str, Any],
) -> None:
    port = tls_receiver["port"]
    sender = HttpxSender(verify=ssl.create_default_context(cafile=str(tls_receiver["cert"])))
    wrong = sender.send(target("other.test", port, "/in"), {}, b"{}")
    assert not wrong.ok and wrong.status_code is None and "certificate" in str(wrong.error).lower()
    assert tls_receiver["paths"] == []  # nothing was sent to a name the certificate is not
    moved = sender.send(target(NAME, port, "/moved"), {}, b"{}")
    assert not moved.ok and moved.status_code == 302 and "redirect" in str(moved.error)
    assert tls_receiver["paths"] == ["/moved"]  # the Location was not followed
    untrusted = HttpxSender().send(target(NAME, port, "/in"), {}, b"{}")
    assert not untrusted.ok and untrusted.status_code is None
