"""The CLI never writes control characters, terminal escapes or invisible format
characters from stored data to a terminal (docs/issues.md#issue-21-item-7,
docs/reference.md#12-cli): each shows as a visible ``⟨U+XXXX⟩`` marker; ``--json``
escapes them as ``\\uXXXX`` and keeps the same value."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest
from typer.testing import CliRunner

from pinework import Client, _render, cli
from tests.client.fake_api import FakeApi, memory_json
from tests.helpers import InjectedCliRunner

HOSTILE = [
    "\x1b[2J\x1b[31mred",  # CSI: clear screen, colour
    "\x1b]8;;http://evil.test\x1b\\click\x1b]8;;\x1b\\",  # OSC 8 link
    "\x1b]0;title\x07",  # OSC window title, BEL
    "safe\rEVIL",  # carriage return overwrites the line
    "abc\b\b\bxyz",  # backspaces
    "\x9b31mC1 CSI\x85",  # C1 controls
    "del\x7f",
    "invoice_\u202egnp.exe",  # right-to-left override
    "a\u2066b\u2069c\u200bd\u200ee\ufeff\u00ad",  # isolates, zero-width, marks, BOM, SHY
    "tag\U000e0041\U000e007f",  # tag characters
    "line\u2028sep",
]


def unsafe_characters(output: str) -> list[str]:
    return [
        f"U+{ord(ch):04X}"
        for ch in output
        if ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")
    ]


@pytest.fixture
def runner(fake_api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for name in ("PINEWORK_RUN", "PINEWORK_TASK", "PINEWORK_SESSION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PINEWORK_API_URL", "http://pinework.test")
    monkeypatch.setenv("PINEWORK_TOKEN", "tok_person")
    return InjectedCliRunner(
        cli.Connections(client=lambda: Client.from_env(transport=fake_api.transport))
    )


@pytest.mark.parametrize("text", HOSTILE)
def test_kv_recall_of_a_value_writes_no_raw_control_character(
    runner: CliRunner, fake_api: FakeApi, text: str
) -> None:
    fake_api.on("POST", "/kv/recall", 200, {"key": "k", "value": text, "found": True})
    result = runner.invoke(cli.app, ["kv", "recall", "k"])
    assert result.exit_code == 0, result.output
    assert unsafe_characters(result.stdout) == []
    assert "⟨U+" in result.stdout


def test_kv_recall_keys_and_not_found_are_escaped(runner: CliRunner, fake_api: FakeApi) -> None:
    fake_api.on("POST", "/kv/recall", 200, {"keys": HOSTILE, "count": len(HOSTILE)})
    listed = runner.invoke(cli.app, ["kv", "recall"])
    assert unsafe_characters(listed.stdout) == []
    assert listed.stdout.count("\n") == len(HOSTILE)
    fake_api.on("POST", "/kv/recall", 200, {"key": "\x1b[2Jk", "value": None, "found": False})
    missing = runner.invoke(cli.app, ["kv", "recall", "x"])
    assert unsafe_characters(missing.stderr) == []
    assert "⟨U+001B⟩[2Jk" in missing.stderr


@pytest.mark.parametrize("text", HOSTILE)
def test_memory_show_and_list_escape_stored_text(
    runner: CliRunner, fake_api: FakeApi, text: str
) -> None:
    memory = memory_json(text=text, taskKey="T\u202e1")
    fake_api.on("GET", f"/memories/{memory['id']}", 200, memory)
    shown = runner.invoke(cli.app, ["memory", "show", memory["id"]])
    assert shown.exit_code == 0, shown.output
    assert unsafe_characters(shown.stdout) == []
    fake_api.on("GET", "/memories", 200, {"object": "list", "data": [memory], "nextToken": None})
    listed = runner.invoke(cli.app, ["memory", "list"])
    assert unsafe_characters(listed.stdout) == []


@pytest.mark.parametrize("separator", ["\r", "\r\n", "\x85", "\u2028", "\u2029", "\x0b", "\x0c"])
def test_memory_show_breaks_lines_only_at_line_feeds(
    runner: CliRunner, fake_api: FakeApi, separator: str
) -> None:
    memory = memory_json(text=f"first{separator}second\nthird")
    fake_api.on("GET", f"/memories/{memory['id']}", 200, memory)
    shown = runner.invoke(cli.app, ["memory", "show", memory["id"]])
    assert shown.exit_code == 0, shown.output
    markers = "".join(f"⟨U+{ord(ch):04X}⟩" for ch in separator.rstrip("\n"))
    ending = "\n" if separator.endswith("\n") else ""
    text_lines = shown.stdout.split("text:\n", 1)[1].splitlines()
    if ending:
        assert text_lines == [f"  first{markers}", "  second", "  third"]
    else:
        assert text_lines == [f"  first{markers}second", "  third"]
    fake_api.on("GET", "/memories", 200, {"object": "list", "data": [memory], "nextToken": None})
    listed = runner.invoke(cli.app, ["memory", "list"])
    assert f"first{markers}" in listed.stdout and "⏎" in listed.stdout
    assert unsafe_characters(listed.stdout) == []


def test_lines_of_splits_at_line_feeds_only() -> None:
    assert _render.lines_of("") == [""]
    assert _render.lines_of("a\n") == ["a"]
    assert _render.lines_of("a\rb\u2028c\n\nd") == ["a\rb\u2028c", "", "d"]


def test_an_api_error_message_is_escaped_on_stderr(runner: CliRunner, fake_api: FakeApi) -> None:
    envelope = {"error": {"code": "invalid_request", "message": "bad \x1b]0;pwn\x07 key"}}
    fake_api.on("POST", "/kv/recall", 400, envelope)
    result = runner.invoke(cli.app, ["kv", "recall", "k"])
    assert result.exit_code == 1
    assert unsafe_characters(result.stderr) == []
    assert "⟨U+001B⟩]0;pwn⟨U+0007⟩" in result.stderr


@pytest.mark.parametrize("text", HOSTILE)
def test_json_output_escapes_them_and_keeps_the_value(
    runner: CliRunner, fake_api: FakeApi, text: str
) -> None:
    answer = {"key": text, "value": text, "found": True}
    fake_api.on("POST", "/kv/recall", 200, answer)
    result = runner.invoke(cli.app, ["kv", "recall", "k", "--json"])
    assert result.exit_code == 0, result.output
    assert unsafe_characters(result.stdout) == []
    assert json.loads(result.stdout) == answer


def test_marker_names_the_code_point_and_keeps_ordinary_text() -> None:
    assert _render.terminal_safe("a\u202eb") == "a⟨U+202E⟩b"
    assert _render.terminal_safe("x\U000e0041") == "x⟨U+E0041⟩"
    assert _render.terminal_safe("tabs\tand\nlines, ünïcödé, 日本, 👍") == (
        "tabs\tand\nlines, ünïcödé, 日本, 👍"
    )


def test_every_control_and_format_code_point_is_marked() -> None:
    for code in range(0x110000):
        ch = chr(code)
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and ch not in "\n\t":
            assert _render.terminal_safe(ch) == f"⟨U+{code:04X}⟩", hex(code)


def test_only_control_format_separator_or_unassigned_code_points_are_marked() -> None:
    pattern = re.compile(f"[{_render.UNSAFE_CHARACTERS}]")
    marked = [code for code in range(0x110000) if pattern.fullmatch(chr(code))]
    categories = {unicodedata.category(chr(code)) for code in marked}
    assert categories <= {"Cc", "Cf", "Zl", "Zp", "Cn"}
    assert "\n" not in [chr(code) for code in marked] and "\t" not in [chr(c) for c in marked]
