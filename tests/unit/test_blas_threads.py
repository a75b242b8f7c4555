"""One BLAS thread where the service runs (docs/DECISIONS.md "One BLAS thread"):
spinning OpenBLAS threads made recalls on a busy machine miss their budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_prod_stage_runs_numpy_on_one_thread() -> None:
    config = json.loads((REPO / ".chalice" / "config.json").read_text(encoding="utf-8"))
    assert config["stages"]["prod"]["environment_variables"]["OPENBLAS_NUM_THREADS"] == "1"


def test_the_local_server_sets_one_thread_before_numpy_loads_unless_told_otherwise() -> None:
    script = "import os, infra.local_server; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
    shown = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "1"
    told = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env={**env, "OPENBLAS_NUM_THREADS": "2"},
        capture_output=True,
        text=True,
    )
    assert told.returncode == 0 and told.stdout.strip() == "2"
