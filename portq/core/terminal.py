"""Text from commits, paths and the tree, made safe to show on a terminal.

Commit titles, paths and quoted lines are data an upstream author wrote. On
a terminal they could clear the screen (``ESC[2J``), open a hyperlink
(OSC 8), reorder what the reader sees (bidi overrides, "Trojan Source") or,
through rich, be read as markup (``[/red]``, ``[link=...]``). Everything
that reaches a terminal goes through ``visible`` (controls and bidi
characters become visible escapes), and rich output is built from ``cell``
(a ``rich.text.Text``, which rich never parses as markup).

This module only shapes strings; it imports nothing of portq and prints
nothing.
"""

from __future__ import annotations

import unicodedata
from typing import Any

BIDI_CONTROLS = frozenset(
    chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)
)
"""Embeddings, overrides, isolates and marks: they change the order text is shown in."""

_HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Co", "Zl", "Zp"))
"""Controls (C0, DEL, C1), format characters, surrogates, private use, and the
Unicode line and paragraph separators (a terminal may break a line there)."""


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(value: Any, *, keep_newlines: bool = True) -> str:
    """``value`` as text in which nothing can move the cursor, ring, link or reorder.

    Tabs survive, and newlines unless ``keep_newlines`` is false; a carriage
    return, ESC, every other C0/C1 control, DEL, bidi controls and other
    invisible format characters become ``\\xNN``/``\\uNNNN``.
    """
    text = "" if value is None else str(value)
    if text.isprintable():  # the common case: nothing to replace
        return text
    kept = "\t\n" if keep_newlines else "\t"
    return "".join(
        _escape(ch)
        if ch not in kept and (ch in BIDI_CONTROLS or unicodedata.category(ch) in _HIDDEN_CATEGORIES)
        else ch
        for ch in text
    )


def one_line(value: Any) -> str:
    """``visible`` on one line: a newline is shown as ``\\x0a`` (a record never spans lines)."""
    return visible(value, keep_newlines=False).replace("\t", " ")


def cell(value: Any, style: str | None = None):
    """A rich ``Text`` of ``value`` on one line: rich prints it as it is, never as markup."""
    from rich.text import Text

    return Text(one_line(value), style=style or "")


def console(stream, *, color: bool | None = None):
    """A rich console for data: no markup, emoji codes or highlighting in what it prints.

    On a terminal it wraps and colours as rich does; in a pipe it neither
    wraps nor colours (a record stays one line for ``grep``).
    """
    from rich.console import Console

    class DataConsole(Console):
        def on_broken_pipe(self) -> None:  # rich exits 1 here; the caller stops quietly instead
            raise BrokenPipeError

    terminal = stream.isatty()
    return DataConsole(
        file=stream,
        markup=False,
        emoji=False,
        highlight=False,
        soft_wrap=not terminal,
        no_color=not terminal if color is None else not color,
        width=None if terminal else 10_000,
    )
