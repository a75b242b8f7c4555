"""Domain errors: one class per error code of docs/reference.md#6-errors.

Services raise these; the HTTP adapter (``chalicelib.api.http``) maps each
``code`` to its status through ``STATUS_BY_CODE`` and renders the envelope
``{"error": {"code", "message"}}``. Nothing here knows about HTTP beyond that
table.
"""

from __future__ import annotations

from typing import ClassVar

from chalicelib.limits import THROTTLED_RETRY_AFTER_SECONDS


class PineworkError(Exception):
    """Base of every error a client may see.

    Attributes:
        code: the stable error code of docs/reference.md#6-errors (e.g. ``memory_day_full``).
        message: what went wrong and what to do, for a human.
    """

    code: ClassVar[str] = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# Codes and meanings from the seed (docs/reference.md#6-errors, first table).
class MemoryTextTooLong(PineworkError):
    """A fact over 500 characters or a day line over 300 (400)."""

    code = "memory_text_too_long"


class SecretInMemory(PineworkError):
    """The text looks like a credential or secret (400)."""

    code = "secret_in_memory"


class MemoryTagInvalid(PineworkError):
    """A tag or a tag filter breaks the rules of docs/reference.md#tags: not a string,
    empty, over 40 characters, outside the tag characters, or too many (400)."""

    code = "memory_tag_invalid"


class MemoryMetadataInvalid(PineworkError):
    """A fact's metadata breaks the rules of docs/reference.md#metadata: not a flat
    object, a bad key, a value that is not a string, number or boolean, a string too
    long, too many keys or too large, or metadata on a day row (400)."""

    code = "memory_metadata_invalid"


class MetadataFilterInvalid(PineworkError):
    """A metadata filter breaks the rules of docs/reference.md#metadata-filters: not
    ``key:value`` or ``key:op:value``, a bad key or operator, a range bound that is not
    a number, a date or a string, too many conditions or ``in`` values (400)."""

    code = "metadata_filter_invalid"


class MemoryAgentRequired(PineworkError):
    """A person did not name the agent (400)."""

    code = "memory_agent_required"


class MemoryAgentMismatch(PineworkError):
    """``supersedes`` names another agent's memory (400)."""

    code = "memory_agent_mismatch"


class MemoryDayAppendOnly(PineworkError):
    """A save tried to supersede a day row (400)."""

    code = "memory_day_append_only"


class MemoryNotOwn(PineworkError):
    """An agent named or touched another agent's memory (403)."""

    code = "memory_not_own"


class MemoryDayAgentOnly(PineworkError):
    """A person called the day route (403)."""

    code = "memory_day_agent_only"


class MemoryVetoHumanOnly(PineworkError):
    """An agent tried to bring back a vetoed memory (403)."""

    code = "memory_veto_human_only"


class MemoryNotFound(PineworkError):
    """No such memory in the caller's workspace (404)."""

    code = "memory_not_found"


class MemorySupersedeArchived(PineworkError):
    """The memory to supersede is archived (409)."""

    code = "memory_supersede_archived"


class MemoryDayFull(PineworkError):
    """The day log would exceed 8,000 characters (409)."""

    code = "memory_day_full"


class MemorySuperseded(PineworkError):
    """Editing or unarchiving a memory that a newer one replaced (409)."""

    code = "memory_superseded"


class MemoryDayExists(PineworkError):
    """Unarchiving a day row while another live one exists for its date (409)."""

    code = "memory_day_exists"


# Ours (docs/reference.md#6-errors, second table).
class InvalidRequest(PineworkError):
    """Malformed JSON, wrong types, unknown fields, bad dates, other limits (400)."""

    code = "invalid_request"


class Unauthorized(PineworkError):
    """Missing or unknown bearer token (401)."""

    code = "unauthorized"


class Forbidden(PineworkError):
    """The principal may not do this (403)."""

    code = "forbidden"


class AgentNotInWorkspace(Forbidden):
    """A person named (``agentId``) an agent that is not of their workspace, or no agent at
    all: 403 ``forbidden`` (docs/reference.md#error-forbidden). Where the agent's id is in
    the path (``/agents/{id}/…``, the dashboard's agent pages) it answers as a missing
    one instead, 404 ``not_found``, as memory ids do (``as_missing``)."""

    def as_missing(self) -> NotFound:
        """The 404 of an agent id in a path (docs/reference.md#ids-in-paths)."""
        return NotFound("No such agent in your workspace. Check the agt_ id.")


