"""Reports: turn what a scan recorded into markdown a maintainer can act on.

This module builds the *context* of a report (plain JSON-able dicts built from
``model.Commit``, ``model.Verdict`` and the ledger's history records) and
renders it with the jinja2 templates in ``templates/``: the issue report of
one entry (``issue.md.j2``), the wave summary (``summary.md.j2``), the
tracking issue (``dashboard.md.j2``) and the matrix page (``matrix.md.j2``).
It also names reports (slug, title, kind, fingerprint) and hands a rendered
issue to the ``gh`` CLI.

An issue report is built from typed evidence records only (``Kind``,
``Side``, ``subject``): the kind and title words, the deciding symbols of
each half, upstream's deltas and the port's old-shape lines. Every place it
cites goes through the ``citations.Sources`` it is handed, so the printed
line holds the printed quote; it never prints a record's ``message`` where
a record says the same thing, and never the classifier's reason prose.

Commit messages, diff lines, paths and quoted in-tree lines come from people
we do not control. They are *data*: they are only ever passed to templates as
values, never compiled as template source, and the environment is sandboxed.
Every value a template prints goes through ``finalize``, which escapes it for
markdown unless a filter already made it safe (``code``, ``block``, ``text``,
``cell``). HTML autoescaping is deliberately off: it would turn ``&`` into
``&amp;`` inside code spans, where GitHub shows entities literally; prose
escapes ``<``, ``>`` and ``&`` with backslashes instead.

It must not touch git or the ledger itself and must not decide verdicts: the
commands gather the records and this module only shapes and renders them.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import traceback
import unicodedata
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from portq.core import bundled, safe_output
from portq.core.errors import EXIT_INTERNAL, PortqError
from portq.core.evidence import Kind, Location, Side, located, split_at_places
from portq.core.terminal import visible as terminal_visible
from portq.reporting.citations import Sources
from portq.reporting.citations import TREE as TREE_SIDE
from portq.tree.reachability import is_test_path as reachability_is_test_path
from portq.upstream.hunks import ensure_hunks
from portq.core.model import (
    DECIDED_BY,
    FLAGGED,
    JUSTIFICATIONS,
    IN_SYNC,
    INERT,
    NEEDS_REVIEW,
    NOT_APPLICABLE,
    REAL_GAP,
    SEVERITY,
    VERDICTS,
    Commit,
    Evidence,
    SymbolVerdict,
    Verdict,
    most_severe,
)

TEMPLATES_DIR = bundled.templates_dir()
"""The templates shipped with portq: ``templates/`` of a checkout or an
editable install, else the copy a regular install carries in the package."""

MAX_INLINE_CHARS = 200
"""Untrusted inline text (a title, a quoted line) is cut to this many characters."""

MAX_BLOCK_LINES = 40
"""A quoted block (a commit message) keeps at most this many lines."""

MAX_TITLE_CHARS = 160
"""Issue titles are cut here, at a word (GitHub allows 256)."""

MAX_GH_BODY_CHARS = 65_536
"""GitHub rejects issue bodies longer than this."""

KINDS = ("perf", "fix", "feat", "refactor")

_VOCABULARY = frozenset((*VERDICTS, *JUSTIFICATIONS, *DECIDED_BY, *KINDS))
"""portq's own words: printed as they are."""



class ReportError(PortqError):
    """A report could not be built, rendered or written; the message says why and where.

    Exit 2 for what the user can fix (an output folder, a missing ``gh``),
    1 for a broken template, which is a bug in portq.
    """


# --- making untrusted text inert --------------------------------------------


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


def _finalize(value: Any) -> Any:
    """Every ``{{ }}`` goes through here: unsafe strings are escaped as prose."""
    if value is None:
        return ""
    if isinstance(value, (SafeMarkdown, int, float)) or value in _VOCABULARY:
        return value
    return md_text(value)


# --- naming a report --------------------------------------------------------


def slugify(text: str, limit: int = 50) -> str:
    """A file-name slug from a commit title: lower-case ASCII words joined by ``-``."""
    ascii_text = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode()
    ascii_text = re.sub(r"\(#\d+\)\s*$", "", ascii_text)  # the squash PR suffix
    ascii_text = re.sub(r"^\s*\[[^\]]*\]\s*", "", ascii_text)  # a "[Kernel]" tag
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > limit:
            break
        slug = candidate
    return slug or (words[0][:limit] if words else "entry")


