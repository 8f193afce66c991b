"""Reporting: what people and scripts read.

Owns the one output path of every command (``output``: JSON, tables,
markdown); untrusted text made inert in markdown (``markdown``); naming,
rendering and writing reports (``reports``); an entry's issue report
(``issue_report``) and its context re-read from the clone and the tree
(``issue_context``); the wave summary (``summary``); citations
checked against the files (``citations``), filing reports and GitHub issues
(``filing``), the tracking issue (``dashboard``) and the HTML page
(``html_page``).

Must not decide or change a verdict; it reads the ledger (and, for an
issue's context, the clone and the tree) and writes reports.
"""

from portq.core.face import lazy_face

_FACE = {
    "emit": "output",
    "Document": "output",
    "NullProgress": "output",
    "render": "reports",
    "wave_summary": "summary",
    "build_issue_context": "issue_context",
}
"""The package's public names and the module that defines each."""

__getattr__, __all__ = lazy_face(__name__, _FACE)
