"""``renamed-unchanged``: a ported definition renamed upstream whose parameters are
the same and whose text, read modulo the names the commit renames (its own old and
new name, and definitions it renames with their bodies), is the same: the rename is
the whole change, and a rename is never a gap (the port keeps the old name, its
callers follow it): NOT_APPLICABLE/cosmetic. A rename that changes a parameter stays a
``renamed-definition`` gap; one that keeps every parameter and changes the body on the way is that body
change, for a reader (``renamed-body-edit``).

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

OPS = "vllm/_custom_ops.py"
BINDINGS = "csrc/cache_kernels.cu"

OPS_BEFORE = """import torch


def scale_rows(x, s):
    return torch.ops.cache_ops.scale_rows(x, s)
"""

TREE = {
    "kernels/kv_cache/ops.py": "import torch\n\n\n# portq: ports vllm:vllm/_custom_ops.py::scale_rows\n"
                               "def scale_rows(x, s):\n    return torch.ops.cache_ops.scale_rows(x, s)\n",
    "kernels/kv_cache/engine.py": "from kernels.kv_cache.ops import scale_rows\n\n\ndef run(x):\n"
                                  "    return scale_rows(x, 2.0)\n",
}


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name and s.change == "removed")


def test_a_wrapper_renamed_with_the_same_parameters_and_body_is_no_gap(tmp_path):
    after = OPS_BEFORE.replace("def scale_rows(", "def scale_rows_fwd(")
    verdict = classify_commit(tmp_path, {OPS: OPS_BEFORE}, {OPS: after}, TREE, message="rename")
    symbol = _symbol(verdict, "scale_rows")
    assert (symbol.verdict, symbol.justification) == (NOT_APPLICABLE, "cosmetic"), symbol.reason
    assert "renamed-unchanged" in symbol.rules and "scale_rows_fwd" in symbol.reason
    assert verdict.verdict != REAL_GAP, verdict.reason


def test_a_wrapper_renamed_with_a_new_parameter_stays_a_renamed_gap(tmp_path):
    after = OPS_BEFORE.replace("def scale_rows(x, s):", "def scale_rows_fwd(x, s, eps):") \
        .replace("scale_rows(x, s)\n", "scale_rows(x, s, eps)\n")
    verdict = classify_commit(tmp_path, {OPS: OPS_BEFORE}, {OPS: after}, TREE, message="rename")
    symbol = _symbol(verdict, "scale_rows")
    assert symbol.verdict == REAL_GAP and "renamed-definition" in symbol.rules, symbol.reason
    assert "renamed-unchanged" not in symbol.rules


def test_a_wrapper_renamed_with_its_body_changed_is_a_body_change_for_a_reader(tmp_path):
    # ``renamed-body-edit``: the parameters are kept, so the rename asks nothing of the port's callers; what
    # is left is the body change made on the way, which a reader compares (as for the same edit in place).
    after = OPS_BEFORE.replace("def scale_rows(", "def scale_rows_fwd(").replace("(x, s)\n", "(x.contiguous(), s)\n")
    verdict = classify_commit(tmp_path, {OPS: OPS_BEFORE}, {OPS: after}, TREE, message="rename")
    symbol = _symbol(verdict, "scale_rows")
    assert "renamed-unchanged" not in symbol.rules, symbol.reason
    assert symbol.verdict == NEEDS_REVIEW and "renamed-body-edit" in symbol.rules, symbol.reason
    assert verdict.verdict != REAL_GAP, verdict.reason


BINDINGS_BEFORE = """#include <torch/extension.h>

void scale_rows
(
    torch::Tensor x,
    float s
)
{
    scale_rows_cuda((half*) x.data_ptr(), s, x.numel());
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
  m.def("scale_rows", &scale_rows, "scale rows");
}
"""

CPP_TREE = {
    "kernels/kv_cache/ops.cu": BINDINGS_BEFORE.replace(
        "void scale_rows\n", "// portq: ports vllm:csrc/cache_kernels.cu::scale_rows\nvoid scale_rows\n"),
    "kernels/kv_cache/engine.py": "import ext\n\n\ndef run(x):\n    return ext.scale_rows(x, 2.0)\n",
}


def test_a_binding_renamed_with_the_function_it_binds_is_no_gap(tmp_path):
    after = BINDINGS_BEFORE.replace("scale_rows\n(", "scale_rows_\n(").replace(
        'm.def("scale_rows", &scale_rows,', 'm.def("scale_rows_", &scale_rows_,')
    verdict = classify_commit(tmp_path, {BINDINGS: BINDINGS_BEFORE}, {BINDINGS: after}, CPP_TREE, message="rename")
    assert verdict.verdict != REAL_GAP, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "renamed-unchanged" in verdict.rules, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]


def test_a_binding_renamed_with_a_function_that_gains_a_parameter_stays_a_gap(tmp_path):
    after = BINDINGS_BEFORE.replace("scale_rows\n(", "scale_rows_\n(").replace(
        'm.def("scale_rows", &scale_rows,', 'm.def("scale_rows_", &scale_rows_,').replace(
        "    float s\n", "    float s,\n    int n\n").replace("s, x.numel()", "s, n")
    verdict = classify_commit(tmp_path, {BINDINGS: BINDINGS_BEFORE}, {BINDINGS: after}, CPP_TREE, message="rename")
    assert verdict.verdict == REAL_GAP, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]


LONG_BEFORE = """import torch


def scale_rows(x, s):
    y = x.float()
    y = y * s
    y = y.clamp(-1.0, 1.0)
    return torch.ops.cache_ops.scale_rows(y, s)
"""


def test_a_definition_renamed_with_edits_is_compared_with_the_followed_definition_not_a_new_prefix_named_one(tmp_path):
    # ``renamed-body-edit`` through ``renamed-with-edits``: the commit renames the wrapper to a name that does
    # not extend the old one, keeping its parameters and most of its body, and adds beside it a class whose name
    # the old name extends. The definition the move rule follows is the rename; the new class is not, so the
    # rename check compares the followed definition (parameters kept: a body change for a reader), never the
    # class that merely shares a prefix.
    after = LONG_BEFORE.replace("def scale_rows(x, s):", "def rows_fwd(x, s):") \
        .replace("    y = y * s\n", "    y = y * s\n    z = y.abs()\n    z = z.amax()\n    y = y / z\n") \
        + "\n\nclass scale:\n    def __init__(self, k, n):\n        self.k = k\n        self.n = n\n"
    tree = dict(TREE)
    tree["kernels/kv_cache/ops.py"] = "import torch\n\n\n# portq: ports vllm:vllm/_custom_ops.py::scale_rows\n" \
        + LONG_BEFORE.split("\n\n\n", 1)[1]
    verdict = classify_commit(tmp_path, {OPS: LONG_BEFORE}, {OPS: after}, tree, message="rename")
    symbol = _symbol(verdict, "scale_rows")
    assert symbol.verdict == NEEDS_REVIEW and "renamed-body-edit" in symbol.rules, (symbol.rules, symbol.reason)
    assert "rows_fwd" in symbol.reason, symbol.reason
    assert verdict.verdict != REAL_GAP, verdict.reason
