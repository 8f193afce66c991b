"""Tree: what the downstream tree holds and how it hangs together.

Owns the ``portq: ports`` / ``not-carried`` anchors (``anchors``), the
in-tree index of definitions, signatures and call sites with its cache
(``tree_index``; one file's record: ``file_records``), which ports the tree's callers reach (``reachability``),
the definition and signature cache shared by scans (``symbol_cache``), the
store of per-definition products kept across scans (``product_store``), the
kernel matrix (``matrix``) and what is wrong with it (``matrix_problems``).

Must not read upstream history, decide a verdict or write the ledger.
"""

from portq.core.face import lazy_face

_FACE = {
    "Anchor": "anchors",
    "find_anchors": "anchors",
    "TreeIndex": "tree_index",
    "port_roots_of": "tree_index",
    "Matrix": "matrix",
    "DefinitionCache": "symbol_cache",
    "SignatureStore": "symbol_cache",
    "ProductStore": "product_store",
    "build_matrix_context": "matrix_problems",
}
"""The package's public names and the module that defines each."""

__getattr__, __all__ = lazy_face(__name__, _FACE)
