"""A C/C++ definition whose whole change is calling a function by the new name this same commit gives it
(``template <typename T> T div_up(T a, T b)`` becoming ``round_div`` with the same tokens), and a ported
Python helper that upstream renames in its own file with the same body while the port already defines it
under the new name (``renamed-helper``): the call runs the same code, the port's helper is the renamed one,
so cosmetic. A helper whose body also changes, a definition that changes anything else, a use left under the
old name, two old names merged into one new one, an old name the commit keeps, or a port that still names the
helper by its old name stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

KERNEL = "csrc/tile.cu"
UTILS = "csrc/utils.cuh"
HOST_UTILS = "pkg/utils.py"
MATRIX = """\
[[row]]
id       = "TILE"
title    = "A tiled kernel and its host helpers"
upstream = "vllm"
paths    = ["csrc/tile.cu", "pkg/utils.py"]
tree     = ["tiles/", "engine/"]
tests    = ["tests/"]
"""

UTILS_BEFORE = '''#pragma once

template <typename T>
__device__ __host__ constexpr T div_up(T a, T b) {
    return (a + b - 1) / b;
}

template <typename T>
__device__ __host__ constexpr T twice(T a) {
    return a * 2;
}
'''
UTILS_AFTER = UTILS_BEFORE.replace("constexpr T div_up(T a, T b)", "constexpr T round_div(T a, T b)")

KERNEL_BEFORE = '''#include "utils.cuh"

template <int BLOCK>
__global__ void tile_kernel(const float* x, float* out, int n) {
    const int blocks = div_up(n, BLOCK);
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) {
        out[i] = x[i] * blocks;
    }
}
'''
KERNEL_AFTER = KERNEL_BEFORE.replace("div_up(n, BLOCK)", "round_div(n, BLOCK)")

HOST_BEFORE = '''def cdiv_up(x: int, y: int) -> int:
    """Ceiling division."""
    return (x + y - 1) // y


def aligned(x: int, a: int) -> int:
    return cdiv_up(x, a) * a
'''
HOST_AFTER = HOST_BEFORE.replace("cdiv_up", "div_ceil")

PORT_KERNEL = '''import triton
import triton.language as tl


# portq: ports vllm:csrc/tile.cu::tile_kernel
@triton.jit
def tile_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    blocks = tl.cdiv(n, BLOCK)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=live) * blocks, mask=live)
'''
PORT_UTILS = '''# portq: ports vllm:pkg/utils.py::cdiv_up
def div_ceil(x: int, y: int) -> int:
    return (x + y - 1) // y


# portq: ports vllm:pkg/utils.py::aligned
def aligned(x: int, a: int) -> int:
    return div_ceil(x, a) * a
'''
ENGINE = '''from tiles.kernel import tile_kernel
from tiles.utils import aligned


def run(x, out):
    tile_kernel[(aligned(x.numel(), 128) // 128,)](x, out, x.numel(), BLOCK=128)
'''


def _entry(tmp_path, utils_after=UTILS_AFTER, kernel_after=KERNEL_AFTER, host_after=HOST_AFTER,
           port_utils=PORT_UTILS, only=None):
    before = {UTILS: UTILS_BEFORE, KERNEL: KERNEL_BEFORE, HOST_UTILS: HOST_BEFORE}
    after = {UTILS: utils_after, KERNEL: kernel_after, HOST_UTILS: host_after}
    if only is not None:
        before = {p: t for p, t in before.items() if p in only}
        after = {p: t for p, t in after.items() if p in only}
    tree = {"tiles/kernel.py": PORT_KERNEL, "tiles/utils.py": port_utils, "engine/run.py": ENGINE}
    return classify_commit(tmp_path, before, after, tree, matrix=MATRIX, message="fix a typo in a helper's name")


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol.rsplit("::", 1)[-1] == name)


def test_a_cpp_call_of_a_helper_renamed_with_the_same_body_is_cosmetic(tmp_path):
    verdict = _entry(tmp_path, only={UTILS, KERNEL})
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    assert verdict.justification == "cosmetic", verdict.justification
    kernel = _symbol(verdict, "tile_kernel")
    assert "renamed-cpp-helper" in kernel.rules, kernel.rules
    assert "div_up → round_div" in kernel.reason, kernel.reason


def test_a_ported_helper_renamed_with_the_same_body_that_the_port_already_names_so_is_cosmetic(tmp_path):
    verdict = _entry(tmp_path, only={HOST_UTILS})
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    removed = _symbol(verdict, "cdiv_up")
    assert "renamed-ported-helper" in removed.rules, removed.rules
    assert removed.justification == "cosmetic", removed.reason


def test_both_halves_of_one_rename_are_cosmetic(tmp_path):
    verdict = _entry(tmp_path)
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason


# Unsound neighbours: each stays flagged.

def test_a_cpp_helper_whose_body_changes_is_still_flagged(tmp_path):
    changed = UTILS_AFTER.replace("return (a + b - 1) / b;", "return (a + b) / b;")
    verdict = _entry(tmp_path, utils_after=changed, only={UTILS, KERNEL})
    assert verdict.verdict in FLAGGED, verdict.reason


def test_another_change_beside_the_renamed_call_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, kernel_after=KERNEL_AFTER.replace("x[i] * blocks", "x[i] * blocks + 1"),
                     only={UTILS, KERNEL})
    assert verdict.verdict in FLAGGED, verdict.reason


def test_a_use_left_under_the_old_name_is_still_flagged(tmp_path):
    kernel = KERNEL_BEFORE.replace("const int blocks = div_up(n, BLOCK);",
                                   "const int blocks = round_div(n, BLOCK);\n    const int spare = div_up(n, 2);")
    verdict = _entry(tmp_path, kernel_after=kernel, only={UTILS, KERNEL})
    assert verdict.verdict in FLAGGED, verdict.reason


def test_two_helpers_merged_into_one_name_are_still_flagged(tmp_path):
    utils_before = UTILS_BEFORE.replace("constexpr T twice(T a) {\n    return a * 2;",
                                        "constexpr T div_up2(T a, T b) {\n    return (a + b - 1) / b;")
    utils_after = UTILS_AFTER.replace("constexpr T twice(T a) {\n    return a * 2;\n}\n", "")
    kernel_before = KERNEL_BEFORE.replace("out[i] = x[i] * blocks;", "out[i] = x[i] * blocks * div_up2(n, 4);")
    kernel_after = KERNEL_AFTER.replace("out[i] = x[i] * blocks;", "out[i] = x[i] * blocks * round_div(n, 4);")
    verdict = classify_commit(tmp_path, {UTILS: utils_before, KERNEL: kernel_before},
                              {UTILS: utils_after, KERNEL: kernel_after},
                              {"tiles/kernel.py": PORT_KERNEL, "tiles/utils.py": PORT_UTILS, "engine/run.py": ENGINE},
                              matrix=MATRIX, message="merge two helpers")
    assert verdict.verdict in FLAGGED, verdict.reason


def test_an_old_cpp_name_the_commit_keeps_is_still_flagged(tmp_path):
    kept = UTILS_AFTER + "\ntemplate <typename T>\n__device__ __host__ constexpr T div_up(T a, T b) {\n" \
        "    return a / b;\n}\n"
    verdict = _entry(tmp_path, utils_after=kept, only={UTILS, KERNEL})
    assert verdict.verdict in FLAGGED, verdict.reason


def test_a_renamed_ported_helper_whose_body_changes_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, host_after=HOST_AFTER.replace("(x + y - 1) // y", "(x + y) // y"), only={HOST_UTILS})
    assert verdict.verdict in FLAGGED, verdict.reason


def test_a_port_that_still_names_the_renamed_helper_by_its_old_name_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, port_utils=PORT_UTILS.replace("div_ceil", "cdiv_up"), only={HOST_UTILS})
    assert verdict.verdict in FLAGGED, verdict.reason
