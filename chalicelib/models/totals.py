"""How many items a dashboard list holds, as a bounded count found them
(docs/reference.md#list-totals, docs/issues.md#issue-48-item-4): what lets a page say
"51–100 of 1,234", or "of 1,000+" where the count stopped at its cap."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ListTotal:
    """A list's size and a page's place in it.

    Attributes:
        before: items ahead of the page in the list's order (its first item is number
            ``before + 1``); None when the count stopped before it reached the page.
        total: items counted: the whole list, or, when ``capped``, the most the count
            read (the list holds this many or more).
        capped: the count stopped at its cap before the list's end.
    """

    before: int | None
    total: int
    capped: bool = False

    @classmethod
    def whole(cls, total: int, before: int = 0) -> ListTotal:
        """An exact total (a list read whole, or a count that reached its end)."""
        return cls(before=before, total=total)

    def first(self) -> int | None:
        """The number of the page's first item (from 1), None when not known."""
        return None if self.before is None else self.before + 1
