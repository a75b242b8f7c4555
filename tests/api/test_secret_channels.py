"""Every channel that stores or forwards text refuses the secret families of
docs/issues.md#issue-21-item-7 (an AWS key id glued to its secret, a password on a
command line, an Authorization header, a credential inside long base64 data) with
``secret_in_memory``, and stores nothing."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest

from tests.helpers import Api, World
from tests.secret_corpus import ALNUM, PW_WORD, UPPER_DIGITS, rand, rng_for

Family = Callable[[], str]


def glued_aws() -> str:
    rng = rng_for("channels-aws")
    return "AK" + "IA" + rand(rng, UPPER_DIGITS, 16) + rand(rng, ALNUM + "/+", 37) + "a1Z"


def command_line() -> str:
    return f"mysql -u app -p{rand(rng_for('channels-cli'), ALNUM, 10)}9!"


def authorization() -> str:
    return f"Authorization: Bearer {rand(rng_for('channels-auth'), ALNUM, 30)}9q"


def in_data() -> str:
    rng = rng_for("channels-data")
    data = base64.b64encode(rng.randbytes(3000)).decode()
    return f"{PW_WORD}={rand(rng, ALNUM, 10)}7x" + data


def tool_option() -> str:
    return f"htpasswd -b .htpasswd admin {rand(rng_for('channels-tool'), ALNUM, 10)}4!"


def api_key_header() -> str:
    return f"X-Api-Key: {rand(rng_for('channels-header'), '0123456789abcdef', 32)}"


FAMILIES = {
    "glued-aws": glued_aws,
    "command-line": command_line,
    "authorization": authorization,
    "tool-option": tool_option,
    "api-key-header": api_key_header,
}


@pytest.mark.parametrize(
    "text",
    [
        f"postgres://user:{PW_WORD}@localhost:5432/db is the template",
        "the logo is data:image/png;base64,"
        + base64.b64encode(rng_for("channels-png").randbytes(300)).decode(),
        "docker login -u ci --password-stdin, then redis-cli -a $REDIS_PASSWORD",
    ],
)
def test_placeholders_and_data_uris_are_saved_as_facts(api: Api, world: World, text: str) -> None:
    status, saved = api.call("POST", "/memories", world.agent, {"text": text})
    assert status == 201, saved
    assert saved["text"] == text


def refused(answer: tuple[int, object]) -> bool:
    status, body = answer
    return status == 400 and isinstance(body, dict) and body["error"]["code"] == "secret_in_memory"


@pytest.mark.parametrize("family", FAMILIES.values(), ids=FAMILIES.keys())
def test_memory_channels_refuse_each_family(api: Api, world: World, family: Family) -> None:
    secret = family()
    assert refused(api.call("POST", "/memories", world.agent, {"text": f"note {secret}"}))
    assert refused(api.call("POST", "/memories/day", world.agent, {"line": secret}))
    evidence = {"text": "the job connects to the db", "evidence": f"$ {secret}"}
    assert refused(api.call("POST", "/memories", world.agent, evidence))
    assert refused(api.call("POST", "/memories/recall", world.agent, {"query": secret}))
    status, listed = api.call("GET", "/memories?all=true", world.agent)
    assert status == 200 and listed["data"] == []


@pytest.mark.parametrize("family", [*FAMILIES.values(), in_data], ids=[*FAMILIES, "in-data"])
def test_kv_values_refuse_each_family(api: Api, world: World, family: Family) -> None:
    secret = family()
    assert refused(api.call("POST", "/kv/remember", world.agent, {"key": "k", "value": secret}))
    assert refused(
        api.call("POST", "/kv/remember", world.agent, {"key": "k", "value": {"cfg": [secret]}})
    )
    status, body = api.call("POST", "/kv/recall", world.agent, {"key": "k"})
    assert status == 200 and body["found"] is False


def test_kv_keys_and_run_headers_refuse_known_shapes(api: Api, world: World) -> None:
    assert refused(api.call("POST", "/kv/remember", world.agent, {"key": glued_aws(), "value": 1}))
    for header in ("X-Pinework-Run", "X-Pinework-Session", "X-Pinework-Task"):
        answer = api.call(
            "POST", "/memories", world.agent, {"text": "a fact"}, headers={header: glued_aws()}
        )
        assert refused(answer), header


def test_a_long_base64_image_is_still_stored(api: Api, world: World) -> None:
    image = base64.b64encode(rng_for("channels-image").randbytes(300_000)).decode()
    value = f"data:image/png;base64,{image}"
    status, body = api.call("POST", "/kv/remember", world.agent, {"key": "img", "value": value})
    assert status == 200, body
