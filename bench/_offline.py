"""Imported first by the benches that run on moto (before boto3 or numpy): one BLAS
thread, placeholder AWS credentials and region for moto, and the repository on
``sys.path`` so ``chalicelib`` and ``infra`` import from this checkout."""

import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
"""The checkout this bench runs from."""

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
for _name, _value in {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
}.items():
    os.environ.setdefault(_name, _value)
sys.path.insert(0, str(REPO_ROOT))
