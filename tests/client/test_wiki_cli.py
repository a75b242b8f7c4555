"""``pinework wiki …`` and the clients' wiki methods against the real app
(docs/reference.md#17-wiki-pages, docs/reference.md#wiki-import): a folder imported, then
imported again changing only what changed, each command's output, the slug and title
rules, and the errors a person and an agent meet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from pinework import Client, cli
from pinework.cli_wiki import slug_of_file, title_of
from tests.helpers import Actor, InjectedCliRunner, World

RUNBOOK = "# On-call runbook\n\n## Paging\n\nPage the secondary after 15 minutes.\n"
STYLE = "Use the active voice.\n\n## Code\n\nFormat with ruff.\n"


def run(transport: httpx.MockTransport, actor: Actor, *args: str) -> Any:
    runner = InjectedCliRunner(cli.Connections(client=lambda: Client.from_env(transport=transport)))
    env = {"PINEWORK_API_URL": "http://pinework.test", "PINEWORK_TOKEN": actor.token}
    return runner.invoke(cli.app, ["wiki", *args], env=env)


def outcomes(result: Any) -> dict[str, str]:
    """``import``'s lines as slug -> outcome."""
    return {line.split()[1]: line.split()[0] for line in result.stdout.splitlines()}


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("On-call Runbook.md", "on-call-runbook"),
        ("café_notes.md", "cafe-notes"),
        ("__init__.md", "init"),
        ("a" * 50 + "-" + "b" * 50 + ".md", "a" * 50),
    ],
)
def test_a_files_slug_follows_the_servers_title_rule(name: str, slug: str) -> None:
    assert slug_of_file(Path(name)) == slug


def test_a_name_without_a_letter_or_digit_has_no_slug() -> None:
    with pytest.raises(ValueError, match="no slug"):
        slug_of_file(Path("___.md"))


def test_the_title_is_the_first_level_one_heading_else_the_name() -> None:
    assert title_of(RUNBOOK, "runbook") == "On-call runbook"
    assert title_of("## Sub\n# Main #\n", "x") == "Main"
    assert title_of(STYLE, "style-guide") == "style-guide"


def test_import_creates_then_changes_only_what_changed(
    app_transport: httpx.MockTransport, world: World, tmp_path: Path
) -> None:
    (tmp_path / "on-call.md").write_text(RUNBOOK, encoding="utf-8")
    (tmp_path / "Style Guide.md").write_text(STYLE, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not markdown", encoding="utf-8")
    first = run(app_transport, world.person, "import", str(tmp_path), "--publish")
    assert first.exit_code == 0, first.output
    assert outcomes(first) == {"on-call": "created", "style-guide": "created"}
    assert "(published)" in first.stdout
    again = run(app_transport, world.person, "import", str(tmp_path), "--publish")
    assert outcomes(again) == {"on-call": "unchanged", "style-guide": "unchanged"}
    (tmp_path / "on-call.md").write_text(RUNBOOK + "\nCall the lead after 30.\n", encoding="utf-8")
    third = run(app_transport, world.person, "import", str(tmp_path))
    assert outcomes(third) == {"on-call": "updated", "style-guide": "unchanged"}
    with Client("http://pinework.test", token=world.agent.token, transport=app_transport) as agent:
        page = agent.get_page("on-call")
        assert page.title == "On-call runbook" and page.text.endswith("Call the lead after 30.\n")
        assert page.state == "published" and page.version == 3
        listed = agent.list_pages()
        assert sorted(item.slug for item in listed.data) == ["on-call", "style-guide"]
    history = run(app_transport, world.person, "history", "on-call")
    assert history.exit_code == 0
    assert [line.split()[2] for line in history.stdout.splitlines() if line.startswith("v")] == [
        "create",
        "publish",
        "edit",
    ]
    assert "+Call the lead after 30." in history.stdout


def test_import_goes_on_past_a_refused_file_and_exits_1(
    app_transport: httpx.MockTransport, world: World, tmp_path: Path
) -> None:
    (tmp_path / "keys.md").write_text(
        "# Keys\n\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
        encoding="utf-8",
    )
    (tmp_path / "ok.md").write_text(STYLE, encoding="utf-8")
    (tmp_path / "latin.md").write_bytes("# T\n\ncaf\xe9".encode("latin-1"))
    result = run(app_transport, world.person, "import", str(tmp_path))
    assert result.exit_code == 1
    assert "created    ok" in result.stdout
    assert "keys.md: secret_in_memory" in result.stderr
    assert "latin.md:" in result.stderr and "utf-8" in result.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = run(app_transport, world.person, "import", str(empty))
    assert nothing.exit_code == 2 and "holds no .md file" in nothing.stderr


def test_create_edit_publish_archive_and_show(
    app_transport: httpx.MockTransport, world: World, tmp_path: Path
) -> None:
    created = run(
        app_transport,
        world.person,
        "create",
        "--title",
        "Deploys",
        "--text",
        "Ship on Tuesdays.",
        "--tag",
        "ops",
    )
    assert created.exit_code == 0, created.output
    page_id, state, slug = created.stdout.split()[:3]
    assert page_id.startswith("pag_") and (state, slug) == ("draft", "deploys")
    shown = json.loads(run(app_transport, world.person, "show", "deploys", "--json").stdout)
    assert shown["tags"] == ["ops"] and shown["text"] == "Ship on Tuesdays."
    stale = run(
        app_transport, world.person, "edit", "deploys", "--text", "x", "--if-match", '"pag_x.v9"'
    )
    assert stale.exit_code == 1 and "precondition_failed" in stale.stderr
    edited = run(
        app_transport,
        world.person,
        "edit",
        "deploys",
        "--text",
        "Ship on Wednesdays.",
        "--clear-tags",
    )
    assert edited.exit_code == 0, edited.output
    assert run(app_transport, world.person, "publish", "deploys").stdout.split()[1] == "published"
    shown_text = run(app_transport, world.agent, "show", "deploys").stdout
    assert "Ship on Wednesdays." in shown_text and "tags:" not in shown_text
    assert run(app_transport, world.person, "archive", page_id).stdout.split()[1] == "archived"
    hidden = run(app_transport, world.agent, "show", "deploys")
    assert hidden.exit_code == 1 and "page_not_found" in hidden.stderr
    refused = run(app_transport, world.agent, "create", "--title", "Mine", "--text", "agent text")
    assert refused.exit_code == 1 and "forbidden" in refused.stderr
    both = run(
        app_transport, world.person, "create", "--title", "T", "--text", "a", "--file", __file__
    )
    assert both.exit_code == 2 and "not both" in both.stderr
