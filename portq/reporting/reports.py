"""Reports: name, render and file the markdown a maintainer acts on.

A report is rendered from a *context* (plain JSON-able dicts) with the jinja2
templates in ``templates/``: the issue report of one entry (``issue.md.j2``,
context from ``portq.reporting.issue_report``), the wave summary
(``summary.md.j2``, ``portq.reporting.summary``), the tracking issue
(``dashboard.md.j2``) and the matrix page (``matrix.md.j2``). This module
holds what they share: reading ledger records into those dicts (the standing
verdict of an entry, a verdict event, a wave), naming a report (slug, title,
path, fingerprint), the sandboxed environment that renders it, writing it,
and handing a rendered issue to the ``gh`` CLI.

Text from people we do not control is only ever passed to templates as
values, never compiled as template source, and the environment is
sandboxed. Every value a template prints goes through ``_finalize``, which
escapes it for markdown (``portq.reporting.markdown``) unless a filter
already made it safe. HTML autoescaping is deliberately off: it would turn
``&`` into ``&amp;`` inside code spans, where GitHub shows entities
literally.

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
from typing import Any, Callable, Mapping, Sequence

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from portq.core import bundled, safe_output
from portq.core.errors import EXIT_INTERNAL, PortqError
from portq.core.model import DECIDED_BY, FLAGGED, JUSTIFICATIONS, VERDICTS, Verdict
from portq.reporting.markdown import (SafeMarkdown, md_block, md_cell, md_cite, md_cite_block, md_code, md_link,
                                      md_sentence, md_text, one_line, safe_url, visible)

TEMPLATES_DIR = bundled.templates_dir()
"""The templates shipped with portq: ``templates/`` of a checkout or an
editable install, else the copy a regular install carries in the package."""

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


def commit_url(web: str | None, sha: str) -> str | None:
    """The upstream commit's web page from a ``web = "https://…/commit/{sha}"`` template."""
    return web.replace("{sha}", sha) if web and sha else None


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
