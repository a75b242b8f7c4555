"""One error envelope, one status table (docs/conventions.md#rule-2)."""

from __future__ import annotations

import inspect

from chalicelib import errors
from chalicelib.api.http import _WRAPPED_VIEWS


def error_classes() -> list[type[errors.PineworkError]]:
    return [
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, errors.PineworkError)
    ]


def test_every_error_class_has_a_status_and_a_unique_code() -> None:
    classes = error_classes()
    # A class that refines another's meaning and keeps its code (AgentNotInWorkspace is a
    # forbidden) defines no code of its own.
    codes = [cls.code for cls in classes if "code" in vars(cls)]
    assert len(codes) == len(set(codes))
    for cls in classes:
        assert cls.code in errors.STATUS_BY_CODE, cls


def test_seed_codes_have_the_seed_statuses() -> None:
    seed = {
        "memory_text_too_long": 400,
        "secret_in_memory": 400,
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
    }
    for code, status in seed.items():
        assert errors.STATUS_BY_CODE[code] == status


def test_every_route_is_wrapped_in_the_envelope() -> None:
    from app import app

    views = [entry.view_function for methods in app.routes.values() for entry in methods.values()]
    assert len(views) >= 10
    for view in views:
        assert view.__name__ in _WRAPPED_VIEWS and hasattr(view, "__wrapped__"), view


def test_every_status_code_has_a_class_and_a_row_in_the_reference() -> None:
    from tests.helpers import REPO

    codes = {cls.code for cls in error_classes()}
    assert set(errors.STATUS_BY_CODE) - codes == set()
    reference = (REPO / "docs" / "reference.md").read_text(encoding="utf-8")
    missing = [code for code in errors.STATUS_BY_CODE if f'<a id="error-{code}">' not in reference]
    assert missing == []
