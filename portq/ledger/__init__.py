"""Ledger: the record of every wave, entry, verdict and review, in SQLite.

Owns the schema and its migrations (``schema``), the records it gives back
(``records``: waves, verdict events, an entry's current verdict), and the
store itself (``store``: waves and their entries, reviews, filed reports'
fingerprints).

Must not classify, render or read an upstream clone or the tree: it stores
what the scan and the commands hand it and gives it back.
"""

from importlib import import_module

_FACE = {
    "Ledger": "store",
    "open_ledger": "store",
    "Wave": "store",
    "EntryRecord": "store",
    "SCHEMA_VERSION": "store",
    "MIGRATIONS": "store",
}
"""The package's public names and the module that defines each."""

__all__ = sorted(_FACE)


def __getattr__(name: str):
    """A name of the face, imported from its module when first asked for (so
    importing one module of the package never imports the others)."""
    if name in _FACE:
        return getattr(import_module(f"{__name__}.{_FACE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
