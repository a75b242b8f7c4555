"""No accepted task key makes a stored day line parse differently (docs/issues.md#issue-14): the
line ``HH:MM [TASK] line`` the day log stores reads back, in the review's parser,
as that task and that line, and its durable marker (if any) is the line's own."""

from __future__ import annotations

import random
import string
from datetime import UTC, datetime

import pytest

from chalicelib.errors import InvalidRequest, SecretInMemory
from chalicelib.services.memory.day_log import format_day_line
from chalicelib.services.review.rule_reviewer import DURABLE_MARKERS, day_line_body, durable_text
from chalicelib.services.run_context import check_task_key, read_run_context
from chalicelib.services.secrets import SecretDetector

DETECTOR = SecretDetector()
NOW = datetime(2026, 11, 30, 23, 59, tzinfo=UTC)


def expected_durable(line: str, task: str) -> tuple[str, str | None] | None:
    for marker in DURABLE_MARKERS:
        if line.lower().startswith(marker):
            text = line[len(marker) :].strip()
            return (text, task) if text else None
    return None


def accepted(task: str) -> str | None:
    try:
        return check_task_key(task, "X-Pinework-Task", DETECTOR)
    except (InvalidRequest, SecretInMemory):
        return None


def test_random_task_keys_and_lines_parse_back() -> None:
    rng = random.Random(14)
    alphabet = string.printable[:95]  # printable ASCII and a few controls' neighbours
    pieces = ["[", "]", "] ", " [", "durable", "[durable] ", "!fact ", "23:59 ", "PIN-9"]
    lines = [
        "fixed the deploy",
        "!fact the VPN is needed",
        "[durable] staging uses eu-west-1",
        "[PIN-3] other task",
        "] 00:00 [x",
        "!FACT   ",
    ]
    checked = 0
    for _ in range(20_000):
        task = "".join(rng.choice(pieces + list(alphabet)) for _ in range(rng.randint(1, 12)))
        key = accepted(task)
        if key is None:
            continue
        line = rng.choice([*lines, task, "".join(rng.choice(pieces) for _ in range(3))])
        stored = format_day_line(line, NOW, key)
        assert day_line_body(stored) == line, (key, line)
        assert durable_text(stored) == expected_durable(line, key), (key, line)
        checked += 1
    assert checked > 5_000


@pytest.mark.parametrize("task", ["a]b", "[x", "durable", "DuRaBlE", "x] 23:59 [PIN-999"])
def test_brackets_and_the_marker_word_are_not_task_keys(task: str) -> None:
    with pytest.raises(InvalidRequest):
        check_task_key(task, "X-Pinework-Task", DETECTOR)


def test_a_task_key_gets_the_full_secret_check_and_ids_only_the_shapes() -> None:
    random_id = "run_4bMhX3Bt7CkPqA9ZsV1oDxYw"
    with pytest.raises(SecretInMemory):
        check_task_key(random_id, "X-Pinework-Task", DETECTOR)  # high-entropy text
    run = read_run_context(run=random_id, task="PIN-1", session=random_id, secrets=DETECTOR)
    assert (run.run_id, run.task_key, run.session_id) == (random_id, "PIN-1", random_id)
    assert read_run_context(run="  ", task=None, session="", secrets=DETECTOR).run_id is None
