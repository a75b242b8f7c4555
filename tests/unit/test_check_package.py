"""``infra.check_package``: a Lambda zip missing a requirement fails ``make package``."""

from __future__ import annotations

import zipfile
from pathlib import Path

from infra.check_package import problems


def _zip(path: Path, folders: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for folder in folders:
            archive.writestr(f"{folder}/METADATA", "x")
    return path


def test_a_missing_or_other_version_requirement_is_a_problem(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# comment\npydantic==2.14.4\nPython_ULID==4.1.0\nnumpy==2.2.6\n")
    complete = _zip(
        tmp_path / "ok.zip",
        ["pydantic-2.14.4.dist-info", "python_ulid-4.1.0.dist-info", "numpy-2.2.6.dist-info"],
    )
    assert problems(complete, requirements) == []
    broken = _zip(
        tmp_path / "bad.zip", ["pydantic-2.14.3.dist-info", "python_ulid-4.1.0.dist-info"]
    )
    assert problems(broken, requirements) == [
        "pydantic is 2.14.3 in the package, 2.14.4 required",
        f"numpy==2.2.6 is not in {broken} (no wheel for the Lambda?)",
    ]
