"""Wiki pages: Markdown documents a workspace shares with its agents
(docs/reference.md#17-wiki-pages, docs/issues.md#issue-45).

States (docs/reference.md#page-states): a new page is a ``draft``; a person publishes it
(``published``, what agents read) and archives it (``archived``, kept with its history,
read by persons only); an archived page may be published again. A person edits a draft
or published page (title, slug, text, tags); every change writes a history record with a
unified diff of the text. The title and text follow the stored-text rules and the secret
check of facts (``services.text.check_text``), with the same error codes. An agent reads
published pages only; the rest is for persons (``forbidden``).
"""

from __future__ import annotations

import difflib
import logging
import re
import unicodedata
from collections.abc import Callable
from datetime import datetime
from typing import Literal, Protocol

from chalicelib.errors import InvalidRequest, PageNotFound, PageStateConflict, PreconditionFailed
from chalicelib.ids import Clock, IdFactory
from chalicelib.limits import (
    MAX_LIVE_PAGES,
    PAGE_SLUG_MAX_CHARS,
    PAGE_TAG_MAX_CHARS,
    PAGE_TAGS_MAX,
    PAGE_TEXT_MAX_CHARS,
    PAGE_TITLE_MAX_CHARS,
)
from chalicelib.models.page import (
    PAGE_ID_PATTERN,
    SLUG_PATTERN,
    TAG_PATTERN,
    Page,
    PageAction,
    PageRevision,
    PageState,
)
from chalicelib.models.principal import Principal
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.text import SecretFinder, check_text
from chalicelib.services.wiki.index import SectionIndexer

logger = logging.getLogger(__name__)

PAGES_ARE_WRITTEN_BY_PERSONS = (
    "Only a person creates, edits, publishes or archives a wiki page, and reads drafts, "
    "archived pages and history: ask a person of your workspace. An agent reads the "
    "published pages (GET /pages)."
)
ExpectedVersions = Callable[[str], frozenset[int] | None] | None
"""What ``If-Match`` accepts, given the page's id (a page may be named by its slug):
the versions it names (possibly none: 412), or None (no check); None: no header."""
_MOVES = {
    "publish": (PageState.PUBLISHED, "published_at"),
    "archive": (PageState.ARCHIVED, "archived_at"),
}
"""Each state change: the state it leads to and the time it sets."""
_PAGE_ID = re.compile(PAGE_ID_PATTERN)
_SLUG = re.compile(SLUG_PATTERN)
_TAG = re.compile(TAG_PATTERN)


class PageStore(Protocol):
    """Wiki pages' persistence (``storage/wiki_pages.py``)."""

    def create(self, page: Page, revision: PageRevision, *, max_live: int) -> None:
        """Store a new page, claiming its slug (raises ``PageSlugTaken``)."""
        ...

    def change(self, before: Page, after: Page, revision: PageRevision, *, max_live: int) -> None:
        """Replace a page if its version did not move."""
        ...

    def get(self, workspace_id: str, page_id: str) -> Page | None:
        """One page of the workspace."""
        ...

    def page_id_of(self, workspace_id: str, slug: str) -> str | None:
        """The id of the page holding a slug."""
        ...

    def summaries(
        self, workspace_id: str, *, state: PageState, limit: int, after: str | None
    ) -> tuple[list[Page], str | None]:
        """One list page of a state's pages (without text), newest first."""
        ...

    def history(self, page_id: str) -> list[PageRevision]:
        """A page's records, oldest first."""
        ...