def range_dirname(range_text: str) -> str:
    """A range as one path component: ``A..B`` kept, anything else unsafe becomes ``-``."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", range_text).strip("-")
    if name in ("", ".", ".."):
        raise ReportError(f"range {range_text!r} cannot name a directory")
    return name


def report_path(out_dir: Path, upstream: str, range_text: str, position: int, slug: str) -> Path:
    """Where the issue report of one entry goes: ``OUT/<upstream>/<range>/<N>-<slug>.md``."""
    return Path(out_dir) / range_dirname(upstream) / range_dirname(range_text) / f"{position}-{slug}.md"


def fingerprint(upstream: str, sha: str, verdict: str, justification: str | None, rows: Sequence[str]) -> str:
    """Identity of a finding: the same entry with the same verdict and rows files once.

    A human review that changes the verdict gives a new fingerprint, so the
    corrected report can be filed; re-running with nothing changed cannot.
    """
    key = json.dumps([upstream, sha, verdict, justification or "", list(rows)])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def issue_title(kind: str, row: str | None, summary: str) -> str:
    """``kind(ROW): summary`` as one plain line (titles are not markdown), cut at a word."""
    title = " ".join(visible(f"{kind}({row or 'no-row'}): {summary}").split())
    if len(title) > MAX_TITLE_CHARS:
        title = title[: MAX_TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return title


# --- reading records ----------------------------------------------------------


def _get(record: Any, *names: str, default: Any = None) -> Any:
    """The first of ``names`` present on a dict or an object."""
    for name in names:
        if isinstance(record, Mapping):
            if record.get(name) is not None:
                return record[name]
        elif getattr(record, name, None) is not None:
            return getattr(record, name)
    return default


def to_plain(value: Any) -> Any:
    """Dataclasses, tuples and paths as JSON-able values."""
    if is_dataclass(value) and not isinstance(value, type):
        return to_plain(asdict(value))
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def is_test_path(path: str | None) -> bool:
    """Whether a path is test code, by the same rule reachability uses."""
    return bool(path) and reachability_is_test_path(path)


def _all_evidence(verdict: Verdict) -> list[Evidence]:
    seen, out = set(), []
    for ev in [*verdict.evidence, *(e for s in verdict.symbols for e in s.evidence)]:
        key = (ev.kind, ev.message, ev.side, ev.path, ev.line, ev.quote, ev.symbol)
        if key not in seen:
            seen.add(key)
            out.append(ev)
    return out


def history_dict(event: Any) -> dict[str, Any]:
    """One verdict event (a ``ledger.Event`` or a dict with its fields) as the keys reports use."""
    return {
        "id": _get(event, "id"),
        "verdict": _get(event, "verdict"),
        "justification": _get(event, "justification"),
        "source": _get(event, "source", default="scan"),
        "who": _get(event, "who"),
        "why": _get(event, "why", "reason"),
        "when": _get(event, "created_at", "when"),
        "wave": _get(event, "wave"),
        "decided_by": _get(event, "decided_by"),
        "undo": _get(event, "undoes") is not None,
        "undone": bool(_get(event, "undone", default=False)),
    }


def has_verdict(record: Any) -> bool:
    """Whether a ledger entry has a verdict yet (scanned, or decided by a person): the entries a report lists."""
    return record.current.event is not None or record.scan is not None


def filed_url(ledger: Any, entry_id: int) -> str | None:
    """The URL of the newest issue filed for a ledger entry, or None when none was filed."""
    url = None
    for filed in ledger.reports_for(entry_id):
        url = (filed.data or {}).get("url") or url
    return url


def current_verdict(record: Any) -> Verdict:
    """The standing verdict of a ledger entry, with the scan's evidence behind it.

    A human review carries a verdict and a reason but no structural
    evidence, so the latest scan's symbols and evidence are kept under the
    human verdict: the report still shows what the tree and upstream say.
    """
    current = record.current.event
    scans = [e for e in (record.scan, record.current.proposal) if e is not None and e.source == "scan"]
    base = scans[-1].to_verdict() if scans else None
    if current is None:
        if base is None:
            raise ValueError(f"entry {record.position} has no verdict recorded")
        return base
    if current.source == "scan":
        return current.to_verdict()
    if base is None:
        return current.to_verdict()
    return Verdict(
        current.verdict,
        current.justification,
        base.decided_by,
        reason=current.why or base.reason,
        evidence=base.evidence,
        symbols=base.symbols,
        version=base.version,
    )


def wave_dict(wave: Any) -> dict[str, Any]:
    """A ledger wave as the keys reports and ``--json`` use."""
    return {
        "id": wave.name,
        "range": wave.range,
        "upstream": wave.upstream,
        "tree": wave.tree,
        "base": wave.base_sha,
        "tip": wave.tip_sha,
        "entries": wave.entry_count,
        "status": wave.status,
        "portq_version": wave.portq_version,
        "started_at": wave.started_at,
        "finished_at": wave.finished_at,
    }


def summary_entries(records: Iterable[Any]) -> list[dict[str, Any]]:
    """Ledger entry records as ``build_summary_context`` takes them."""
    return [
        {
            "position": r.position,
            "sha": r.sha,
            "title": r.title,
            "pr": r.pr,
            "rows": list(r.rows),
            "verdict": current_verdict(r),
            "source": r.current.source,
            "proposal": r.current.proposal,
        }
        for r in records
        if has_verdict(r)
    ]


def wave_summary(wave: Any, records: Iterable[Any]) -> str:
    """The dashboard markdown of a wave: what ``portq scan`` ends with and ``portq summary`` prints."""
    return render("summary.md.j2", build_summary_context(wave=wave_dict(wave), entries=summary_entries(records)))


# --- the issue report ------------------------------------------------------------


def bare_symbol(name: str) -> str:
    """A symbol's own name, without namespaces or classes (``vt::<anonymous>::K`` → ``K``)."""
    return re.split(r"::|\.", name or "")[-1] or name


def _deciding(verdict: Verdict) -> list[SymbolVerdict]:
    """The symbols whose verdict is the entry's: the ones a title and a kind speak for."""
    return [s for s in verdict.symbols if s.verdict == verdict.verdict] or list(verdict.symbols)


def _upstream_records(symbols: Iterable[SymbolVerdict], entry: Iterable[Evidence] = ()) -> list[Evidence]:
    """Upstream-side records of ``symbols`` (and the entry's own ``entry`` records)."""
    return [e for e in [*entry, *(e for s in symbols for e in s.evidence)]
            if e.side is not None and e.side != Side.TREE and e.kind != Kind.CALLER]


class GridChange(NamedTuple):
    """Upstream's grid text before and after, and the locals it changed
    through when the text is the same (``Evidence.through``)."""

    before: str
    after: str
    through: tuple[str, ...] = ()
    record: Evidence | None = None  # the upstream-new record, which cites the changed lines


def _grid_change(records: Sequence[Evidence]) -> GridChange | None:
    """Upstream's grid before and after, when a record pair shows it changed:
    its text, or a local it resolves through.

    Records of a scan that named no grid text (older ledgers) count as a
    change, as they were only written for one.
    """
    grids = [e for e in records if e.kind == Kind.LAUNCH_GRID]
    if grids and all(e.subject is None for e in grids):
        return GridChange("", "")
    before = [e for e in grids if e.side == Side.OLD and e.subject is not None]
    after = [e for e in grids if e.side == Side.NEW and e.subject is not None]
    for old, new in zip(before, after):
        if old.subject.replace(" ", "") != new.subject.replace(" ", "") or new.through:
            return GridChange(old.subject, new.subject, new.through, new)
    return None


_FEAT_KINDS = frozenset({Kind.PARAM_ADDED, Kind.DEFAULT_CHANGED, Kind.CALLEE_PATH})
_PERF_KINDS = frozenset({Kind.LAUNCH_BLOCK, Kind.PROGRAM_ID})
_FIX_KINDS = frozenset({Kind.BODY, Kind.EARLY_EXIT})


