"""Ledger: the record of every wave, entry, verdict and review, in SQLite.

Owns the schema and its migrations (``schema``), the records it gives back
(``records``: waves, verdict events, an entry's current verdict), and the
store itself (``store``: waves and their entries, reviews, filed reports'
fingerprints).

Must not classify, render or read an upstream clone or the tree: it stores
what the scan and the commands hand it and gives it back.
"""

from portq.core.face import lazy_face

_FACE = {
    "Ledger": "store",
    "open_ledger": "store",
    "Wave": "store",
    "EntryRecord": "store",
    "SCHEMA_VERSION": "store",
    "MIGRATIONS": "store",
}
"""The package's public names and the module that defines each."""

__getattr__, __all__ = lazy_face(__name__, _FACE)
