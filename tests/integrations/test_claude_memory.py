"""Claude's memory tool over Pinework (docs/integrations/claude-memory-tool.md): every command
answers as the SDK's own filesystem tool, files are key-value entries of the workspace,
concurrent edits all land, and the SDK's tool runner with a scripted model stores a file;
the example script runs against the real local server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2
import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

from pinework import AsyncClient, Client
from pinework.errors import PineworkAPIError
from pinework.integrations.claude_memory import AsyncPineworkMemoryTool, PineworkMemoryTool
from pinework.models import KvValue
from tests.helpers import World, example_run

BASE_URL = "http://pinework.test"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def client(app_transport: httpx.MockTransport, world: World) -> Iterator[Client]:
    with Client(BASE_URL, token=world.agent.token, transport=app_transport) as made:
        yield made


@pytest.fixture
def tool(client: Client) -> PineworkMemoryTool:
    return PineworkMemoryTool(client)


def answer(tool: Any, **command: Any) -> str:
    """The tool's answer to one command, or ``ERROR: <text>`` for a ``ToolError``."""
    try:
        return str(tool.call(command))
    except ToolError as error:
        return f"ERROR: {error.content}"


def stored(client: Client, key: str) -> str | None:
    found = client.kv_recall(key)
    assert isinstance(found, KvValue)
    return found.value


def directory_sizes_blanked(text: str) -> str:
    """A directory view with each directory's own size replaced (a filesystem's size of a
    directory is its own; Pinework shows 4K): files keep their sizes."""
    if not text.startswith("Here're the files"):
        return text
    header, *lines = text.split("\n")
    blanked = []
    for index, line in enumerate(lines):
        _size, path = line.split("\t")
        blanked.append(f"DIR\t{path}" if index == 0 or path.endswith("/") else line)
    return "\n".join([header, *blanked])


P = "/memories"
SCRIPT: list[dict[str, Any]] = [
    {"command": "view", "path": P},
    {"command": "create", "path": f"{P}/notes.md", "file_text": "one\ntwo\nthree\n"},
    {"command": "create", "path": f"{P}/notes.md", "file_text": "again"},
    {"command": "create", "path": P, "file_text": "root"},
    {"command": "view", "path": f"{P}/notes.md"},
    {"command": "view", "path": f"{P}/notes.md", "view_range": [2, -1]},
    {"command": "view", "path": f"{P}/notes.md", "view_range": [2, 2]},
    {"command": "str_replace", "path": f"{P}/notes.md", "old_str": "two", "new_str": "TWO"},
    {"command": "str_replace", "path": f"{P}/notes.md", "old_str": "nine", "new_str": "9"},
    {"command": "str_replace", "path": f"{P}/notes.md", "old_str": "e\n", "new_str": "E"},
    {"command": "insert", "path": f"{P}/notes.md", "insert_line": 0, "insert_text": "zero\n"},
    {"command": "insert", "path": f"{P}/notes.md", "insert_line": 4, "insert_text": "four"},
    {"command": "insert", "path": f"{P}/notes.md", "insert_line": 6, "insert_text": "x"},
    {"command": "insert", "path": f"{P}/notes.md", "insert_line": -1, "insert_text": "x"},
    {"command": "view", "path": f"{P}/notes.md"},
    {"command": "create", "path": f"{P}/café.md", "file_text": "crème brûlée ☕"},
    {"command": "create", "path": f"{P}/projects/pin/a.md", "file_text": "a" * 1536},
    {"command": "create", "path": f"{P}/projects/pin/deep/b.md", "file_text": "b"},
    {"command": "create", "path": f"{P}/projects/.secret/x.md", "file_text": "x"},
    {"command": "create", "path": f"{P}/.hidden.md", "file_text": "h"},
    {"command": "create", "path": f"{P}/empty.md", "file_text": ""},
    {"command": "view", "path": P},
    {"command": "view", "path": f"{P}/projects"},
    {"command": "view", "path": f"{P}/missing.md"},
    {"command": "view", "path": f"{P}/empty.md"},
    {"command": "str_replace", "path": f"{P}/projects", "old_str": "a", "new_str": "b"},
    {"command": "str_replace", "path": f"{P}/missing.md", "old_str": "a", "new_str": "b"},
    {"command": "insert", "path": f"{P}/projects", "insert_line": 0, "insert_text": "b"},
    {"command": "insert", "path": f"{P}/missing.md", "insert_line": 0, "insert_text": "b"},
    {"command": "rename", "old_path": f"{P}/notes.md", "new_path": f"{P}/archive/notes.md"},
    {"command": "rename", "old_path": f"{P}/café.md", "new_path": f"{P}/archive/notes.md"},
    {"command": "rename", "old_path": f"{P}/missing.md", "new_path": f"{P}/other.md"},
    {"command": "rename", "old_path": P, "new_path": f"{P}/x"},
    {"command": "rename", "old_path": f"{P}/projects", "new_path": f"{P}/old/projects"},
    {"command": "view", "path": P},
    {"command": "view", "path": f"{P}/old/projects/pin/deep/b.md"},
    {"command": "view", "path": f"{P}/archive/notes.md"},
    {"command": "delete", "path": f"{P}/empty.md"},
    {"command": "delete", "path": f"{P}/empty.md"},
    {"command": "delete", "path": f"{P}/archive"},
    {"command": "view", "path": f"{P}/archive/notes.md"},
    {"command": "delete", "path": P},
    {"command": "delete", "path": f"{P}/old"},
    {"command": "view", "path": f"{P}/old"},
    {"command": "view", "path": P},
    {"command": "view", "path": "/etc/passwd"},
    {"command": "create", "path": f"{P}/../escaped.md", "file_text": "x"},
    {"command": "view", "path": f"{P}/a/../../etc"},
    {"command": "create", "path": f"{P}/a/../inside.md", "file_text": "normalised"},
    {"command": "view", "path": f"{P}/inside.md"},
]