class MemoryAlreadyArchived(PineworkError):
    """Archiving (or vetoing) a memory that is already archived (409)."""

    code = "memory_already_archived"


class MemoryErased(PineworkError):
    """A change to an erased memory: a tombstone never comes back (409,
    docs/reference.md#erasing-a-memory)."""

    code = "memory_erased"


class MemoryNotArchived(PineworkError):
    """Unarchiving an active memory (409)."""

    code = "memory_not_archived"


class RateLimited(PineworkError):
    """Throttled; the response carries ``Retry-After`` (429).

    Attributes:
        retry_after_seconds: the ``Retry-After`` value (whole seconds).
    """

    code = "rate_limited"

    def __init__(
        self, message: str, retry_after_seconds: int = THROTTLED_RETRY_AFTER_SECONDS
    ) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class NotFound(PineworkError):
    """No such route or resource other than a memory (404)."""

    code = "not_found"


class RecallNotFound(PineworkError):
    """No such entry in the agent's recall log, or it is past the log's retention
    (docs/reference.md#what-a-run-saw) (404)."""

    code = "recall_not_found"


class MethodNotAllowed(PineworkError):
    """The route exists but not with this HTTP method (405)."""

    code = "method_not_allowed"


class Conflict(PineworkError):
    """A concurrent change kept winning; retry the request (409)."""

    code = "conflict"


class PersonExists(PineworkError):
    """A person of the workspace already has this e-mail address (409; docs/issues.md#issue-14)."""

    code = "person_exists"


class PayloadTooLarge(PineworkError):
    """A key-value value over the size one response can carry (413; docs/reference.md#10-key-value,
    DECISIONS)."""

    code = "payload_too_large"


class KvQuotaExceeded(PineworkError):
    """The write would take a key-value scope past its quota of keys or bytes (403;
    docs/reference.md#kv-quotas); nothing was stored."""

    code = "kv_quota_exceeded"


class PreconditionFailed(PineworkError):
    """``If-Match`` names a version of the memory that is no longer current; nothing
    changed (412, docs/reference.md#6-errors; docs/issues.md#issue-15)."""

    code = "precondition_failed"


class IdempotencyKeyReused(PineworkError):
    """An ``Idempotency-Key`` already used with another request (method, path, query
    string, body, ``If-Match`` or run headers) by the same caller within 24 hours
    (422; docs/issues.md#issue-15, docs/DECISIONS.md)."""

    code = "idempotency_key_reused"


class IdempotencyKeyInUse(PineworkError):
    """The first request with this ``Idempotency-Key`` is still running; retry after
    ``Retry-After`` seconds to get its answer (409; docs/issues.md#issue-15, docs/DECISIONS.md)."""

    code = "idempotency_key_in_use"


class MemoryVetoed(PineworkError):
    """An agent saved a text a person vetoed: the same text after normalisation, or a
    duplicate of it (docs/reference.md#6-errors, docs/reference.md#9-review;
    docs/issues.md#issue-14-item-5). The message names the vetoed memory (409)."""

    code = "memory_vetoed"


class ReviewUndoConflict(PineworkError):
    """Undoing a review action whose memories changed since the review; nothing is
    undone (409; docs/issues.md#issue-14-item-3)."""

    code = "review_undo_conflict"


class UnsupportedMediaType(PineworkError):
    """A body not declared ``application/json`` on the key-value routes or ``/mcp``
    (415; docs/reference.md#cross-site); deployed, API Gateway also answers it itself
    for content types it refuses (``infra/gateway_responses.py``; docs/issues.md#issue-12)."""

    code = "unsupported_media_type"


class BadGateway(PineworkError):
    """Deployed, the function behind API Gateway crashed or answered badly; API Gateway
    answers (502). The app never raises it (``infra/gateway_responses.py``;
    docs/issues.md#issue-12)."""

    code = "bad_gateway"


class GatewayTimeout(PineworkError):
    """Deployed, the call took longer than API Gateway's 29 s and was cut off (504); its
    changes may or may not be saved. The app never raises it (docs/issues.md#issue-12)."""

    code = "timeout"


class LearningNotFound(PineworkError):
    """No such learning in the caller's workspace (docs/reference.md#15-learnings; 404)."""

    code = "learning_not_found"


class LearningDecided(PineworkError):
    """A decision on a learning whose state does not allow it: approving or rejecting one
    no longer proposed, retiring one not active, editing a rejected or retired one
    (docs/reference.md#15-learnings; 409)."""

    code = "learning_decided"


