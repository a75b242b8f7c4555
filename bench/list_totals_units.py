"""Read units of the dashboard's list totals (docs/reference.md#list-totals): what one
page's count costs beside the page's own reads, for lists longer than each count's
cap, measured by ``infra/capacity.py``'s meter on in-process moto.

Seeds one agent with ``--facts`` live facts (embedded as a save stores them), 600
review actions waiting for a person and 250 recall log entries (a 100-character query,
ten memories given), then meters, on the first and a later page: the memory list page
(``MemoryBrowser.page``: the list and its count), the count alone, and the Waiting
list's and the recall log's pages and counts. A review summary's count is sized from
its stored item (one summary a day: a year is 365 items).

Usage: ``.venv/bin/python bench/list_totals_units.py [--facts 1500]``
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
for _name, _value in {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
}.items():
    os.environ.setdefault(_name, _value)

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

import boto3  # noqa: E402
from moto import mock_aws  # noqa: E402

from chalicelib import wiring  # noqa: E402
from chalicelib.ids import FixedClock, IdFactory  # noqa: E402
from chalicelib.limits import (  # noqa: E402
    MEMORY_LIST_COUNT_MAX,
    PENDING_COUNT_MAX,
    RECALL_LOG_COUNT_MAX,
    REVIEWS_COUNT_MAX,
)
from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus  # noqa: E402
from chalicelib.models.recall import RecalledMemory, RecallLogEntry  # noqa: E402
from chalicelib.models.review import PendingAction, ReviewAction, ReviewSummary  # noqa: E402
from chalicelib.services.memory.browse import BrowseFilters  # noqa: E402
from chalicelib.settings import Settings  # noqa: E402
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes  # noqa: E402
from chalicelib.storage.memory_index import DynamoDBMemoryIndexRepository  # noqa: E402
from chalicelib.storage.recalls import DynamoDBRecallRepository  # noqa: E402
from chalicelib.storage.review_actions import DynamoDBPendingRepository  # noqa: E402
from chalicelib.storage.reviews import summary_to_item  # noqa: E402
from infra.capacity import CapacityMeter, item_size, read_units  # noqa: E402
from infra.local_dynamodb import memory_items, put_items  # noqa: E402
from infra.tables import create_table  # noqa: E402

TABLE = "list-totals"
NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def metered(meter: CapacityMeter, action: Callable[[], object]) -> float:
    """The read units of one run of ``action``."""
    with meter.measure() as tally:
        action()
    return tally.read_units


def main() -> None:
    """Seed, meter and print one line per list and page."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=1500)
    facts = parser.parse_args().facts
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        seed = boto3.client("dynamodb", region_name="us-east-1")
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="list-totals")
        create_table(seed, TABLE)
        clock = FixedClock(NOW)
        services = wiring.build_services(
            Settings(table_name=TABLE, bucket_name="list-totals", read_concurrency=1),
            clock=clock,
            client=client,
        )
        workspace = services.admin.create_workspace("bench")
        agent = services.admin.create_agent(workspace.id, "bench")
        person_token = services.admin.create_person(workspace.id, "ops@example.com").token
        person = services.auth.authenticate(f"Bearer {person_token}")
        ids = IdFactory(clock)
        texts = [f"The uploader {n} retries five times before it gives up" for n in range(facts)]
        embedder = wiring.default_embedder()
        vectors = [v for start in range(0, facts, 64) for v in embedder.embed(texts[start:][:64])]
        memories = [
            Memory(
                embedding=vector,
                id=ids.new("mem"),
                workspace_id=workspace.id,
                agent_id=agent.id,
                kind=MemoryKind.FACT,
                text=text,
                expires_at=NOW + timedelta(days=90),
                created_at=NOW,
                updated_at=NOW,
            )
            for text, vector in zip(texts, vectors, strict=True)
        ]
        put_items(seed, TABLE, memory_items(memories))
        table = DynamoDBTable(seed, TABLE)
        waiting = [
            PendingAction(
                review_id="rvw_" + ids.new("x")[2:],
                agent_id=agent.id,
                date="2026-12-06",
                approval="required",
                waiting_since=NOW,
                action=ReviewAction(
                    id="a1",
                    action="archive",
                    memory_ids=[memories[n].id],
                    reason="stale: not recalled in 30 days, and the uploader changed since",
                ),
            )
            for n in range(600)
        ]
        DynamoDBPendingRepository(table, clock).put_pending(workspace.id, waiting, {})
        recalls = DynamoDBRecallRepository(table, clock)
        for n in range(250):
            entry = RecallLogEntry(
                id=ids.new("rcl"),
                workspace_id=workspace.id,
                agent_id=agent.id,
                kind="on_demand",
                query=f"How many times does the uploader retry before it gives up? ({n:04d})",
                at=NOW,
                memories=[RecalledMemory(memory_id=m.id, score=0.5) for m in memories[:10]],
            )
            recalls.commit_recall([], entry, NOW)

        meter = CapacityMeter(client, reader=seed)
        browser = services.dashboard.browser
        index = DynamoDBMemoryIndexRepository(DynamoDBTable(client, TABLE))
        reviews = services.reviews
        first = browser.page(person, agent.id, BrowseFilters(), limit=50)
        later = first.continue_after
        rows: list[tuple[str, float]] = []

        def count_memories(after: str | None) -> object:
            return index.count_page(
                agent.id,
                [MemoryKind.FACT],
                list(MemoryStatus),
                after,
                expired=None,
                now=NOW,
                cap=MEMORY_LIST_COUNT_MAX,
            )

        for label, after in (("page 1", None), ("page 2", later)):
            rows.append(
                (
                    f"memory list {label}: page + count",
                    metered(
                        meter,
                        lambda a=after: browser.page(
                            person, agent.id, BrowseFilters(kind="fact"), limit=50, after_id=a
                        ),
                    ),
                )
            )
            rows.append(
                (
                    f"memory list {label}: count alone",
                    metered(meter, lambda a=after: count_memories(a)),
                )
            )
        _, pending_after = reviews.list_pending(person, None, 50, None)
        for label, after in (("page 1", None), ("page 2", pending_after)):
            rows.append(
                (
                    f"waiting list {label}: page",
                    metered(meter, lambda a=after: reviews.list_pending(person, None, 50, a)),
                )
            )
            rows.append(
                (
                    f"waiting list {label}: count",
                    metered(
                        meter,
                        lambda a=after: reviews.count_pending(person, None, a, PENDING_COUNT_MAX),
                    ),
                )
            )
        _, log_after = services.recall.log(person, agent.id, 20, None)
        for label, after in (("page 1", None), ("page 2", log_after)):
            rows.append(
                (
                    f"recall log {label}: page",
                    metered(meter, lambda a=after: services.recall.log(person, agent.id, 20, a)),
                )
            )
            rows.append(
                (
                    f"recall log {label}: count",
                    metered(
                        meter,
                        lambda a=after: services.recall.log_total(
                            person, agent.id, a, RECALL_LOG_COUNT_MAX
                        ),
                    ),
                )
            )
        summary = ReviewSummary(
            id=ids.new("rvw"),
            workspace_id=workspace.id,
            agent_id=agent.id,
            date="2026-12-06",
            trigger="schedule",
            reviewer="rules",
            started_at=NOW,
            finished_at=NOW,
            planned=3,
            applied=2,
            skipped=1,
            report_key=f"reviews/{workspace.id}/{agent.id}/rvw.json",
        )
        stored = {"pk": f"REVIEWS#{agent.id}", "sk": summary.id, **summary_to_item(summary)}
        size = item_size(to_attributes(stored))
        year = read_units(size * 365, consistent=False)
        cap = read_units(size * REVIEWS_COUNT_MAX, consistent=False)
        print(
            f"facts seeded: {facts}; caps: memories {MEMORY_LIST_COUNT_MAX}, waiting "
            f"{PENDING_COUNT_MAX}, recall log {RECALL_LOG_COUNT_MAX}, reports {REVIEWS_COUNT_MAX}"
        )
        for label, units in rows:
            print(f"{label:42} {units:8.1f} read units")
        print(
            f"{'review summary item':42} {size:8d} bytes; a year's count {year:.1f}, "
            f"the cap's {cap:.1f} read units"
        )


if __name__ == "__main__":
    main()