def test_every_command_answers_as_the_sdk_filesystem_tool(
    tool: PineworkMemoryTool, tmp_path: Path
) -> None:
    sdk = BetaLocalFilesystemMemoryTool(str(tmp_path))
    ours = [directory_sizes_blanked(answer(tool, **step)) for step in SCRIPT]
    theirs = [directory_sizes_blanked(answer(sdk, **step)) for step in SCRIPT]
    for step, mine, expected in zip(SCRIPT, ours, theirs, strict=True):
        assert mine == expected, step
    # The script is worth comparing: it hits errors, listings and edits.
    assert sum(text.startswith("ERROR: ") for text in ours) >= 20
    assert "     1\tzero\n     2\tone\n     3\tTWO\n     4\tthree\n     5\tfour\n" in ours[14]
    assert "1.5K\t/memories/projects/pin/a.md" in ours[22] and ".secret" not in ours[22]
    assert "/pin/a.md" not in ours[21] and ".hidden" not in ours[21]  # two levels, no dot
    assert "19B\t/memories/café.md" in ours[21]  # UTF-8 bytes


def test_files_are_key_value_entries_of_the_workspace(
    tool: PineworkMemoryTool, client: Client, world: World, app_transport: httpx.MockTransport
) -> None:
    answer(tool, command="create", path="/memories/team/plan.md", file_text="ship it\n")
    assert stored(client, "memories/team/plan.md") == "ship it\n"
    with Client(BASE_URL, token=world.other_agent.token, transport=app_transport) as other:
        seen = answer(PineworkMemoryTool(other), command="view", path="/memories/team/plan.md")
    assert seen.endswith("     1\tship it\n     2\t")  # the workspace's agents share it

    mine = PineworkMemoryTool(client, key_prefix="memories/builder")
    answer(mine, command="create", path="/memories/own.md", file_text="mine")
    assert stored(client, "memories/builder/own.md") == "mine"
    listing = answer(tool, command="view", path="/memories")
    assert "\t/memories/builder/\n" in listing and "/memories/builder/own.md" in listing
    assert "/memories/team/plan.md" not in answer(mine, command="view", path="/memories")


