"""A tile size changed at a launch (``tile-choice``): the wrapper divides the same inputs by another
tile constant it also passes to the kernel, so the grid covers the same work in other-sized pieces. No
caller supplies or selects the tile and the launch reads no new input: a tile choice of the wrapper,
for a reader (DESIGN §5: tile sizes derived from what the kernel already receives are an
implementation detail, NEEDS_REVIEW at most), not the launch shape a caller sees. A grid that reads a
new input, gains an axis, or divides by a constant the kernel is not told stays a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

HOST = "aiter/ops/triton/rows_scale.py"
BEFORE = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _rows_scale_kernel(x_ptr, out_ptr, n, cols, BLOCK: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    for start in range(0, cols, BLOCK_N):
        offs = rows[:, None] * cols + start + tl.arange(0, BLOCK_N)[None, :]
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=rows[:, None] < n) * 2, mask=rows[:, None] < n)


def rows_scale(x, out):
    n, cols = x.shape
    BLOCK = 32
    BLOCK_N = 64
    grid = [triton.cdiv(n, BLOCK)]
    _rows_scale_kernel[grid](x, out, n, cols, BLOCK=BLOCK, BLOCK_N=BLOCK_N)
'''

RETILED_AFTER = BEFORE.replace("    BLOCK = 32\n    BLOCK_N = 64\n", "    BLOCK = 8\n    BLOCK_N = 128\n").replace(
    "BLOCK_N=BLOCK_N)", "BLOCK_N=BLOCK_N, num_warps=8)")
"""Smaller row tiles, wider column tiles, more warps: the same rows covered in other pieces."""

SHAPE_CHOSEN_AFTER = BEFORE.replace("    BLOCK = 32\n", "    BLOCK = 32 if cols <= 64 else 16\n").replace(
    "BLOCK_N=BLOCK_N)", "BLOCK_N=BLOCK_N, num_warps=4 if cols <= 64 else 8)")
"""The row tile picked between two constants by the width of the input the kernel receives."""

# Unsound neighbours.
NEW_INPUT_AFTER = BEFORE.replace("    grid = [triton.cdiv(n, BLOCK)]\n", "    grid = [triton.cdiv(n * x.stride(0), BLOCK)]\n")
NEW_AXIS_AFTER = BEFORE.replace("    grid = [triton.cdiv(n, BLOCK)]\n", "    grid = [triton.cdiv(n, BLOCK), 2]\n")
UNTOLD_AFTER = BEFORE.replace("    grid = [triton.cdiv(n, BLOCK)]\n", "    grid = [triton.cdiv(n, 16)]\n")
"""The grid divides by a constant the kernel is not passed: its programs no longer match its tile."""
VALUE_CHOSEN_AFTER = BEFORE.replace("def rows_scale(x, out):", "def rows_scale(x, out, wide=False):").replace(
    "    BLOCK = 32\n", "    BLOCK = 32 if wide else 16\n")
"""The tile is picked by a value a caller passes, not by a shape."""
NON_CONSTANT_ARM_AFTER = BEFORE.replace("    BLOCK = 32\n", "    BLOCK = 32 if cols <= 64 else n\n")
"""One arm is an input itself: the grid now divides by a value read from the input, no tile constant."""
DTYPE_CHOSEN_AFTER = BEFORE.replace("    BLOCK = 32\n", "    BLOCK = 32 if x.dtype != torch.float32 else 16\n")
"""The tile is picked by the element type of the input a caller passes: stays with the launch rules."""
QUERY_CHOSEN_AFTER = BEFORE.replace("    BLOCK = 32\n", "    BLOCK = 32 if limit(cols) else 16\n")
"""The test calls a function the launcher does not define: what it reads is unknown."""


def _tree() -> dict[str, str]:
    port = (
        "import triton\nimport triton.language as tl\n\n\n"
        f"# portq: ports vllm:{HOST}::_rows_scale_kernel\n"
        "@triton.jit\n"
        "def _double_rows_kernel(src, dst, count, width, ROWS: tl.constexpr, COLS: tl.constexpr):\n"
        "    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)\n"
        "    for s in range(0, width, COLS):\n"
        "        o = r[:, None] * width + s + tl.arange(0, COLS)[None, :]\n"
        "        tl.store(dst + o, tl.load(src + o, mask=r[:, None] < count) * 2, mask=r[:, None] < count)\n\n\n"
        f"# portq: ports vllm:{HOST}::rows_scale\n"
        "def rows_scale(x, out):\n"
        "    n, cols = x.shape\n"
        "    BLOCK = 32\n"
        "    BLOCK_N = 64\n"
        "    grid = [triton.cdiv(n, BLOCK)]\n"
        "    _double_rows_kernel[grid](x, out, n, cols, ROWS=BLOCK, COLS=BLOCK_N)\n"
    )
    caller = ("from portq_kernels.mla_prefix.rows import rows_scale\n\n\n"
              "def prepare(x, out):\n    rows_scale(x, out)\n")
    return {"kernels/mla_prefix/rows.py": port, "kernels/mla_prefill/prepare.py": caller}


def _one_commit(tmp_path, after):
    return classify_commit(tmp_path, {HOST: BEFORE}, {HOST: after}, _tree(), message="tiles")


def _host(verdict):
    return next(s for s in verdict.symbols if s.symbol == "rows_scale")


def test_a_tile_the_grid_divides_by_and_the_kernel_receives_is_a_tile_choice(tmp_path):
    verdict = _one_commit(tmp_path, RETILED_AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    host = _host(verdict)
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "tile-choice" in host.rules, host.rules
    assert "BLOCK" in host.reason, host.reason


def test_a_grid_that_reads_a_new_input_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, NEW_INPUT_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "tile-choice" not in verdict.rules


def test_a_grid_that_gains_an_axis_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, NEW_AXIS_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "tile-choice" not in verdict.rules


def test_a_grid_divided_by_a_constant_the_kernel_is_not_passed_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, UNTOLD_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "tile-choice" not in verdict.rules


def test_a_tile_picked_between_constants_by_an_input_shape_is_a_tile_choice(tmp_path):
    verdict = _one_commit(tmp_path, SHAPE_CHOSEN_AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    host = _host(verdict)
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "tile-choice" in host.rules, host.rules


def test_a_tile_picked_by_a_value_a_caller_passes_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, VALUE_CHOSEN_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "tile-choice" not in _host(verdict).rules


def test_a_tile_with_an_arm_read_from_the_input_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, NON_CONSTANT_ARM_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "tile-choice" not in _host(verdict).rules


def test_a_tile_picked_by_a_call_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, QUERY_CHOSEN_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "tile-choice" not in _host(verdict).rules


def test_a_tile_picked_by_an_inputs_dtype_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, DTYPE_CHOSEN_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "tile-choice" not in _host(verdict).rules
