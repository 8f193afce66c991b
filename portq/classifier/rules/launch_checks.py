"""Launch error checks: a launcher that gains only a check of its launch, placed against a port that already checks its own (DESIGN §5, "the port already has it").

A CUDA launch reports a bad configuration only through the runtime's last
error; a launcher that starts reading it after its ``<<<...>>>`` launch
(``CHECK(cudaGetLastError());``) fails loudly where it failed silently. A
port whose own launcher already checks its launch (PyTorch's
``C10_CUDA_KERNEL_LAUNCH_CHECK()``, or any call given ``cudaGetLastError()``
or ``cudaPeekAtLastError()``) after its launch already has that change, whatever
its macro is called: IN_SYNC (``port-has-launch-check``).

The code: ``cpp_port_has_launch_check`` reads the syntax trees handed to it
(upstream's definition before and after, the port's definition). It reads no
git, decides no verdict, imports nothing after the rule modules and never
names a corpus symbol, path or commit.
"""

from __future__ import annotations

import re

from portq.classifier.rules import Rule
from portq.classifier.rules.equivalence import _cpp_added_statements, _cpp_leaf_statements, _cpp_token_texts

RULES = (
    Rule("port-has-launch-check", ("IN_SYNC",),
         "A C++ definition whose whole change adds checks of the last CUDA error after its launches "
         "(statements `F(cudaGetLastError());`, `F(cudaPeekAtLastError());` or `C10_CUDA_KERNEL_LAUNCH_CHECK();`, "
         "every other token the same) while the port's definition already makes such a check after a "
         "`<<<...>>>` launch of its own: the port already has the change, IN_SYNC, citing the port's check. A "
         "port with no check, one only before its launches, or a change that also alters anything else stays "
         "flagged.",
         "         k<<<grid, block, 0, stream>>>(out, in, n);\n+        NVTE_CHECK_CUDA(cudaGetLastError());\n"
         "  (the port: k2<<<g, b, 0, s>>>(y, x, n); C10_CUDA_KERNEL_LAUNCH_CHECK();)",
         "classifier.rules.launch_checks.cpp_port_has_launch_check, "
         "classifier.rules.definitions.DefinitionRules._from_items"),
)

_LAST_ERROR = re.compile(r"[A-Za-z_][\w:]*\((?:cudaGetLastError|cudaPeekAtLastError)\(\)\);")
"""A statement that hands the runtime's last error to a checking macro or function (a bare
``cudaGetLastError();`` only clears it)."""

_LAUNCH_CHECK_MACROS = frozenset({"C10_CUDA_KERNEL_LAUNCH_CHECK();"})
"""PyTorch's launch check: it reads the last error itself."""


def is_launch_check(statement) -> bool:
    """Whether the C++ simple statement ``statement`` checks the last CUDA error (``CHECK(cudaGetLastError());``
    with any one checking callee, or ``C10_CUDA_KERNEL_LAUNCH_CHECK();``)."""
    if statement.type != "expression_statement":
        return False
    text = "".join(_cpp_token_texts(statement))
    if text in _LAUNCH_CHECK_MACROS:
        return True
    return _LAST_ERROR.fullmatch(text) is not None


def cpp_port_has_launch_check(old_node, new_node, port_node) -> list[tuple[object, object]] | None:
    """``(added check, the port's check)`` pairs when the whole change from ``old_node`` to ``new_node`` adds
    launch checks (``is_launch_check``), each after a ``<<<`` launch of the new definition, and ``port_node``
    makes a launch check after a ``<<<`` launch of its own (``port-has-launch-check``); None otherwise."""
    added = _cpp_added_statements(old_node, new_node)
    if not added or not all(is_launch_check(s) for s in added):
        return None
    if any(not _after_a_launch(new_node, s) for s in added):
        return None
    mine = next((s for s in _cpp_leaf_statements(port_node) if is_launch_check(s) and _after_a_launch(port_node, s)),
                None)
    if mine is None:
        return None
    return [(s, mine) for s in added]


def _after_a_launch(definition, statement) -> bool:
    """Whether a ``<<<...>>>`` launch precedes ``statement`` in ``definition``'s text."""
    before = definition.text[:statement.start_byte - definition.start_byte]
    return b"<<<" in before