class PageService:
    """Create, edit, publish, archive and read wiki pages.

    Args:
        store: the pages' persistence.
        secrets: the secret detector (title and text).
        clock, ids: the time and new ids.
        version_changed: the store's "changed since read" exception.
        sections: the workspace's section index, kept in step with every change of a
            published page (docs/reference.md#page-sections); None: no index.
    """

    def __init__(
        self,
        store: PageStore,
        secrets: SecretFinder,
        clock: Clock,
        ids: IdFactory,
        *,
        version_changed: type[Exception],
        sections: SectionIndexer | None = None,
    ) -> None:
        self._sections = sections
        self._store = store
        self._secrets = secrets
        self._clock = clock
        self._ids = ids
        self._version_changed = version_changed

    def create(
        self,
        principal: Principal,
        *,
        title: str,
        text: str,
        slug: str | None = None,
        tags: list[str] | None = None,
    ) -> Page:
        """A person creates a draft page; ``slug`` defaults to one made from the title.

        Raises:
            Forbidden: an agent called.
            InvalidRequest: a blank title or text, control characters, a title with a line
                break, a bad slug or tag, a title no slug can be made from.
            MemoryTextTooLong: a title over 200 or a text over 40,000 characters.
            SecretInMemory: the title or text looks like a credential.
            PageSlugTaken: another page of the workspace has the slug.
            PageLimitReached: the workspace holds 2,000 draft and published pages.
        """
        refuse_agents(principal, PAGES_ARE_WRITTEN_BY_PERSONS)
        self._check_title(title)
        self._check_text(text)
        chosen = check_slug(slug) if slug is not None else slug_of(title)
        now = self._clock.now()
        page = Page(
            id=self._ids.new("pag"),
            workspace_id=principal.workspace_id,
            title=title,
            slug=chosen,
            text=text,
            tags=check_tags(tags or []),
            state=PageState.DRAFT,
            created_by=principal.id,
            created_at=now,
            updated_by=principal.id,
            updated_at=now,
        )
        revision = self._revision(principal, "create", None, page, now)
        self._store.create(page, revision, max_live=MAX_LIVE_PAGES)
        return page

    def get(self, principal: Principal, reference: str) -> Page:
        """One page of the caller's workspace by its ``pag_`` id or its slug; an agent
        reads published pages only.

        Raises:
            PageNotFound: no such page (another workspace's, a malformed reference, or
                one the agent may not read answer the same).
        """
        page_id = reference if _PAGE_ID.fullmatch(reference) else None
        if page_id is None and _SLUG.fullmatch(reference):
            page_id = self._store.page_id_of(principal.workspace_id, reference)
        found = None if page_id is None else self._store.get(principal.workspace_id, page_id)
        if found is None or (principal.is_agent and found.state is not PageState.PUBLISHED):
            raise PageNotFound(f"No page {reference!r} in your workspace.")
        return found

    def list_pages(
        self, principal: Principal, *, state: PageState | None, limit: int, after: str | None
    ) -> tuple[list[Page], str | None]:
        """The workspace's pages newest first (by creation), without their text: those
        in ``state`` (None: every state, for a person; the published ones, for an
        agent), after ``after`` (a page id); and the id to continue after.

        Raises:
            Forbidden: an agent asked for drafts or archived pages.
        """
        if principal.is_agent:
            if state not in (None, PageState.PUBLISHED):
                refuse_agents(principal, PAGES_ARE_WRITTEN_BY_PERSONS)
            state = PageState.PUBLISHED
        workspace = principal.workspace_id
        if state is not None:
            return self._store.summaries(workspace, state=state, limit=limit, after=after)
        found: list[Page] = []
        for each in PageState:
            found.extend(self._store.summaries(workspace, state=each, limit=limit, after=after)[0])
        found.sort(key=lambda page: page.id, reverse=True)
        if len(found) <= limit:
            return found, None
        return found[:limit], found[limit - 1].id

    def edit(
        self,
        principal: Principal,
        reference: str,
        *,
        title: str | None = None,
        slug: str | None = None,
        text: str | None = None,
        tags: list[str] | None = None,
        expected_versions: ExpectedVersions = None,
    ) -> Page:
        """A person edits a draft or published page (the fields given; none changed: no
        change and no record).

        Raises:
            Forbidden: an agent called.
            InvalidRequest: nothing to change was sent; a field breaks its rule (as
                ``create``).
            MemoryTextTooLong, SecretInMemory, PageSlugTaken: as ``create``.
            PageNotFound: no such page.
            PageStateConflict: the page is archived (publish it again first).
            PreconditionFailed: ``If-Match`` names another version, or it changed meanwhile.
        """
        refuse_agents(principal, PAGES_ARE_WRITTEN_BY_PERSONS)
        if title is None and slug is None and text is None and tags is None:
            raise InvalidRequest("Send at least one of title, slug, text, tags.")
        if title is not None:
            self._check_title(title)
        if text is not None:
            self._check_text(text)
        changes: dict[str, object] = {}
        if slug is not None:
            changes["slug"] = check_slug(slug)
        if tags is not None:
            changes["tags"] = check_tags(tags)
        if title is not None:
            changes["title"] = title
        if text is not None:
            changes["text"] = text
        before = self._current(principal, reference, expected_versions)
        if before.state is PageState.ARCHIVED:
            raise PageStateConflict(f"{before.id} is archived: publish it again before editing it.")
        if all(getattr(before, name) == value for name, value in changes.items()):
            return before
        return self._change(principal, before, "edit", changes)

    def publish(
        self, principal: Principal, reference: str, expected_versions: ExpectedVersions = None
    ) -> Page:
        """A person publishes a draft or archived page: agents read it from now on.

        Raises:
            Forbidden, PageNotFound, PreconditionFailed: as ``edit``.
            PageStateConflict: it is published already.
            PageLimitReached: publishing an archived page past the workspace's 2,000.
        """
        return self._move(principal, reference, expected_versions, "publish")

    def archive(
        self, principal: Principal, reference: str, expected_versions: ExpectedVersions = None
    ) -> Page:
        """A person archives a draft or published page: no agent reads it; it is kept,
        with its history, and may be published again.

        Raises:
            Forbidden, PageNotFound, PreconditionFailed: as ``edit``.
            PageStateConflict: it is archived already.
        """
        return self._move(principal, reference, expected_versions, "archive")

    def _move(
        self,
        principal: Principal,
        reference: str,
        expected_versions: ExpectedVersions,
        action: Literal["publish", "archive"],
    ) -> Page:
        """Publish or archive: the state and its time set, unless it is there already."""
        refuse_agents(principal, PAGES_ARE_WRITTEN_BY_PERSONS)
        before = self._current(principal, reference, expected_versions)
        state, stamp = _MOVES[action]
        if before.state is state:
            raise PageStateConflict(f"{before.id} is {state.value} already.")
        return self._change(principal, before, action, {"state": state, stamp: self._clock.now()})

    def history(self, principal: Principal, reference: str) -> list[PageRevision]:
        """A page's records, oldest first (persons only).

        Raises:
            Forbidden: an agent called.
            PageNotFound: as ``get``.
        """
        refuse_agents(principal, PAGES_ARE_WRITTEN_BY_PERSONS)
        return self._store.history(self.get(principal, reference).id)

    def _current(self, principal: Principal, reference: str, expected: ExpectedVersions) -> Page:
        found = self.get(principal, reference)
        versions = None if expected is None else expected(found.id)
        if versions is not None and found.version not in versions:
            raise PreconditionFailed(
                f"{found.id} changed since you read it (If-Match does not name its current "
                "version): read it again, then change it."
            )
        return found

    def _change(
        self, principal: Principal, before: Page, action: PageAction, changes: dict[str, object]
    ) -> Page:
        now = self._clock.now()
        after = before.model_copy(
            update={
                **changes,
                "updated_by": principal.id,
                "updated_at": now,
                "version": before.version + 1,
            }
        )
        revision = self._revision(principal, action, before, after, now)
        try:
            self._store.change(before, after, revision, max_live=MAX_LIVE_PAGES)
        except self._version_changed as changed:
            raise PreconditionFailed(
                f"{before.id} changed while you changed it: read it again, then change it."
            ) from changed
        self._index(before, after)
        return after

    def _index(self, before: Page, after: Page) -> None:
        """Re-index the changed page's sections (docs/reference.md#page-sections). The
        page's change is committed already: a failure here is logged, not raised (its
        sections stay as they were, and recall shows none of a page whose version moved
        on), and the page's next change or publish indexes it again."""
        if self._sections is None:
            return
        try:
            self._sections.changed(before, after)
        except Exception:
            logger.exception("wiki sections of %s v%d not indexed", after.id, after.version)

    def _revision(
        self,
        principal: Principal,
        action: PageAction,
        before: Page | None,
        after: Page,
        now: datetime,
    ) -> PageRevision:
        return PageRevision(
            id=self._ids.new("aud"),
            page_id=after.id,
            workspace_id=after.workspace_id,
            action=action,
            actor_type="agent" if principal.is_agent else "person",
            actor_id=principal.id,
            at=now,
            version=after.version,
            before=None if before is None else _snapshot(before),
            after=_snapshot(after),
            diff=text_diff(
                "" if before is None else before.text,
                after.text,
                before=f"{after.slug}.v{before.version}" if before else "/dev/null",
                after=f"{after.slug}.v{after.version}",
            ),
        )

    def _check_title(self, title: str) -> None:
        """A title: one line, the stored-text rules, at most 200 characters, no secret."""
        check_text(
            title,
            limit=PAGE_TITLE_MAX_CHARS,
            what="title",
            secrets=self._secrets,
            advice="Shorten it: the text holds the rest.",
        )
        if "\n" in title or "\r" in title:
            raise InvalidRequest("The title is one line: remove its line breaks.")

    def _check_text(self, text: str) -> None:
        """A page's text: the stored-text rules, at most 40,000 characters, no secret."""
        check_text(
            text,
            limit=PAGE_TEXT_MAX_CHARS,
            what="page text",
            secrets=self._secrets,
            advice="Split it into two pages.",
        )


