"""``scripts/rewrite_references.py`` (issue 16 item 1): old citations become links that
resolve, Python stays valid and within the line limit, and a second run changes
nothing."""

from __future__ import annotations

import ast
import importlib.util
import sys
from types import ModuleType

import pytest

from tests.helpers import REPO, anchors


def load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "rewrite_references", REPO / "scripts" / "rewrite_references.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


tool = load_tool()


def no_warning(message: str) -> None:
    raise AssertionError(message)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Recall (SPEC §8): keep", "Recall (docs/reference.md#8-recall): keep"),
        (
            "lifecycle (SPEC §3\u20134, §7).",
            "lifecycle (docs/reference.md#3-the-memory-object to docs/reference.md#4-states, "
            "docs/reference.md#7-http-api).",
        ),
        ("evidence (SPEC §9 step 5)", "evidence (docs/reference.md#review-step-5)"),
        ('what SPEC §7\'s "who" gives', "what docs/reference.md#who-may-call gives"),
        ("(SPEC §7 auth, issue 2)", "(docs/reference.md#authentication, docs/issues.md#issue-2)"),
        ("(SPEC §6 ``memory_not_found``)", "(docs/reference.md#error-memory_not_found)"),
        ("(SPEC §4 rules)", "(docs/reference.md#unarchive-rules)"),
        (
            "(SPEC §7 ``/routines…``, §9)",
            "(docs/reference.md#routes-routines, docs/reference.md#9-review)",
        ),
        (
            "(issue 4 items 6 and 8)",
            "(docs/issues.md#issue-4-item-6 and docs/issues.md#issue-4-item-8)",
        ),
        ("(issue 2, item 14)", "(docs/issues.md#issue-2-item-14)"),
        ("(issue 4 item 5b)", "(docs/issues.md#issue-4-item-5b)"),
        ("(STYLE.md rules 5\u20136)", "(docs/conventions.md#rule-5 to docs/conventions.md#rule-6)"),
        ("(STYLE.md: storage)", "(docs/conventions.md#layers: storage)"),
        ("(PITFALLS: Limit before filter)", "(docs/conventions.md#limit-before-filter)"),
        ("(SPEC §10, seed 001)", "(docs/reference.md#10-key-value)"),
        ("RFC 9110 §9.3.2 and an issue", "RFC 9110 §9.3.2 and an issue"),
    ],
)
def test_code_citations_become_bare_links(before: str, after: str) -> None:
    assert tool.rewrite_text(before, "py", "chalicelib/x.py") == after


@pytest.mark.parametrize(
    ("path", "before", "after"),
    [
        (
            "README.md",
            "with the status of SPEC §6; see SPEC §4 rules",
            "with the status of [§6](docs/reference.md#6-errors); see "
            "[§4 rules](docs/reference.md#unarchive-rules)",
        ),
        (
            "docs/DECISIONS.md",
            "is `invalid_request` [§7]. ## MCP (issue 5)",
            "is `invalid_request` [§7](reference.md#7-http-api). "
            "## MCP ([issue 5](issues.md#issue-5))",
        ),
        (
            "docs/DECISIONS.md",
            "(SPEC §3\u20137) already [§5](reference.md#5-limits), [issue 5](issues.md#issue-5)",
            "([§3](reference.md#3-the-memory-object)\u2013[§7](reference.md#7-http-api)) already "
            "[§5](reference.md#5-limits), [issue 5](issues.md#issue-5)",
        ),
        ("docs/x/y.md", "SPEC §11", "[§11](../reference.md#11-mcp)"),
    ],
)
def test_markdown_citations_become_relative_links(path: str, before: str, after: str) -> None:
    assert tool.rewrite_text(before, "md", path) == after


def test_every_link_the_tool_makes_resolves() -> None:
    reference = anchors("docs/reference.md")
    assert {*tool.SECTIONS.values(), "who-may-call", "authentication", "unarchive-rules"} <= (
        reference
    )
    assert {"lists", "routes-routines", "routes-reviews"} <= reference
    assert {f"review-step-{step}" for step in range(1, 6)} <= reference
    assert {f"error-{code}" for code in tool.ERROR_CODES} - reference == set()
    conventions = anchors("docs/conventions.md")
    assert {f"rule-{n}" for n in range(1, 14)} | {"layers", "pitfalls"} <= conventions
    assert set(tool.PITFALL_ANCHORS.values()) <= conventions


SOURCE = (
    '"""A module (SPEC §8): it keeps scores >= 0.5, best first, then cuts to 300 memories '
    + "(SPEC §5)."
    + '''

More text.
"""


def check(value: int) -> int:
    """Check a value against what the reference says about limits for lists (SPEC §5 lists).

    Raises:
        InvalidRequest: empty or whitespace only, or longer than it may be (SPEC §3, §5, §6).
    """
    # A long comment explaining why this rule exists, with its source (SPEC §4: conditional writes).
    items = [1, 2]  # a long inline comment that grows past the limit once it links SPEC §7 here
    return value + len(items)
'''
)


def test_python_stays_valid_within_the_limit_and_keeps_its_words() -> None:
    new = tool.rewrite_python(SOURCE, "chalicelib/x.py", no_warning_for_inline)
    ast.parse(new)
    assert max(len(line) for line in new.splitlines()) <= tool.LINE_LIMIT
    assert "SPEC" not in new
    assert " ".join(new.split()).count("docs/reference.md#") == 8
    module_doc = ast.get_docstring(ast.parse(new))
    assert module_doc is not None and module_doc.startswith("A module (docs/reference.md#8-recall)")
    assert tool.rewrite_python(new, "chalicelib/x.py", no_warning) == new  # idempotent


def no_warning_for_inline(message: str) -> None:
    assert "inline comment" in message, message


def test_a_message_string_is_rewritten_and_reported() -> None:
    warnings: list[str] = []
    new = tool.rewrite_python('raise InvalidRequest("See SPEC §5.")\n', "x.py", warnings.append)
    assert new == 'raise InvalidRequest("See docs/reference.md#5-limits.")\n'
    assert len(warnings) == 1 and "x.py:1" in warnings[0]


def test_an_unknown_section_is_refused() -> None:
    with pytest.raises(ValueError, match="no reference section 42"):
        tool.rewrite_text("SPEC §42", "py", "x.py")
