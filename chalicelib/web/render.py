"""Templates of the dashboard (Jinja2, autoescaping on for every template) and the
filters they share (docs/reference.md#13-dashboard, docs/issues.md#issue-13).

Everything an agent wrote (facts, day lines, task keys, reasons, evidence, notes)
reaches a page only through Jinja's escaping: no template marks agent text
``safe``, and no agent text is ever a whole URL or a script. Times are shown in
UTC, as stored.
"""

from __future__ import annotations

import functools
import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

# Jinja2 loads on the first page rendered, not at cold start (docs/issues.md#issue-12)
if TYPE_CHECKING:
    from jinja2 import Environment

WEB_DIR = Path(__file__).resolve().parent
TEMPLATES = WEB_DIR / "templates"
STATIC = WEB_DIR / "static"


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
    env.filters["score"] = score
    env.globals["query"] = query
    env.globals["asset"] = asset_version
    return env


def render(template: str, **context: Any) -> str:
    """Render a template with ``context`` (every value escaped unless a template
    says otherwise, which none does for agent text)."""
    return environment().get_template(template).render(**context)


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
