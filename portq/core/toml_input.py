"""TOML text a user wrote (portq.toml, the kernel matrix, the reviews file),
parsed with the same tolerance and the same limits everywhere.

A UTF-8 byte-order mark, which some editors put first, is not part of the
text. A document nested deeper than the parser can follow (thousands of
``[[[...`` or ``a = [[[...``) is a TOML error like any other, not a
``RecursionError``. Callers turn ``tomllib.TOMLDecodeError`` into their own
one-line error naming the file and line.

This module only parses text; it must not read files or know what the keys mean.
"""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

BOM = "\ufeff"


def loads(text: str) -> dict:
    """``tomllib.loads`` of ``text`` without a leading BOM; too deep a nesting is a ``TOMLDecodeError``."""
    if text.startswith(BOM):
        text = text[len(BOM):]
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("nested too deeply (arrays or tables within one another beyond what "
                                      "portq reads; expected a flat document) (at line 1, column 1)") from None
