"""The dashboard's Wiki pages (docs/reference.md#wiki-on-the-dashboard,
docs/issues.md#issue-45): the workspace's wiki pages (filtered by state) with a form to
create one; each page's view (its Markdown source, shown as text: nothing in it is
markup to the browser), its edit form, publish and archive, and its history with each
change's diff. Every change form carries the version it was made from: a stale one is
refused (412) with the page as it stands now, as memory edits are."""

from __future__ import annotations

from chalicelib.errors import InvalidRequest, PineworkError, PreconditionFailed
from chalicelib.models.page import PageState
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.http import WebResponse
from chalicelib.web.views.stale import form_version

PAGES_SHOWN = 200
"""Wiki pages on the list at most (``MAX_PAGE_LIST``: one list page)."""
STALE_PAGE = (
    "This page changed since you opened it: someone edited, published or archived it "
    "first. Nothing you sent was saved. It is shown here as it stands now, with what you "
    "typed below it."
)


def wiki_page(
    web: WebContext, *, error: FormError | None = None, form: dict[str, str] | None = None
) -> WebResponse:
    """``GET /wiki``: the workspace's wiki pages newest first, ``state`` keeping one state,
    and the create form (``error`` and ``form``: its refusal and what was typed).

    Raises:
        InvalidRequest: ``state`` is not a page state.
    """
    state_text = web.request.param("state") or ""
    if state_text and state_text not in {state.value for state in PageState}:
        raise InvalidRequest("state must be draft, published or archived.")
    found, more = web.services.pages.list_pages(
        web.principal,
        state=PageState(state_text) if state_text else None,
        limit=PAGES_SHOWN,
        after=None,
    )
    return web.page(
        "wiki.html",
        status=error.status if error else 200,
        nav="wiki",
        pages=found,
        cut=more is not None,
        state=state_text,
        states=[state.value for state in PageState],
        error=error,
        form=form or {},
    )


def create(web: WebContext) -> WebResponse:
    """``POST /wiki`` (form ``title``, ``slug`` (blank: made from the title), ``text``,
    ``tags`` (comma- or space-separated)): 303 to the new draft's page with
    ``?done=page-created``; a refusal answers the list with the error's status, the error
    next to the form and what was typed kept."""
    form = web.request.form()
    try:
        page = web.services.pages.create(
            web.principal,
            title=form.get("title", ""),
            text=form.get("text", ""),
            slug=form.get("slug", "").strip() or None,
            tags=_tags(form.get("tags", "")),
        )
    except PineworkError as error:
        return wiki_page(web, error=FormError.of(error, "create"), form=form)
    return web.back({}, f"/wiki/{page.id}", done="page-created")


def page_view(
    web: WebContext,
    page_ref: str,
    *,
    errors: dict[str, FormError] | None = None,
    form: dict[str, str] | None = None,
) -> WebResponse:
    """``GET /wiki/{id or slug}``: the page (title, slug, tags, state, who changed it),
    its text, the edit form and the publish or archive form its state allows (each with
    its ``version``), and its history (oldest first, each change's diff). ``errors`` maps
    a form (``edit``, ``publish``, ``archive``) to the error shown next to it.

    Raises:
        PageNotFound: no such page in the person's workspace (404).
    """
    page = web.services.pages.get(web.principal, page_ref)
    history = web.services.pages.history(web.principal, page.id)
    errors = errors or {}
    return web.page(
        "wiki_page.html",
        status=next(iter(errors.values())).status if errors else 200,
        nav="wiki",
        page=page,
        history=history,
        errors=errors,
        form=form or {},
    )


def change(web: WebContext, page_ref: str, verb: str) -> WebResponse:
    """``POST /wiki/{id}/{verb}``, ``verb`` one of ``edit`` (form ``title``, ``slug``,
    ``text``, ``tags``), ``publish`` or ``archive``. Every form carries ``version``,
    sent as the expected version; 303 back to the page with ``?done=page-<verb>``. A
    refusal answers the page with the error's status next to the form, what was typed
    kept: ``precondition_failed`` (412: the form is stale), ``invalid_request``,
    ``memory_text_too_long``, ``secret_in_memory``, ``page_slug_taken``,
    ``page_state_conflict``, ``page_limit_reached``.

    Raises:
        PageNotFound: no such page in the person's workspace (404).
    """
    form = web.request.form()
    service = web.services.pages
    try:
        versions = form_version(form, "page")

        def expected(_: str) -> frozenset[int]:
            return versions

        if verb == "edit":
            page = service.edit(
                web.principal,
                page_ref,
                title=form.get("title", ""),
                slug=form.get("slug", ""),
                text=form.get("text", ""),
                tags=_tags(form.get("tags", "")),
                expected_versions=expected,
            )
        elif verb == "publish":
            page = service.publish(web.principal, page_ref, expected)
        else:
            page = service.archive(web.principal, page_ref, expected)
    except PreconditionFailed as stale:
        failure = FormError(stale.code, STALE_PAGE, verb)
        return page_view(web, page_ref, errors={verb: failure}, form=form)
    except PineworkError as error:
        return page_view(web, page_ref, errors={verb: FormError.of(error, verb)}, form=form)
    return web.back({}, f"/wiki/{page.id}", done=f"page-{verb}")


def _tags(value: str) -> list[str]:
    """Tags typed in one field, separated by commas or spaces."""
    return [tag for tag in value.replace(",", " ").split() if tag]
