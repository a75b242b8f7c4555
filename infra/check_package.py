"""Check a ``chalice package`` zip before it ships: every requirement is inside.

``chalice package`` only warns ("Could not install dependencies") when it finds no
wheel for the Lambda's platform (the runtime's Python, built for the runtime's glibc
or older: 2.26 for python3.11) and still writes the zip; the function then fails at
import. numpy 2.3 and later publish only manylinux_2_28 wheels, so
``requirements.txt`` pins the newest that fits (2.2.6). This check (and the
Makefile's look for that warning, which also covers indirect dependencies) makes
``make package`` fail instead, and prints the unzipped size (Lambda's limit is
250 MB with all layers).

Usage: ``python -m infra.check_package build/package/deployment.zip requirements.txt``
"""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

UNZIPPED_LIMIT_BYTES = 250 * 1000 * 1000


def required_distributions(requirements: Path) -> dict[str, str]:
    """``{normalised name: version}`` of the pinned lines of a requirements file."""
    pinned = {}
    for line in requirements.read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s#;]+).*", line)
        if match:
            pinned[_normalise(match.group(1))] = match.group(2)
    return pinned


def packaged_distributions(archive: zipfile.ZipFile) -> dict[str, str]:
    """``{normalised name: version}`` of the ``*.dist-info`` folders in the zip."""
    found = {}
    for name in archive.namelist():
        top = name.split("/", 1)[0]
        if top.endswith(".dist-info"):
            distribution, _, version = top[: -len(".dist-info")].rpartition("-")
            found[_normalise(distribution)] = version
    return found


def _normalise(name: str) -> str:
    """PEP 503 name normalisation (``Python_ULID`` and ``python-ulid`` are one)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def problems(zip_path: Path, requirements: Path) -> list[str]:
    """What is wrong with the package: missing or other-version requirements, size."""
    with zipfile.ZipFile(zip_path) as archive:
        packaged = packaged_distributions(archive)
        unzipped = sum(item.file_size for item in archive.infolist())
    found = []
    for name, version in required_distributions(requirements).items():
        if name not in packaged:
            found.append(f"{name}=={version} is not in {zip_path} (no wheel for the Lambda?)")
        elif packaged[name] != version:
            found.append(f"{name} is {packaged[name]} in the package, {version} required")
    if unzipped > UNZIPPED_LIMIT_BYTES:
        found.append(f"{unzipped / 1e6:.1f} MB unzipped is over Lambda's 250 MB")
    print(f"{zip_path}: {unzipped / 1e6:.1f} MB unzipped, {len(packaged)} distributions")
    return found


def main() -> int:
    """Exit 1 and list the problems, if any."""
    zip_path, requirements = (Path(argument) for argument in sys.argv[1:3])
    found = problems(zip_path, requirements)
    for problem in found:
        print(f"package check: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
