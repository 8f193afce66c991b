"""A header that gains the declaration of a sibling the port does not have (``declared-sibling``): the
changed lines outside definitions are a function prototype (and an ``#include``) whose name no in-tree
anchor ports and no ported definition calls. A prototype's parameter names are scoped to it, so the
words it shares with a ported definition (``dims``, ``eps``) are no use of anything the port reads:
NOT_APPLICABLE/not-ported, like the new definition it declares. A prototype of a ported function, or one
a ported definition calls, or a changed line that is not a prototype, stays flagged."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.golden.pipeline import MATRIX, classify_commit

HEADER = "csrc/norm/row_norm.h"
SOURCE = "csrc/norm/row_norm.cu"
MATRIX_WITH_NORM = MATRIX.replace('paths    = ["csrc/cache_kernels.cu",',
                                  'paths    = ["csrc/norm/row_norm.h", "csrc/norm/row_norm.cu", "csrc/cache_kernels.cu",')
BEFORE_HEADER = '''\
#pragma once

#include <cuda_runtime.h>

namespace norm {

template<class T>
void invokeRowNorm(T* out, const T* x, const T* weights, int dims, int num, float eps, cudaStream_t st);

inline int normBlocks(int dims, int num)
{
    return num * ((dims + 255) / 256);
}

}  // namespace norm
'''
SIBLING = '''
void invokeResidualRowNorm(void*        hidden_states,
                           void*        residual,
                           const void*  weights,
                           int          dims,
                           int          num,
                           float        eps,
                           cudaStream_t st);
'''
AFTER_HEADER = BEFORE_HEADER.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n\n#include \"dtype.h\"\n") \
    .replace("\n}  // namespace norm", SIBLING + "\n}  // namespace norm")
BEFORE_SOURCE = '''\
#include "row_norm.h"

namespace norm {

template<class T>
__global__ void RowNormKernel(T* out, const T* x, const T* weights, int dims, float eps)
{
    out[blockIdx.x * dims + threadIdx.x] = x[blockIdx.x * dims + threadIdx.x] * weights[threadIdx.x] * eps;
}

template<class T>
void invokeRowNorm(T* out, const T* x, const T* weights, int dims, int num, float eps, cudaStream_t st)
{
    RowNormKernel<<<num, dims, 0, st>>>(out, x, weights, dims, eps);
}

template void invokeRowNorm(float* out, const float* x, const float* weights, int dims, int num, float eps,
                            cudaStream_t st);

}  // namespace norm
'''
# Unsound neighbours: a prototype of a name the port mirrors; a changed line that is no prototype.
PORTED_AFTER = BEFORE_HEADER.replace("\n}  // namespace norm", "\nint normBlocks(int dims);\n\n}  // namespace norm")
CONSTANT_AFTER = BEFORE_HEADER.replace("namespace norm {\n", "namespace norm {\n\nconstexpr int dims = 128;\n")


def _tree() -> dict[str, str]:
    port = (
        "#include <cuda_runtime.h>\n\n"
        f"// portq: ports vllm:{SOURCE}::norm::RowNormKernel\n"
        "template<class T>\n"
        "__global__ void rms_norm_kernel(T* y, const T* x, const T* w, int dims, float eps)\n"
        "{\n    y[blockIdx.x * dims + threadIdx.x] = x[blockIdx.x * dims + threadIdx.x] * w[threadIdx.x] * eps;\n}\n\n"
        f"// portq: ports vllm:{SOURCE}::norm::invokeRowNorm\n"
        "template<class T>\n"
        "void rms_norm(T* y, const T* x, const T* w, int dims, int num, float eps, cudaStream_t st)\n"
        "{\n    rms_norm_kernel<<<num, dims, 0, st>>>(y, x, w, dims, eps);\n}\n\n"
        f"// portq: ports vllm:{HEADER}::norm::normBlocks\n"
        "inline int norm_blocks(int dims, int num)\n{\n    return num * ((dims + 255) / 256);\n}\n\n"
        "void run_norm(float* y, const float* x, const float* w, int dims, int num, cudaStream_t st)\n"
        "{\n    rms_norm(y, x, w, dims, norm_blocks(dims, num), 1e-6f, st);\n}\n"
    )
    return {"kernels/kv_cache/row_norm.cu": port}


def _one_commit(tmp_path, header):
    return classify_commit(tmp_path, {HEADER: BEFORE_HEADER, SOURCE: BEFORE_SOURCE}, {HEADER: header}, _tree(),
                           matrix=MATRIX_WITH_NORM, message="sibling")


def test_a_header_gaining_the_prototype_of_an_unported_sibling_is_not_ported(tmp_path):
    verdict = _one_commit(tmp_path, AFTER_HEADER)
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    toplevel = next(s for s in verdict.symbols if s.symbol == "<toplevel>")
    assert toplevel.justification == "not-ported", toplevel.reason
    assert "declared-sibling" in toplevel.rules, toplevel.rules
    assert "invokeResidualRowNorm" in toplevel.reason, toplevel.reason


def test_a_prototype_of_a_name_the_port_mirrors_is_still_flagged(tmp_path):
    verdict = _one_commit(tmp_path, PORTED_AFTER)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "declared-sibling" not in verdict.rules


def test_a_changed_line_that_is_no_prototype_is_still_flagged(tmp_path):
    verdict = _one_commit(tmp_path, CONSTANT_AFTER)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "declared-sibling" not in verdict.rules
