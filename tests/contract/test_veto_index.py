"""The ``VetoIndex`` contract (chalicelib/storage/protocols.py): vetoed memories filed
by text keys, found with one lookup, per agent, plus the "earlier vetoes filed"
marker (docs/issues.md#issue-14-item-5).

Runs against every implementation in the ``vetoes`` fixture (today the DynamoDB
adapter on moto)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.protocols import VetoIndex
from chalicelib.storage.vetoes import DynamoDBVetoIndex

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable], VetoIndex]] = {
    "dynamodb": DynamoDBVetoIndex,
}
AGENT = "agt_01KAAAAAAAAAAAAAAAAAAAAAAA"


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def vetoes(request: pytest.FixtureRequest, table: DynamoDBTable) -> VetoIndex:
    return IMPLEMENTATIONS[request.param](table)


def test_filed_memories_are_found_by_any_of_their_keys(vetoes: VetoIndex) -> None:
    assert vetoes.candidates(AGENT, ["TEXT#a", "SAME#b"]) == (set(), False)
    vetoes.add(AGENT, "mem_1", ["TEXT#a", "SAME#b"])
    vetoes.add(AGENT, "mem_2", ["TEXT#c", "SAME#b"])
    vetoes.add(AGENT, "mem_2", ["TEXT#c", "SAME#b"])  # idempotent
    assert vetoes.candidates(AGENT, ["TEXT#a", "SAME#x"]) == ({"mem_1"}, False)
    assert vetoes.candidates(AGENT, ["TEXT#z", "SAME#b"]) == ({"mem_1", "mem_2"}, False)
    assert vetoes.candidates("agt_01KBBBBBBBBBBBBBBBBBBBBBBB", ["TEXT#a"]) == (set(), False)
    vetoes.mark_indexed(AGENT)
    vetoes.mark_indexed(AGENT)
    assert vetoes.candidates(AGENT, ["TEXT#none"]) == (set(), True)
