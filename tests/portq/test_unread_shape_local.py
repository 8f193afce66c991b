"""``unread-local`` and shape reads: a local initialised by reading a tensor's
(or tensor accessor's) extent, ``auto rows = t.size(1);``, and read by nothing
else, is a value computed and dropped. ``size``/``stride`` with a literal
dimension read a shape and change nothing, so removing such a local is
cosmetic; any other member call (or a ``size`` with a computed argument) may
change its object and stays compared.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

CACHE = "csrc/cache/dequant.cu"

CACHE_BEFORE = '''#include <cuda_runtime.h>

__global__ void dequant_kernel(Accessor cache, Accessor out, const float scale) {
    auto heads = cache.size(2);
    auto rows = cache.size(1);
    auto width = out.size(3);
    for (auto h = threadIdx.x; h < heads * width; h += blockDim.x) {
        out[0][0][h / width][h % width] = cache[0][0][h / width][h % width] * scale;
    }
}
'''

CACHE_TREE = {"kernels/cache/dequant.cu": '''#include <cuda_runtime.h>

// portq: ports vllm:csrc/cache/dequant.cu::dequant_kernel
__global__ void dequant_kernel(Accessor cache, Accessor out, const float scale) {
    auto heads = cache.size(2);
    auto rows = cache.size(1);
    auto width = out.size(3);
    for (auto h = threadIdx.x; h < heads * width; h += blockDim.x) {
        out[0][0][h / width][h % width] = cache[0][0][h / width][h % width] * scale;
    }
}
''', "kernels/cache/ops.cu": '''#include "dequant.cu"

void engine_dequant(Accessor c, Accessor o, float s) { dequant_kernel<<<1, 128>>>(c, o, s); }
'''}


def _edit(tmp_path, before, after):
    return classify_commit(tmp_path, {CACHE: before}, {CACHE: after}, CACHE_TREE, message="edit")


def test_an_unread_extent_local_removed_is_cosmetic(tmp_path):
    verdict = _edit(tmp_path, CACHE_BEFORE, CACHE_BEFORE.replace("    auto rows = cache.size(1);\n", ""))
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "unread-local" in verdict.rules and "rows" in verdict.reason, verdict.rules


def test_an_unread_stride_local_removed_is_cosmetic(tmp_path):
    before = CACHE_BEFORE.replace("    auto rows = cache.size(1);\n", "    auto pitch = cache.stride(0);\n")
    verdict = _edit(tmp_path, before, CACHE_BEFORE.replace("    auto rows = cache.size(1);\n", ""))
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert "unread-local" in verdict.rules, verdict.rules


def test_an_unread_local_from_another_member_call_needs_review(tmp_path):
    before = CACHE_BEFORE.replace("cache.size(1)", "cache.advance(1)")
    verdict = _edit(tmp_path, before, before.replace("    auto rows = cache.advance(1);\n", ""))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "unread-local" not in verdict.rules, verdict.rules


def test_an_unread_extent_local_with_a_computed_dimension_needs_review(tmp_path):
    before = CACHE_BEFORE.replace("cache.size(1)", "cache.size(next(scale))")
    verdict = _edit(tmp_path, before, before.replace("    auto rows = cache.size(next(scale));\n", ""))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "unread-local" not in verdict.rules, verdict.rules


def test_a_removed_extent_local_that_is_still_read_needs_review(tmp_path):
    after = CACHE_BEFORE.replace("    auto width = out.size(3);\n", "").replace("h < heads * width", "h < heads * out.size(3)")
    verdict = _edit(tmp_path, CACHE_BEFORE, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "unread-local" not in verdict.rules, verdict.rules