def infer_kind(verdict: Verdict) -> str:
    """``feat``, ``perf``, ``fix`` or ``refactor``, from the deciding symbols' records.

    ``feat``: a new input a caller supplies (an added parameter, a changed
    default) or a new flagged definition (a sibling code path). ``perf``:
    launch geometry with the same interface (the grid expression changed,
    the block or warps, the program-id decomposition). ``fix``: a body-only
    change (bounds, masks, offsets, numerics) or a new early exit.
    ``refactor``: the rest (a parameter that died, a renamed kernel). Never
    from the commit message.
    """
    deciding = _deciding(verdict)
    records = _upstream_records(deciding, verdict.evidence)
    kinds = {e.kind for e in records}
    if kinds & _FEAT_KINDS or any(s.change == "added" and s.verdict in FLAGGED for s in deciding):
        return "feat"
    if _grid_change(records) is not None or kinds & _PERF_KINDS:
        return "perf"
    if kinds & _FIX_KINDS or verdict.decided_by == "body":
        return "fix"
    return "refactor"


def _port_subject(verdict: Verdict) -> str:
    """The in-tree name a title leads with: the port of the deciding symbol.

    A port whose name is the upstream symbol's own name (the host wrapper a
    caller sees) wins over a helper kernel; without ports, the upstream name.
    """
    candidates: list[tuple[int, int, str]] = []
    for order, sym in enumerate(_deciding(verdict)):
        bare = bare_symbol(sym.symbol)
        for port in sym.ports:
            name = bare_symbol(port.split()[-1])
            candidates.append((0 if name == bare else 1, order, name))
        if not sym.ports:
            candidates.append((2, order, bare))
    return min(candidates)[2] if candidates else "the port"


def _behind_phrases(verdict: Verdict, full: bool = False) -> list[str]:
    """What the port still does, in a maintainer's words, most telling first (``full``: with upstream's new grid)."""
    records = _upstream_records(_deciding(verdict), verdict.evidence)
    kinds = {e.kind for e in records}
    phrases: list[str] = []
    grid = _grid_change(records)
    if grid is not None:
        if not (grid.before and grid.after):
            phrases.append("launches upstream's old grid")
        elif grid.through:
            names = ", ".join(grid.through)
            phrases.append(f"launches grid {grid.before} with the old {names}"
                           + (f", which upstream changed while the grid's own line stayed the same" if full else ""))
        else:
            phrases.append(f"launches grid {grid.before}" + (f" where upstream now launches {grid.after}" if full else ""))
    for kind, words in ((Kind.PARAM_DEAD, "takes {}, which upstream no longer uses"),
                        (Kind.PARAM_REMOVED, "takes {}, which upstream removed"),
                        (Kind.PARAM_ADDED, "lacks upstream's new parameter {}"),
                        (Kind.DEFAULT_CHANGED, "keeps the old default of {}")):
        names = list(dict.fromkeys(e.subject for e in records if e.kind == kind and e.subject))
        if names:
            phrases.append(words.format(", ".join(names[:3])))
        elif kind in kinds:
            phrases.append(words.format("a parameter"))
    if Kind.CALLEE_PATH in kinds:
        names = list(dict.fromkeys(e.subject for e in records if e.kind == Kind.CALLEE_PATH and e.subject))
        phrases.append(f"raises where upstream now launches for a value of {', '.join(names[:2]) or 'an argument'}")
    if Kind.LAUNCH_BLOCK in kinds:
        phrases.append("keeps the old " + "/".join(dict.fromkeys(e.subject or "block" for e in records if e.kind == Kind.LAUNCH_BLOCK)))
    if Kind.PROGRAM_ID in kinds:
        phrases.append("keeps the old program-id decomposition")
    if Kind.EARLY_EXIT in kinds:
        phrases.append("lacks upstream's new early exit")
    if not phrases and Kind.LAUNCH_KERNEL in kinds:
        phrases.append("launches the kernel upstream replaced")
    if not phrases and any(s.change == "removed" for s in _deciding(verdict)):
        phrases.append("carries a definition upstream removed or renamed")
    return phrases


def _summary_line(verdict: Verdict, commit: Commit, full: bool = False) -> str:
    """What is wrong, in words, not classifier layers: the title's summary, or (``full``) the report's first sentence."""
    subject = _port_subject(verdict)
    short = commit.sha[:10]
    if verdict.verdict in (REAL_GAP, INERT):
        phrases = _behind_phrases(verdict, full)
        what = " and ".join(phrases[:2]) if phrases else f"has the shape upstream {short} changed"
        return f"{subject} still {what}" + (" (only tests reach it)" if verdict.verdict == INERT else "")
    if verdict.verdict == NEEDS_REVIEW:
        kinds = {e.kind for e in _upstream_records(_deciding(verdict))} | {
            e.kind for s in _deciding(verdict) for e in s.evidence}
        records = _upstream_records(_deciding(verdict), verdict.evidence)
        added = [e.subject for e in records if e.kind == Kind.PARAM_ADDED and e.subject]
        why = ("a body-only change" if Kind.BODY in kinds else
               "a new parameter derived from what the kernel receives" if Kind.DERIVATION in kinds else
               "a file that did not parse" if Kind.PARSE_FAILURE in kinds else
               "upstream changed its launch grid" if _grid_change(records) is not None else
               f"upstream added {', '.join(added[:3])}" if added else "a change structure cannot settle")
        return f"review {subject} against upstream {short}: {why}"
    if verdict.verdict == IN_SYNC:
        return f"{subject} already matches upstream {short}"
    return f"upstream {short} does not apply here ({verdict.justification}): {one_line(commit.title, 80)}"


def _dedupe(evidence: Iterable[Evidence]) -> list[Evidence]:
    seen, out = set(), []
    for ev in evidence:
        key = (ev.kind, ev.side, ev.path, ev.line, ev.subject, ev.quote)
        if key not in seen:
            seen.add(key)
            out.append(ev)
    return out


