"""Claude's memory tool (``memory_20250818``) kept in Pinework
(docs/integrations/claude-memory-tool.md, docs/issues.md#issue-27).

:class:`PineworkMemoryTool` (over :class:`pinework.Client`) and
:class:`AsyncPineworkMemoryTool` (over :class:`pinework.AsyncClient`) are backends of the
Anthropic SDK's ``BetaAbstractMemoryTool`` / ``BetaAsyncAbstractMemoryTool``: the model's
``/memories`` directory lives in the key-value space of the token's workspace
(docs/reference.md#kv-scopes). The file ``/memories/a/b.md`` is the entry ``memories/a/b.md``
whose value is the file's text; directories are the prefixes of those keys.

The six commands answer with the texts and errors of the SDK's own
``BetaLocalFilesystemMemoryTool`` (line numbers, the 999,999-line limit, the path rules).
Every edit reads the file with its revision and writes with ``if_revision``
(docs/reference.md#kv-revisions); when another writer got there first it reads again and
applies the edit again, so concurrent edits are never lost.

Both classes share one implementation: each command is a program of the client's key-value
operations (``pinework._calls``) that the client runs, blocking or awaited (``Client.run``,
``AsyncClient.run``).

Example::

    with pinework.Client.from_env() as client:
        runner = anthropic.Anthropic().beta.messages.tool_runner(
            model="claude-sonnet-4-5",
            max_tokens=2048,
            tools=[PineworkMemoryTool(client)],
            messages=[{"role": "user", "content": "Remember that I like coffee"}],
        )
        final = runner.until_done()

Needs the ``anthropic`` extra: ``pip install "pinework[anthropic]"``.
"""

from __future__ import annotations

import dataclasses
import logging
import posixpath
import unicodedata
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
    from anthropic.types.beta import (
        BetaCacheControlEphemeralParam,
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818DeleteCommand,
        BetaMemoryTool20250818InsertCommand,
        BetaMemoryTool20250818RenameCommand,
        BetaMemoryTool20250818StrReplaceCommand,
        BetaMemoryTool20250818ViewCommand,
    )
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'pinework.integrations.claude_memory needs the Anthropic SDK: pip install "pinework'
        '[anthropic]" (the package anthropic)'
    ) from exc

from pinework import _calls as calls
from pinework.async_client import AsyncClient
from pinework.client import Client
from pinework.errors import PineworkAPIError
from pinework.models import KvValue

__all__ = [
    "DIRECTORY_SIZE",
    "KEY_LIMIT",
    "MAX_ATTEMPTS",
    "MAX_LINES",
    "AsyncPineworkMemoryTool",
    "PineworkMemoryTool",
]

logger = logging.getLogger(__name__)

ROOT = "/memories"
"""The directory the model sees (the SDK's path rule: every path starts with it)."""

MAX_LINES = 999_999
"""Lines of a file ``view`` shows at most, as the SDK's filesystem tool."""

LINE_NUMBER_WIDTH = len(str(MAX_LINES))
"""Width of the right-aligned line numbers of ``view`` and ``str_replace``."""

KEY_LIMIT = 512
"""UTF-8 bytes of a key-value key (docs/reference.md#kv-keys)."""

DIRECTORY_SIZE = 4096
"""The size ``view`` shows for a directory (``4K``, as on ext4): a directory here is only
the prefix of its files' keys
(docs/integrations/claude-memory-tool.md#what-does-not-map-cleanly)."""

MAX_ATTEMPTS = 5
"""Reads and conditional writes an edit tries before it tells the model to retry."""

PRECONDITION_FAILED = "precondition_failed"
"""The error code of a write whose ``if_revision`` no longer holds (docs/reference.md#6-errors)."""


@dataclasses.dataclass(frozen=True)
class _File:
    """A file as read: its text and the revision to write over (``None``: write without a
    condition, for an entry that has no usable revision)."""

    text: str
    revision: int | None


