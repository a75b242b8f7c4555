"""The client's key-value scope headers (docs/reference.md#10-key-value): ``X-Api-Key`` from
``api_key`` or
``PINEWORK_API_KEY``, no ``Authorization`` when anonymous."""

from __future__ import annotations

from pinework import Client
from tests.client.fake_api import BASE_URL, FakeApi


def test_api_key_is_sent_as_x_api_key(fake_api: FakeApi) -> None:
    fake_api.on("POST", "/kv/remember", 200, {"stored": True, "key": "k", "ttl": "permanent"})
    with Client(BASE_URL, api_key="k1", transport=fake_api.transport) as client:
        assert client.kv_remember("k", {"a": 1}).ttl == "permanent"
    sent = fake_api.last
    assert sent.headers["X-Api-Key"] == "k1" and "Authorization" not in sent.headers


def test_from_env_reads_pinework_api_key(fake_api: FakeApi) -> None:
    fake_api.on("POST", "/kv/recall", 200, {"keys": [], "count": 0})
    environ = {"PINEWORK_API_URL": BASE_URL, "PINEWORK_API_KEY": "k12"}
    with Client.from_env(environ, transport=fake_api.transport) as client:
        client.kv_recall()
    assert fake_api.last.headers["X-Api-Key"] == "k12"


def test_anonymous_client_sends_no_credentials(fake_api: FakeApi) -> None:
    fake_api.on("POST", "/kv/recall", 200, {"key": "k", "value": None, "found": False})
    with Client(BASE_URL, transport=fake_api.transport) as client:
        assert client.kv_recall("k").found is False  # type: ignore[union-attr]
    assert "X-Api-Key" not in fake_api.last.headers
    assert "Authorization" not in fake_api.last.headers