def test_another_workspace_never_sees_the_files(
    tool: PineworkMemoryTool, world: World, app_transport: httpx.MockTransport
) -> None:
    answer(tool, command="create", path="/memories/secret-plan.md", file_text="ours")
    with Client(BASE_URL, token=world.outsider_agent.token, transport=app_transport) as spy:
        theirs = PineworkMemoryTool(spy)
        assert answer(theirs, command="view", path="/memories").endswith("\n4K\t/memories")
        missing = "ERROR: The path /memories/secret-plan.md does not exist."
        assert answer(theirs, command="view", path="/memories/secret-plan.md").startswith(missing)
        assert answer(theirs, command="delete", path="/memories/secret-plan.md").startswith(
            "ERROR: The path /memories/secret-plan.md does not exist"
        )
        answer(theirs, command="create", path="/memories/secret-plan.md", file_text="theirs")
    assert answer(tool, command="view", path="/memories/secret-plan.md").endswith("1\tours")


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("/etc/passwd", "Path must start with /memories, got: /etc/passwd"),
        ("memories/a.md", "Path must start with /memories, got: memories/a.md"),
        ("/memoriesx/a.md", "Path must start with /memories, got: /memoriesx/a.md"),
        ("/memories/../x", "Path /memories/../x would escape /memories directory"),
        ("/memories/a/../../x", "Path /memories/a/../../x would escape /memories directory"),
        ("/memories/%2e%2e/x", "Path /memories/%2e%2e/x would escape /memories directory"),
        ("/memories/%2E%2E%2Fx", "Path /memories/%2E%2E%2Fx would escape /memories directory"),
        ("/memories/%252e%252e/x", "would escape /memories directory"),
        ("/memories/..%2f..%2fetc", "would escape /memories directory"),
        ("/memories/..\\..\\etc", "would escape /memories directory"),
        ("/memories/\uff0e\uff0e/x", "would escape /memories directory"),  # full-width dots
        ("/memories/a\x00b", "contains a NUL character"),
        ("/memories/" + "x" * 510, "keys are at most 512 bytes of UTF-8"),
        ("/memories/" + "é" * 252, "keys are at most 512 bytes of UTF-8"),
    ],
)
def test_paths_outside_memories_are_refused_and_nothing_is_stored(
    tool: PineworkMemoryTool, client: Client, path: str, error: str
) -> None:
    for command in (
        {"command": "create", "path": path, "file_text": "x"},
        {"command": "view", "path": path},
        {"command": "insert", "path": path, "insert_line": 0, "insert_text": "x"},
        {"command": "delete", "path": path},
        {"command": "rename", "old_path": "/memories/ok.md", "new_path": path},
    ):
        assert error in answer(tool, **command)
    assert list(client.iter_kv_keys()) == []


def test_the_longest_path_that_fits_a_key_is_accepted(
    tool: PineworkMemoryTool, client: Client
) -> None:
    path = "/memories/" + "x" * (512 - len("memories/"))
    assert answer(tool, command="create", path=path, file_text="x").startswith("File created")
    assert list(client.iter_kv_keys()) == ["memories/" + "x" * 503]


def test_a_file_over_the_line_limit_is_not_shown(tool: PineworkMemoryTool) -> None:
    answer(tool, command="create", path="/memories/big.txt", file_text="\n" * 999_999)
    assert answer(tool, command="view", path="/memories/big.txt") == (
        "ERROR: File /memories/big.txt exceeds maximum line limit of 999,999 lines."
    )
    answer(tool, command="create", path="/memories/fits.txt", file_text="\n" * 999_998)
    assert answer(tool, command="view", path="/memories/fits.txt").endswith("999999\t")


