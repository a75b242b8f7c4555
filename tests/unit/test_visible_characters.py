"""The dashboard's ``visible`` filter and the CLI's ``terminal_safe`` mark the same
code points, every control, format and separator character Unicode names
(docs/issues.md#issue-21-item-7)."""

from __future__ import annotations

import re
import unicodedata

from markupsafe import Markup

from chalicelib.web import render
from pinework import _render

EXPECTED = {
    code
    for code in range(0x110000)
    if chr(code) not in "\n\t" and unicodedata.category(chr(code)) in ("Cc", "Cf", "Zl", "Zp")
}


def test_dashboard_and_cli_mark_the_same_code_points() -> None:
    assert render.INVISIBLE_CHARACTERS == _render.UNSAFE_CHARACTERS


def test_every_control_format_and_separator_is_marked_and_nothing_assigned_else() -> None:
    pattern = re.compile(f"[{render.INVISIBLE_CHARACTERS}]")
    marked = {code for code in range(0x110000) if pattern.fullmatch(chr(code))}
    assert marked >= EXPECTED
    assert {unicodedata.category(chr(code)) for code in marked - EXPECTED} <= {"Cn"}


def test_visible_escapes_then_marks() -> None:
    shown = render.visible('<a href="x">\u202e</a>&')
    assert isinstance(shown, Markup)
    assert str(shown) == (
        '&lt;a href=&#34;x&#34;&gt;<span class="codepoint">⟨U+202E⟩</span>&lt;/a&gt;&amp;'
    )
    assert render.visible_text("a\u200bb") == "a⟨U+200B⟩b"
    assert str(render.visible("plain, ünïcödé, 日本 👍\ttab")) == "plain, ünïcödé, 日本 👍\ttab"


def test_both_mark_the_line_breaks_python_would_split_at_but_keep_line_feeds() -> None:
    for separator in ("\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"):
        expected = f"a⟨U+{ord(separator):04X}⟩b\nc"
        assert _render.terminal_safe(f"a{separator}b\nc") == expected
        assert render.visible_text(f"a{separator}b\nc") == expected
        assert _render.lines_of(f"a{separator}b\nc") == [f"a{separator}b", "c"]