_UPSTREAM_WORDS = {
    Kind.PARAM_DEAD: "{subject} is no longer used",
    Kind.PARAM_USE_REMOVED: "the use of {subject} that went away",
    Kind.PARAM_ADDED: "new parameter {subject}",
    Kind.PARAM_REMOVED: "removed parameter {subject}",
    Kind.DEFAULT_CHANGED: "{subject} changed its default",
    Kind.LAUNCH_BLOCK: "the launch's {subject} changed",
    Kind.DERIVATION: "{subject} is computed from {derived}",
}
"""How the report words an upstream record of each kind (its subject filled in)."""


def _upstream_fact(ev: Evidence) -> str:
    words = _UPSTREAM_WORDS.get(ev.kind)
    if words is not None and (ev.subject or "{subject}" not in words):
        return words.format(subject=ev.subject, derived=", ".join(ev.derived_from[:4]) or "what it receives")
    if ev.kind == Kind.LAUNCH_KERNEL:
        return "the launch upstream removed" if ev.side == Side.OLD else "the launch upstream added"
    if ev.kind == Kind.PARSE_FAILURE:  # its message names the place, which the item cites
        return f"parse failed in {ev.subject}" if ev.subject else "parse failed"
    return ev.message or ev.kind.value


def _cite(sources: Sources, ev: Evidence | None, name: str | None = None) -> dict[str, Any] | None:
    if ev is None:
        return None
    citation = sources.cite(ev.side.value if ev.side else None, ev.path, ev.line, ev.quote, name=name)
    return citation.to_dict() if citation else None


def _changes(sym: SymbolVerdict, sources: Sources) -> list[dict[str, Any]]:
    """Upstream's side of one symbol: each delta once, the grid as one before → after item."""
    records = _dedupe(e for e in sym.evidence if e.side in (Side.OLD, Side.NEW)
                      and e.kind not in (Kind.HUNK, Kind.SYMBOL, Kind.CALLER))
    items: list[dict[str, Any]] = []
    grid = _grid_change(records)
    if grid is not None and grid.through:
        # Only a local the grid resolves through changed: its two lines are
        # the change, the launch (whose lines read the same) is context.
        new = grid.record
        items.append({
            "fact": f"grid {grid.before} changed through {', '.join(grid.through)}",
            "geometry": True,
            "before": _cite_location(sources, new.before),
            "after": _cite_location(sources, new.after),
            "context": {"words": "launch at", "citation": _geometry_or_line(sources, new)},
        })
    elif grid is not None:
        old = next(e for e in records if e.kind == Kind.LAUNCH_GRID and e.side == Side.OLD)
        new = next(e for e in records if e.kind == Kind.LAUNCH_GRID and e.side == Side.NEW)
        items.append({
            "fact": f"grid {grid.before} → {grid.after}" if grid.before and grid.after else "the launch grid changed",
            "geometry": True,
            "before": _geometry_or_line(sources, old),
            "after": _geometry_or_line(sources, new),
        })
    kernels = [e for e in records if e.kind == Kind.LAUNCH_KERNEL]
    if kernels and grid is None:
        items.append({"fact": "the launched kernel changed", "geometry": False,
                      "before": _cite(sources, next((e for e in kernels if e.side == Side.OLD), None)),
                      "after": _cite(sources, next((e for e in kernels if e.side == Side.NEW), None))})
    for ev in records:
        if ev.kind in (Kind.LAUNCH_GRID, Kind.LAUNCH_KERNEL):
            continue
        if ev.kind == Kind.PARAM_USE_REMOVED and any(e.kind == Kind.PARAM_DEAD and e.subject == ev.subject for e in records):
            continue  # shown with the dead parameter
        if ev.through:  # changed only in a local the launch names: that local's lines, the launch as context
            if ev.side == Side.NEW:
                items.append({"fact": f"{_upstream_fact(ev)} through {', '.join(ev.through)}", "geometry": False,
                              "before": _cite_location(sources, ev.before), "after": _cite_location(sources, ev.after),
                              "context": {"words": "launch at", "citation": _cite(sources, ev)}})
            continue
        item = {"fact": _upstream_fact(ev), "geometry": False, "before": None, "after": None}
        item["before" if ev.side == Side.OLD else "after"] = _cite(sources, ev)
        if ev.kind == Kind.PARAM_DEAD:
            use = next((e for e in records if e.kind == Kind.PARAM_USE_REMOVED and e.subject == ev.subject), None)
            item["before"] = _cite(sources, use)
        items.append(item)
    return items


def _cite_location(sources: Sources, at: Location | None) -> dict[str, Any] | None:
    if at is None:
        return None
    citation = sources.cite(at.side.value, at.path, at.line, at.quote)
    return citation.to_dict() if citation else None


def _geometry_or_line(sources: Sources, ev: Evidence) -> dict[str, Any] | None:
    """The grid/block declarations and the launch line of a launch record, else the launch line alone."""
    if ev.side is not None and ev.path and ev.line:
        found = sources.launch_geometry(ev.side.value, ev.path, ev.line)
        if found is not None:
            return found.to_dict()
    return _cite(sources, ev)


_TREE_WORDS = {
    Kind.TREE_PARAM: "still takes {subject}",
    Kind.TREE_USE: "still reads {subject}",
    Kind.TREE_DEFINITION: "still defines {symbol}",
}
"""How the report words an in-tree record of each kind; other kinds show their message."""


def _tree_lines(sym: SymbolVerdict, sources: Sources) -> list[dict[str, Any]]:
    """The port's side of one flagged symbol: each in-tree line once, the launch with its grid lines."""
    records = _dedupe(e for e in sym.evidence if e.side == Side.TREE and e.kind not in (Kind.CALLER, Kind.PIN, Kind.ANCHOR))
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for ev in records:
        if ev.kind == Kind.TREE_LAUNCH:
            citation = sources.launch_geometry("tree", ev.path, ev.line) if ev.path and ev.line else None
            cited = citation.to_dict() if citation else _cite(sources, ev)
            fact = "its launch and grid" if citation else "its launch"
        else:
            words = _TREE_WORDS.get(ev.kind)
            fact = words.format(subject=ev.subject or "a parameter upstream changed", symbol=bare_symbol(ev.symbol or "")) if words else (ev.message or ev.kind.value)
            cited = _cite(sources, ev, name=bare_symbol(ev.symbol or "") if ev.kind == Kind.TREE_DEFINITION else None)
        if cited is None or cited["place"] in seen:
            continue
        seen.add(cited["place"])
        out.append({"fact": fact, "kind": ev.kind.value, "citation": cited})
    return sorted(out, key=lambda t: (t["citation"]["path"], t["citation"]["line"]))


