"""Every shell and Python block of README.md and docs/ marked runnable runs verbatim
against a local server (docs/contributing.md#runnable-examples).

A block is marked by its fence's info string: ```` ```bash runnable ```` or
```` ```python runnable ````. The runnable blocks of one page run in order in one bash
script (so a block's exported variables reach the next, as in a reader's terminal), with
``set -euo pipefail``, from a folder that holds the checkout's ``.venv`` and the server's
data folder as ``.pinework-local``, against a fresh server per page. The only rewrite is
the server's port: the pages say ``127.0.0.1:8000`` (``make serve``'s default).

A block fails the test when a command fails, or when a command prints the error envelope
(``{"error": {"code": …}}``) on standard output, which is how ``curl`` shows a refusal
(it exits 0 on a 4xx). A block that shows an error on purpose says so in the block
(``|| echo …``) and prints it on standard error, as the CLI does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, LocalServer

FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```\s*$", re.MULTILINE | re.DOTALL)
"""A fenced block: its info string and its text."""

ERROR_ENVELOPE = re.compile(r'"error"\s*:\s*\{\s*"code"')

PAGES = sorted(
    str(path.relative_to(REPO))
    for path in [REPO / "README.md", *(REPO / "docs").rglob("*.md")]
    if re.search(r"^```(bash|python) runnable\s*$", path.read_text(encoding="utf-8"), re.M)
)


def runnable_blocks(text: str) -> list[tuple[str, str]]:
    """The ``(language, body)`` of a page's runnable blocks, in order."""
    found = []
    for match in FENCE.finditer(text):
        words = match.group("info").split()
        if len(words) == 2 and words[1] == "runnable" and words[0] in ("bash", "python"):
            found.append((words[0], match.group("body")))
    return found


def as_script(blocks: list[tuple[str, str]], api_port: int) -> str:
    """One bash script running the blocks in order; Python blocks through a heredoc."""
    parts = ["set -euo pipefail"]
    for number, (language, body) in enumerate(blocks):
        if language == "python":
            parts.append(f"python - <<'PINEWORK_BLOCK_{number}'\n{body}PINEWORK_BLOCK_{number}")
        else:
            parts.append(body)
    return "\n".join(parts).replace("127.0.0.1:8000", f"127.0.0.1:{api_port}")


def test_the_pages_mark_their_tours_runnable() -> None:
    """The tours a newcomer copies are checked: a page losing its marks would pass empty."""
    assert {"README.md", "docs/agent-builders.md"} <= set(PAGES)
    blocks = runnable_blocks((REPO / "README.md").read_text(encoding="utf-8"))
    assert [language for language, _ in blocks] == ["bash", "python", "bash"]


@pytest.mark.parametrize("page", PAGES)
def test_runnable_blocks_run_verbatim(page: str, tmp_path: Path) -> None:
    blocks = runnable_blocks((REPO / page).read_text(encoding="utf-8"))
    server = LocalServer(tmp_path / "data")
    server.start()
    try:
        reader = tmp_path / "reader"
        reader.mkdir()
        (reader / ".venv").symlink_to(Path(sys.prefix))
        (reader / ".pinework-local").symlink_to(server.data_dir)
        env = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("PINEWORK_", "AGENT_", "PERSON_"))
        }
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env["PINEWORK_DATA_DIR"] = str(server.data_dir)  # the admin commands find the server
        result = subprocess.run(
            ["bash", "-c", as_script(blocks, server.api_port)],
            cwd=reader,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        server.stop()
    shown = f"stdout:\n{result.stdout[-4000:]}\nstderr:\n{result.stderr[-4000:]}"
    assert result.returncode == 0, shown
    assert not ERROR_ENVELOPE.search(result.stdout), shown
