"""The ``ReportStore`` contract (chalicelib/storage/protocols.py): review reports kept
as whole objects by key.

Runs against every implementation in the ``reports`` fixture (today the S3 adapter
on moto)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.storage.protocols import ReportStore
from chalicelib.storage.reviews import S3ReportStore
from tests.helpers import BUCKET

IMPLEMENTATIONS: dict[str, Callable[[Any], ReportStore]] = {
    "s3": lambda s3: S3ReportStore(lambda: s3, BUCKET),
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def reports(request: pytest.FixtureRequest, s3: Any) -> ReportStore:
    return IMPLEMENTATIONS[request.param](s3)


def test_a_report_reads_back_byte_for_byte_and_a_rewrite_replaces_it(reports: ReportStore) -> None:
    key = "reviews/wsp_1/agt_1/2026-11-29/rvw_1.json"
    body = '{"plan":{"notes":["ü, 😀"]}}'.encode()
    reports.put(key, body)
    assert reports.get(key) == body
    reports.put(key, b"{}")
    assert reports.get(key) == b"{}"


def test_a_missing_report_is_none(reports: ReportStore) -> None:
    assert reports.get("reviews/wsp_1/agt_1/2026-11-29/rvw_missing.json") is None