def _ports(sym: SymbolVerdict, sources: Sources) -> list[dict[str, Any]]:
    """Each port of a symbol cited at its declaring line, with the anchor that says so."""
    found = []
    anchors = [e for e in sym.evidence if e.kind == Kind.ANCHOR and e.side == Side.TREE]
    for port in sym.ports:
        place, _, name = port.partition(" ")
        file, _, line = place.rpartition(":")
        if not file or not line.isdigit():
            continue
        cited = sources.cite(TREE_SIDE, file, int(line), None, name=bare_symbol(name))
        anchor = next((a for a in anchors if a.path == file and a.line and a.line <= int(line)
                       and bare_symbol(a.symbol or "") == bare_symbol(name)), None)
        pin = next((p for p in sym.evidence if p.kind == Kind.PIN and anchor and p.path == anchor.path
                    and p.line == anchor.line), None)
        found.append({"name": name, "citation": cited.to_dict() if cited else None, "facts": [],
                      "anchor": _cite(sources, anchor), "pin": pin.message if pin else None})
    return found


def _declarations(sym: SymbolVerdict, sources: Sources) -> list[dict[str, Any]]:
    """The not-carried declaration (or coverage hole) a symbol that needs nothing rests on."""
    found = []
    for ev in _dedupe(e for e in sym.evidence if e.kind in (Kind.NOT_CARRIED, Kind.COVERAGE_HOLE, Kind.ANCHOR, Kind.PIN)):
        cited = _cite(sources, ev)
        if cited is not None and all(cited["place"] != d["citation"]["place"] for d in found):
            found.append({"kind": ev.kind.value, "citation": cited})
    return found


def _symbol_dict(sym: SymbolVerdict, sources: Sources, detailed: bool) -> dict[str, Any]:
    item = {
        "name": sym.symbol,
        "bare": bare_symbol(sym.symbol),
        "change": sym.change,
        "verdict": sym.verdict,
        "justification": sym.justification,
        "decided_by": sym.decided_by,
        "row": sym.row,
        "flagged": sym.verdict in FLAGGED,
        "ports": _ports(sym, sources) if detailed and sym.verdict in FLAGGED else [],
        "changes": _changes(sym, sources) if detailed else [],
        "tree": [],
        "declarations": [] if sym.verdict in FLAGGED else _declarations(sym, sources),
    }
    if detailed and sym.verdict in FLAGGED:
        ports = {p["citation"]["place"]: p for p in item["ports"] if p["citation"]}
        for line in _tree_lines(sym, sources):
            port = ports.get(line["citation"]["place"])
            if port is None:
                item["tree"].append(line)
            elif line["kind"] != Kind.TREE_DEFINITION.value:
                port["facts"].append(line["fact"])  # a one-line signature: the fact joins the port's line
    return item


def _halves(verdict: Verdict, commit: Commit, sources: Sources) -> list[dict[str, Any]]:
    """The commit half by half (one half per upstream file a row owns).

    ``deciding`` holds the symbols whose verdict is the half's (what the
    reader must act on or check); ``others`` the rest of the touched
    symbols (coverage holes, cosmetic lines), which the report folds away.
    """
    hunks_by_path = {change.path: [h.header for h in change.hunks] for change in commit.changes}
    by_path: dict[str, list[SymbolVerdict]] = {}
    for sym in verdict.symbols:
        by_path.setdefault(sym.path, []).append(sym)
    halves = []
    for path, symbols in by_path.items():
        worst = most_severe(s.verdict for s in symbols)
        deciding = [s for s in symbols if s.verdict == worst]
        halves.append({
            "path": path,
            "verdict": worst,
            "flagged": worst in FLAGGED,
            "hunk_headers": hunks_by_path.get(path) or list(dict.fromkeys(
                e.hunk_header for s in symbols for e in s.evidence if e.hunk_header)),
            "deciding": [_symbol_dict(s, sources, detailed=True) for s in deciding],
            "others": [_symbol_dict(s, sources, detailed=False) for s in symbols if s.verdict != worst],
        })
    return sorted(halves, key=lambda h: (-SEVERITY[h["verdict"]], h["path"]))


def _hop(site: Any) -> dict[str, Any]:
    return {"place": site.cite, "path": site.file, "line": site.line, "quote": site.quote,
            "callee": site.callee, "enclosing": site.caller}


def reachability_context(chains: Sequence[Any], tests: Sequence[Any], sources: Sources,
                         truncated: bool = False) -> dict[str, Any]:
    """Call chains (hops from the port outwards) grouped by entry point, test call sites counted.

    ``chains`` are ``CallSite`` sequences from ``Reachability.caller_chains``;
    a chain that is the tail of a longer one (the wrapper's own chain, when
    the kernel's goes through the wrapper) is dropped.
    """
    keyed = [tuple((s.file, s.line) for s in chain) for chain in chains]
    kept = []
    for chain, key in zip(chains, keyed):
        if any(len(other) > len(key) and other[-len(key):] == key for other in keyed):
            continue
        if key not in [k for _, k in kept]:
            kept.append((chain, key))
    groups: dict[tuple[str, str | None], dict[str, Any]] = {}
    for chain, _ in kept:
        last = chain[-1]
        group = groups.setdefault((last.file, last.caller), {
            "entry_point": last.caller, "file": last.file, "chains": []})
        hops = []
        for site in chain:
            citation = sources.cite("tree", site.file, site.line, site.quote)
            hops.append({**_hop(site), "citation": citation.to_dict() if citation else None})
        group["chains"].append(hops)
    test_files = sorted({s.file for s in tests})
    return {
        "entry_points": sorted(groups.values(), key=lambda g: (g["file"], g["entry_point"] or "")),
        "chain_count": len(kept),
        "test_sites": len(tests),
        "test_files": test_files,
        "truncated": truncated,
        "from_records": False,
    }


