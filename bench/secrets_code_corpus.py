"""A corpus of real code and docs for the secret check's false-positive bench
(``bench/secrets_false_positives.py --code``): the sources of installed packages whose
licence is declared, cut into memory-sized texts, split by package into a tuning part and
a held-out part.

Sources: every distribution in the project's virtual environment (``.venv``; its files
from the ``RECORD`` of its ``.dist-info``, its licence from ``METADATA``), and any extra
roots given (each directory with a ``package.json`` is a package, its ``license`` field
the licence; other files belong to their folder three levels below the root, with the
licence of the nearest ``LICENSE``/``COPYING``/``copyright`` file above them, or the licence given
with the root as ``DIR=SPDX-ID`` when the project states it elsewhere). A package
without a declared licence is left out.

File types: Python, JavaScript, YAML, shell, Markdown, and lock/checksum files (the
``RECORD`` of a wheel, ``package-lock.json``, ``Pipfile.lock``, ``requirements*.txt``,
``*.lock``, ``go.sum``), which hold digests of every file a package ships.

Sampling is deterministic: files are ordered by a SHA-256 of their package and path, and
taken in that order until a type's line budget is reached. A package is held out when
the first byte of the SHA-256 of its name is below 64 (one quarter of packages).
Minified files (any line over 2,000 characters, or a mean line over 300) are left out:
agents store code they read and write, not bundles.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

MEMORY_CHARS = 480
"""Texts are cut like the held-back benchmark's memories: at most 480 characters."""
HELD_OUT_BELOW = 64
MAX_LINE = 2_000
MAX_MEAN_LINE = 300
MAX_FILE_BYTES = 2_000_000
PACKAGE_DEPTH = 3

_SUFFIX_TYPES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".sh": "shell",
    ".bash": "shell",
    ".md": "markdown",
}
_LOCK_NAMES = re.compile(
    r"RECORD|package-lock\.json|npm-shrinkwrap\.json|Pipfile\.lock|poetry\.lock|yarn\.lock|"
    r"pnpm-lock\.yaml|Cargo\.lock|go\.sum|uv\.lock|requirements[\w.\-]*\.txt"
)
TYPES = ("python", "javascript", "yaml", "shell", "markdown", "lock")
# Debian states a package's licence in /usr/share/doc/<package>/copyright.
_LICENCE_FILE = re.compile(r"(?:LICEN[CS]E|COPYING|copyright)(?:[.\-]\w+)?", re.IGNORECASE)


@dataclass(frozen=True)
class SourceFile:
    """One file of the corpus: its package, type and path."""

    package: str
    kind: str
    path: Path

    @property
    def held_out(self) -> bool:
        """Whether the file's package is in the held-out part."""
        return is_held_out(self.package)

    @property
    def order(self) -> str:
        """The deterministic sampling order."""
        return hashlib.sha256(f"{self.package}/{self.path.name}/{self.path}".encode()).hexdigest()


def is_held_out(package: str) -> bool:
    """Whether ``package`` (a distribution or package name) is held out."""
    return hashlib.sha256(package.lower().encode()).digest()[0] < HELD_OUT_BELOW


def file_kind(path: Path) -> str | None:
    """The corpus type of ``path`` (``TYPES``), or None when it is not in the corpus."""
    if _LOCK_NAMES.fullmatch(path.name):
        return "lock"
    return _SUFFIX_TYPES.get(path.suffix.lower())


def venv_files(site_packages: Path) -> Iterator[SourceFile]:
    """The files of every distribution in ``site_packages`` that declares a licence."""
    for info in sorted(site_packages.glob("*.dist-info")):
        record, metadata = info / "RECORD", info / "METADATA"
        if not record.is_file() or not metadata.is_file():
            continue
        headers = HeaderParser().parsestr(metadata.read_text(encoding="utf-8", errors="replace"))
        name = headers.get("Name", info.name.split("-")[0])
        if not _declares_licence(headers):
            continue
        for line in record.read_text(encoding="utf-8", errors="replace").splitlines():
            relative = line.rsplit(",", 2)[0]
            path = (site_packages / relative).resolve()
            kind = file_kind(path)
            if kind is not None and path.is_file() and site_packages.resolve() in path.parents:
                yield SourceFile(name, kind, path)


