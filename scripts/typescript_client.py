"""Keep the TypeScript client's document and types in step with the API
(docs/integrations/typescript.md, docs/issues.md#issue-27-item-5).

    python scripts/typescript_client.py write   # write openapi.json and src/schema.d.ts
    python scripts/typescript_client.py check   # exit 1 if either differs from a fresh build

Both build the OpenAPI document in-process from the Chalice app (what
``GET /api/v1/openapi.json`` serves, docs/reference.md#14-operations) and generate the types
from it with openapi-typescript, which needs ``npm ci`` in ``clients/typescript`` first.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLIENT = REPO / "clients" / "typescript"
DOCUMENT = CLIENT / "openapi.json"
SCHEMA = CLIENT / "src" / "schema.d.ts"
GENERATOR = ("npx", "--no", "openapi-typescript")
"""openapi-typescript as ``package.json`` pins it; ``--no``: never download it."""
GENERATOR_OPTIONS = ("--default-non-nullable", "false")
"""A request field with a default (``expiresAt``, ``count``) stays optional in the types; the
answers' schemas list their required fields themselves."""
USAGE = "usage: python scripts/typescript_client.py write|check"


def document_text() -> str:
    """The app's OpenAPI document as ``openapi.json`` holds it.

    Returns:
        JSON with two-space indents, keys in the document's order, non-ASCII kept, and a
        final newline.
    """
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from app import app
    from chalicelib.api.openapi_document import build_document

    return json.dumps(build_document(app.routes), indent=2, ensure_ascii=False) + "\n"


def schema_text(document: str, client: Path = CLIENT) -> str:
    """The TypeScript declarations openapi-typescript generates from ``document``.

    Args:
        document: the document's JSON text.
        client: the folder whose ``node_modules`` holds the generator (``npm ci`` there).

    Returns:
        The text of ``src/schema.d.ts``.

    Raises:
        RuntimeError: ``npx`` is not on PATH (install nodejs and npm), or the generator
            failed (run ``npm ci`` in ``client``); the message says which.
    """
    if shutil.which("npx") is None:
        raise RuntimeError("npx is not on PATH: install nodejs (20 or later) and npm")
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "openapi.json", Path(folder) / "schema.d.ts"
        source.write_text(document, encoding="utf-8")
        command = [*GENERATOR, str(source), "-o", str(target), *GENERATOR_OPTIONS]
        done = subprocess.run(command, cwd=client, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not target.is_file():
            raise RuntimeError(
                f"{' '.join(GENERATOR)} failed (run `npm ci` in {client}):\n"
                f"{done.stdout}{done.stderr}"
            )
        return target.read_text(encoding="utf-8")


def fresh() -> dict[Path, str]:
    """Both generated files as a build from the app makes them now.

    Returns:
        ``{path: text}`` for ``openapi.json`` and ``src/schema.d.ts``.
    """
    document = document_text()
    return {DOCUMENT: document, SCHEMA: schema_text(document)}


def stale(built: dict[Path, str]) -> list[Path]:
    """The committed files that differ from ``built`` (or are missing).

    Args:
        built: what ``fresh`` returned.

    Returns:
        The paths that differ, in ``built``'s order; empty when in step.
    """
    return [
        path
        for path, text in built.items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]


def main(argv: list[str]) -> int:
    """Run ``write`` or ``check``.

    Args:
        argv: the arguments after the script's name.

    Returns:
        0 when written or in step, 1 when ``check`` found a stale file, 2 on bad usage or
        when the generator cannot run.
    """
    if argv not in (["write"], ["check"]):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        built = fresh()
    except RuntimeError as error:
        print(error, file=sys.stderr)
        return 2
    differ = stale(built)
    if argv == ["write"]:
        for path, text in built.items():
            path.write_text(text, encoding="utf-8")
        print(f"wrote {', '.join(str(path.relative_to(REPO)) for path in built)}")
        return 0
    for path in differ:
        print(f"{path.relative_to(REPO)} is stale: run `python scripts/typescript_client.py write`")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