_Program = calls.Program[Any]
"""A command as the client operations it asks for: run by ``Client.run`` or
``AsyncClient.run`` (``pinework._core``), so one definition serves both tools."""


def _read(key: str) -> calls.Program[_File | None]:
    """The file under ``key``, or ``None`` (``kv_recall``, through the client's method)."""
    found = yield calls.Invoke("kv_recall", (key,))
    assert isinstance(found, KvValue)
    return _file_of(found)


def _write(key: str, value: str, if_revision: int | None) -> calls.Program[bool]:
    """Store ``value`` under ``key`` if its revision is ``if_revision`` (0: absent; ``None``:
    unconditionally): ``True`` when stored, ``False`` when another writer got there first."""
    try:
        yield calls.Invoke("kv_remember", (key, value), {"if_revision": if_revision})
    except PineworkAPIError as refused:
        if _conflict(refused):
            return False
        raise
    return True


def _forget(key: str, if_revision: int | None) -> calls.Program[bool]:
    """Delete ``key`` if its revision is ``if_revision``: ``True`` when deleted (or already
    gone), ``False`` when another writer got there first."""
    try:
        yield calls.Invoke("kv_forget", (key,), {"if_revision": if_revision})
    except PineworkAPIError as refused:
        if _conflict(refused):
            return False
        raise
    return True


def _keys(prefix: str) -> calls.Program[list[str]]:
    """The keys that start with ``prefix``, in key order."""
    return (yield from calls.keys_under(prefix, 1000))


def _file_of(value: KvValue) -> _File | None:
    """The file a key-value read found, or ``None``.

    A found entry without a revision (a server before revisions, or an entry that reads as
    revision 0 after a key rotation, docs/reference.md#kv-revisions) is written over without
    a condition: ``if_revision=0`` would mean "absent" and never succeed."""
    if not value.found or value.value is None:
        return None
    revision = value.revision if value.revision else None
    return _File(value.value, revision)


# Output helpers, as the SDK's filesystem tool formats them.


