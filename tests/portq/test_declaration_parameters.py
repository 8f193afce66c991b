"""A changed C++ line at file scope that lies in a function declaration without a body (an explicit
instantiation `template __global__ void k<float>(const float* x, float* out, int n);`, or a prototype),
however many lines it spans and whether or not tree-sitter reads the file cleanly, stands for the
function it declares (``toplevel-use``): its parameter names are its own, so words they share with a
ported definition (`out`, `counts`, `n`) tie it to nothing. An instantiation of a ported kernel, or a
file-scope line a ported definition reads (a constant), stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit
from tests.portq.test_dead_code_and_parse_scope import INSTANTIATIONS, TILE, TILE_BEFORE, TILE_MATRIX, TILE_TREE

OTHER = '''
template <typename T>
__global__ void other_kernel(const T* x, T* out, int* counts, const int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { out[i] = x[i] * 2; counts[0] = i; }
}

template __global__ void other_kernel<float>(const float* x, float* out,
                                             int* counts, const int n);
template __global__ void other_kernel<half>(const half* x, half* out, int* counts, const int n);
'''
CLEAN = TILE_BEFORE + OTHER
ERROR_ROOT = CLEAN + INSTANTIATIONS


def _verdict(tmp_path, before, after):
    return classify_commit(tmp_path, {TILE: before}, {TILE: after}, TILE_TREE, matrix=TILE_MATRIX, message="edit")


def _without_float(text):
    return text.replace("template __global__ void other_kernel<float>(const float* x, float* out,\n"
                        "                                             int* counts, const int n);\n", "")


def test_a_removed_instantiation_of_an_unported_kernel_is_not_ported(tmp_path):
    verdict = _verdict(tmp_path, CLEAN, _without_float(CLEAN))
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-ported"), verdict.reason


def test_a_removed_instantiation_in_a_file_read_as_one_error_is_not_ported(tmp_path):
    verdict = _verdict(tmp_path, ERROR_ROOT, _without_float(ERROR_ROOT))
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-ported"), verdict.reason


def test_an_added_instantiation_of_the_ported_kernel_is_flagged(tmp_path):
    after = ERROR_ROOT.replace("template __global__ void other_kernel<half>",
                               "template __global__ void tile_kernel<half>(const float* x, float* out,\n"
                               "                                          int* counts, const int n);\n"
                               "template __global__ void other_kernel<half>")
    verdict = _verdict(tmp_path, ERROR_ROOT, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason


def test_a_changed_constant_a_ported_definition_reads_is_flagged(tmp_path):
    verdict = _verdict(tmp_path, ERROR_ROOT, ERROR_ROOT.replace("#define TILE_ROWS 4", "#define TILE_ROWS 8"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