def _reachability_from_records(verdict: Verdict, sources: Sources) -> dict[str, Any]:
    """Reachability as the scan recorded it (one caller), when the tree was not indexed again."""
    callers = _dedupe(e for e in _all_evidence(verdict) if e.kind == Kind.CALLER and e.path and e.quote)
    groups: dict[tuple[str, str | None], dict[str, Any]] = {}
    tests = []
    for ev in callers:
        if ev.test or (ev.test is None and is_test_path(ev.path)):
            tests.append(ev)
            continue
        citation = _cite(sources, ev)
        group = groups.setdefault((ev.path, ev.subject), {"entry_point": ev.subject, "file": ev.path, "chains": []})
        group["chains"].append([{"place": f"{ev.path}:{ev.line}", "path": ev.path, "line": ev.line, "quote": ev.quote,
                                 "callee": ev.symbol, "enclosing": ev.subject, "citation": citation}])
    return {
        "entry_points": list(groups.values()),
        "chain_count": sum(len(g["chains"]) for g in groups.values()),
        "test_sites": len(tests),
        "test_files": sorted({e.path for e in tests if e.path}),
        "truncated": False,
        "from_records": True,
    }


def _to_port(verdict: Verdict) -> list[str]:
    """What porting the entry takes, from the records: new definitions, the launch, parameters."""
    flagged_paths = {s.path for s in verdict.symbols if s.verdict in FLAGGED}
    added = [bare_symbol(s.symbol) for s in verdict.symbols
             if s.path in flagged_paths and s.change == "added" and s.justification == "not-ported"
             and not s.symbol.startswith("<")]
    steps = [f"upstream's new {', '.join(added)}"] if added else []
    subject = _port_subject(verdict)
    records = _upstream_records(_deciding(verdict), verdict.evidence)
    if _grid_change(records) is not None:
        steps.append(f"upstream's grid for the launch in {subject}")
    for kind, words in ((Kind.PARAM_DEAD, "dropping {} from {} where nothing else reads it"),
                        (Kind.PARAM_REMOVED, "dropping {} from {}"), (Kind.PARAM_ADDED, "adding {} to {}")):
        names = list(dict.fromkeys(e.subject for e in records if e.kind == kind and e.subject))
        if names:
            steps.append(words.format(", ".join(names), subject))
    return steps


def _size(verdict: Verdict, commit: Commit, row_tests: Sequence[str]) -> dict[str, Any]:
    upstream_files = [
        {"path": c.path, "added": c.lines_added, "removed": c.lines_removed, "status": c.status, "content": c.content}
        for c in commit.changes
    ]
    tree_files: list[str] = []
    for sym in verdict.symbols:
        if sym.verdict not in FLAGGED:
            continue
        for port in sym.ports:
            path = port.split(":", 1)[0]
            if path and path not in tree_files:
                tree_files.append(path)
        for ev in sym.evidence:
            if ev.side == Side.TREE and ev.path and ev.kind != Kind.CALLER and not is_test_path(ev.path) and ev.path not in tree_files:
                tree_files.append(ev.path)
    return {
        "upstream_files": upstream_files,
        "upstream_lines_added": sum(f["added"] for f in upstream_files),
        "upstream_lines_removed": sum(f["removed"] for f in upstream_files),
        "tree_files": tree_files,
        "upstream_tests": [f["path"] for f in upstream_files if is_test_path(f["path"])],
        "row_tests": list(row_tests),
        "to_port": _to_port(verdict) if verdict.verdict in FLAGGED else [],
    }


def _reason_parts(reason: str, records: Iterable[Evidence], sources: Sources) -> list[dict[str, Any]]:
    """A reason as prose pieces and citations: each place it names that one
    of its records cites is printed as that record's checked citation."""
    parts: list[dict[str, Any]] = []
    for piece in split_at_places(reason, records):
        citation = _cite(sources, piece) if isinstance(piece, Evidence) else None
        if citation is not None:
            parts.append({"citation": citation})
        elif piece:
            parts.append({"text": piece if isinstance(piece, str) else piece.place})
    return parts


def _not_determined(verdict: Verdict, commit: Commit, kind: str, unowned_paths: Sequence[str],
                    sources: Sources) -> dict[str, Any]:
    fallbacks = [
        {"path": s.path, "symbol": s.symbol, "reason": s.reason,
         "parts": _reason_parts(s.reason, located(s.evidence), sources)}
        for s in verdict.symbols
        if s.decided_by == "fallback"
    ]
    if verdict.decided_by == "fallback" and not fallbacks:
        fallbacks.append({"path": None, "symbol": None, "reason": verdict.reason,
                          "parts": _reason_parts(verdict.reason, located(verdict.evidence), sources)})
    message = f"{commit.title}\n{commit.message}".lower()
    return {
        "executed": False,
        "speed_claim": kind == "perf" or bool(re.search(r"speed|faster|optimi[sz]|perf|latency|throughput", message)),
        "fallbacks": fallbacks,
        "unowned_paths": list(unowned_paths),
        "binary_files": [c.path for c in commit.changes if c.content != "text"],
        "upstream_unread": None,  # why the upstream commit could not be read again, if it could not
        "unchecked_citations": 0,
    }


def commit_url(web: str | None, sha: str) -> str | None:
    """The upstream commit's web page from a ``web = "https://…/commit/{sha}"`` template."""
    return web.replace("{sha}", sha) if web and sha else None


