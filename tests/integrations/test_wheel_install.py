"""The built wheel installs as the docs say and runs an integration example from a clean
virtual environment (docs/integrations/README.md#install, docs/issues.md#issue-48-item-1).

``make dist-python`` builds the wheel; a new virtual environment (no checkout on its
path) installs ``<wheel>[langgraph]`` from PyPI at the versions the integrations are
tested with (requirements-dev.txt), and ``examples/langgraph_store.py`` runs against a
local server with the installed package.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO, example_run

TESTED_WITH = ("langgraph", "langchain-core", "httpx", "typer", "pydantic", "python-ulid")
"""The packages whose pins (requirements*.txt) the clean install is held to."""


def _pins() -> list[str]:
    """The ``name==version`` lines of requirements*.txt for :data:`TESTED_WITH`."""
    lines = []
    for name in ("requirements.txt", "requirements-dev.txt"):
        for line in (REPO / name).read_text(encoding="utf-8").splitlines():
            package = line.split("==")[0].split("[")[0].strip().lower()
            if "==" in line and package in TESTED_WITH:
                lines.append(line.strip())
    return lines


def test_the_wheel_with_its_extra_runs_an_integration_example(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = subprocess.run(
        ["make", "-s", "-o", ".venv/.installed-stamp", "dist-python", f"DIST={dist}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    wheels = sorted(dist.glob("pinework-*.whl"))
    assert len(wheels) == 1 and sorted(dist.glob("pinework-*.tar.gz"))

    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("\n".join(_pins()) + "\n", encoding="utf-8")
    installed = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-compile",
            "-c",
            str(constraints),
            f"{wheels[0]}[langgraph]",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    where = subprocess.run(
        [str(python), "-c", "import pinework; print(pinework.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(venv)), where.stdout  # not the checkout's

    with example_run(tmp_path, "langgraph_store.py", python=str(python), cwd=tmp_path) as (
        done,
        _,
    ):
        assert done.stdout.strip()