def _format_size(size: int) -> str:
    """``1.5K``-style size of ``view`` (B, K, M, G; powers of 1,024)."""
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    index = min((size.bit_length() - 1) // 10, len(units) - 1)
    scaled = size / (1024**index)
    if scaled == int(scaled):
        return f"{int(scaled)}{units[index]}"
    return f"{scaled:.1f}{units[index]}"


def _numbered(lines: list[str], first: int) -> str:
    """Lines prefixed with their right-aligned numbers and a tab, joined by newlines."""
    return "\n".join(
        f"{str(number).rjust(LINE_NUMBER_WIDTH)}\t{line}"
        for number, line in enumerate(lines, start=first)
    )


def _split_keeping_cr(text: str) -> list[str]:
    """Split on LF only, without the empty tail a final newline leaves (``insert``)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _missing(path: str) -> ToolError:
    return ToolError(f"The path {path} does not exist. Please provide a valid path.")


def _too_busy(path: str) -> ToolError:
    return ToolError(
        f"The file {path} kept changing while this command edited it (another writer); "
        "nothing was changed by this command. View it and retry."
    )


def _escapes(candidate: str) -> bool:
    """Whether ``candidate`` (a path starting with /memories) leaves /memories once its dot
    segments are resolved, reading a backslash as a separator too."""
    normal = posixpath.normpath(candidate.replace("\\", "/"))
    return normal != ROOT and not normal.startswith(ROOT + "/")


def _decodings(path: str) -> set[str]:
    """``path`` and what it may be read as elsewhere: percent-decoded and
    Unicode-compatibility-normalized (full-width dots and slashes), in any order, a few
    rounds deep."""
    forms = {path}
    for _ in range(4):
        more = {unquote(form) for form in forms} | {
            unicodedata.normalize("NFKC", form) for form in forms
        }
        if more <= forms:
            break
        forms |= more
    return forms


class _MemoryFiles:
    """The six commands as generators of key-value operations over one key prefix
    (docs/integrations/claude-memory-tool.md#how-pinework-maps-onto-the-memory-tool)."""

    def __init__(self, key_prefix: str, max_attempts: int) -> None:
        parts = key_prefix.split("/")
        if not key_prefix or any(part in ("", ".", "..") for part in parts):
            raise ValueError(
                f"key_prefix must be non-empty '/'-separated names without '.' or '..', "
                f"got {key_prefix!r}"
            )
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self.root_key = key_prefix
        self.max_attempts = max_attempts

    # Paths

    def key_of(self, path: str) -> str:
        """The key of a model path: ``/memories/a/b.md`` → ``<prefix>/a/b.md``; the root
        directory is the prefix itself.

        Raises:
            ToolError: the SDK's path errors (not under /memories, escaping it), a NUL
                character, or a key over 512 UTF-8 bytes (docs/reference.md#kv-keys).
        """
        if path != ROOT and not path.startswith(ROOT + "/"):
            raise ToolError(f"Path must start with /memories, got: {path}")
        if any(_escapes(form) for form in _decodings(path)):
            raise ToolError(f"Path {path} would escape /memories directory")
        if "\x00" in path:
            raise ToolError(f"Path {path!r} contains a NUL character")
        relative = posixpath.normpath(path)[len(ROOT) :].lstrip("/")
        key = f"{self.root_key}/{relative}" if relative else self.root_key
        size = len(key.encode("utf-8"))
        if size > KEY_LIMIT:
            raise ToolError(
                f"The path {path} is too long: Pinework keeps it under a key of {size} "
                f"bytes, and keys are at most {KEY_LIMIT} bytes of UTF-8. Use a shorter path."
            )
        return key

    def _parent_is_file(self, key: str) -> calls.Program[bool]:
        """Whether a directory on the way to ``key`` is a file (below the root)."""
        parts = key[len(self.root_key) + 1 :].split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            if (yield from _read("/".join([self.root_key, *parts[:depth]]))) is not None:
                return True
        return False

    # view

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> _Program:
        """A file with line numbers, or a directory two levels deep (the SDK's ``view``)."""
        key = self.key_of(command.path)
        file = None if key == self.root_key else (yield from _read(key))
        if file is not None:
            return self._show_file(command, file.text)
        below = yield from _keys(key + "/")
        if not below and key != self.root_key:
            raise _missing(command.path)
        items = yield from self._listing(key, below)
        header = (
            f"Here're the files and directories up to 2 levels deep in {command.path}, "
            "excluding hidden items:"
        )
        lines = [f"{_format_size(DIRECTORY_SIZE)}\t{command.path}"]
        lines += [f"{size}\t{command.path}/{name}" for size, name in items]
        return f"{header}\n" + "\n".join(lines)

    @staticmethod
    def _show_file(command: BetaMemoryTool20250818ViewCommand, text: str) -> str:
        lines = text.split("\n")
        if len(lines) > MAX_LINES:
            raise ToolError(f"File {command.path} exceeds maximum line limit of 999,999 lines.")
        first = 1
        if command.view_range and len(command.view_range) == 2:
            start = max(1, command.view_range[0]) - 1
            end = len(lines) if command.view_range[1] == -1 else command.view_range[1]
            lines = lines[start:end]
            first = start + 1
        return f"Here's the content of {command.path} with line numbers:\n" + _numbered(
            lines, first
        )

    def _listing(self, key: str, below: list[str]) -> calls.Program[list[tuple[str, str]]]:
        """``(size, relative name)`` of the files and directories two levels below ``key``,
        each level sorted by name, hidden names (``.x``) and their contents left out."""
        tree: dict[str, Any] = {}
        for full in below:
            parts = full[len(key) + 1 :].split("/")
            if any(part in ("", ".", "..") for part in parts):
                continue  # written outside this tool; no path of the model reaches it
            node = tree
            for part in parts[:-1]:
                node = node.setdefault(part + "/", {})
            node[parts[-1]] = full
        items: list[tuple[str, str]] = []

        def walk(node: dict[str, Any], relative: str, depth: int) -> calls.Program[None]:
            for name in sorted(node, key=lambda entry: entry.rstrip("/")):
                if name.startswith("."):
                    continue
                if isinstance(node[name], dict):
                    items.append((_format_size(DIRECTORY_SIZE), relative + name))
                    if depth < 2:
                        yield from walk(node[name], relative + name, depth + 1)
                    continue
                file = yield from _read(node[name])
                if file is not None:
                    items.append((_format_size(len(file.text.encode("utf-8"))), relative + name))

        yield from walk(tree, "", 1)
        return items

    # create

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> _Program:
        """A new file (``if_revision=0``); an existing file or directory is refused, as the
        SDK's ``create`` refuses it."""
        key = self.key_of(command.path)
        exists = ToolError(f"File {command.path} already exists")
        if key == self.root_key or (yield from _keys(key + "/")):
            raise exists
        if (yield from self._parent_is_file(key)):
            raise ToolError(f"Cannot create {command.path}: a directory on its path is a file")
        if not (yield from _write(key, command.file_text, 0)):
            raise exists
        return f"File created successfully at: {command.path}"

    # Edits: the two commands that change a file's text

    def _edit(self, path: str, change: Callable[[str], str]) -> calls.Program[tuple[str, str]]:
        """Read the file at ``path``, ``change(text)`` it, write it over the revision read;
        again from the read while another writer got in between.

        Returns:
            The text read last and the text written.

        Raises:
            ToolError: missing, a directory, what ``change`` raises, or too many conflicts.
        """
        key = self.key_of(path)
        for _ in range(self.max_attempts):
            file = None if key == self.root_key else (yield from _read(key))
            if file is None:
                if key == self.root_key or (yield from _keys(key + "/")):
                    raise ToolError(f"The path {path} is not a file.")
                raise _missing(path)
            new_text = change(file.text)
            if (yield from _write(key, new_text, file.revision)):
                return file.text, new_text
        raise _too_busy(path)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> _Program:
        """Replace the one occurrence of ``old_str`` (the SDK's ``str_replace``)."""

        def change(text: str) -> str:
            count = text.count(command.old_str)
            if count == 0:
                raise ToolError(
                    f"No replacement was performed, old_str `{command.old_str}` did not "
                    f"appear verbatim in {command.path}."
                )
            if count > 1:
                lines: list[int] = []
                start = text.find(command.old_str)
                while start != -1:
                    lines.append(text[:start].count("\n") + 1)
                    start = text.find(command.old_str, start + 1)
                raise ToolError(
                    f"No replacement was performed. Multiple occurrences of old_str "
                    f"`{command.old_str}` in lines: {', '.join(map(str, lines))}. "
                    "Please ensure it is unique"
                )
            return text.replace(command.old_str, command.new_str)

        old_text, new_text = yield from self._edit(command.path, change)
        changed = old_text[: old_text.find(command.old_str)].count("\n")
        lines = new_text.split("\n")
        start, end = max(0, changed - 2), min(len(lines), changed + 3)
        return (
            "The memory file has been edited. Here is the snippet showing the change "
            "(with line numbers):\n" + _numbered(lines[start:end], start + 1)
        )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> _Program:
        """Insert ``insert_text`` after line ``insert_line`` (0: at the top; the SDK's
        ``insert``)."""

        def change(text: str) -> str:
            lines = _split_keeping_cr(text)
            if command.insert_line < 0 or command.insert_line > len(lines):
                raise ToolError(
                    f"Invalid `insert_line` parameter: {command.insert_line}. "
                    f"It should be within the range [0, {len(lines)}]."
                )
            lines.insert(command.insert_line, command.insert_text.rstrip("\n"))
            joined = "\n".join(lines)
            return joined if joined.endswith("\n") else joined + "\n"

        yield from self._edit(command.path, change)
        return f"The file {command.path} has been edited."

    # delete

    def _forget_file(self, key: str) -> calls.Program[bool]:
        """Delete ``key`` over the revision read (again while others write it); ``False``
        when it was not there."""
        for _ in range(self.max_attempts):
            file = yield from _read(key)
            if file is None:
                return False
            if (yield from _forget(key, file.revision)):
                return True
        raise _too_busy("/memories" + key[len(self.root_key) :])

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> _Program:
        """Delete a file, or a directory with everything in it (the SDK's ``delete``)."""
        key = self.key_of(command.path)
        if key == self.root_key:
            raise ToolError("Cannot delete the /memories directory itself")
        if (yield from self._forget_file(key)):
            return f"Successfully deleted {command.path}"
        below = yield from _keys(key + "/")
        deleted = False
        for inner in below:
            deleted = (yield from self._forget_file(inner)) or deleted
        if not deleted:
            raise ToolError(f"The path {command.path} does not exist")
        return f"Successfully deleted {command.path}"

    def clear_all(self) -> _Program:
        """Delete every file under the prefix (the SDK's ``clear_all_memory``)."""
        for key in (yield from _keys(self.root_key + "/")):
            yield from self._forget_file(key)
        return "All memory cleared"

    # rename

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> _Program:
        """Move a file or a directory (the SDK's ``rename``): each file is created under its
        new key with ``if_revision=0``, then its old key is forgotten over the revision read."""
        old, new = self.key_of(command.old_path), self.key_of(command.new_path)
        if old == self.root_key:
            raise ToolError("Cannot rename the /memories directory itself")
        if (
            new == self.root_key
            or (yield from _read(new)) is not None
            or (yield from _keys(new + "/"))
        ):
            raise ToolError(f"The destination {command.new_path} already exists")
        if new.startswith(old + "/"):
            raise ToolError(f"Cannot move {command.old_path} into itself ({command.new_path})")
        if (yield from self._parent_is_file(new)):
            raise ToolError(
                f"Cannot rename to {command.new_path}: a directory on its path is a file"
            )
        if (yield from self._move(old, new, command.new_path)):
            return f"Successfully renamed {command.old_path} to {command.new_path}"
        below = yield from _keys(old + "/")
        if not below:
            raise ToolError(f"The path {command.old_path} does not exist")
        for inner in below:
            target = new + inner[len(old) :]
            yield from self._move(inner, target, "/memories" + target[len(self.root_key) :])
        return f"Successfully renamed {command.old_path} to {command.new_path}"

    def _move(self, old: str, new: str, new_path: str) -> calls.Program[bool]:
        """Move one file; ``False`` when ``old`` is not a file.

        Raises:
            ToolError: the destination exists, or the source kept changing.
        """
        for _ in range(self.max_attempts):
            file = yield from _read(old)
            if file is None:
                return False
            if not (yield from _write(new, file.text, 0)):
                raise ToolError(f"The destination {new_path} already exists")
            if (yield from _forget(old, file.revision)):
                return True
            # The source changed after it was read: take the copy back and start again.
            copy = yield from _read(new)
            if copy is not None and copy.text == file.text:
                yield from _forget(new, copy.revision)
        raise _too_busy("/memories" + old[len(self.root_key) :])


def _tool_error(error: PineworkAPIError) -> ToolError:
    """What the model is told when Pinework refuses a call (docs/reference.md#6-errors)."""
    logger.warning("memory tool: Pinework refused a call: %s", error)
    return ToolError(f"Pinework refused the operation ({error.code}): {error.message}")


def _conflict(error: PineworkAPIError) -> bool:
    return error.code == PRECONDITION_FAILED


class PineworkMemoryTool(BetaAbstractMemoryTool):
    """Claude's memory tool (``memory_20250818``) over a :class:`pinework.Client`
    (docs/integrations/claude-memory-tool.md).

    Args:
        client: the Pinework client; its bearer token names the workspace whose key-value
            space holds the files (docs/reference.md#kv-scopes). The tool does not close it.
        key_prefix: the key of ``/memories``: ``memories`` (shared by every agent and person
            of the workspace), or e.g. ``memories/<agent>`` for an agent's own directory.
        max_attempts: reads and conditional writes an edit tries before it asks the model
            to retry (docs/reference.md#kv-revisions).
        cache_control: passed to the SDK (prompt caching of the tool definition).

    Every command answers a string, or raises the SDK's ``ToolError`` (the runner sends it as
    an ``is_error`` tool result): the SDK's own errors, and Pinework's refusals
    (``secret_in_memory``, ``kv_quota_exceeded``, …) as ``Pinework refused the operation
    (<code>): <message>``.

    Raises:
        ValueError: an empty ``key_prefix``, one with empty, ``.`` or ``..`` segments, or
            ``max_attempts`` under 1.
    """

    def __init__(
        self,
        client: Client,
        *,
        key_prefix: str = "memories",
        max_attempts: int = MAX_ATTEMPTS,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self._client = client
        self._files = _MemoryFiles(key_prefix, max_attempts)

    def _run(self, program: _Program) -> str:
        try:
            return str(self._client.run(program))
        except PineworkAPIError as refused:
            raise _tool_error(refused) from refused

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        """The SDK's ``view``: a file with line numbers (``view_range`` ``[from, to]``, -1:
        the end), or a directory two levels deep with sizes."""
        return self._run(self._files.view(command))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        """The SDK's ``create``: a new file; ``File … already exists`` otherwise."""
        return self._run(self._files.create(command))

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        """The SDK's ``str_replace``: ``old_str`` must occur exactly once."""
        return self._run(self._files.str_replace(command))

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        """The SDK's ``insert``: ``insert_text`` as line ``insert_line`` + 1."""
        return self._run(self._files.insert(command))

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        """The SDK's ``delete``: a file, or a directory and everything in it."""
        return self._run(self._files.delete(command))

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        """The SDK's ``rename``: a file or a directory, never over an existing path."""
        return self._run(self._files.rename(command))

    def clear_all_memory(self) -> str:
        """Delete every file of the directory (``All memory cleared``)."""
        return self._run(self._files.clear_all())


class AsyncPineworkMemoryTool(BetaAsyncAbstractMemoryTool):
    """Claude's memory tool over a :class:`pinework.AsyncClient`, for
    ``AsyncAnthropic().beta.messages.tool_runner`` (docs/integrations/claude-memory-tool.md).

    Arguments, answers and errors as :class:`PineworkMemoryTool`.
    """

    def __init__(
        self,
        client: AsyncClient,
        *,
        key_prefix: str = "memories",
        max_attempts: int = MAX_ATTEMPTS,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self._client = client
        self._files = _MemoryFiles(key_prefix, max_attempts)

    async def _run(self, program: _Program) -> str:
        try:
            return str(await self._client.run(program))
        except PineworkAPIError as refused:
            raise _tool_error(refused) from refused

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        """As :meth:`PineworkMemoryTool.view`."""
        return await self._run(self._files.view(command))

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        """As :meth:`PineworkMemoryTool.create`."""
        return await self._run(self._files.create(command))

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        """As :meth:`PineworkMemoryTool.str_replace`."""
        return await self._run(self._files.str_replace(command))

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        """As :meth:`PineworkMemoryTool.insert`."""
        return await self._run(self._files.insert(command))

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        """As :meth:`PineworkMemoryTool.delete`."""
        return await self._run(self._files.delete(command))

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        """As :meth:`PineworkMemoryTool.rename`."""
        return await self._run(self._files.rename(command))

    async def clear_all_memory(self) -> str:
        """As :meth:`PineworkMemoryTool.clear_all_memory`."""
        return await self._run(self._files.clear_all())
