"""``pinework wiki …``: the workspace's shared pages (docs/reference.md#17-wiki-pages,
docs/reference.md#wiki-import). Registered on ``wiki`` by ``pinework.cli``.

``list``, ``show``, ``history`` read (an agent reads published pages only); ``create``,
``edit``, ``publish``, ``archive`` and ``import`` are for persons. A page is named by its
``pag_…`` id or its slug. Errors print ``error: <code>: <message>`` on stderr and exit 1
(``page_not_found``, ``page_slug_taken``, ``precondition_failed``, ``secret_in_memory``,
``memory_text_too_long``…); ``import`` goes on past a file it cannot bring in, says why,
and exits 1 at the end."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from pinework import _render
from pinework.cli import (
    LOCAL_ERROR,
    JsonFlag,
    _connections,
    _fail,
    _more,
    _run,
    make_client,
    wiki_app,
)
from pinework.client import Client
from pinework.errors import PineworkAPIError
from pinework.wiki_models import WikiPage, WikiPageList, WikiPageRevisionList, WikiPageSummary

PageRef = Annotated[str, typer.Argument(help="The page's id (pag_…) or slug.", metavar="PAGE")]
IfMatch = Annotated[
    str | None,
    typer.Option("--if-match", help="The page's etag as you read it: refused if it changed."),
]
TagOption = Annotated[
    list[str] | None, typer.Option("--tag", help="A tag (repeat the option for more).")
]
SLUG_MAX = 80
"""A slug's longest (docs/reference.md#17-wiki-pages)."""


def slug_of_file(path: Path) -> str:
    """The slug ``import`` gives a file: its name without ``.md``, accents dropped,
    lower-cased, every run of other characters one hyphen, cut to 80 characters at a
    hyphen (the server's rule for titles, docs/reference.md#wiki-import).

    Raises:
        ValueError: the name has no ASCII letter or digit.
    """
    plain = unicodedata.normalize("NFKD", path.stem).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")
    if len(slug) > SLUG_MAX:
        cut = slug[:SLUG_MAX]
        slug = (cut.rsplit("-", 1)[0] if "-" in cut else cut).strip("-")
    if not slug:
        raise ValueError(f"{path.name}: no slug can be made from this name (no a-z or 0-9)")
    return slug


def title_of(text: str, fallback: str) -> str:
    """A Markdown file's title: its first ``# `` heading's text, else ``fallback``."""
    for line in text.splitlines():
        found = re.match(r"^#\s+(.+?)\s*#*\s*$", line)
        if found:
            return found.group(1)[:200]
    return fallback[:200]


def _page_row(page: WikiPage | WikiPageSummary) -> str:
    return f"{page.id}  {page.state:<9}  {page.slug}  {page.title}"


def _echo_row(page: WikiPage) -> None:
    _render.echo(_page_row(page))


def _show(page: WikiPage) -> None:
    _render.echo(f"{page.id}  {page.state}  v{page.version}  etag {page.etag}")
    _render.echo(f"title: {page.title}")
    _render.echo(f"slug: {page.slug}")
    if page.tags:
        _render.echo(f"tags: {', '.join(page.tags)}")
    _render.echo("")
    _render.echo(page.text)


def _text_of(file: Path | None, text: str | None) -> str | None:
    """The page text from ``--file`` (UTF-8) or ``--text``; None for neither."""
    if file is not None and text is not None:
        raise ValueError("give --file or --text, not both")
    if file is not None:
        return file.read_text(encoding="utf-8")
    return text


@wiki_app.command("list")
def wiki_list(
    state: Annotated[
        str | None, typer.Option("--state", help="draft, published or archived (persons).")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, max=200)] = None,
    next_token: Annotated[str | None, typer.Option("--next-token")] = None,
    as_json: JsonFlag = False,
) -> None:
    """The workspace's pages, newest first: id, state, slug, title."""

    def render(found: WikiPageList) -> None:
        for page in found.data:
            _render.echo(_page_row(page))
        if not found.data:
            _render.echo("no pages")
        _more(found.next_token)

    _run(as_json, lambda c: c.list_pages(state=state, limit=limit, next_token=next_token), render)


@wiki_app.command("show")
def wiki_show(page: PageRef, as_json: JsonFlag = False) -> None:
    """One page with its text and etag."""
    _run(as_json, lambda c: c.get_page(page), _show)


