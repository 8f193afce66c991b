"""Extraction: the signature of one definition, by the extractor of its language.

``portq.language.signatures`` holds the language-neutral record and what
both languages share; ``signatures_cpp`` and ``signatures_python`` fill it
from C/C++/CUDA and Python/Triton definitions. This module sits above all
three and picks one by the definition's language (an op schema string is
read here), so that the record never imports its extractors. It reads
tree-sitter nodes only: no I/O, no comparison of signatures, no verdict.
"""

from __future__ import annotations

import re

from portq.language.signatures import Param, Signature, _line_of, _Lines, _text, _walk, body_tokens_hash, normalise_name
from portq.language.signatures_cpp import _CppExtractor, cpp_single_return
from portq.language.signatures_python import _PythonExtractor, python_single_return
from portq.language.symbols import KIND_OP_SCHEMA, Definition


def signature_of(definition: Definition, source: bytes, path: str = "", imported=None) -> Signature:
    """The signature of ``definition`` (its ``node`` must come from ``source``).
    ``imported(name)`` finds a helper imported from another module of the
    same package (``single_return`` of it), for grids computed there."""
    lines = _Lines(source)
    signature = Signature(
        name=definition.name,
        qualified_name=definition.qualified_name,
        kind=definition.kind,
        language=definition.language,
        path=path,
        start_line=definition.start_line,
        end_line=definition.end_line,
    )
    node = definition.node
    if node is None:
        return signature
    signature.body_tokens_hash = body_tokens_hash(node)
    if definition.kind == KIND_OP_SCHEMA:
        _schema_signature(node, signature, lines)
    elif definition.language == "cpp":
        _CppExtractor(node, signature, lines, imported).run()
    elif definition.language == "python":
        _PythonExtractor(node, signature, lines, imported).run()
    return signature


# --- op schemas ----------------------------------------------------------------

_SCHEMA_PARAMS = re.compile(r"\((.*)\)\s*->", re.S)


def _schema_signature(node, signature: Signature, lines: _Lines) -> None:
    """``ops.def("name(Tensor a, int b, Tensor? c=None) -> ()")``: params only."""
    content = "".join(_text(c) for c in _walk(node) if c.type in ("string_content", "raw_string_content"))
    match = _SCHEMA_PARAMS.search(content)
    if not match:
        return
    line = _line_of(node)
    for position, part in enumerate(p for p in _split_top_level(match.group(1)) if p.strip()):
        declaration, _, default = part.partition("=")
        name = declaration.strip().split()[-1] if declaration.strip() else ""
        signature.params.append(
            Param(name, normalise_name(name), position, False, bool(default.strip()), line, lines.quote(line))
        )


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for char in text:
        if char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts



def single_return(node):
    """``(parameter names, returned expression, local assignments)`` of the
    function ``node`` (Python, or a C++ ``function_definition``) for a grid
    computed there. With several ``return``s, the second and third items are
    lists, one entry per return (a helper that picks its grid by a config
    flag still has a structure to compare); None when nothing is returned."""
    function = node.child_by_field_name("definition") if node is not None and node.type == "decorated_definition" \
        else node
    if function is not None and function.type == "function_definition" and \
            function.child_by_field_name("declarator") is not None:  # C++
        return cpp_single_return(node)
    return python_single_return(node)
