"""C++ locals resolve to the assignment that reaches a read
(portq.language.signatures_cpp.CppLocals), as Python's do: the last one every path
runs; one that only some paths run, or an update such as ``+=``, leaves the
name unresolved there."""
from __future__ import annotations

from portq.language.signatures_cpp import CppLocals
from portq.language.symbols import parse


def _locals_at(source: str, marker: str = "use("):
    root = parse(source.encode(), "cpp").root_node
    body = root.named_children[0].child_by_field_name("body")
    offset = source.index(marker) + len(marker)
    return CppLocals(body).at(root.descendant_for_byte_range(offset, offset + 1))


def test_the_last_assignment_every_path_runs_wins():
    resolved = _locals_at("void f(int n) {\n  int g = n;\n  dim3 h(n);\n  g = n * 2;\n  use(g, h);\n}\n")
    assert resolved["g"].text == b"n * 2" and resolved["h"].text == b"(n)" and not resolved.ambiguous


def test_an_assignment_on_one_path_leaves_the_name_ambiguous():
    resolved = _locals_at("void f(int n, bool big) {\n  int g = n;\n  if (big) g = n * 4;\n  use(g);\n}\n")
    assert "g" not in resolved and "g" in resolved.ambiguous


def test_an_update_is_not_a_value():
    resolved = _locals_at("void f(int n) {\n  int g = n;\n  g += 4;\n  use(g);\n}\n")
    assert "g" not in resolved and "g" in resolved.ambiguous


def test_an_assignment_after_the_read_does_not_reach_it():
    resolved = _locals_at("void f(int n) {\n  int g = n;\n  use(g);\n  g = 2 * n;\n}\n")
    assert resolved["g"].text == b"n"
