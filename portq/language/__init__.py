"""Language: reading source code, whichever side it comes from.

Owns the definitions of a file per language (``symbols``, tree-sitter),
canonical expressions for grids and sizes (``expressions``), the
language-neutral signature record (``signatures``), the extractors that fill
it from C/C++/CUDA (``signatures_cpp``) and Python/Triton
(``signatures_python``), and ``extraction``, which picks the extractor by
language; ``memo`` keeps the products of a definition's text (tokens, ``ast``
dumps) once per content; ``readable`` rewrites, in place, C/C++ idioms the
grammar cannot parse (for ``symbols.parse``).

Must not do I/O beyond parsing the bytes it is given, compare two
signatures or decide anything, or import a later stage. Inside it the record
module never imports its extractors (the import-linter contract in
``pyproject.toml`` keeps it so).
"""

from portq.core.face import lazy_face

_FACE = {
    "Definition": "symbols",
    "SymbolTable": "symbols",
    "symbol_table": "symbols",
    "language_for_path": "symbols",
    "Signature": "signatures",
    "normalise_name": "signatures",
    "signature_of": "extraction",
    "canonical_form": "expressions",
}
"""The package's public names and the module that defines each."""

__getattr__, __all__ = lazy_face(__name__, _FACE)
