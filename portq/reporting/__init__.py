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

from importlib import import_module

_FACE = {
    "emit": "output",
    "Document": "output",
    "NullProgress": "output",
    "render": "reports",
    "wave_summary": "summary",
    "build_issue_context": "issue_context",
}
"""The package's public names and the module that defines each."""

__all__ = sorted(_FACE)


def __getattr__(name: str):
    """A name of the face, imported from its module when first asked for (so
    importing one module of the package never imports the others)."""
    if name in _FACE:
        return getattr(import_module(f"{__name__}.{_FACE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
