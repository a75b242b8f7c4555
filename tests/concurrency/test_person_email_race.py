"""Eight concurrent ``create_person`` calls for one e-mail address leave one person
(docs/issues.md#issue-14): the claim and the person are one transaction. Run on the
embedded server, whose transactions are atomic and isolated as DynamoDB's are (in-process
moto restores a whole-table backup when a transaction fails, which can undo another
thread's write)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from chalicelib import wiring
from chalicelib.errors import PersonExists
from chalicelib.ids import IdFactory
from chalicelib.settings import Settings
from infra.tables import create_table
from tests.helpers import embedded_client


def test_concurrent_creations_of_one_email_leave_one_person(endpoint: str) -> None:
    client = embedded_client(endpoint)
    table = "race-" + IdFactory(wiring.SystemClock()).new("t").lower()
    create_table(client, table)
    services = wiring.build_services(Settings(table_name=table), client=client)
    workspace = services.admin.create_workspace("Acme")

    def create(number: int) -> str:
        try:
            return services.admin.create_person(
                workspace.id, f"{' ' * (number % 2)}Ana@example.com"
            ).id
        except PersonExists:
            return "refused"

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(create, range(8)))
    winners = [result for result in results if result != "refused"]
    assert len(winners) == 1
    found = client.scan(TableName=table)["Items"]
    persons = [item["id"]["S"] for item in found if item["pk"]["S"].startswith("PERSON#")]
    claims = [item for item in found if item["pk"]["S"].startswith("PERSONEMAIL#")]
    assert persons == winners and len(claims) == 1
