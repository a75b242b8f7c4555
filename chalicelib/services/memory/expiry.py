"""``expiresAt``: an RFC 3339 timestamp, or a date meaning the end of that UTC day
(docs/reference.md#7-http-api).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time

from chalicelib.errors import InvalidRequest

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


_TIMESTAMP = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$"
)


def parse_expiry(value: str, now: datetime) -> datetime:
    """Parse ``expiresAt``: RFC 3339 timestamp, or a date meaning the end of that UTC day.

    Returns:
        An aware UTC datetime in the future.

    Raises:
        InvalidRequest: unparseable, without a time zone, or not in the future
            (docs/reference.md#7-http-api).
    """
    try:
        if _DATE_ONLY.match(value):
            day = date.fromisoformat(value)
            moment = datetime.combine(day, time(23, 59, 59, 999000), tzinfo=UTC)
        elif _TIMESTAMP.match(value):
            moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        else:
            raise ValueError(value)
        moment = moment.astimezone(UTC)
    except (ValueError, OverflowError) as error:
        raise InvalidRequest(
            f"expiresAt {value!r} is not a date (YYYY-MM-DD) or an RFC 3339 timestamp "
            "with a time zone, such as 2026-12-31 or 2026-12-31T18:00:00Z."
        ) from error
    if moment <= now:
        raise InvalidRequest(f"expiresAt {value!r} is in the past; send a future time.")
    return moment
