"""Python locals resolve to the assignment that reaches a read
(portq.language.signatures_python.PythonLocals): the last one every path runs, with
the conditional and loop-carried ones that may stand in for it."""
from __future__ import annotations

from portq.language.signatures_python import PythonLocals
from portq.language.symbols import parse


def _locals_at(source: str, marker: str = "use("):
    root = parse(source.encode(), "python").root_node
    function = root.named_children[0]
    body = function.child_by_field_name("body")
    offset = source.index(marker) + len(marker)
    use = root.descendant_for_byte_range(offset, offset + 1)
    return PythonLocals(body).at(use)


def test_the_last_assignment_every_path_runs_wins():
    resolved = _locals_at("def f(n):\n    g = n\n    g = n * 2\n    use(g)\n")
    assert resolved["g"].text == b"n * 2" and not resolved.ambiguous


def test_an_assignment_inside_an_earlier_returning_branch_does_not_reach():
    resolved = _locals_at("def f(n, fast):\n    if fast:\n        g = n * 4\n        return\n    g = n\n    use(g)\n")
    assert resolved["g"].text == b"n"


def test_branches_that_both_assign_leave_the_name_ambiguous():
    resolved = _locals_at("def f(n, fast):\n    if fast:\n        g = n * 4\n    else:\n        g = n\n    use(g)\n")
    assert "g" not in resolved and resolved.ambiguous == {"g"}


def test_a_conditional_assignment_after_the_unconditional_one_is_ambiguous():
    resolved = _locals_at("def f(n, fast):\n    g = n\n    if fast:\n        g = n * 4\n    use(g)\n")
    assert resolved.ambiguous == {"g"}


def test_a_loop_carried_assignment_reaches_a_read_in_its_own_right_side():
    resolved = _locals_at("def f(n):\n    acc = 0\n    for i in range(n):\n        acc = use(acc) + i\n")
    assert resolved.ambiguous == {"acc"}


def test_an_augmented_assignment_is_never_a_plain_value():
    resolved = _locals_at("def f(n):\n    g = n\n    g += 1\n    use(g)\n")
    assert "g" not in resolved and "g" in resolved.ambiguous


def test_assignments_in_a_nested_function_are_another_scope():
    resolved = _locals_at("def f(n):\n    g = n\n    def h():\n        g = 3\n    use(g)\n")
    assert resolved["g"].text == b"n"
