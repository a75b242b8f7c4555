"""Keyed digests (chalicelib/services/keyed_hash.py): what they depend on, the order
lookups try them in, and the secret's two stored forms."""

from __future__ import annotations

import hashlib
import json

import pytest

from chalicelib.services.keyed_hash import EMAIL, NETWORK, HashSecrets, KeyedHash

A = "A" * 40
B = "B" * 40


def test_a_digest_depends_on_the_secret_and_the_purpose_and_is_not_plain_sha256() -> None:
    first = KeyedHash(lambda: HashSecrets(A))
    digest = first.digest(NETWORK, "203.0.113.7")
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert digest != hashlib.sha256(b"203.0.113.7").hexdigest()
    assert digest != first.digest(EMAIL, "203.0.113.7")
    assert digest != KeyedHash(lambda: HashSecrets(B)).digest(NETWORK, "203.0.113.7")
    assert digest == KeyedHash(lambda: HashSecrets(A)).digest(NETWORK, "203.0.113.7")


def test_lookups_try_the_current_secret_then_previous_ones_then_unkeyed() -> None:
    rotated = KeyedHash(lambda: HashSecrets(B, (A,)))
    found = rotated.candidates(NETWORK, "x")
    assert found == [
        KeyedHash(lambda: HashSecrets(B)).digest(NETWORK, "x"),
        KeyedHash(lambda: HashSecrets(A)).digest(NETWORK, "x"),
        hashlib.sha256(b"x").hexdigest(),
    ]
    assert rotated.emails(" Ana@EXAMPLE.com") == rotated.candidates(EMAIL, "ana@example.com")


def test_the_secret_is_loaded_once_on_the_first_digest() -> None:
    loads: list[int] = []

    def load() -> HashSecrets:
        loads.append(1)
        return HashSecrets(A)

    digests = KeyedHash(load)
    assert loads == []
    digests.digest(NETWORK, "a")
    digests.digest(EMAIL, "b")
    assert loads == [1]


def test_the_secret_is_json_with_previous_ones_or_one_string() -> None:
    assert HashSecrets.parse(json.dumps({"current": A, "previous": [B]})) == HashSecrets(A, (B,))
    assert HashSecrets.parse(json.dumps({"current": A, "previous": []})) == HashSecrets(A)
    assert HashSecrets.parse(f"  {A}\n") == HashSecrets(A)
    for bad in (
        "short",
        json.dumps({"previous": [A]}),
        json.dumps({"current": A, "previous": ["x"]}),
        "{",
    ):
        with pytest.raises(ValueError, match="hash secret"):
            HashSecrets.parse(bad)
