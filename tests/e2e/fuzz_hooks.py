"""Schemathesis hooks for the contract fuzz run (``test_contract_local_server.py``),
loaded in the fuzzer's own process through ``SCHEMATHESIS_HOOKS``.

* Every request the fuzzer sends is counted by (method, path, status) and the
  counts are written to ``PINEWORK_FUZZ_COUNTS`` at exit, for the test to print.
* A generated ``Idempotency-Key`` that is valid becomes a digest of the request it
  is sent with (its other headers included): a repeated request replays
  (``Idempotent-Replayed``), and no two different requests share a key, which would
  make the fuzzer's random keys ("0", "a") answer 422 ``idempotency_key_reused`` to
  nearly every write after the first and keep it away from the routes' own logic.
  Keys that are not valid are sent as generated (they must be refused with 400).
  The 422 itself is tested in ``tests/api/test_idempotency.py``.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import threading
from collections import Counter
from typing import Any

import schemathesis

_COUNTS: Counter[str] = Counter()
_LOCK = threading.Lock()


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    """Give a valid ``Idempotency-Key`` one value per distinct request."""
    headers = case.headers
    if not headers:
        return
    name = next((key for key in headers if key.lower() == "idempotency-key"), None)
    value = headers.get(name) if name else None
    if not isinstance(value, str) or not 1 <= len(value.strip().strip('"')) <= 255:
        return
    if not all(" " <= ch <= "~" for ch in value):
        return
    others = sorted((key, str(value)) for key, value in headers.items() if key != name)
    request = repr((case.method, case.path, case.path_parameters, case.query, others, case.body))
    headers[name] = "fuzz-" + hashlib.sha256(request.encode("utf-8", "replace")).hexdigest()


@schemathesis.hook
def after_call(context: Any, case: Any, response: Any) -> None:
    """Count one request by method, path template and status."""
    with _LOCK:
        _COUNTS[f"{case.method.upper()} {case.path} {response.status_code}"] += 1


@atexit.register
def _write_counts() -> None:
    target = os.environ.get("PINEWORK_FUZZ_COUNTS")
    if target:
        with open(target, "w", encoding="utf-8") as handle:
            json.dump(dict(_COUNTS), handle, indent=1, sort_keys=True)
