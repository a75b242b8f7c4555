"""``infra.check_package``: a Lambda zip missing a requirement, holding a dev-only one,
or over the size limits fails ``make package``."""

from __future__ import annotations

import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from infra.check_package import (
    UNZIPPED_LIMIT_BYTES,
    ZIPPED_LIMIT_BYTES,
    problems,
    required_distributions,
)

REPO = Path(__file__).resolve().parents[2]


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


def test_a_dev_only_requirement_in_the_zip_is_a_problem(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("tiktoken==0.11.0\n")
    dev = tmp_path / "requirements-dev.txt"
    dev.write_text("-r requirements.txt\nbpe-openai==0.1.4\n")
    clean = _zip(tmp_path / "ok.zip", ["tiktoken-0.11.0.dist-info"])
    assert problems(clean, requirements, dev) == []
    leaky = _zip(tmp_path / "bad.zip", ["tiktoken-0.11.0.dist-info", "bpe_openai-0.1.4.dist-info"])
    assert problems(leaky, requirements, dev) == [
        f"bpe-openai is a development requirement but is in {leaky}"
    ]


def test_sizes_over_the_limits_are_problems(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("")
    archive = tmp_path / "big.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("chalicelib/data/blob", b"\0" * 200_000)
    zipped = archive.stat().st_size
    assert problems(archive, requirements, zipped_limit=zipped, unzipped_limit=200_000) == []
    assert problems(archive, requirements, zipped_limit=zipped - 1, unzipped_limit=199_999) == [
        f"{zipped / 1e6:.1f} MB zipped is over {(zipped - 1) / 1e6:g} MB "
        "(chalice deploy's direct upload)",
        "0.2 MB unzipped is over 0.199999 MB (Lambda allows 250 MB with all layers)",
    ]


def test_the_limits_are_lambdas_with_room_to_spare() -> None:
    assert ZIPPED_LIMIT_BYTES <= 50 * 1024 * 1024  # a direct upload
    assert UNZIPPED_LIMIT_BYTES <= 250 * 1000 * 1000 * 0.6


def test_no_dev_only_pin_is_a_run_time_dependency() -> None:
    # A package the deployed code needs (even indirectly, as tiktoken needs regex) must
    # be pinned in requirements.txt, or `make package` finds it in the zip and fails.
    runtime = set(required_distributions(REPO / "requirements.txt"))
    dev_only = set(required_distributions(REPO / "requirements-dev.txt")) - runtime
    needed: set[str] = set()
    waiting = list(runtime)
    while waiting:
        name = waiting.pop()
        if name in needed:
            continue
        needed.add(name)
        for line in metadata.requires(name) or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                waiting.append(canonicalize_name(requirement.name))
    assert sorted(dev_only & needed) == []
