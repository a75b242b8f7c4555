"""Named releases (docs/operations.md#releases): each release's version, date, the commit
it was cut from, the GSIs each of its functions queries, and whether a rollback from it
to the one before is possible. This checkout is the last one (``infra.tables.RELEASE``,
``pyproject.toml``'s version; its git tag ``v<version>`` once cut).

The facts of earlier releases are data here, not read from git: a fresh clone (CI's, an
operator's) may have no tags, and the rehearsal (``tests/unit/test_release_rehearsal.py``)
must run there. The current release's reads come from its roles (``infra/iam.py``), so
a new index read by new code needs no entry here.

Expand, migrate, contract: the roles grant ``dynamodb:Query`` on every index the
previous release's functions query as well (``previous_release_reads``), so the code
still serving while a deploy adds indexes and replaces the roles never meets
AccessDenied, and a rollback to the previous release finds its grants. Choices:
docs/DECISIONS.md#releases-an-operator-can-trust-issue-44.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from chalicelib.release import RELEASE
from infra.tables import release_key


@dataclass(frozen=True)
class Release:
    """One release.

    Attributes:
        version: e.g. ``"0.2.0"`` (its git tag is ``v`` + version).
        date: the day it was cut, ``YYYY-MM-DD``.
        commit: the commit it was cut from (empty for the release being made).
        reads: function -> the GSIs its code queries (empty for the release being made:
            read from its roles, ``current_reads``).
        rollback: whether, and how, a stage of this release goes back to the previous.
    """

    version: str
    date: str
    commit: str
    reads: dict[str, tuple[str, ...]] = field(default_factory=dict)
    rollback: str = ""


RELEASES: tuple[Release, ...] = (
    Release(
        version="0.1.0",
        date="2026-12-05",
        commit="387b849",
        reads={
            "api_handler": (
                "byAgentKind",
                "byWorkspaceShard",
                "byWorkspaceStatusShard",
                "byRoutineStatus",
            ),
            "review_fanout": ("byRoutineStatus",),
            "review_worker": ("byAgentKind", "byTokenPrincipal"),
        },
        rollback="no release before it",
    ),
    Release(
        version="0.2.0",
        date="2026-12-07",
        commit="",
        rollback="yes: to 0.1.0 by moving the code only (the table keeps its indexes; the "
        "roles grant 0.1.0's reads), docs/operations.md#rollback",
    ),
)
"""Every release, oldest first; the last is this checkout's."""


def current() -> Release:
    """This checkout's release (the last of ``RELEASES``)."""
    return RELEASES[-1]


def previous() -> Release | None:
    """The release before this checkout's, or None for the first."""
    return RELEASES[-2] if len(RELEASES) > 1 else None


def current_reads() -> dict[str, tuple[str, ...]]:
    """Function -> the GSIs this checkout's code queries: the index names in its
    role's ``dynamodb:Query`` statements, less those ``previous_release_reads`` adds."""
    from infra import iam

    found: dict[str, tuple[str, ...]] = {}
    for function in iam.FUNCTIONS:
        names: list[str] = []
        for grant in iam.grants(function, with_previous=False):
            if "dynamodb:Query" in grant.actions:
                names += [iam.index_name(resource) for resource in grant.resources]
        found[function] = tuple(name for name in names if name)
    return found


def previous_release_reads(function: str) -> tuple[str, ...]:
    """The GSIs the previous release's ``function`` queries (empty for the first
    release): its role keeps granting them while this release runs."""
    before = previous()
    return before.reads.get(function, ()) if before is not None else ()


def check() -> None:
    """The release table agrees with the checkout.

    Raises:
        ValueError: versions not strictly increasing or dates out of order, the last is
            not ``infra.tables.RELEASE``, or an earlier one lacks its commit or reads.
    """
    for before, after in itertools.pairwise(RELEASES):
        if release_key(before.version) >= release_key(after.version) or before.date > after.date:
            raise ValueError(f"release {after.version} does not follow {before.version}")
        if not before.commit or not before.reads:
            raise ValueError(f"release {before.version} needs its commit and its reads")
    if current().version != RELEASE:
        raise ValueError(f"the last release is {current().version}, the tables' {RELEASE}")
