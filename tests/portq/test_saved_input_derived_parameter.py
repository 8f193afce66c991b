"""A kernel parameter upstream adds whose launch in an autograd ``backward`` passes a shape of a tensor the
backward unpacks from ``ctx.saved_tensors`` (``derived-parameter``): when the class's ``forward`` saved, at that
position of ``ctx.save_for_backward(...)``, one of its own inputs, the tensor is that input kept between the
passes, so its shape is derived like an input's, not a value a caller supplies: for a reader (NEEDS_REVIEW).
A saved tensor the forward computed itself (not one of its inputs) stays a gap, as does a new parameter
filled from a value the backward receives some other way."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

HOST = "pkg/ops/pair.py"
MATRIX = """\
[[row]]
id       = "PAIR"
title    = "An autograd pair of kernels"
upstream = "vllm"
paths    = ["pkg/ops/pair.py"]
tree     = ["vendored/", "engine/"]
tests    = ["tests/"]
"""

BEFORE = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _pair_bwd_kernel(a_ptr, b_ptr, g_ptr, da_ptr, rows, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < rows)
    g = tl.load(g_ptr + offs, mask=offs < rows)
    tl.store(da_ptr + offs, a * g, mask=offs < rows)


class Pair(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        out = a * 2.0
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        rows = a.shape[0]
        da = torch.empty_like(a)
        _pair_bwd_kernel[(triton.cdiv(rows, 128),)](a, b, g, da, rows, BLOCK=128)
        return da, None
'''

# The kernel gains the second input's length, which the backward reads from the saved input ``b``.
AFTER = BEFORE.replace("da_ptr, rows, BLOCK", "da_ptr, rows, cols, BLOCK").replace(
    "mask=offs < rows)\n    g", "mask=offs < cols)\n    g").replace(
    "        rows = a.shape[0]\n", "        rows = a.shape[0]\n        cols = b.shape[0]\n").replace(
    "da, rows, BLOCK=128)", "da, rows, cols, BLOCK=128)")

# Unsound neighbour: the length is read from a tensor the forward computed itself, not one of its inputs.
COMPUTED_AFTER = AFTER.replace("        cols = b.shape[0]\n", "        cols = out.shape[0]\n")
# Unsound neighbour: the forward saves a tensor it rebinds before saving (no longer its input as given).
REBOUND_BEFORE = BEFORE.replace("        out = a * 2.0\n", "        out = a * 2.0\n        b = b.t()\n")
REBOUND_AFTER = AFTER.replace("        out = a * 2.0\n", "        out = a * 2.0\n        b = b.t()\n")


def _tree() -> dict[str, str]:
    port = (
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        f"# portq: ports vllm:{HOST}::_pair_bwd_kernel\n"
        "@triton.jit\n"
        "def _pair_bwd_kernel(a_ptr, b_ptr, g_ptr, da_ptr, rows, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    a = tl.load(a_ptr + offs, mask=offs < rows)\n"
        "    g = tl.load(g_ptr + offs, mask=offs < rows)\n"
        "    tl.store(da_ptr + offs, a * g, mask=offs < rows)\n\n\n"
        "def pair_backward(a, b, g):\n"
        "    rows = a.shape[0]\n"
        "    da = torch.empty_like(a)\n"
        "    _pair_bwd_kernel[(triton.cdiv(rows, 128),)](a, b, g, da, rows, BLOCK=128)\n"
        "    return da\n"
    )
    caller = ("from vendored.pair import pair_backward\n\n\n"
              "def step(a, b, g):\n    return pair_backward(a, b, g)\n")
    return {"vendored/pair.py": port, "engine/step.py": caller}


def _kernel(verdict):
    return next(s for s in verdict.symbols if s.symbol == "_pair_bwd_kernel")


def test_a_parameter_read_from_a_saved_input_is_derived(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: AFTER}, _tree(), matrix=MATRIX, message="pair")
    kernel = _kernel(verdict)
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "derived-parameter" in kernel.rules, kernel.rules


def test_a_parameter_read_from_a_saved_computed_tensor_stays_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: COMPUTED_AFTER}, _tree(), matrix=MATRIX,
                              message="pair")
    kernel = _kernel(verdict)
    assert kernel.verdict == REAL_GAP, kernel.reason


def test_a_parameter_read_from_a_saved_rebound_input_stays_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: REBOUND_BEFORE}, {HOST: REBOUND_AFTER}, _tree(), matrix=MATRIX,
                              message="pair")
    kernel = _kernel(verdict)
    assert kernel.verdict == REAL_GAP, kernel.reason


# A launcher the tree pins at the old shape, launching its own copy of the kernel with the old arguments by
# position: upstream adds a positional argument it derives from an input's shape
# (``positional-derived-argument``).
LAUNCHER_BEFORE = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _pair_kernel(a_ptr, b_ptr, out_ptr, rows, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < rows)
    tl.store(out_ptr + offs, a * 2, mask=offs < rows)


def pair(a, b, limit):
    rows = a.shape[0]
    out = torch.empty_like(a)
    _pair_kernel[(triton.cdiv(rows, 128),)](a, b, out, rows, BLOCK=128)
    return out
'''
LAUNCHER_AFTER = LAUNCHER_BEFORE.replace("out_ptr, rows, BLOCK", "out_ptr, rows, cols, BLOCK").replace(
    "    tl.store(", "    b = tl.load(b_ptr + offs, mask=offs < cols)\n    tl.store(").replace(
    "a * 2, mask", "a * b, mask").replace(
    "    rows = a.shape[0]\n", "    rows = a.shape[0]\n    cols = b.shape[0]\n").replace(
    "out, rows, BLOCK=128)", "out, rows, cols, BLOCK=128)")
# Unsound neighbour: the new argument is the launcher's own parameter, a value its callers pass.
HANDED_AFTER = LAUNCHER_AFTER.replace("    cols = b.shape[0]\n", "    cols = limit\n")


def _launcher_tree() -> dict[str, str]:
    before = LAUNCHER_BEFORE.replace("@triton.jit\n", f"# portq: ports vllm:{HOST}::_pair_kernel\n@triton.jit\n") \
        .replace("def pair(", f"# portq: ports vllm:{HOST}::pair\ndef pair(")
    caller = ("from vendored.pair import pair\n\n\n"
              "def step(a, b):\n    return pair(a, b, 4)\n")
    return {"vendored/pair.py": before, "engine/step.py": caller}


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_a_positional_argument_derived_from_a_shape_leaves_the_paired_launch_for_a_reader(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: LAUNCHER_BEFORE}, {HOST: LAUNCHER_AFTER}, _launcher_tree(),
                              matrix=MATRIX, message="pair")
    launcher = _symbol(verdict, "pair")
    assert launcher.verdict == NEEDS_REVIEW, launcher.reason
    assert "positional-derived-argument" in launcher.rules, launcher.rules


def test_a_positional_argument_from_the_launchers_parameter_stays_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: LAUNCHER_BEFORE}, {HOST: HANDED_AFTER}, _launcher_tree(),
                              matrix=MATRIX, message="pair")
    launcher = _symbol(verdict, "pair")
    assert launcher.verdict == REAL_GAP, launcher.reason
    assert "positional-derived-argument" not in launcher.rules, launcher.rules


def test_a_port_launch_that_does_not_bind_its_own_kernel_stays_a_gap(tmp_path):
    # Unsound neighbour: the port's kernel takes a parameter its launch does not pass, so the port's launch
    # and its kernel are not one pair at upstream's old shape.
    tree = _launcher_tree()
    tree["vendored/pair.py"] = tree["vendored/pair.py"].replace("out_ptr, rows, BLOCK", "out_ptr, rows, extra, BLOCK")
    verdict = classify_commit(tmp_path, {HOST: LAUNCHER_BEFORE}, {HOST: LAUNCHER_AFTER}, tree,
                              matrix=MATRIX, message="pair")
    launcher = _symbol(verdict, "pair")
    assert launcher.verdict == REAL_GAP, launcher.reason
    assert "positional-derived-argument" not in launcher.rules, launcher.rules


# Upstream renames the kernel's length parameter at its position and adds another after it, both derived from
# the inputs' shapes; the port's launch still passes the old one by position to its own old kernel.
RENAMED_AFTER = LAUNCHER_AFTER.replace("out_ptr, rows, cols, BLOCK", "out_ptr, m, cols, BLOCK").replace(
    "offs < rows", "offs < m").replace("    rows = a.shape[0]\n", "    m = a.shape[0]\n").replace(
    "triton.cdiv(rows, 128)", "triton.cdiv(m, 128)").replace("out, rows, cols, BLOCK=128)", "out, m, cols, BLOCK=128)")


def test_a_positional_argument_renamed_at_its_position_and_derived_is_for_a_reader(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: LAUNCHER_BEFORE}, {HOST: RENAMED_AFTER}, _launcher_tree(),
                              matrix=MATRIX, message="pair")
    launcher = _symbol(verdict, "pair")
    assert launcher.verdict == NEEDS_REVIEW, launcher.reason
    assert "positional-derived-argument" in launcher.rules, launcher.rules
