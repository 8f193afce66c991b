"""Op registrations: a registration body that only gains registrations of new ops (DESIGN §5, what the port has).

A C++ op library registers its ops in bodies such as
``TORCH_LIBRARY_IMPL(lib, CUDA, m) { m.impl("name", fn); ... }``: each
statement ``m.impl("name", fn)`` (or ``m.def("name(...) -> ...")``) binds one
op name, on the body's registration handle ``m``, and touches no other op.

* ``new-op-registration``: a ported C/C++ definition whose new tokens are its
  old ones plus whole statements ``H.impl("name", ...);`` or
  ``H.def("name...", ...);``, where ``H`` is a handle the old body already
  registers on (``H.impl``/``H.def``) and each ``name`` (up to its overload
  ``.`` or schema ``(``) is a word the old file never holds and the port's file
  does not name: it registers ops new to upstream, which the port does not
  have, and leaves every registration the port mirrors alone. NOT_APPLICABLE/
  not-ported. An added registration of an op the file already had, a changed
  or removed statement, another handle, or a new op the port names stays
  compared.

Example diff (not-ported; nothing in the file named ``fill_rows`` before)::

     TORCH_LIBRARY_IMPL(cache_ops, CUDA, m) {
       m.impl("scale_rows", scale_rows);
    +  m.impl("fill_rows", fill_rows);
     }

The code: ``new_registrations`` compares the two sides' tokens; ``RegistrationRules`` holds the method
of the verdict table (``portq.classifier.verdicts.SymbolClassifier``) that applies it. It must not import
the verdict table or anything after it, and a rule never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from portq.classifier.rules import Rule
from portq.classifier.rules.form import placed_statements
from portq.language.signatures import comment_free_tokens

RULES = (
    Rule("new-op-registration", ("NOT_APPLICABLE",),
         "A ported C/C++ definition whose whole change adds statements `H.impl(\"name\", ...);` or "
         "`H.def(\"name(...)\", ...);` on a handle its old body already registers on, each for an op name the "
         "old file never holds and the port's file does not name, registers new ops the port does not have "
         "and leaves every existing registration alone: not-ported. A registration of an op the file already "
         "had, a changed statement, another handle or an op the port names stays compared.",
         " TORCH_LIBRARY_IMPL(cache_ops, CUDA, m) {\n   m.impl(\"scale_rows\", scale_rows);\n"
         "+  m.impl(\"fill_rows\", fill_rows);\n }",
         "classifier.rules.registrations.new_registrations, "
         "classifier.rules.registrations.RegistrationRules._new_op_registrations"),
)

_REGISTERS = frozenset({"impl", "def"})
_OP_NAME = re.compile(r"([A-Za-z_]\w*)(?:\.\w+)?\s*(?:\(.*)?", re.DOTALL)
"""An op name in a registration's string: ``name``, ``name.overload`` or a schema ``name(...) -> ...``."""


def _registration(statement: list[str]) -> tuple[str, str] | None:
    """``(handle, op name)`` of ``H.impl("name", ...);`` / ``H.def("name(...)", ...);``, else None."""
    if len(statement) < 6 or statement[1] != "." or statement[2] not in _REGISTERS or statement[3] != "(" \
            or statement[-2:] != [")", ";"] or not re.fullmatch(r"[A-Za-z_]\w*", statement[0]):
        return None
    if len(statement) > 6 and statement[5] != ",":
        return None
    depth = 0
    for at, token in enumerate(statement[3:], start=3):
        depth += token in ("(", "[", "{")
        depth -= token in (")", "]", "}")
        if depth == 0:
            if at != len(statement) - 2:
                return None  # the call closes before the statement ends: something else follows it
            break
    literal = statement[4]
    found = _OP_NAME.fullmatch(literal[1:-1]) if len(literal) >= 2 and literal[0] == literal[-1] == '"' else None
    return (statement[0], found.group(1)) if found is not None else None


def new_registrations(before: list[str], after: list[str], old_file: Callable[[], str | None],
                      port_file: Callable[[], str | None]) -> list[str] | None:
    """The op names ``new-op-registration`` proves only newly registered (see the module), when ``after`` is
    ``before`` plus whole registration statements; else None. ``old_file()`` and ``port_file()`` give the
    old side's file and the port's file, read only once the tokens show registrations alone were added."""
    before, after = [t for t in before if t], [t for t in after if t]
    if len(after) <= len(before):
        return None
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    inserted: list[list[str]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if op != "insert":
            return None
        _, _, placed = placed_statements(after, j1, j2)
        if not placed:
            return None
        inserted.extend(placed)
    handles = {before[i] for i in range(len(before) - 2) if before[i + 1] == "." and before[i + 2] in _REGISTERS}
    names: list[str] = []
    for statement in inserted:
        found = _registration(statement)
        if found is None or found[0] not in handles:
            return None
        names.append(found[1])
    if not names:
        return None
    texts = [old_file(), port_file()]
    if None in texts:
        return None
    if any(re.search(rf"\b{re.escape(name)}\b", text) for name in names for text in texts):
        return None
    return list(dict.fromkeys(names))


class RegistrationRules:
    """The verdict-table method that applies ``new-op-registration``."""

    def _new_op_registrations(self, symbol, definition) -> list[str] | None:
        """``new_registrations`` for a modified C/C++ symbol ported at ``definition``."""
        sides = self._modified_sides(symbol, "cpp")
        if sides is None:
            return None

        def old_file() -> str | None:
            table = self._side_tables(symbol)[0]
            return table.source.decode("utf-8", errors="replace") if table is not None and table.source else None

        def port_file() -> str | None:
            source = self.index.source(definition.file)
            return source.decode("utf-8", errors="replace") if source is not None else None

        before, after = sides
        return new_registrations(comment_free_tokens(before.node), comment_free_tokens(after.node), old_file,
                                 port_file)
