"""Markdown from untrusted text: filters that make what people wrote inert in a report.

Commit messages, diff lines, paths and quoted in-tree lines come from people
we do not control. They are *data*: the report templates only ever receive
them as values, and every value a template prints goes through one of these
filters (``code``, ``block``, ``text``, ``sentence``, ``cell``, ``cite``,
``link``), or through ``portq.reporting.reports``' ``finalize``, which
escapes it as prose (``md_text``). A filter returns ``SafeMarkdown``: text
that is already safe to place verbatim. Prose escapes ``<``, ``>`` and ``&``
with backslashes, never HTML entities, which GitHub shows literally inside
code spans.

This module only shapes text; it must not read files, the ledger or git,
and must not know what a report says.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from portq.core.terminal import visible as terminal_visible

MAX_INLINE_CHARS = 200
"""Untrusted inline text (a title, a quoted line) is cut to this many characters."""

MAX_BLOCK_LINES = 40
"""A quoted block (a commit message) keeps at most this many lines."""


class SafeMarkdown(str):
    """Text a filter has already made safe to place in markdown verbatim."""


def visible(value: Any) -> str:
    """``value`` as text with control and bidi characters shown as escapes
    (``portq.core.terminal.visible``); carriage returns are dropped, so CRLF
    commit messages read as LF."""
    return terminal_visible("" if value is None else str(value).replace("\r", ""))


def shorten(text: str, limit: int = MAX_INLINE_CHARS) -> str:
    """Cut ``text`` to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def one_line(value: Any, limit: int = MAX_INLINE_CHARS) -> str:
    """Visible, single-line (whitespace runs collapsed) and at most ``limit`` characters."""
    return shorten(" ".join(visible(value).split()), limit)


def md_code(value: Any, limit: int = MAX_INLINE_CHARS) -> SafeMarkdown:
    """An inline code span that shows ``value`` literally, whatever it contains.

    Nothing inside a code span is interpreted: no emphasis, links, HTML,
    @-mentions or issue references. The fence is one backtick longer than the
    longest backtick run inside, as CommonMark requires.
    """
    text = one_line(value, limit)
    if not text:
        return SafeMarkdown("")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return SafeMarkdown(f"{fence}{pad}{text}{pad}{fence}")


def md_block(value: Any, max_lines: int = MAX_BLOCK_LINES, limit: int = MAX_INLINE_CHARS) -> SafeMarkdown:
    """A fenced code block holding ``value`` literally (long lines and long texts cut)."""
    lines = visible(value).expandtabs(4).split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    kept = [shorten(line, limit) for line in lines[:max_lines]]
    if len(lines) > max_lines:
        kept.append(f"… [{len(lines) - max_lines} more lines]")
    body = "\n".join(kept)
    longest = max((len(run) for run in re.findall(r"`{3,}", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return SafeMarkdown(f"{fence}text\n{body}\n{fence}")


_MD_SPECIAL = re.compile(r"([\\`*_\[\]{}|~!<>&])")
_MD_AUTOLINKS = re.compile(r"(@[\w.-]+|#\d+|\b[\w.-]+/[\w.-]+#\d+|\b(?:https?|ftp|file|javascript|data):\S+|\bwww\.\S+)", re.I)


def md_text(value: Any, limit: int = MAX_INLINE_CHARS * 2) -> SafeMarkdown:
    """Prose that renders as the same words: markdown and HTML syntax escaped.

    Escapes are backslashes, never HTML entities: ``\\<script>`` shows as
    ``<script>`` on GitHub and reads the same in a plain-text title or mail.

    Mentions (``@name``), issue references (``#12``) and URLs are put into
    code spans, because GitHub links those after markdown has been parsed and
    a backslash cannot stop it.
    """
    raw = visible(value)
    lead = " " if raw[:1].isspace() else ""
    trail = " " if raw[-1:].isspace() and raw.strip() else ""
    text = one_line(raw, limit)
    pieces = []
    for index, piece in enumerate(_MD_AUTOLINKS.split(text)):
        if index % 2:
            pieces.append(md_code(piece))
            continue
        piece = _MD_SPECIAL.sub(r"\\\1", piece)
        pieces.append(piece)
    escaped = "".join(pieces)
    # Characters that open a block (heading, list, rule) only at the start of a line.
    escaped = re.sub(r"^(\s*)(#{1,6}|[-+])(?=\s|$)", r"\1\\\2", escaped)
    escaped = re.sub(r"^(\s*\d{1,9})([.)])(?=\s|$)", r"\1\\\2", escaped)
    escaped = re.sub(r"^(\s*)(=+|-+)(\s*)$", r"\1\\\2\3", escaped)
    return SafeMarkdown(lead + escaped + trail)


def md_sentence(value: Any, limit: int = 1000) -> SafeMarkdown:
    """``md_text`` of a sentence, with its first letter upper-cased (classifier reasons start lower-case)."""
    text = one_line(value, limit)
    if re.match(r"[a-z]+(?![\w.:(])", text):  # a plain word, not an identifier like cp_gather_cache
        text = text[:1].upper() + text[1:]
    return md_text(text, limit)


def md_cell(value: Any, limit: int = 80) -> SafeMarkdown:
    """Text for a table cell: as ``md_text`` (or kept if already safe), with pipes escaped.

    A pipe splits a GFM table cell even inside a code span, so it is escaped
    after any other formatting.
    """
    safe = value if isinstance(value, SafeMarkdown) else md_text(value, limit)
    return SafeMarkdown(re.sub(r"(?<!\\)\|", r"\\|", safe))


def md_cite(citation: Mapping[str, Any] | None) -> SafeMarkdown:
    """A citation inline: ``path:line`` and, for one line, its quote as code."""
    if not citation:
        return SafeMarkdown("")
    place = md_code(citation["place"])
    quote = citation.get("quote") or []
    if citation.get("found") is False:
        return SafeMarkdown(f"{place} (the scan's quote, found in no line of the file): {md_code(' '.join(quote))}")
    return SafeMarkdown(f"{place}: {md_code(quote[0])}" if len(quote) == 1 else place)


def md_cite_block(citation: Mapping[str, Any] | None, indent: int = 2) -> SafeMarkdown:
    """The quoted lines of a multi-line citation as a fenced block, indented into a list item ('' for one line)."""
    quote = (citation or {}).get("quote") or []
    if len(quote) < 2:
        return SafeMarkdown("")
    pad = " " * indent
    return SafeMarkdown("\n" + "\n".join(pad + line for line in md_block("\n".join(quote)).split("\n")))


def safe_url(value: Any) -> SafeMarkdown:
    """A URL for ``<…>`` link syntax: http(s) only, nothing that could end the link early."""
    text = str(value or "")
    if not re.fullmatch(r"https?://[^\s<>\"'`\\]+", text):
        raise ValueError(f"not a link portq writes: {one_line(text, 80)!r}")
    return SafeMarkdown(text)


def md_link(target: Any, label: Any = None) -> SafeMarkdown:
    """``[label](<target>)`` for an http(s) URL or a plain relative path; anything else as code."""
    text = str(target or "")
    label_md = md_code(label if label is not None else text)
    if re.fullmatch(r"https?://[^\s<>\"'`\\]+", text) or re.fullmatch(r"[\w][\w./-]*", text) and ".." not in text:
        return SafeMarkdown(f"[{label_md}](<{text}>)")
    return label_md