def test_pinework_refusals_reach_the_model_as_tool_errors(
    tool: PineworkMemoryTool, client: Client
) -> None:
    refused = answer(
        tool, command="create", path="/memories/keys.md", file_text="AKIAIOSFODNN7EXAMPLE"
    )
    assert refused.startswith("ERROR: Pinework refused the operation (secret_in_memory): ")
    assert stored(client, "memories/keys.md") is None


class MeddlingClient(Client):
    """A client that runs ``meddle`` (another writer's edit) just before each of its next
    ``times`` writes, and counts the writes Pinework refused as stale."""

    def __init__(self, *args: Any, meddle: Callable[[], object], times: int, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.meddle, self.times, self.refused = meddle, times, 0

    def _meddle_once(self) -> None:
        if self.times > 0:
            self.times -= 1
            self.meddle()

    def kv_remember(self, key: str, value: Any, **kw: Any) -> Any:
        self._meddle_once()
        try:
            return super().kv_remember(key, value, **kw)
        except PineworkAPIError as error:
            self.refused += error.code == "precondition_failed"
            raise

    def kv_forget(self, key: str, **kw: Any) -> Any:
        self._meddle_once()
        try:
            return super().kv_forget(key, **kw)
        except PineworkAPIError as error:
            self.refused += error.code == "precondition_failed"
            raise


def meddling_tool(
    app_transport: httpx.MockTransport, token: str, meddle: Callable[[], object], times: int = 1
) -> tuple[PineworkMemoryTool, MeddlingClient]:
    meddler = MeddlingClient(
        BASE_URL, token=token, transport=app_transport, meddle=meddle, times=times
    )
    return PineworkMemoryTool(meddler), meddler


def test_two_interleaved_edits_of_one_file_both_land(
    tool: PineworkMemoryTool, client: Client, world: World, app_transport: httpx.MockTransport
) -> None:
    answer(tool, command="create", path="/memories/log.md", file_text="alpha\nbeta\n")

    def other_writer() -> None:  # lands between the first edit's read and its write
        assert answer(
            tool, command="insert", path="/memories/log.md", insert_line=2, insert_text="gamma"
        ) == ("The file /memories/log.md has been edited.")

    first, meddler = meddling_tool(app_transport, world.other_agent.token, other_writer)
    edited = answer(
        first, command="str_replace", path="/memories/log.md", old_str="beta", new_str="BETA"
    )
    assert edited.startswith("The memory file has been edited.")
    assert "     2\tBETA\n     3\tgamma" in edited  # the snippet of the text written
    assert meddler.refused == 1  # the first write was stale and was made again
    assert stored(client, "memories/log.md") == "alpha\nBETA\ngamma\n"

    def str_replace_meanwhile() -> None:
        answer(tool, command="str_replace", path="/memories/log.md", old_str="alpha", new_str="A")

    second, meddler = meddling_tool(app_transport, world.agent.token, str_replace_meanwhile)
    answer(second, command="insert", path="/memories/log.md", insert_line=3, insert_text="delta")
    assert meddler.refused == 1
    assert stored(client, "memories/log.md") == "A\nBETA\ngamma\ndelta\n"


def test_an_edit_re_applied_to_the_new_text_may_no_longer_apply(
    tool: PineworkMemoryTool, world: World, app_transport: httpx.MockTransport, client: Client
) -> None:
    answer(tool, command="create", path="/memories/x.md", file_text="v1\n")

    def rewrite() -> None:
        answer(tool, command="str_replace", path="/memories/x.md", old_str="v1", new_str="v2")

    late, _ = meddling_tool(app_transport, world.agent.token, rewrite)
    assert answer(
        late, command="str_replace", path="/memories/x.md", old_str="v1", new_str="v9"
    ) == (
        "ERROR: No replacement was performed, old_str `v1` did not appear verbatim in "
        "/memories/x.md."
    )
    assert stored(client, "memories/x.md") == "v2\n"  # v1 was gone when the edit re-read


def test_an_edit_that_keeps_losing_asks_the_model_to_retry(
    tool: PineworkMemoryTool, world: World, app_transport: httpx.MockTransport, client: Client
) -> None:
    answer(tool, command="create", path="/memories/hot.md", file_text="0\n")
    writes = iter(range(1, 100))

    def another_write() -> None:
        client.kv_remember("memories/hot.md", f"{next(writes)}\n")

    busy, meddler = meddling_tool(app_transport, world.agent.token, another_write, times=99)
    told = answer(busy, command="insert", path="/memories/hot.md", insert_line=1, insert_text="x")
    assert told == (
        "ERROR: The file /memories/hot.md kept changing while this command edited it (another "
        "writer); nothing was changed by this command. View it and retry."
    )
    assert meddler.refused == 5
    assert stored(client, "memories/hot.md") == "5\n"


def test_a_rename_keeps_an_edit_made_while_it_copied(
    tool: PineworkMemoryTool, world: World, app_transport: httpx.MockTransport, client: Client
) -> None:
    answer(tool, command="create", path="/memories/a.md", file_text="first\n")
    edited: list[bool] = []

    def edit_the_source() -> None:  # runs before the copy, then before the old one is forgotten
        if edited:
            answer(tool, command="insert", path="/memories/a.md", insert_line=1, insert_text="2nd")
        edited.append(True)

    mover, meddler = meddling_tool(app_transport, world.agent.token, edit_the_source, times=2)
    moved = answer(mover, command="rename", old_path="/memories/a.md", new_path="/memories/b.md")
    assert moved == "Successfully renamed /memories/a.md to /memories/b.md"
    assert meddler.refused == 1
    assert list(client.iter_kv_keys()) == ["memories/b.md"]
    assert stored(client, "memories/b.md") == "first\n2nd\n"


def test_create_never_overwrites_a_file_created_meanwhile(
    tool: PineworkMemoryTool, world: World, app_transport: httpx.MockTransport, client: Client
) -> None:
    def create_first() -> None:
        answer(tool, command="create", path="/memories/new.md", file_text="winner")

    late, _ = meddling_tool(app_transport, world.agent.token, create_first)
    assert answer(late, command="create", path="/memories/new.md", file_text="loser") == (
        "ERROR: File /memories/new.md already exists"
    )
    assert stored(client, "memories/new.md") == "winner"


def test_the_async_tool_answers_as_the_sync_one(
    app_transport: httpx.MockTransport, world: World, tool: PineworkMemoryTool
) -> None:
    steps = [step for step in SCRIPT if "../" not in str(step)]

    async def run_async() -> list[str]:
        async with AsyncClient(
            BASE_URL, token=world.outsider_agent.token, transport=app_transport
        ) as other:
            async_tool = AsyncPineworkMemoryTool(other)
            answers = []
            for step in steps:
                try:
                    answers.append(str(await async_tool.call(step)))
                except ToolError as error:
                    answers.append(f"ERROR: {error.content}")
            return answers

    from_async = asyncio.run(run_async())
    assert from_async == [answer(tool, **step) for step in steps]


class ScriptedModel:
    """Answers ``POST /v1/messages``: one ``memory`` tool call per turn, then a text; keeps
    the requests it got."""

    def __init__(self, calls: list[dict[str, Any]]) -> None:
        self.calls = calls
        self.requests: list[dict[str, Any]] = []

    def reply(self, request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/messages"
        body = json.loads(request.content)
        self.requests.append(body)
        turn = len(self.requests)
        if turn <= len(self.calls):
            content: list[dict[str, Any]] = [
                {"type": "tool_use", "id": f"toolu_{turn}", "name": "memory"}
                | {"input": self.calls[turn - 1]}
            ]
        else:
            content = [{"type": "text", "text": "Saved."}]
        return httpx2.Response(
            200,
            json={
                "id": f"msg_{turn}",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": content,
                "stop_reason": "tool_use" if turn <= len(self.calls) else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks the runner sent back, in order."""
        return [
            block
            for body in self.requests
            for block in body["messages"][-1]["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]


RUNNER_CALLS: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/prefs.md", "file_text": "- drinks: tea\n"},
    {"command": "str_replace", "path": "/memories/prefs.md", "old_str": "tea", "new_str": "coffee"},
    {"command": "view", "path": "/memories/../etc/passwd"},
    {"command": "insert", "path": "/memories/prefs.md", "insert_line": 1, "insert_text": "- milk"},
]
RUNNER_PROMPT = [{"role": "user", "content": "Remember that I like coffee, with milk."}]


def check_runner_results(model: ScriptedModel, final_text: str) -> None:
    assert model.requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    results = model.tool_results()
    assert [r["tool_use_id"] for r in results] == [f"toolu_{n}" for n in range(1, 6)]
    assert [bool(r.get("is_error")) for r in results] == [False, False, False, True, False]
    assert results[0]["content"].endswith("4K\t/memories")
    assert results[1]["content"] == "File created successfully at: /memories/prefs.md"
    assert results[2]["content"].endswith("     1\t- drinks: coffee\n     2\t")
    assert results[3]["content"] == (
        "Path /memories/../etc/passwd would escape /memories directory"
    )
    assert final_text == "Saved."


def test_the_sdk_tool_runner_with_a_scripted_model_stores_the_file(
    tool: PineworkMemoryTool, client: Client
) -> None:
    model = ScriptedModel(RUNNER_CALLS)
    http = httpx2.Client(transport=httpx2.MockTransport(model.reply))
    with anthropic.Anthropic(api_key="test", http_client=http) as llm:
        final = llm.beta.messages.tool_runner(
            model="claude-sonnet-4-5",
            max_tokens=512,
            max_iterations=10,
            tools=[tool],
            messages=RUNNER_PROMPT,  # type: ignore[arg-type]
        ).until_done()
    check_runner_results(model, "".join(b.text for b in final.content if b.type == "text"))
    assert stored(client, "memories/prefs.md") == "- drinks: coffee\n- milk\n"


def test_the_async_tool_runner_with_a_scripted_model_stores_the_file(
    app_transport: httpx.MockTransport, world: World, client: Client
) -> None:
    model = ScriptedModel(RUNNER_CALLS)

    async def run() -> str:
        async def reply(request: httpx2.Request) -> httpx2.Response:
            await request.aread()
            return model.reply(request)

        http = httpx2.AsyncClient(transport=httpx2.MockTransport(reply))
        async with (
            AsyncClient(BASE_URL, token=world.agent.token, transport=app_transport) as pinework,
            anthropic.AsyncAnthropic(api_key="test", http_client=http) as llm,
        ):
            final = await llm.beta.messages.tool_runner(
                model="claude-sonnet-4-5",
                max_tokens=512,
                max_iterations=10,
                tools=[AsyncPineworkMemoryTool(pinework)],
                messages=RUNNER_PROMPT,  # type: ignore[arg-type]
            ).until_done()
        return "".join(b.text for b in final.content if b.type == "text")

    check_runner_results(model, asyncio.run(run()))
    assert stored(client, "memories/prefs.md") == "- drinks: coffee\n- milk\n"


def test_the_example_runs_against_the_local_server(tmp_path: Path) -> None:
    with example_run(tmp_path, "claude_memory_tool.py") as (done, pinework):
        keys = [key for key in pinework.iter_kv_keys() if key.startswith("memories/")]
        (key,) = keys
        value = stored(pinework, key)
    assert key.startswith("memories/uploader-") and key.endswith("/notes.md")
    assert value == "# Uploader\n\n- retries: 5\n- backoff: yes\n"
    assert "(error)" not in done.stdout
    assert f"stored: {json.dumps(value)}" in done.stdout
    assert "final answer: Noted: the uploader retries 5 times." in done.stdout
