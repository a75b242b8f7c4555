"""Demo data for the browser tests, the screenshots and a look around: a few agents
with a month of facts, day logs, recalls, vetoes, archives, supersedes and a review
waiting for approval, plus one agent whose every text is a hostile payload.

It runs the services in-process against the local server's embedded DynamoDB, with
a clock moved day by day (the only way to write a month of history in a second);
everything goes through the same services and rules as the API.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

from chalicelib.ids import FixedClock
from chalicelib.models.principal import Principal
from chalicelib.models.requests import ArchiveRequest, RecallRequest, SaveFactRequest
from chalicelib.models.review_requests import RunReviewRequest
from chalicelib.services.run_context import RunContext
from chalicelib.settings import Settings
from chalicelib.wiring import Services, build_services

HOSTILE = [
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned='img'\">",
    "<a href=\"javascript:window.__pwned='link'\">click me</a>",
    "<svg onload=\"window.__pwned='svg'\"><circle r=9></circle></svg>",
    "<style>body{display:none !important}</style>"
    '<div style="position:fixed;inset:0;background:red">css</div>',
    "\"><script>window.__pwned='attr'</script><x y=\"",
    '{{7*7}} ${7*7} </textarea></pre><b id="injected">bold</b>',
    "javascript:window.__pwned='url'",
]
"""Payloads an agent might write: scripts, event handlers, javascript: URLs, SVG, CSS,
attribute breakouts, template syntax. Each must show as inert text."""

BUILDER_FACTS = [
    ("The staging deploy needs the VPN on (source: PIN-812)", "PIN-812"),
    ("Staging deploys go through the bastion host bastion-2", "PIN-812"),
    ("CI runs on GitHub Actions with the ubuntu-24.04 runner", "PIN-640"),
    ("The payments service owner is Dana Reyes", "PIN-655"),
    ("Feature flags live in flagctl; prod changes need two approvals", "PIN-701"),
    ("The checkout API times out after 30 seconds behind the load balancer", "PIN-733"),
    ("Use pnpm, not npm, in the web monorepo", "PIN-640"),
    ("The analytics warehouse is Snowflake, schema ANALYTICS_PROD", "PIN-745"),
    ("Database migrations run with alembic upgrade head before each deploy", "PIN-760"),
    ("The on-call rotation changes on Mondays at 09:00 UTC", "PIN-771"),
    ("Stripe webhooks are verified with the signing secret from the vault", "PIN-733"),
    ("Small PRs under 300 lines get reviewed the same day", "PIN-780"),
    ("The mobile app release train leaves every second Thursday", "PIN-791"),
    ("Error budgets are tracked in the SLO dashboard, 99.9% for checkout", "PIN-733"),
    ("The design system package is @acme/ui version 4", "PIN-802"),
]


OPS_FACTS = 60
"""Facts of ``ops-bot``: more than one page of the memory list (50)."""


@dataclass
class Seeded:
    """What the seed made: agents by name, and ids the tests look for."""

    agents: dict[str, str]
    person_id: str
    vetoed_id: str
    review_id: str


def services_at(settings: Settings, clock: FixedClock) -> Services:
    """Services on the local server's table with a movable clock."""
    return build_services(settings, clock=clock)


def local_settings(endpoint: str) -> Settings:
    """Settings for the local server's embedded AWS at ``endpoint``."""
    return Settings(
        table_name="pinework-local",
        bucket_name="pinework-local",
        dynamodb_endpoint=endpoint,
        s3_endpoint=endpoint,
        sqs_endpoint=endpoint,
    )


