"""A Triton kernel whose parameters change in the same commit as every upstream definition the tree launches
its copy from, those launchers keeping their own parameters (rule ``pinned-launchers-changed``): the
kernel's parameters are supplied inside the copied pair, not by the engine's callers, so at most
NEEDS_REVIEW, never REAL_GAP on the kernel's parameters alone. Engine code launching the kernel, or a
launcher whose own parameters change, keeps the gap.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE, norm_module

BASE = norm_module()
# The kernel stops taking the column count (a padded row of BLOCK columns); the host stops passing it.
PADDED = BASE.replace("def _norm_fwd(x_ptr, w_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):",
                      "def _norm_fwd(x_ptr, w_ptr, y_ptr, BLOCK: tl.constexpr):").replace(
    "    mask = cols < n_cols\n", "    mask = cols < BLOCK\n").replace(
    "/ n_cols)", "/ BLOCK)").replace("row * n_cols + cols", "row * BLOCK + cols").replace(
    "(x, w, y, n_cols, BLOCK=triton.next_power_of_2(n_cols))", "(x, w, y, BLOCK=triton.next_power_of_2(n_cols))")


def _kernel(tmp_path, after, tree=TREE):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("padded rows", files={"ops/norm.py": after}),
    ], tree, matrix=MATRIX)
    return next(s for s in verdicts[1].symbols if s.symbol == "_norm_fwd"), verdicts[1]


def test_a_kernel_changed_with_its_only_pinned_launcher_is_for_a_reader(tmp_path):
    kernel, _ = _kernel(tmp_path, PADDED)
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "pinned-launchers-changed" in kernel.rules


def test_engine_code_launching_the_kernel_keeps_the_gap(tmp_path):
    tree = dict(TREE)
    tree["engine/fast.py"] = ("from kernels.rownorm import row_norm_kernel\n\n\n"
                              "def fast(x, w, y):\n"
                              "    row_norm_kernel[(x.shape[0],)](x, w, y, x.shape[1], BLOCK=1024)\n")
    kernel, _ = _kernel(tmp_path, PADDED, tree)
    assert kernel.verdict == REAL_GAP, kernel.reason
    assert "pinned-launchers-changed" not in kernel.rules


def test_a_launcher_whose_own_parameters_change_keeps_the_gap(tmp_path):
    kernel, _ = _kernel(tmp_path, PADDED.replace("def norm(x, w):", "def norm(x, w, block):"))
    assert kernel.verdict == REAL_GAP, kernel.reason
    assert "pinned-launchers-changed" not in kernel.rules
