"""Check a ``chalice package`` zip before it ships: every requirement is inside, no
dev-only one is, and it fits Lambda (at most ``ZIPPED_LIMIT_BYTES`` zipped, for a
direct upload, and ``UNZIPPED_LIMIT_BYTES`` unzipped, leaving room for layers); both
figures are printed. ``chalice package`` only warns when it finds no wheel for the
Lambda's platform and still writes a zip that fails at import, so this (and the
Makefile's look for that warning) makes ``make package`` fail instead. Usage:
``python -m infra.check_package build/package/deployment.zip requirements.txt
[requirements-dev.txt]``. Why the pins and limits:
docs/DECISIONS.md#packaging-cold-start-and-iam-issue-12-deploy-iam-gateway-errors-queued-reviews
"""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

ZIPPED_LIMIT_BYTES = 50 * 1000 * 1000
"""50 MB: under Lambda's limit for a zip uploaded directly (50 MiB), as ``chalice deploy`` does."""
UNZIPPED_LIMIT_BYTES = 150 * 1000 * 1000
"""150 MB: well under Lambda's 250 MB for the function and its layers together."""


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


def problems(
    zip_path: Path,
    requirements: Path,
    dev_requirements: Path | None = None,
    *,
    zipped_limit: int = ZIPPED_LIMIT_BYTES,
    unzipped_limit: int = UNZIPPED_LIMIT_BYTES,
) -> list[str]:
    """What is wrong with the package: missing or other-version requirements, a
    requirement pinned only for development inside it, sizes over the limits (bytes)."""
    with zipfile.ZipFile(zip_path) as archive:
        packaged = packaged_distributions(archive)
        unzipped = sum(item.file_size for item in archive.infolist())
    zipped = zip_path.stat().st_size
    found = []
    deployed = required_distributions(requirements)
    if dev_requirements is not None:
        for name in required_distributions(dev_requirements).keys() - deployed.keys():
            if name in packaged:
                found.append(f"{name} is a development requirement but is in {zip_path}")
    for name, version in deployed.items():
        if name not in packaged:
            found.append(f"{name}=={version} is not in {zip_path} (no wheel for the Lambda?)")
        elif packaged[name] != version:
            found.append(f"{name} is {packaged[name]} in the package, {version} required")
    if zipped > zipped_limit:
        found.append(
            f"{zipped / 1e6:.1f} MB zipped is over {zipped_limit / 1e6:g} MB "
            "(chalice deploy's direct upload)"
        )
    if unzipped > unzipped_limit:
        found.append(
            f"{unzipped / 1e6:.1f} MB unzipped is over {unzipped_limit / 1e6:g} MB "
            "(Lambda allows 250 MB with all layers)"
        )
    print(
        f"{zip_path}: {zipped / 1e6:.1f} MB zipped (limit {zipped_limit / 1e6:g}), "
        f"{unzipped / 1e6:.1f} MB unzipped (limit {unzipped_limit / 1e6:g}), "
        f"{len(packaged)} distributions"
    )
    return found


def main() -> int:
    """Exit 1 and list the problems, if any."""
    zip_path, requirements, *dev = (Path(argument) for argument in sys.argv[1:4])
    found = problems(zip_path, requirements, dev[0] if dev else None)
    for problem in found:
        print(f"package check: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
