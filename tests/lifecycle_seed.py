"""A workspace seeded through every route, for the data lifecycle's tests
(docs/issues.md#issue-24-item-3): facts with evidence and run headers, day lines (one a
durable ``!fact``), a duplicate, a supersede, a person's edit and veto, another agent's
fact, a run-start and an on-demand recall, key-value entries (one spilled to S3), a
review that merges and lifts, an approval-mode review left pending, an agent's learning a
person approved, a published wiki page with its history, a sign-in link."""

from __future__ import annotations

from datetime import timedelta

from chalicelib import wiring
from chalicelib.ids import FixedClock
from tests.helpers import Api, World, review, save

TEXTS = [
    "The payroll database is pg-payroll-4471 in eu-central-1",
    "Dana Whitfield prefers invoices in PDF",
    "!fact The release train leaves on Thursdays at 15:00",
    "checked the flaky test in billing-svc-88",
    "Kiosk builds need node 20.11 exactly",
]


def seed(api: Api, world: World, wired: wiring.Services, clock: FixedClock) -> set[str]:
    """Use every route for the world's workspace; return the ids it made."""
    made: set[str] = {world.workspace_id, world.agent.id, world.other_agent.id, world.person.id}
    for number, text in enumerate(TEXTS):
        if text.startswith("!fact") or text.startswith("checked"):
            status, row = api.call("POST", "/memories/day", world.agent, {"line": text})
            assert status in (200, 201), row
            made.add(row["id"])
            continue
        headers = {"Idempotency-Key": f"seed-{number}", "X-Pinework-Run": f"run-{number}"}
        status, fact = api.call(
            "POST",
            "/memories",
            world.agent,
            {"text": text, "evidence": f"tool output: {text}"},
            headers=headers,
        )
        assert status == 201, fact
        made.add(fact["id"])
    duplicate = save(api, world, TEXTS[0].lower())
    made.add(duplicate["id"])
    first = save(api, world, "Kiosk builds need node 20.10")
    newer = save(api, world, "Kiosk builds need node 20.12", supersedes=first["id"])
    made |= {first["id"], newer["id"]}
    assert api.call("PATCH", f"/memories/{newer['id']}", world.person, {"text": TEXTS[4]})[0] == 200
    vetoed = save(api, world, "Prod deploys skip review on Fridays")
    assert (
        api.call("POST", f"/memories/{vetoed['id']}/veto", world.person, {"reason": "no"})[0] == 200
    )
    made.add(vetoed["id"])
    other = api.call("POST", "/memories", world.other_agent, {"text": TEXTS[1] + " too"})[1]
    made.add(other["id"])
    headers = {"X-Pinework-Session": "chat-1", "X-Pinework-Task": "PAY-1"}
    status, started = api.call(
        "POST",
        "/memories/recall/start",
        world.agent,
        {"sessionId": "chat-1", "resumed": False, "task": "payroll"},
        headers=headers,
    )
    assert status == 200, started
    assert api.call("POST", "/memories/recall", world.agent, {"query": "payroll"})[0] == 200
    big = "x" * (301 * 1024)
    for key, value in (("notes", TEXTS[1]), ("dump", big + TEXTS[0])):
        status, body = api.call("POST", "/kv/remember", world.person, {"key": key, "value": value})
        assert status == 200, body
    clock.set(clock.now() + timedelta(days=1))
    applied = review(api, world)  # merges the duplicate, lifts the !fact line
    made.add(applied["id"])
    assert any(a["action"] == "lift" for a in applied["applied"])
    wired.admin.set_review_approval(world.workspace_id, "required")
    save(api, world, "Dana Whitfield prefers invoices in PDF!")
    clock.set(clock.now() + timedelta(days=1))
    pending = review(api, world)
    made.add(pending["id"])
    status, learning = api.call("POST", "/learnings", world.agent, {"text": TEXTS[0] + " (shared)"})
    assert status == 201, learning
    approve = f"/learnings/{learning['id']}/approve"
    assert api.call("POST", approve, world.person, {})[0] == 200
    made.add(learning["id"])
    made.add(wiki_page(api, world))
    token = api.call("POST", "/sign-in-links", world.person, {})
    assert token[0] in (200, 201), token
    return made


def wiki_page(api: Api, world: World, extra: str = "") -> str:
    """A person's wiki page, edited (a history record with a diff) and published, with
    ``extra`` in its edited text; its id."""
    body = {"title": "Payroll runbook", "text": "# Payroll\n\nRestart from the runbook host.\n"}
    status, headers, page = api.send("POST", "/pages", world.person, body)
    assert status == 201, page
    text = f"# Payroll\n\nRestart pg-payroll from the runbook host. {extra}\n"
    status, edited = api.call(
        "PATCH",
        f"/pages/{page['id']}",
        world.person,
        {"text": text},
        headers={"If-Match": headers["ETag"]},
    )
    assert status == 200, edited
    assert api.call("POST", f"/pages/{page['id']}/publish", world.person, {})[0] == 200
    return str(page["id"])