def seed(endpoint: str, demo: dict[str, str], *, now: datetime | None = None) -> Seeded:
    """Write the demo data into the local server's table (see the module doc).

    Every time is fixed from the start of "today" (UTC midnight), never from the time
    of day, so the same calendar days hold the same rows at 00:30 as at 23:30: the
    month of history ends yesterday, yesterday's day log is full, the person's
    changes and ``ops-bot``'s facts are yesterday evening, and the review runs at
    midnight for yesterday (the server's pages, on the real clock, agree).

    Args:
        endpoint: the embedded DynamoDB/S3 endpoint.
        demo: the local server's ``demo.json`` (workspace, agent, person, tokens).
        now: the real time (default: now), only its UTC date is used.
    """
    midnight = datetime.combine((now or datetime.now(UTC)).astimezone(UTC).date(), time(), UTC)
    yesterday = midnight - timedelta(days=1)
    clock = FixedClock(midnight - timedelta(days=30))
    wired = services_at(local_settings(endpoint), clock)
    person = wired.auth.authenticate(f"Bearer {demo['personToken']}")
    builder = wired.auth.authenticate(f"Bearer {demo['agentToken']}")
    workspace = demo["workspaceId"]
    researcher = _agent(wired, workspace, "researcher")
    hostile = _agent(wired, workspace, "<img src=x onerror=\"window.__pwned='name'\">bot")
    saved: list[str] = []
    for day in range(30):
        clock.set(midnight - timedelta(days=30 - day) + timedelta(hours=9))
        if day < len(BUILDER_FACTS):
            text, task = BUILDER_FACTS[day]
            run = RunContext(run_id=f"run_{day:04d}", task_key=task)
            memory = wired.memories.save(builder, _fact(text), run)
            saved.append(memory.id)
        task = f"PIN-{700 + day}"
        for line in range(2):
            # Two lines a day whose length varies, so the fill varies from day to day.
            note = f"step {line}: checked the {task} pipeline and left notes. " * (1 + day % 5)
            _day(wired, builder, note[:300].strip(), task)
        if day % 2 == 0:
            wired.recall.recall(
                builder,
                RecallRequest.model_validate({"query": "how do I deploy"}),
                RunContext(task_key="PIN-812"),
            )
        if day % 3 == 0:
            wired.memories.save(
                researcher,
                _fact(f"Paper {day}: retrieval beats fine-tuning here"),
                RunContext(task_key=f"RES-{day}"),
            )
    # A full day log yesterday, with a durable line the review lifts.
    clock.set(yesterday + timedelta(hours=10))
    _day(wired, builder, "!fact The staging database is db-stg-2", "PIN-815")
    while True:
        try:
            _day(wired, builder, "x" * 280, "PIN-815")
        except Exception:  # memory_day_full: the log is at its cap
            break
    clock.set(yesterday + timedelta(hours=20))
    vetoed = wired.memories.veto(person, saved[3], "Dana moved teams")
    wired.memories.archive(person, saved[6], ArchiveRequest(reason="we moved to npm workspaces"))
    newer = wired.memories.save(
        builder,
        _fact(
            "Staging deploys go through the bastion host bastion-3 since the move",
            supersedes=saved[1],
        ),
        RunContext(task_key="PIN-820"),
    )
    wired.memories.edit(
        person, newer.id, _edit("Staging deploys go through bastion-3 since the November move")
    )
    wired.memories.save(
        builder,
        _fact("CI runs on GitHub Actions with the ubuntu-24.04 runner"),
        RunContext(task_key="PIN-640"),
    )
    ops = _agent(wired, workspace, "ops-bot")
    for number in range(OPS_FACTS):
        clock.set(midnight - timedelta(hours=1, minutes=OPS_FACTS - number))
        wired.memories.save(
            ops,
            _fact(f"Runbook step {number}: restart worker pool {number % 7}"),
            RunContext(task_key=f"OPS-{number}"),
        )
    for payload in HOSTILE:
        wired.memories.save(
            hostile, _fact(payload, evidence=payload), RunContext(task_key=payload[:60])
        )
    _day(wired, hostile, HOSTILE[0], None)
    clock.set(midnight)
    wired.admin.set_review_approval(workspace, "required")
    report = wired.reviews.run_now(person, RunReviewRequest.model_validate({"agentId": builder.id}))
    wired.admin.set_review_approval(workspace, "none")
    return Seeded(
        agents={
            "builder": builder.id,
            "researcher": researcher.id,
            "hostile": hostile.id,
            "ops-bot": ops.id,
        },
        person_id=person.id,
        vetoed_id=vetoed.id,
        review_id=report.id,
    )


def _agent(wired: Services, workspace: str, name: str) -> Principal:
    issued = wired.admin.create_agent(workspace, name)
    return wired.auth.authenticate(f"Bearer {issued.token}")


def _fact(text: str, **extra: Any) -> SaveFactRequest:
    body = {"text": text, **{_camel(k): v for k, v in extra.items()}}
    return SaveFactRequest.model_validate(body)


def _edit(text: str) -> Any:
    from chalicelib.models.requests import EditRequest

    return EditRequest.model_validate({"text": text})


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _day(wired: Services, agent: Principal, line: str, task: str | None) -> None:
    wired.day_log.append_day_line(agent, line, RunContext(task_key=task))


def main() -> None:
    """``python -m tests.browser.seed <endpoint> <demo.json>``: seed, print what was made
    as JSON. Run as its own process so numpy starts on one BLAS thread (set by the
    caller): on a busy machine spinning BLAS threads made each embedding 15x slower."""
    import json
    import sys
    from dataclasses import asdict
    from pathlib import Path

    endpoint, demo_file = sys.argv[1], Path(sys.argv[2])
    seeded = seed(endpoint, json.loads(demo_file.read_text(encoding="utf-8")))
    sys.stdout.write(json.dumps(asdict(seeded)) + "\n")


if __name__ == "__main__":
    main()
