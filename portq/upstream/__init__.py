"""Upstream: what a clone's history says changed.

Owns ranges and the first-parent log stream of an upstream clone
(``history``) and the hunks of a commit's files (``hunks``).

Must not read the in-tree port, map a change onto matrix rows or decide a
verdict; it never imports the tree side or the classifier.
"""

from portq.core.face import lazy_face

_FACE = {
    "Upstream": "history",
    "Range": "history",
    "parse_hunks": "hunks",
    "change_lines": "hunks",
}
"""The package's public names and the module that defines each."""

__getattr__, __all__ = lazy_face(__name__, _FACE)
