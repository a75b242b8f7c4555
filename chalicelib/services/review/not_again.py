"""What a review does not propose again (docs/reference.md#9-review; docs/issues.md#issue-4-item-6,
docs/issues.md#issue-14-item-2): an action a person rejected, and an action that still waits for a
person in an earlier review. Both are matched by ``ReviewAction.signatures`` and explained in
the plan's notes."""

from __future__ import annotations

from chalicelib.models.review import FOLDING_ACTIONS, ReviewAction, fold_signature


def without_rejected(
    actions: list[ReviewAction], rejected: dict[str, str]
) -> tuple[list[ReviewAction], list[str]]:
    """Drop from ``actions`` what a person rejected before (``ReviewAction.signatures``).

    A folding action (merge, replace, resolve_conflict) loses each memory that a
    person refused to fold together with the keeper or with a memory it still folds
    (so two memories whose merge was rejected never end up in one fold, whoever
    keeps), and is dropped when none is left; any other action is dropped whole.
    Each drop is explained in a note.

    Args:
        actions: the reviewer's proposal.
        rejected: signature -> description of the rejection (``ReviewRepository``).

    Returns:
        ``(kept actions, notes)``.
    """
    kept: list[ReviewAction] = []
    notes: list[str] = []
    for action in actions:
        if action.keep_id is None or action.action not in FOLDING_ACTIONS:
            (signature,) = action.signatures().values()
            if signature in rejected:
                what = ", ".join(action.memory_ids) or action.text
                notes.append(
                    f"not proposed again: {action.action} {what} (rejected: {rejected[signature]})"
                )
            else:
                kept.append(action)
            continue
        folded: list[str] = []
        for memory_id in action.memory_ids:
            refusal = next(
                (
                    (other, rejected[fold_signature(memory_id, other)])
                    for other in [action.keep_id, *folded]
                    if fold_signature(memory_id, other) in rejected
                ),
                None,
            )
            if refusal is None:
                folded.append(memory_id)
            else:
                notes.append(
                    f"not proposed again: {action.action} {memory_id} with {refusal[0]} "
                    f"(rejected: {refusal[1]})"
                )
        if folded == action.memory_ids:
            kept.append(action)
        elif folded:
            versions = {
                memory_id: version
                for memory_id, version in action.expected_versions.items()
                if memory_id in folded or memory_id == action.keep_id
            }
            kept.append(
                action.model_copy(update={"memory_ids": folded, "expected_versions": versions})
            )
    return kept, notes


def without_pending(
    actions: list[ReviewAction], pending: dict[str, str]
) -> tuple[list[ReviewAction], list[str]]:
    """Drop the actions that still wait for a person in an earlier review (the same
    signature), so a conflict is put in front of a person once, not every night.

    Args:
        actions: the proposal (after ``without_rejected``).
        pending: signature -> ``"rvw_… a3"`` of the agent's waiting actions.

    Returns:
        ``(kept actions, notes)``.
    """
    kept: list[ReviewAction] = []
    notes: list[str] = []
    for action in actions:
        waiting = next((pending[s] for s in action.signatures().values() if s in pending), None)
        if waiting is None:
            kept.append(action)
        else:
            what = ", ".join(filter(None, [*action.memory_ids, action.keep_id])) or action.text
            notes.append(
                f"not proposed again: {action.action} {what} (waits for a person: {waiting})"
            )
    return kept, notes
