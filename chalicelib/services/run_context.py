"""What an agent's ``X-Pinework-*`` headers say about its run (docs/reference.md#2-concepts,
docs/reference.md#7-http-api).

The HTTP routes and the MCP endpoint read the headers with ``read_run_context``,
so both apply the same rules (docs/DECISIONS.md "Run headers and task keys"):

* every value: printable ASCII, 1 to 128 characters after trimming, never a
  credential (``secret_in_memory``: a run id and a session id are identifiers,
  so only known credential shapes count; a task key is text that lands in the
  day log and is the default recall query, so the full check applies);
* a task key also has no ``[`` or ``]`` and is not ``durable`` (any case): it is
  stored inside the day line's ``HH:MM [TASK] `` prefix, which the review parses,
  so no task key may end the bracket early or read as the ``[durable] `` marker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chalicelib.errors import InvalidRequest
from chalicelib.limits import HEADER_MAX_CHARS
from chalicelib.services.text import SecretFinder, check_no_secret

_HEADER_VALUE = re.compile(r"^[\x21-\x7e][\x20-\x7e]*$")
_TASK_KEY_BRACKETS = re.compile(r"[\[\]]")
RESERVED_TASK_KEYS = frozenset({"durable"})
"""Task keys that would read as the day log's ``[durable] `` marker (case-insensitive)."""


@dataclass(frozen=True)
class RunContext:
    """What an agent's headers say about the run (``X-Pinework-Run`` / ``-Task`` /
    ``-Session``), checked by ``read_run_context``."""

    run_id: str | None = None
    task_key: str | None = None
    session_id: str | None = None


def read_run_context(
    *,
    run: str | None,
    task: str | None,
    session: str | None,
    secrets: SecretFinder,
) -> RunContext:
    """Check an agent's run headers and return its run context.

    Args:
        run, task, session: the raw ``X-Pinework-Run``, ``-Task`` and ``-Session``
            values (None when absent; blank counts as absent).
        secrets: the secret detector.

    Raises:
        InvalidRequest: a value over 128 characters or not printable ASCII; a task
            key with ``[`` or ``]``, or the reserved ``durable``.
        SecretInMemory: a value looks like a credential.
    """
    return RunContext(
        run_id=check_identifier(run, "X-Pinework-Run", secrets),
        task_key=check_task_key(task, "X-Pinework-Task", secrets),
        session_id=check_identifier(session, "X-Pinework-Session", secrets),
    )


def check_task_key(value: str | None, name: str, secrets: SecretFinder) -> str | None:
    """Validate a task key (docs/reference.md#2-concepts, "such as PIN-42"): a ticket id, a branch
    name or a short phrase (``PIN-42``, ``feature/login-page``, ``fix the login bug``).

    Returns:
        The trimmed task key, or None when absent or blank.

    Raises:
        InvalidRequest: not 1 to 128 printable ASCII characters; ``[`` or ``]``; the
            reserved ``durable`` (any case).
        SecretInMemory: it looks like a secret (the full check, as for memory text).
    """
    key = check_header(value, name)
    if key is None:
        return None
    if _TASK_KEY_BRACKETS.search(key):
        raise InvalidRequest(
            f"{name} may not hold [ or ]: the day log writes the task as HH:MM [TASK]. "
            "Send a ticket id, branch name or short phrase, such as PIN-42."
        )
    if key.lower() in RESERVED_TASK_KEYS:
        raise InvalidRequest(
            f"{name} {key!r} is reserved: a day line [{key}] would read as the durable "
            "marker. Name the task otherwise."
        )
    check_no_secret(key, what=name, secrets=secrets)
    return key


def check_identifier(value: str | None, name: str, secrets: SecretFinder) -> str | None:
    """Validate a run or session id: ``check_header``, then no credential shape
    (``check_no_secret(identifier=True)``).

    Raises:
        InvalidRequest: see ``check_header``.
        SecretInMemory: it has the shape of a credential.
    """
    identifier = check_header(value, name)
    if identifier is not None:
        check_no_secret(identifier, what=name, secrets=secrets, identifier=True)
    return identifier


def check_body_session(value: str | None, secrets: SecretFinder) -> str | None:
    """Validate a body's ``sessionId`` by the header's rules (``check_identifier``),
    except that nothing is trimmed: a value with white space (or anything else)
    around it is refused rather than read as another session.

    Returns:
        The session id, or None when absent.

    Raises:
        InvalidRequest: empty, not printable ASCII, over 128 characters, or
            surrounded by white space.
        SecretInMemory: it has the shape of a credential.
    """
    if value is not None and (not value or value != value.strip()):
        raise InvalidRequest(
            f"sessionId must be 1 to {HEADER_MAX_CHARS} printable ASCII characters, with "
            "no white space around them."
        )
    return check_identifier(value, "sessionId", secrets)


def check_header(value: str | None, name: str) -> str | None:
    """Validate an ``X-Pinework-*`` header: printable ASCII, at most 128 characters.

    Returns:
        The trimmed value, or None when absent or blank.

    Raises:
        InvalidRequest: the value is too long or holds control characters.
    """
    # Only HTTP's own white space (SP, HTAB) is trimmed: "\x85" or "\xa0" is not
    # "no header" but a malformed one.
    if value is None or value.strip(" \t") == "":
        return None
    value = value.strip(" \t")
    if len(value) > HEADER_MAX_CHARS or not _HEADER_VALUE.match(value):
        raise InvalidRequest(
            f"{name} must be printable ASCII of at most {HEADER_MAX_CHARS} characters."
        )
    return value
