"""A C++ definition whose only change adds (or drops) ``__restrict__`` on its pointer parameters promises the
compiler that they do not alias: a code-generation hint, the same parameters, the same body, the same results
for every caller that honours it. Like the other qualifiers a signature drops, it is form without meaning for a
port: NOT_APPLICABLE/cosmetic (rule ``aliasing-hint``). Another change beside it keeps the definition changed."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

MATRIX = """\
[[row]]
id       = "REMAP"
title    = "Column remap"
upstream = "vllm"
paths    = ["src/*.cu"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

OLD = """\
__global__ void remap_kernel
(
    const float* src,
    float* dst,
    const int width,
    const int* order
)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= width) return;
    dst[i] = src[order[i]];
}
"""

NEW = OLD.replace("    const float* src,\n", "    const float* __restrict__ src,\n") \
    .replace("    float* dst,\n", "    float* __restrict__ dst,\n")

TREE = {
    "kernels/remap.py": """\
import torch


# portq: ports vllm:src/remap.cu::remap_kernel
def remap(src, order):
    return src[order]
""",
    "engine/run.py": "from kernels.remap import remap\n\n\ndef step(x, o):\n    return remap(x, o)\n",
}


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_restrict_added_to_pointer_parameters_is_cosmetic(tmp_path):
    verdict = classify_commit(tmp_path, {"src/remap.cu": OLD}, {"src/remap.cu": NEW}, TREE, MATRIX)
    kernel = _symbol(verdict, "remap_kernel")
    assert kernel.verdict == NOT_APPLICABLE and kernel.justification == "cosmetic", (kernel.verdict, kernel.reason)
    assert "aliasing-hint" in kernel.rules, kernel.rules


def test_restrict_beside_a_body_change_is_still_a_change(tmp_path):
    changed = NEW.replace("dst[i] = src[order[i]];", "dst[i] = src[order[i]] * 2.0f;")
    verdict = classify_commit(tmp_path, {"src/remap.cu": OLD}, {"src/remap.cu": changed}, TREE, MATRIX)
    kernel = _symbol(verdict, "remap_kernel")
    assert kernel.verdict in FLAGGED and "aliasing-hint" not in kernel.rules, (kernel.verdict, kernel.rules)