class LearningRejected(PineworkError):
    """An agent (or the review) proposed a text a person rejected or retired, or one saying
    the same thing (docs/reference.md#15-learnings; 409). The message names that learning."""

    code = "learning_rejected"


class LearningLimitReached(PineworkError):
    """The workspace holds as many proposed and active learnings as it may
    (docs/reference.md#learning-limits; 409)."""

    code = "learning_limit_reached"


class PageNotFound(PineworkError):
    """No such wiki page in the caller's workspace, or one the caller may not read
    (docs/reference.md#17-wiki-pages; 404)."""

    code = "page_not_found"


class PageSlugTaken(PineworkError):
    """Another wiki page of the workspace has that slug (docs/reference.md#17-wiki-pages;
    409)."""

    code = "page_slug_taken"


class PageStateConflict(PineworkError):
    """A wiki page's state does not allow the change: publishing a published page,
    archiving an archived one, editing an archived one (docs/reference.md#page-states;
    409)."""

    code = "page_state_conflict"


class PageLimitReached(PineworkError):
    """The workspace holds as many draft and published wiki pages as it may
    (docs/reference.md#page-limits; 409)."""

    code = "page_limit_reached"


class AsOfInvalid(PineworkError):
    """``asOf`` is not an RFC 3339 time with a zone (docs/reference.md#as-of-a-moment; 400)."""

    code = "as_of_invalid"


class AsOfInFuture(PineworkError):
    """``asOf`` is later than now (docs/reference.md#as-of-a-moment; 400)."""

    code = "as_of_in_future"


class AsOfBeforeWorkspace(PineworkError):
    """``asOf`` is before the workspace was created (docs/reference.md#as-of-a-moment; 400)."""

    code = "as_of_before_workspace"


class WebhookNotFound(PineworkError):
    """No such webhook endpoint in the caller's workspace, also a malformed id
    (docs/reference.md#webhooks; 404)."""

    code = "webhook_not_found"


class WebhookLimitReached(PineworkError):
    """The workspace has as many webhook endpoints as it may
    (docs/reference.md#webhooks; 409)."""

    code = "webhook_limit_reached"


class WebhookUrlRefused(PineworkError):
    """A webhook URL Pinework will not send to: not ``https://``, or a host resolving to a
    loopback, private, link-local, metadata or other non-public address
    (docs/reference.md#webhook-urls; 400)."""

    code = "webhook_url_refused"


STATUS_BY_CODE: dict[str, int] = {
    "memory_text_too_long": 400,
    "secret_in_memory": 400,
    "memory_tag_invalid": 400,
    "memory_metadata_invalid": 400,
    "metadata_filter_invalid": 400,
    "memory_agent_required": 400,
    "memory_agent_mismatch": 400,
    "memory_day_append_only": 400,
    "memory_not_own": 403,
    "memory_day_agent_only": 403,
    "memory_veto_human_only": 403,
    "memory_not_found": 404,
    "memory_supersede_archived": 409,
    "memory_day_full": 409,
    "memory_superseded": 409,
    "memory_day_exists": 409,
    "invalid_request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "memory_already_archived": 409,
    "memory_erased": 409,
    "memory_not_archived": 409,
    "rate_limited": 429,
    "not_found": 404,
    "recall_not_found": 404,
    "method_not_allowed": 405,
    "conflict": 409,
    "payload_too_large": 413,
    "kv_quota_exceeded": 403,
    "precondition_failed": 412,
    "idempotency_key_reused": 422,
    "idempotency_key_in_use": 409,
    "memory_vetoed": 409,
    "review_undo_conflict": 409,
    "person_exists": 409,
    "learning_not_found": 404,
    "learning_decided": 409,
    "learning_rejected": 409,
    "learning_limit_reached": 409,
    "page_not_found": 404,
    "page_slug_taken": 409,
    "page_state_conflict": 409,
    "page_limit_reached": 409,
    "as_of_invalid": 400,
    "as_of_in_future": 400,
    "as_of_before_workspace": 400,
    "webhook_not_found": 404,
    "webhook_limit_reached": 409,
    "webhook_url_refused": 400,
    "internal_error": 500,
    # Answered by API Gateway itself, never raised by the app (infra/gateway_responses.py).
    "unsupported_media_type": 415,
    "bad_gateway": 502,
    "timeout": 504,
}
"""HTTP status of every error code (docs/reference.md#6-errors); a test checks each class is
here."""
