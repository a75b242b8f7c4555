"""Templates of the dashboard (Jinja2, autoescaping on for every template) and the
filters they share (docs/reference.md#13-dashboard, docs/issues.md#issue-13).

Everything an agent wrote (facts, day lines, task keys, reasons, evidence, notes)
reaches a page only through Jinja's escaping: no template marks agent text
``safe``, and no agent text is ever a whole URL or a script. Control, format and
separator characters in stored text (a right-to-left override that would spoof a
file name, zero-width spaces, tag characters) are shown as visible markers naming
them (the ``visible`` filter), never rendered live. Times are shown in UTC, as
stored.
"""

from __future__ import annotations

import functools
import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from chalicelib.characters import INVISIBLE_CHARACTERS, invisible_found, mark_invisible, marker
from chalicelib.models.totals import ListTotal

# Jinja2 loads on the first page rendered, not at cold start (docs/issues.md#issue-12)
if TYPE_CHECKING:
    from jinja2 import Environment
    from markupsafe import Markup

WEB_DIR = Path(__file__).resolve().parent
TEMPLATES = WEB_DIR / "templates"
STATIC = WEB_DIR / "static"

_INVISIBLE = re.compile(f"[{INVISIBLE_CHARACTERS}]")
"""The code points a page must not render live (``chalicelib.characters``, shared with
the run-start block and the CLI's list)."""


@functools.cache
def environment() -> Environment:
    """The one Jinja environment (built on first use, cached for the process; Jinja2
    itself is imported here, so API-only containers never load it)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    env.filters["day"] = day
    env.filters["ago"] = ago
    env.filters["count"] = count
    env.filters["counted"] = counted
    env.filters["range_of"] = range_of
    env.filters["score"] = score
    env.filters["visible"] = visible
    env.filters["visible_text"] = visible_text
    env.filters["invisible_names"] = invisible_names
    env.globals["query"] = query
    env.globals["asset"] = asset_version
    return env


def render(template: str, **context: Any) -> str:
    """Render a template with ``context`` (every value escaped unless a template
    says otherwise, which none does for agent text)."""
    return environment().get_template(template).render(**context)


def visible_text(value: object) -> str:
    """Plain text with each ``INVISIBLE_CHARACTERS`` code point written as a marker
    naming it (``⟨U+202E⟩``), for places that hold no markup (a ``<title>``, an
    attribute); the template escapes the result (docs/reference.md#13-dashboard)."""
    return mark_invisible("" if value is None else str(value))


def invisible_names(value: object) -> list[str]:
    """The distinct ``INVISIBLE_CHARACTERS`` code points of ``value`` as markers
    (``["⟨U+202E⟩"]``), in code point order; empty when it holds none. An edit box must
    hold the stored text as it is (saving changes nothing else), so the page names
    these beside it instead (docs/reference.md#13-dashboard)."""
    return invisible_found("" if value is None else str(value))


def visible(value: object) -> Markup:
    """Escaped HTML of stored text with each ``INVISIBLE_CHARACTERS`` code point shown
    as ``<span class="codepoint">⟨U+202E⟩</span>``, styled apart from the text, so
    a fact cannot reorder or hide what a person reads (docs/reference.md#13-dashboard).
    The text is escaped first; the markers hold only our markup and hex digits.
    What is stored does not change."""
    from markupsafe import Markup, escape

    text = "" if value is None else str(value)
    return Markup(
        _INVISIBLE.sub(
            lambda match: f'<span class="codepoint">{marker(match.group())}</span>',
            str(escape(text)),
        )
    )


def when(moment: datetime | None) -> str:
    """``2026-11-30 12:00 UTC`` (empty for None)."""
    if moment is None:
        return ""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def day(moment: datetime | None) -> str:
    """``2026-11-30`` (empty for None)."""
    return "" if moment is None else moment.astimezone(UTC).date().isoformat()


def ago(moment: datetime | None, now: datetime) -> str:
    """How long before ``now``: ``just now``, ``5 min ago``, ``3 h ago``, ``12 d ago``,
    or ``in 4 d`` for a future time; ``never`` for None."""
    if moment is None:
        return "never"
    seconds = int((now - moment).total_seconds())
    future = seconds < 0
    seconds = abs(seconds)
    if seconds < 60:
        return "just now" if not future else "in under a minute"
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            amount = f"{seconds // size} {unit}"
            return f"in {amount}" if future else f"{amount} ago"
    return "just now"  # pragma: no cover - the loop always returns


def count(value: int) -> str:
    """A whole number with thousands separators: ``8,000``."""
    return f"{value:,}"


def counted(value: int, noun: str, plural: str | None = None) -> str:
    """A count with its noun in the right number: ``1 object``, ``2 objects``,
    ``1,204 entries`` (``plural`` when the noun does not take an ``s``)."""
    return f"{value:,} {noun if value == 1 else plural or noun + 's'}"


EN_DASH = "\u2013"
"""Between a page's first and last item: ``51\u2013100``."""


def range_of(total: ListTotal | None, shown: int, noun: str, plural: str | None = None) -> str:
    """Where a page stands in its list (docs/reference.md#list-totals): ``51-100 of 1,234
    memories``; ``of 1,000+`` when the count stopped at its cap; ``50 past the first
    1,000 of 1,000+`` when the page lies past the cap; only the total when the page is
    empty; ``""`` when the list was not counted.

    Args:
        total: the list's count (``ListTotal``).
        shown: items on the page.
        noun, plural: what the list holds (``plural`` when the noun takes no ``s``).
    """
    if total is None:
        return ""
    nouns = plural or noun + "s"
    many = total.capped or total.total != 1
    whole = f"{total.total:,}{'+' if total.capped else ''} {nouns if many else noun}"
    if total.before is None:
        return f"{shown:,} past the first {total.total:,} of {whole}"
    if shown == 0:
        return whole
    first, last = total.before + 1, total.before + shown
    if not total.capped and last > total.total:
        # The index a count reads lags a write by a moment: never "1-50 of 49".
        whole = f"{last:,} {nouns}"
    span = f"{first:,}" if shown == 1 else f"{first:,}{EN_DASH}{last:,}"
    return f"{span} of {whole}"


def score(value: float | None) -> str:
    """A recall score with two decimals, or ``—`` when there was none (fallback)."""
    return "—" if value is None else f"{value:.2f}"


def query(**params: str | int | None) -> str:
    """A query string (``?a=1&b=x``) of the parameters that have a value (URL-encoded;
    the template escapes the result for the attribute)."""
    kept = {name: str(value) for name, value in params.items() if value not in (None, "")}
    return "?" + urlencode(kept) if kept else ""


@functools.cache
def asset_version(name: str) -> str:
    """A short hash of a static file's content, appended to its URL so a new version
    is fetched and an old one may be cached for a year."""
    return hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:12]
