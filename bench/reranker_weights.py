"""What the first recall on a new Lambda container pays to load the reranker's weights
(docs/operations.md#reranker-weights; docs/DECISIONS.md "Reranker weights on Lambda"):
the download from the bucket into a fresh folder (``S3ModelFile.path()``, one
``GetObject`` of ~34 MB, from the embedded S3: moto's server on loopback), ``np.load``
of every array, and the cross-encoder's whole ``load()`` (vocabulary, weights
dequantised to float32). Each round uses a fresh folder and a fresh ``CrossEncoder``;
the figures are medians. The file is then in the page cache, as it is after a download
on Lambda, so the load figures are the CPU's, not the disk's.

Usage: ``.venv/bin/python bench/reranker_weights.py [--repeat 5]`` (after ``make``, which
builds ``models/ms-marco-minilm-l12-int8.npz``).
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

import boto3
import numpy as np
from botocore.config import Config

from chalicelib.services.recall.reranker import CrossEncoder
from chalicelib.storage.keys import RERANKER_WEIGHTS_OBJECT
from chalicelib.storage.model_files import S3ModelFile
from chalicelib.wiring import RERANKER_WEIGHTS_FILE
from infra.local_dynamodb import EmbeddedAWS

BUCKET = "pinework-bench"


def main() -> None:
    """Print the medians of ``--repeat`` rounds (see the module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    arguments = parser.parse_args()
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(name, "bench")  # the embedded server takes any
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    aws = EmbeddedAWS()
    endpoint = aws.start()
    try:
        s3 = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            config=Config(s3={"addressing_style": "path"}),
        )
        s3.create_bucket(Bucket=BUCKET)
        s3.upload_file(str(RERANKER_WEIGHTS_FILE), BUCKET, RERANKER_WEIGHTS_OBJECT)
        download, arrays, load = [], [], []
        for _ in range(arguments.repeat):
            with tempfile.TemporaryDirectory(prefix="pinework-bench-models-") as folder:
                started = time.perf_counter()
                path = S3ModelFile(lambda: s3, BUCKET, RERANKER_WEIGHTS_OBJECT, Path(folder)).path()
                download.append(time.perf_counter() - started)
                started = time.perf_counter()
                with np.load(path) as archive:
                    for name in archive.files:
                        archive[name]
                arrays.append(time.perf_counter() - started)
                started = time.perf_counter()
                CrossEncoder(path).load()
                load.append(time.perf_counter() - started)
    finally:
        aws.stop()
    size = RERANKER_WEIGHTS_FILE.stat().st_size
    print(
        f"reranker weights ({size / 1e6:.1f} MB), median of {arguments.repeat}: download from "
        f"the embedded S3 {statistics.median(download) * 1000:.0f} ms; np.load of every array "
        f"{statistics.median(arrays) * 1000:.0f} ms; CrossEncoder.load() "
        f"{statistics.median(load) * 1000:.0f} ms; first recall's extra "
        f"{(statistics.median(download) + statistics.median(load)) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
