"""The tests' own layout (docs/issues.md#issue-16: tests that mirror the real thing): shared helpers
live in ``tests/helpers.py`` (and fixtures in ``conftest.py`` files), so no test
module imports another test module or a ``conftest``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers import REPO


def imported_test_modules(path: Path) -> list[str]:
    """The modules under ``tests`` that ``path`` imports and that are test modules
    (``test_*``) or ``conftest`` files."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            if _is_test_module(name):
                found.append(name)
                break
    return found


def _is_test_module(name: str) -> bool:
    parts = name.split(".")
    return parts[0] == "tests" and any(
        part.startswith("test_") or part == "conftest" for part in parts[1:]
    )


def test_no_test_module_imports_another_test_module_or_a_conftest() -> None:
    offenders = {
        str(path.relative_to(REPO)): imported
        for path in sorted((REPO / "tests").rglob("*.py"))
        if (imported := imported_test_modules(path))
    }
    assert offenders == {}


def test_the_check_sees_an_import_of_a_test_module(tmp_path: Path) -> None:
    module = tmp_path / "test_example.py"
    module.write_text(
        "from tests.api.test_facts import save\nimport tests.conftest\n"
        "from tests import helpers\nfrom tests.helpers import World\n"
        "from tests.e2e import conftest\n"
    )
    assert imported_test_modules(module) == [
        "tests.api.test_facts",
        "tests.conftest",
        "tests.e2e.conftest",
    ]


def test_every_storage_protocol_has_a_contract_suite() -> None:
    from typing import Protocol

    from chalicelib.storage import protocols

    names = sorted(
        name
        for name, value in vars(protocols).items()
        if isinstance(value, type) and Protocol in value.__mro__[1:] and value is not Protocol
    )
    suites = {path.stem for path in (REPO / "tests" / "contract").glob("test_*.py")}
    snake = {name: "test_" + re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower() for name in names}
    assert len(names) == 15
    assert {name: suite for name, suite in snake.items() if suite not in suites} == {}