def build_issue_context(
    *,
    upstream: str,
    range_text: str,
    wave: str | None,
    position: int,
    commit: Commit,
    verdict: Verdict,
    history: Iterable[Any] = (),
    proposal: Any = None,
    current: Any = None,
    rows: Sequence[str] = (),
    row_info: Mapping[str, Mapping[str, Any]] | None = None,
    unowned_paths: Sequence[str] = (),
    matrix_path: str | None = None,
    sources: Sources | None = None,
    reachability: Mapping[str, Any] | None = None,
    siblings: Sequence[Mapping[str, Any]] = (),
    web: str | None = None,
) -> dict[str, Any]:
    """Everything ``issue.md.j2`` needs, as JSON-able values.

    ``verdict`` is the entry's current verdict (a human review wins over
    scans); ``history`` the entry's verdict events, oldest first; ``proposal``
    a later scan verdict that disagrees with a human review; ``current`` the
    event that produced ``verdict``; ``rows`` the claiming rows, primary
    first; ``row_info`` per row id: ``title``, ``line``, ``tests``.
    ``sources`` reads the cited files so every citation is exact (without
    it, citations are the records' own, marked unchecked);
    ``reachability`` is ``reachability_context(...)`` of the flagged ports
    (without it, the caller the scan recorded); ``siblings`` the wave's other
    flagged entries of the same row (``entry``, ``title``, ``path``,
    ``issue``); ``web`` the upstream's commit URL template.
    """
    sources = sources or Sources(lambda side, path: None)
    row_info = row_info or {}
    rows = list(rows) or sorted({s.row for s in verdict.symbols if s.row})
    primary = rows[0] if rows else None
    kind = infer_kind(verdict)
    summary = _summary_line(verdict, commit)
    events = [history_dict(e) for e in history]
    current_event = history_dict(current) if current is not None else (events[-1] if events else None)
    earlier = [e for e in events if current_event is None or e["id"] != current_event["id"] or e["id"] is None and e != current_event]
    for change in commit.changes:
        ensure_hunks(change)
    row_tests: list[str] = []
    for row in rows:
        for test in row_info.get(row, {}).get("tests", []) or []:
            if test not in row_tests:
                row_tests.append(test)
    halves = _halves(verdict, commit, sources)
    reach = dict(reachability) if reachability is not None else _reachability_from_records(verdict, sources)
    not_determined = _not_determined(verdict, commit, kind, unowned_paths, sources)
    not_determined["unchecked_citations"] = sum(1 for c in sources.made if not c.checked)
    return {
        "title": issue_title(kind, primary, summary),
        "kind": kind,
        "summary": summary,
        "what_is_wrong": _summary_line(verdict, commit, full=True),
        "slug": slugify(commit.title),
        "fingerprint": fingerprint(upstream, commit.sha, verdict.verdict, verdict.justification, rows),
        "row": primary,
        "co_owners": rows[1:],
        "rows": [
            {
                "id": row,
                "title": row_info.get(row, {}).get("title"),
                "line": row_info.get(row, {}).get("line"),
                "tests": list(row_info.get(row, {}).get("tests", []) or []),
            }
            for row in rows
        ],
        "matrix_path": matrix_path,
        "upstream": upstream,
        "range": range_text,
        "wave": wave,
        "entry": position,
        "commit": {
            "sha": commit.sha,
            "short": commit.sha[:10],
            "title": commit.title,
            "message": commit.message,
            "author": commit.author,
            "authored_at": commit.authored_at,
            "pr": commit.pr,
            "is_merge": commit.is_merge,
            "url": commit_url(web, commit.sha),
        },
        "verdict": {
            "verdict": verdict.verdict,
            "justification": verdict.justification,
            "decided_by": verdict.decided_by,
            "reason": verdict.reason,
            "version": verdict.version,
            "flagged": verdict.verdict in FLAGGED,
            "source": (current_event or {}).get("source", "scan"),
            "who": (current_event or {}).get("who"),
            "why": (current_event or {}).get("why"),
        },
        "history": earlier,
        "proposal": history_dict(proposal) if proposal is not None else None,
        "halves": halves,
        "flagged_halves": sum(1 for h in halves if h["flagged"]),
        "reachability": reach,
        "siblings": [dict(s) for s in siblings],
        "size": _size(verdict, commit, row_tests),
        "not_determined": not_determined,
        "verify_rows": [r for r in rows if row_info.get(r, {}).get("tests")] or rows,
        "citations": [c.to_dict() for c in sources.made],
    }


# --- rendering ----------------------------------------------------------------


def environment(templates_dir: Path | None = None) -> jinja2.Environment:
    """A sandboxed environment whose output is markdown-escaped unless a filter made it safe."""
    env = ImmutableSandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str(templates_dir or TEMPLATES_DIR)),
        autoescape=False,  # markdown, not HTML: see the module docstring
        finalize=_finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(code=md_code, block=md_block, text=md_text, sentence=md_sentence, cell=md_cell, one_line=one_line,
                       safe_url=safe_url, cite=md_cite, cite_block=md_cite_block, link=md_link)
    env.globals.update(VERDICTS=VERDICTS, FLAGGED=sorted(FLAGGED))
    return env


def _template_line(exc: BaseException, template_name: str) -> int | None:
    """The template line a runtime error was raised at (jinja rewrites tracebacks so they show it)."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename and frame.filename.endswith(template_name):
            line = frame.lineno
    return line


def render(template_name: str, context: Mapping[str, Any], templates_dir: Path | None = None) -> str:
    """Render ``template_name`` with ``context``; errors name the template and line."""
    env = environment(templates_dir)
    try:
        template = env.get_template(template_name)
        return template.render(**context)
    except jinja2.TemplateNotFound as exc:
        raise ReportError(f"template {exc.name} not found in {templates_dir or TEMPLATES_DIR}", EXIT_INTERNAL) from None
    except jinja2.TemplateSyntaxError as exc:
        raise ReportError(f"template {exc.name or template_name}:{exc.lineno}: {exc.message}", EXIT_INTERNAL) from None
    except Exception as exc:  # undefined names, sandbox refusals, filter errors
        line = _template_line(exc, template_name)
        where = f"{template_name}:{line}" if line else template_name
        raise ReportError(f"template {where}: {type(exc).__name__}: {exc}", EXIT_INTERNAL) from None


def write_report(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` (creating folders); ``False`` when it was already identical."""
    path = Path(path)
    try:
        return safe_output.write_text(path, text, what="report")
    except OSError as exc:
        raise ReportError(f"cannot write report {path}: {exc.strerror or exc}") from None


