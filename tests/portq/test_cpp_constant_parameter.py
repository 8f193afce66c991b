"""A C++ kernel that gains a parameter its ported launcher fills with a literal (``constant-derived-parameter``
on C++ launches): ``float bias = 0.f;`` in the launcher, passed through a ``<<<...>>>`` launch or a
``void* args[]`` array, is a value the launching wrapper fixes, not an input the port's callers must supply.
The kernel and its launcher change together as one body-level change for a reader (NEEDS_REVIEW), never
REAL_GAP. A launcher that passes one of its own parameters, or a local it assigns again, stays REAL_GAP.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit
from tests.portq.test_declared_sibling import BEFORE_SOURCE, HEADER, BEFORE_HEADER, MATRIX_WITH_NORM, SOURCE, _tree

KERNEL_BEFORE = "__global__ void RowNormKernel(T* out, const T* x, const T* weights, int dims, float eps)\n"
KERNEL_AFTER = "__global__ void RowNormKernel(T* out, const T* x, const T* weights, int dims, float bias, float eps)\n"
LAUNCH_BEFORE = "    RowNormKernel<<<num, dims, 0, st>>>(out, x, weights, dims, eps);\n"
SHIFTED = BEFORE_SOURCE.replace(KERNEL_BEFORE, KERNEL_AFTER).replace(
    "* weights[threadIdx.x] * eps;", "* (bias + weights[threadIdx.x]) * eps;")
# An unported sibling launcher fixes another value: which launchers the port carries is what counts.
SIBLING = '''
template<class T>
void invokeShiftedRowNorm(T* out, const T* x, const T* weights, int dims, int num, float eps, cudaStream_t st)
{
    float bias = 1.f;
    RowNormKernel<<<num, dims, 0, st>>>(out, x, weights, dims, bias, eps);
}
'''


def _after(launch: str) -> str:
    assert LAUNCH_BEFORE in SHIFTED
    return SHIFTED.replace(LAUNCH_BEFORE, launch).replace("\ntemplate void invokeRowNorm", SIBLING + "\ntemplate void invokeRowNorm")


def _kernel_verdict(tmp_path, source, before=BEFORE_SOURCE):
    return classify_commit(tmp_path, {HEADER: BEFORE_HEADER, SOURCE: before}, {SOURCE: source}, _tree(),
                           matrix=MATRIX_WITH_NORM, message="a bias")


def test_a_literal_local_passed_by_the_ported_launcher_is_derived(tmp_path):
    verdict = _kernel_verdict(tmp_path, _after(
        "    float bias = 0.f;\n    RowNormKernel<<<num, dims, 0, st>>>(out, x, weights, dims, bias, eps);\n"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "constant-derived-parameter" in verdict.rules, (verdict.rules, verdict.reason)


def test_a_literal_local_passed_through_an_argument_array_is_derived(tmp_path):
    array_before = BEFORE_SOURCE.replace(LAUNCH_BEFORE, "    void* args[] = {&out, &x, &weights, &dims, &eps};\n"
                                         "    cudaLaunchKernel((void*)RowNormKernel<T>, num, dims, args, 0, st);\n")
    verdict = _kernel_verdict(tmp_path, _after(
        "    float bias = 0.f;\n    void* args[] = {&out, &x, &weights, &dims, &bias, &eps};\n"
        "    cudaLaunchKernel((void*)RowNormKernel<T>, num, dims, args, 0, st);\n"), array_before)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "constant-derived-parameter" in verdict.rules, (verdict.rules, verdict.reason)


def test_a_launcher_passing_its_own_parameter_is_still_a_gap(tmp_path):
    source = _after("    RowNormKernel<<<num, dims, 0, st>>>(out, x, weights, dims, eps, eps);\n")
    verdict = _kernel_verdict(tmp_path, source)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "constant-derived-parameter" not in verdict.rules


def test_a_local_assigned_again_is_still_a_gap(tmp_path):
    verdict = _kernel_verdict(tmp_path, _after(
        "    float bias = 0.f;\n    if (dims > 4) bias = eps;\n"
        "    RowNormKernel<<<num, dims, 0, st>>>(out, x, weights, dims, bias, eps);\n"))
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "constant-derived-parameter" not in verdict.rules