@wiki_app.command("create")
def wiki_create(
    title: Annotated[str, typer.Option("--title", help="The page's title (one line).")],
    file: Annotated[
        Path | None, typer.Option("--file", help="The Markdown file.", exists=True, dir_okay=False)
    ] = None,
    text: Annotated[str | None, typer.Option("--text", help="The Markdown text.")] = None,
    slug: Annotated[str | None, typer.Option("--slug", help="Its slug (from the title).")] = None,
    tag: TagOption = None,
    publish: Annotated[bool, typer.Option("--publish", help="Publish it at once.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Create a draft page from --file or --text (and publish it with --publish)."""

    def create(client: Client) -> WikiPage:
        body = _text_of(file, text)
        if body is None:
            raise ValueError("give the page's text with --file or --text")
        page = client.create_page(title, body, slug=slug, tags=tag)
        return client.publish_page(page.id, if_match=page.etag) if publish else page

    _run(as_json, create, _echo_row)


@wiki_app.command("edit")
def wiki_edit(
    page: PageRef,
    title: Annotated[str | None, typer.Option("--title")] = None,
    file: Annotated[Path | None, typer.Option("--file", exists=True, dir_okay=False)] = None,
    text: Annotated[str | None, typer.Option("--text")] = None,
    slug: Annotated[str | None, typer.Option("--slug")] = None,
    tag: TagOption = None,
    clear_tags: Annotated[bool, typer.Option("--clear-tags", help="Remove every tag.")] = False,
    if_match: IfMatch = None,
    as_json: JsonFlag = False,
) -> None:
    """Change a draft or published page: the fields given."""

    def edit(client: Client) -> WikiPage:
        tags = [] if clear_tags else tag
        return client.edit_page(
            page,
            title=title,
            text=_text_of(file, text),
            slug=slug,
            tags=tags,
            if_match=if_match,
        )

    _run(as_json, edit, _echo_row)


@wiki_app.command("publish")
def wiki_publish(page: PageRef, if_match: IfMatch = None, as_json: JsonFlag = False) -> None:
    """Publish a draft or archived page: agents read it, recall matches its sections."""
    _run(as_json, lambda c: c.publish_page(page, if_match=if_match), _echo_row)


@wiki_app.command("archive")
def wiki_archive(page: PageRef, if_match: IfMatch = None, as_json: JsonFlag = False) -> None:
    """Archive a draft or published page (publish brings it back)."""
    _run(as_json, lambda c: c.archive_page(page, if_match=if_match), _echo_row)


@wiki_app.command("history")
def wiki_history(page: PageRef, as_json: JsonFlag = False) -> None:
    """A page's history, oldest first: each change with who made it and its text diff."""

    def render(records: WikiPageRevisionList) -> None:
        for record in records.data:
            moment = record.at.isoformat().replace("+00:00", "Z")
            _render.echo(f"v{record.version}  {moment}  {record.action}  {record.actor_id}")
            if record.diff:
                _render.echo(record.diff.rstrip("\n"))

    _run(as_json, lambda c: c.page_history(page), render)


@dataclass(frozen=True)
class Imported:
    """What ``import`` did with one file: ``created``, ``updated``, ``unchanged`` or
    ``failed`` (with the error), and whether it published the page."""

    file: str
    slug: str
    outcome: str
    page_id: str | None = None
    published: bool = False
    error: str | None = None


def import_file(client: Client, path: Path, *, publish: bool, tags: list[str] | None) -> Imported:
    """Bring one Markdown file in as the page of its file name's slug: created when no
    page has the slug, edited (``If-Match``: the page as just read) when its title or text
    differ, left alone when the same; then published with ``publish`` unless it is.

    Raises:
        PineworkAPIError: the server refused a step. ValueError: no slug from the name.
        UnicodeDecodeError: the file is not UTF-8.
    """
    slug = slug_of_file(path)
    text = path.read_text(encoding="utf-8")
    title = title_of(text, path.stem)
    try:
        page = client.get_page(slug)
    except PineworkAPIError as exc:
        if exc.code != "page_not_found":
            raise
        page = client.create_page(title, text, slug=slug, tags=tags)
        outcome = "created"
    else:
        if page.title == title and page.text == text:
            outcome = "unchanged"
        else:
            page = client.edit_page(slug, title=title, text=text, if_match=page.etag)
            outcome = "updated"
    published = publish and page.state != "published"
    if published:
        page = client.publish_page(page.id, if_match=page.etag)
    return Imported(path.name, slug, outcome, page.id, published)


@wiki_app.command("import")
def wiki_import(
    folder: Annotated[
        Path,
        typer.Argument(help="A folder of Markdown files (*.md).", file_okay=False, exists=True),
    ],
    publish: Annotated[bool, typer.Option("--publish", help="Publish every page.")] = False,
    tag: TagOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Bring a folder's Markdown files in, one page each, its slug from the file name and
    its title from the first '# ' heading. Run again, it changes only what changed: a page
    of the same slug is edited when its title or text differ, else left alone. Prints one
    line a file: outcome, slug, page id."""
    files = sorted(folder.glob("*.md"))
    if not files:
        _fail(LOCAL_ERROR, f"{folder} holds no .md file", as_json)
    results: list[Imported] = []
    try:
        with (_connections().client or make_client)() as client:
            for path in files:
                try:
                    results.append(import_file(client, path, publish=publish, tags=tag))
                except PineworkAPIError as exc:
                    results.append(
                        Imported(path.name, "", "failed", error=f"{exc.code}: {exc.message}")
                    )
                except (ValueError, UnicodeDecodeError) as exc:
                    results.append(Imported(path.name, "", "failed", error=str(exc)))
    except ValueError as exc:  # a bad PINEWORK_API_URL
        _fail(LOCAL_ERROR, str(exc), as_json)
    for done in results:
        if as_json:
            _render.echo(_render.to_json(done.__dict__))
        elif done.error:
            _render.echo(f"failed     {done.file}: {done.error}", err=True)
        else:
            note = " (published)" if done.published else ""
            _render.echo(f"{done.outcome:<10} {done.slug}  {done.page_id}{note}")
    if any(done.error for done in results):
        raise typer.Exit(1)
