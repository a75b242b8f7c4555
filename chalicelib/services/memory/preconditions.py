"""``If-Match`` on memories (docs/reference.md#error-precondition_failed,
docs/reference.md#14-operations; docs/issues.md#issue-15): a change names the versions it was based
on, and a memory at any other version is refused before anything is written.

The check runs inside each change's read-check-write attempt: the write that
follows is conditional on the version that was read (``version = :read``), so a
concurrent change makes the write fail, the attempt re-reads, and this check then
refuses it. No read-then-write race can slip a stale edit through.
"""

from __future__ import annotations

from collections.abc import Collection

from chalicelib.errors import PreconditionFailed
from chalicelib.models.memory import Memory


def check_expected_version(memory: Memory, expected_versions: Collection[int] | None) -> None:
    """Refuse a change based on a version of ``memory`` that is no longer current.

    Args:
        memory: the memory as just read (consistently) for the change.
        expected_versions: the versions the caller's ``If-Match`` names for this
            memory; ``None`` when it sent none (or ``*``): no check, as before
            docs/issues.md#issue-15.

    Raises:
        PreconditionFailed: ``memory.version`` is not one of ``expected_versions``
            (412 ``precondition_failed``); nothing is written.
    """
    if expected_versions is None or memory.version in expected_versions:
        return
    raise PreconditionFailed(
        f"{memory.id} changed since you read it (it is at version {memory.version} now); "
        "read it again (GET gives its ETag), check the change still applies, and retry "
        "with the new If-Match."
    )