def check_slug(slug: str) -> str:
    """A slug as given: lowercase ASCII letters and digits joined by single hyphens, at
    most 80 characters.

    Raises:
        InvalidRequest: it breaks that rule.
    """
    if len(slug) > PAGE_SLUG_MAX_CHARS or not _SLUG.fullmatch(slug):
        raise InvalidRequest(
            f"The slug {slug[:100]!r} is not valid: 1 to {PAGE_SLUG_MAX_CHARS} lowercase "
            "letters (a-z), digits and single hyphens between them, such as 'on-call-runbook'."
        )
    return slug


def slug_of(title: str) -> str:
    """The slug made from a title: accents dropped, every run of other characters one
    hyphen, lowercase, cut to 80 characters at a hyphen if it can.

    Raises:
        InvalidRequest: the title has no ASCII letter or digit (send a slug).
    """
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
    if len(slug) > PAGE_SLUG_MAX_CHARS:
        slug = slug[:PAGE_SLUG_MAX_CHARS]
        slug = slug.rsplit("-", 1)[0] if "-" in slug else slug
        slug = slug.strip("-")
    if not slug:
        raise InvalidRequest(
            "No slug can be made from this title (it has no letter a-z or digit): send a slug."
        )
    return slug


def check_tags(tags: list[str]) -> list[str]:
    """Tags as given, repeats dropped (first kept): at most 10, each 1 to 40 lowercase
    letters, digits, ``-`` or ``_``, starting with a letter or digit.

    Raises:
        InvalidRequest: a tag breaks that rule, or there are more than 10.
    """
    kept = list(dict.fromkeys(tags))
    if len(kept) > PAGE_TAGS_MAX:
        raise InvalidRequest(f"A page has at most {PAGE_TAGS_MAX} tags; {len(kept)} were sent.")
    for tag in kept:
        if len(tag) > PAGE_TAG_MAX_CHARS or not _TAG.fullmatch(tag):
            raise InvalidRequest(
                f"The tag {tag[:100]!r} is not valid: 1 to {PAGE_TAG_MAX_CHARS} lowercase "
                "letters, digits, '-' or '_', starting with a letter or digit."
            )
    return kept


def text_diff(old: str, new: str, *, before: str, after: str) -> str:
    """A unified diff (3 lines of context) from ``old`` to ``new``, its file names
    ``before`` and ``after``; empty when the texts are the same."""
    if old == new:
        return ""
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), fromfile=before, tofile=after, lineterm=""
    )
    return "\n".join(lines)


def _snapshot(page: Page) -> dict[str, object]:
    return {
        "title": page.title,
        "slug": page.slug,
        "tags": list(page.tags),
        "state": page.state.value,
    }