def split_title(rendered: str) -> tuple[str, str]:
    """A rendered issue as (title, body): the first line is ``# title``."""
    first, _, rest = rendered.partition("\n")
    return first.lstrip("# ").strip(), rest.lstrip("\n")


# --- filing with gh -------------------------------------------------------------


def gh_argv(title: str, body: str, repo: str | None = None, gh: str = "gh") -> list[str]:
    """The ``gh issue create`` command line: title and body are plain arguments."""
    argv = [gh, "issue", "create", "--title", title, "--body", body]
    if repo:
        argv += ["--repo", repo]
    return argv


def file_with_gh(
    title: str,
    body: str,
    repo: str | None = None,
    run: Callable[..., subprocess.CompletedProcess] = subprocess.run,
) -> str:
    """File an issue through the ``gh`` CLI (no shell) and return what it printed (the URL)."""
    gh = shutil.which("gh")
    if gh is None:
        raise ReportError("--gh needs the GitHub CLI `gh` on PATH (https://cli.github.com); the report was written, file it by hand")
    if len(body) > MAX_GH_BODY_CHARS:
        raise ReportError(f"report body is {len(body)} characters; GitHub accepts at most {MAX_GH_BODY_CHARS}")
    try:
        done = run(gh_argv(title, body, repo, gh), capture_output=True, text=True, check=False)
    except OSError as exc:
        raise ReportError(f"cannot run {gh}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        detail = one_line(done.stderr or done.stdout or "", 300)
        raise ReportError(f"gh issue create failed (exit {done.returncode}): {detail}")
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


# --- the wave summary -------------------------------------------------------------


def _entry_brief(entry: Mapping[str, Any]) -> dict[str, Any]:
    verdict: Verdict = entry["verdict"]
    sha = entry.get("sha") or ""
    return {
        "entry": entry["position"],
        "sha": sha,
        "short": sha[:10],
        "title": entry.get("title") or "",
        "pr": entry.get("pr"),
        "rows": list(entry.get("rows") or ()),
        "verdict": verdict.verdict,
        "justification": verdict.justification,
        "decided_by": verdict.decided_by,
        "source": entry.get("source") or "scan",
        "kind": infer_kind(verdict) if verdict.verdict in FLAGGED else None,
    }


def build_summary_context(*, wave: Mapping[str, Any], entries: Sequence[Mapping[str, Any]],
                          earlier: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """Everything ``summary.md.j2`` (and ``portq summary --json``) shows for one wave.

    ``wave``: ``id``, ``range``, ``upstream`` and whatever else the ledger
    keeps (times, status, version). ``entries``: per entry ``position``,
    ``sha``, ``title``, ``pr``, ``rows``, ``verdict`` (the current
    ``model.Verdict``), ``source`` (``scan``/``review``) and ``proposal``
    (a disagreeing scan's verdict event, or ``None``). ``earlier``: entries
    of the upstream's earlier waves that this wave does not list, each also
    with its ``label`` (``PORTQ-1#222``): what they leave open stands here too
    (``standing_open``, ``standing_holes``).
    """
    context = _wave_summary_context(wave, entries)
    # numbered in order here: two earlier waves may each have an entry 1
    before = _wave_summary_context(wave, [{**e, "position": n} for n, e in enumerate(earlier, 1)])
    labels = {n: e["label"] for n, e in enumerate(earlier, 1)}
    for brief, entry in zip(before["entries"], earlier):
        brief["entry"], brief["label"], brief["wave"] = entry["position"], entry["label"], entry["label"].split("#")[0]
    context["standing_open"] = [b for b in before["entries"] if b["verdict"] in FLAGGED]
    context["standing_holes"] = [{**hole, "entries": [labels[n] for n in hole["entries"]]}
                                 for hole in before["coverage_holes"]]
    return context


def _wave_summary_context(wave: Mapping[str, Any], entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    briefs = [_entry_brief(e) for e in entries]
    counts = {name: 0 for name in VERDICTS}
    for brief in briefs:
        counts[brief["verdict"]] += 1
    gaps_by_row: dict[str, list[dict[str, Any]]] = {}
    for brief in briefs:
        if brief["verdict"] == REAL_GAP:
            gaps_by_row.setdefault(brief["rows"][0] if brief["rows"] else "no-row", []).append(brief)
    holes: dict[tuple[str, str, str], dict[str, Any]] = {}
    for entry, brief in zip(entries, briefs):
        verdict: Verdict = entry["verdict"]
        symbols = [s for s in verdict.symbols if s.justification == "not-ported"]
        if not symbols and verdict.justification == "not-ported":
            symbols = [SymbolVerdict("", "", "modified", NOT_APPLICABLE, "not-ported", verdict.decided_by, row=(brief["rows"] or [None])[0])]
        for sym in symbols:
            key = (sym.row or "", sym.path, sym.symbol)
            hole = holes.setdefault(key, {"row": sym.row, "path": sym.path, "symbol": sym.symbol, "entries": []})
            if brief["entry"] not in hole["entries"]:
                hole["entries"].append(brief["entry"])
    proposals = []
    for entry, brief in zip(entries, briefs):
        proposal = entry.get("proposal")
        if proposal is not None:
            event = history_dict(proposal)
            proposals.append({**brief, "proposed": event["verdict"], "proposed_justification": event["justification"], "proposed_wave": event["wave"]})
    return {
        "wave": to_plain(dict(wave)),
        "total": len(briefs),
        "counts": counts,
        "flagged": [b for b in briefs if b["verdict"] in FLAGGED],
        "real_gaps_by_row": [{"row": row, "entries": items} for row, items in sorted(gaps_by_row.items())],
        "needs_review": [b for b in briefs if b["verdict"] == NEEDS_REVIEW],
        "inert": [b for b in briefs if b["verdict"] == INERT],
        "coverage_holes": sorted(holes.values(), key=lambda h: (h["row"] or "", h["path"], h["symbol"])),
        "proposals": proposals,
        "reviewed": sum(1 for b in briefs if b["source"] == "review"),
        "entries": briefs,
    }
