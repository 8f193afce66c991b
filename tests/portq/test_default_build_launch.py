"""A launch inside a preprocessor branch the default build does not compile (``default-build-launch``):
a launcher that gains, under ``#if USE_GPU_B`` (a macro no source of the file defines and no file of the
port's tree sets), a launch of a new kernel for a block size, the old launch kept under ``#else``, does
not launch that kernel in the build the port mirrors; the launch comparison leaves it out, so the other
body changes go to a reader (NEEDS_REVIEW) rather than REAL_GAP. A new kernel launched on a path every
build compiles, or under a macro the tree sets, stays REAL_GAP.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit
from tests.portq.test_declared_sibling import HEADER, MATRIX_WITH_NORM, SOURCE

BEFORE = '''\
#include "row_norm.h"

namespace norm {

template<int BLOCK>
__global__ void QuantKernel(const float* x, unsigned char* y, int n)
{
    y[blockIdx.x * BLOCK + threadIdx.x] = (unsigned char)(x[blockIdx.x * BLOCK + threadIdx.x] * 15.0f);
}

__global__ void QuantSmallKernel(const float* x, unsigned char* y, int n)
{
    y[blockIdx.x * 64 + threadIdx.x] = (unsigned char)(x[blockIdx.x * 64 + threadIdx.x] * 7.0f);
}

void quantRows(const float* x, unsigned char* y, int blocksize, int n)
{
    int num_blocks = (n + blocksize - 1) / blocksize;
    if (blocksize == 128)
        QuantKernel<128><<<num_blocks, 64>>>(x, y, n);
    else if (blocksize == 64)
        QuantKernel<64><<<num_blocks, 32>>>(x, y, n);
    CHECK_RETURN(peekError());
}

}  // namespace norm
'''
OTHER_BUILD = BEFORE.replace('''    else if (blocksize == 64)
        QuantKernel<64><<<num_blocks, 32>>>(x, y, n);
    CHECK_RETURN(peekError());''', '''    else if (blocksize == 64) {
#if USE_GPU_B
        QuantSmallKernel<<<(num_blocks + 1) / 2, 64>>>(x, y, n);
#else
        QuantKernel<64><<<num_blocks, 32>>>(x, y, n);
#endif
    }
    CHECK_STATUS(peekLastError());''')
EVERY_BUILD = BEFORE.replace('''        QuantKernel<64><<<num_blocks, 32>>>(x, y, n);
    CHECK_RETURN(peekError());''', '''        QuantKernel<64><<<num_blocks, 32>>>(x, y, n);
    else if (blocksize == 32)
        QuantSmallKernel<<<(num_blocks + 1) / 2, 32>>>(x, y, n);
    CHECK_STATUS(peekLastError());''')

PORT = {"kernels/quant.cu": (
    f"// portq: ports vllm:{SOURCE}::norm::QuantKernel\n"
    "template <int B>\n__global__ void quant_kernel(const float* x, unsigned char* y, int n)\n{\n"
    "    y[blockIdx.x * B + threadIdx.x] = (unsigned char)(x[blockIdx.x * B + threadIdx.x] * 15.0f);\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::quantRows\n"
    "void quant_rows(const float* x, unsigned char* y, int blocksize, int n)\n{\n"
    "    const int blocks = (n + blocksize - 1) / blocksize;\n"
    "    switch (blocksize) {\n"
    "    case 128: quant_kernel<128><<<blocks, 64>>>(x, y, n); break;\n"
    "    case 64: quant_kernel<64><<<blocks, 32>>>(x, y, n); break;\n"
    "    default: break;\n    }\n}\n\n"
    "void run_quant(const float* x, unsigned char* y, int n)\n{\n    quant_rows(x, y, 64, n);\n}\n")}


def _verdict(tmp_path, after, port=PORT):
    base = {HEADER: "#pragma once\n", SOURCE: BEFORE}
    return classify_commit(tmp_path, base, {SOURCE: after}, port, matrix=MATRIX_WITH_NORM)


def test_a_new_kernel_launched_only_in_the_other_build_is_no_gap(tmp_path):
    verdict = _verdict(tmp_path, OTHER_BUILD)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    symbol = next(s for s in verdict.symbols if s.symbol == "norm::quantRows")
    assert "default-build-launch" in symbol.rules, symbol.rules


def test_a_new_kernel_launched_on_a_path_every_build_compiles_stays_a_gap(tmp_path):
    verdict = _verdict(tmp_path, EVERY_BUILD)
    assert verdict.verdict == REAL_GAP, verdict.reason


def test_a_macro_the_tree_sets_keeps_the_launch(tmp_path):
    port = {**PORT, "setup.py": "macros = ['-DUSE_GPU_B']\n"}
    verdict = _verdict(tmp_path, OTHER_BUILD, port=port)
    assert verdict.verdict == REAL_GAP, verdict.reason
