"""Upstream: what a clone's history says changed.

Owns ranges and the first-parent log stream of an upstream clone
(``history``) and the hunks of a commit's files (``hunks``).

Must not read the in-tree port, map a change onto matrix rows or decide a
verdict; it never imports the tree side or the classifier.
"""

from importlib import import_module

_FACE = {
    "Upstream": "history",
    "Range": "history",
    "parse_hunks": "hunks",
    "change_lines": "hunks",
}
"""The package's public names and the module that defines each."""

__all__ = sorted(_FACE)


def __getattr__(name: str):
    """A name of the face, imported from its module when first asked for (so
    importing one module of the package never imports the others)."""
    if name in _FACE:
        return getattr(import_module(f"{__name__}.{_FACE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
