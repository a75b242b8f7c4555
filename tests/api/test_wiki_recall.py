"""Wiki pages matched at run start (docs/reference.md#page-sections,
docs/reference.md#wiki-in-recall, issue 45 item 2): the section index follows publish, edit
and archive of one page only; a recall scores the sections with the facts' scorer and cut
and shows the best in the block's ``--- WIKI ---`` part; the recall log and the preview
name them."""

from __future__ import annotations

from typing import Any

from chalicelib import wiring
from chalicelib.models.page import IndexedSection
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.wiki_sections import DynamoDBSectionIndex
from tests.helpers import TABLE, Api, World

RUNBOOK = (
    "Who is on call is in the rota.\n\n"
    "## Paging\n\nAcknowledge a page within 5 minutes in the pager app.\n\n"
    "## Restart the billing worker\n\n"
    "Run `kubectl rollout restart deploy/billing-worker -n billing` and watch the queue "
    "depth fall in the billing dashboard.\n"
)
STYLE = "## Commit messages\n\nWrite the subject in the imperative, at most 72 characters.\n"


def publish(api: Api, world: World, title: str, text: str) -> dict[str, Any]:
    status, _, page = api.send("POST", "/pages", world.person, {"title": title, "text": text})
    assert status == 201, page
    status, published = api.call("POST", f"/pages/{page['id']}/publish", world.person, {})
    assert status == 200, published
    return dict(published)


def index_of(dynamodb: Any) -> DynamoDBSectionIndex:
    return DynamoDBSectionIndex(DynamoDBTable(dynamodb, TABLE))


def test_publish_indexes_sections_edit_reindexes_that_page_archive_removes_them(
    api: Api, world: World, dynamodb: Any
) -> None:
    index = index_of(dynamodb)
    workspace = world.workspace_id
    status, _, draft = api.send(
        "POST", "/pages", world.person, {"title": "On-call runbook", "text": RUNBOOK}
    )
    assert status == 201
    assert index.sections(workspace) == []  # a draft is not indexed
    runbook = api.call("POST", f"/pages/{draft['id']}/publish", world.person, {})[1]
    style = publish(api, world, "Style guide", STYLE)
    sections = index.sections(workspace)
    ours = [s for s in sections if s.page_id == runbook["id"]]
    assert [(s.index, s.anchor, s.heading_path) for s in ours] == [
        (0, "", ("On-call runbook",)),
        (1, "paging", ("On-call runbook", "Paging")),
        (2, "restart-the-billing-worker", ("On-call runbook", "Restart the billing worker")),
    ]
    assert all(s.version == runbook["version"] and s.slug == "on-call-runbook" for s in ours)
    assert all(s.embedding for s in sections)  # computed on publish, not at recall
    style_before = [s for s in sections if s.page_id == style["id"]]

    status, edited = api.call(
        "PATCH", f"/pages/{runbook['id']}", world.person, {"text": "## Paging\n\nAnswer fast.\n"}
    )
    assert status == 200, edited
    after = index.sections(workspace)
    assert [(s.anchor, s.text, s.version) for s in after if s.page_id == runbook["id"]] == [
        ("paging", "Answer fast.", edited["version"])
    ]
    # the other page was not re-indexed: its items are as they were
    assert [s for s in after if s.page_id == style["id"]] == style_before

    assert api.call("POST", f"/pages/{runbook['id']}/archive", world.person)[0] == 200
    assert [s.page_id for s in index.sections(workspace)] == [style["id"]]
    # a draft's edit indexes nothing; publishing the archived page again does
    assert api.call("POST", f"/pages/{runbook['id']}/publish", world.person)[0] == 200
    assert {s.page_id for s in index.sections(workspace)} == {runbook["id"], style["id"]}


def test_an_older_version_never_overwrites_or_deletes_a_newer_ones_sections(
    dynamodb: Any,
) -> None:
    index = index_of(dynamodb)

    def section(version: int, at: int, text: str) -> IndexedSection:
        return IndexedSection("wsp_1", "pag_1", version, at, "", ("T",), "t", text)

    index.replace("wsp_1", "pag_1", 3, [section(3, 0, "new"), section(3, 1, "new too")])
    # indexing of version 2 arriving late: nothing of version 3 moves
    index.replace("wsp_1", "pag_1", 2, [section(2, 0, "old")])
    assert [(s.version, s.text) for s in index.sections("wsp_1")] == [(3, "new"), (3, "new too")]
    index.remove("wsp_1", "pag_1", 3)  # an archive at version 3 cannot remove version 3's
    assert len(index.sections("wsp_1")) == 2
    index.replace("wsp_1", "pag_1", 4, [section(4, 0, "four")])
    assert [(s.version, s.text) for s in index.sections("wsp_1")] == [(4, "four")]
    index.remove("wsp_1", "pag_1", 5)
    assert index.sections("wsp_1") == []
    assert index.sections("wsp_2") == []


def test_a_failed_indexing_leaves_the_page_change_committed(
    api: Api, world: World, wired: wiring.Services, monkeypatch: Any, dynamodb: Any
) -> None:
    def broken(*_: Any) -> None:
        raise RuntimeError("index down")

    monkeypatch.setattr(DynamoDBSectionIndex, "replace", broken)
    page = publish(api, world, "On-call runbook", RUNBOOK)
    assert page["state"] == "published"
    assert index_of(dynamodb).sections(world.workspace_id) == []
