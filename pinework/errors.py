"""The one exception the Python client raises for a failed call.

Server errors keep the code and message of the envelope
``{"error": {"code", "message"}}`` (docs/reference.md#6-errors). Two codes are the client's own:
``connection_error`` (the server could not be reached; ``status`` 0) and
``invalid_response`` (the server answered with something that is not the
documented JSON).
"""

from __future__ import annotations

from typing import Any

__all__ = ["CONNECTION_ERROR", "INVALID_RESPONSE", "PineworkAPIError"]

CONNECTION_ERROR = "connection_error"
"""Client-side code: the request never got an HTTP answer (``status`` is 0)."""

INVALID_RESPONSE = "invalid_response"
"""Client-side code: the answer was not the JSON the API documents."""


class PineworkAPIError(Exception):
    """A call to the Pinework API failed.

    Attributes:
        code: the docs/reference.md#6-errors error code (e.g. ``memory_not_found``), or
            ``connection_error`` / ``invalid_response``.
        message: what went wrong and what to do, for a human.
        status: the HTTP status; 0 when no HTTP answer arrived.
        retry_after: seconds to wait before retrying, from ``Retry-After``
            (``rate_limited``); ``None`` when the server sent none.
    """

    def __init__(
        self,
        code: str,
        message: str,
        status: int,
        *,
        retry_after: float | None = None,
    ) -> None:
        """Create the error.

        Args:
            code: the error code.
            message: the human-readable message.
            status: the HTTP status, 0 for connection errors.
            retry_after: seconds from a ``Retry-After`` header, if any.
        """
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.retry_after = retry_after

    def envelope(self) -> dict[str, Any]:
        """The error in the API's envelope shape.

        Returns:
            ``{"error": {"code": …, "message": …}}``.
        """
        return {"error": {"code": self.code, "message": self.message}}

    def __repr__(self) -> str:
        """Show code, status and message.

        Returns:
            A debugging representation.
        """
        return (
            f"PineworkAPIError(code={self.code!r}, status={self.status}, message={self.message!r})"
        )