def _declares_licence(headers: object) -> bool:
    get = getattr(headers, "get", None)
    get_all = getattr(headers, "get_all", None)
    if get is None or get_all is None:
        return False
    if (get("License-Expression") or "").strip():
        return True
    if any("License ::" in c for c in get_all("Classifier") or []):
        return True
    licence = (get("License") or "").strip()
    return bool(licence) and licence.upper() not in {"UNKNOWN", "NONE"}


def root_files(spec: str) -> Iterator[SourceFile]:
    """The files under an extra root (``DIR`` or ``DIR=SPDX-ID``), each with its package
    (see the module docstring)."""
    folder, _, stated = spec.partition("=")
    root = Path(folder).resolve()
    packages: dict[Path, str | None] = {}
    for path in sorted(root.rglob("*")):
        kind = file_kind(path)
        if kind is None or not path.is_file():
            continue
        package_dir = _package_dir(path, root)
        if package_dir not in packages:
            packages[package_dir] = _licence_of(package_dir, root) or stated or None
        if packages[package_dir] is not None:
            yield SourceFile(f"{root.name}:{package_dir.relative_to(root)}", kind, path)


def _package_dir(path: Path, root: Path) -> Path:
    for parent in path.parents:
        if parent == root:
            break
        if (parent / "package.json").is_file():
            return parent
    parts = path.relative_to(root).parts[:-1]
    return root.joinpath(*parts[:PACKAGE_DEPTH])


def _licence_of(package_dir: Path, root: Path) -> str | None:
    manifest = package_dir / "package.json"
    if manifest.is_file():
        try:
            licence = json.loads(manifest.read_text(encoding="utf-8")).get("license")
        except (ValueError, AttributeError):
            licence = None
        if isinstance(licence, str) and licence.strip():
            return licence
    for folder in (package_dir, *package_dir.parents):
        if any(_LICENCE_FILE.fullmatch(p.name) for p in folder.iterdir() if p.is_file()):
            return "licence file"
        if folder == root:
            break
    return None


def read_lines(path: Path) -> list[str] | None:
    """The lines of a text file, or None when it is binary, huge or minified."""
    if path.stat().st_size > MAX_FILE_BYTES:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None
    lines = text.splitlines()
    if not lines or max(map(len, lines)) > MAX_LINE or len(text) / len(lines) > MAX_MEAN_LINE:
        return None
    return lines


def memories(lines: list[str]) -> Iterator[list[str]]:
    """Consecutive non-blank lines grouped into texts of at most ``MEMORY_CHARS``
    characters (a longer line is a text of its own, cut at ``MEMORY_CHARS``)."""
    group: list[str] = []
    size = 0
    for line in lines:
        if not line.strip():
            continue
        line = line[:MEMORY_CHARS]
        if group and size + 1 + len(line) > MEMORY_CHARS:
            yield group
            group, size = [], 0
        group.append(line)
        size += len(line) + (1 if size else 0)
    if group:
        yield group


def sample(files: list[SourceFile], budget: int) -> dict[tuple[str, bool], list[list[str]]]:
    """Per (type, held out): memory texts, as lists of lines, from files taken in the
    sampling order until the part reaches ``budget`` non-blank lines."""
    taken: dict[tuple[str, bool], list[list[str]]] = {}
    counts: dict[tuple[str, bool], int] = {}
    for source in sorted(files, key=lambda f: f.order):
        part = (source.kind, source.held_out)
        if counts.get(part, 0) >= budget:
            continue
        lines = read_lines(source.path)
        if lines is None:
            continue
        for group in memories(lines):
            taken.setdefault(part, []).append(group)
            counts[part] = counts.get(part, 0) + len(group)
    return taken


def default_site_packages() -> Path:
    """The project's ``.venv`` site-packages."""
    repo = Path(__file__).resolve().parents[1]
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return repo / ".venv" / "lib" / version / "site-packages"
