"""Export memory stays flat in the workspace's size (docs/reference.md#export-and-import,
docs/issues.md#issue-24-item-5): the peak resident memory of ``pinework admin export``,
run as its own process against the embedded AWS, for workspaces of growing size.

Each size: a fresh embedded AWS loaded by ``bench/dashboard_speed.py``'s ``build`` (one
agent with N memories and a recall log), then ``pinework admin export --workspace`` in a
child process that records the peak of Python's allocations (``tracemalloc``). Flat
means the peak stays about the same while the file grows with N (the process's
baseline, the service code and boto3's models, is most of it).

Usage: ``.venv/bin/python bench/export_memory.py [--sizes 1000 4000 16000]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.dashboard_speed import BUCKET, TABLE, build
from infra.local_dynamodb import embedded_for_bench

CHILD = """
import os, tracemalloc
tracemalloc.start()
from pinework.admin import open_admin_service
service = open_admin_service()
workspace = os.environ["BENCH_WORKSPACE"]
with open(os.environ["BENCH_FILE"], "w", encoding="utf-8") as handle:
    service.export("workspace", workspace, lambda line: handle.write(line + "\\n"))
print(tracemalloc.get_traced_memory()[1])
"""
"""The child: the admin service as ``pinework admin export`` opens it, the export written
line by line, then the peak of Python's allocations (``tracemalloc``: the service code
and boto3's models, about 50 MB, are most of it)."""


def one_size(size: int) -> tuple[int, int, float]:
    """(file bytes, the child's peak traced bytes, seconds) of exporting ``size`` memories."""
    with embedded_for_bench() as endpoint, tempfile.TemporaryDirectory() as folder:
        bench = build(endpoint, size, 1)
        path = Path(folder) / "export.jsonl"
        environment = {
            **os.environ,
            "PINEWORK_DYNAMODB_ENDPOINT": endpoint,
            "PINEWORK_S3_ENDPOINT": endpoint,
            "PINEWORK_TABLE_NAME": TABLE,
            "PINEWORK_BUCKET_NAME": BUCKET,
        }
        environment["BENCH_WORKSPACE"] = bench.person.workspace_id
        environment["BENCH_FILE"] = str(path)
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD], env=environment, stdout=subprocess.PIPE, text=True
        )
        output, _ = child.communicate()
        seconds = time.perf_counter() - started
        if child.returncode != 0:
            raise SystemExit(f"the export failed (status {child.returncode})")
        traced = int(output.split()[-1])
        return path.stat().st_size, traced, seconds


def main() -> None:
    """Print file size and the export's peak RSS per workspace size."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 16000])
    print(f"{'memories':>9} {'file MB':>9} {'peak MB':>12} {'seconds':>8}")
    for size in parser.parse_args().sizes:
        file_bytes, peak, seconds = one_size(size)
        print(f"{size:>9} {file_bytes / 1e6:>9.2f} {peak / 1e6:>12.1f} {seconds:>8.1f}")


if __name__ == "__main__":
    main()
