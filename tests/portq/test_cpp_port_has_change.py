"""The port already has it, in C++ call statements (``port-has-change``): upstream changes only the
arguments of method calls on locals (``acc.fill(0)`` → ``acc.fill(0.f)``), and the C++ port makes the
same calls, on its own locals renamed one to one, with the new arguments and never the old: IN_SYNC,
citing the port's statements. A port still on the old arguments, a change to anything else in the
body, or receivers that do not rename one to one stay flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, IN_SYNC
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

KERNEL = '''\
#include "row_norm.h"

namespace norm {

template<class T>
__global__ void RowNormKernel(T* out, const T* x, const T* weights, int dims, float eps)
{
    Vec<T> acc;
    Vec<T> wv;
    acc.fill(0);
    for (int i = 0; i < dims; i++) {
        acc.fill(0);
        wv.fill(0);
        acc.load(x + i);
    }
    out[blockIdx.x] = acc.sum() * eps;
}

template<class T>
void invokeRowNorm(T* out, const T* x, const T* weights, int dims, int num, float eps, cudaStream_t st)
{
    RowNormKernel<<<num, dims, 0, st>>>(out, x, weights, dims, eps);
}

}  // namespace norm
'''
AFTER = KERNEL.replace(".fill(0);", ".fill(0.f);")


def _port(fill: str, weight: str = "w") -> dict[str, str]:
    port = (
        f"// portq: ports vllm:{SOURCE}::norm::RowNormKernel\n"
        "template<class T>\n"
        "__global__ void rms_norm_kernel(T* y, const T* x, const T* w, int dims, float eps)\n{\n"
        f"    Vec<T> r;\n    Vec<T> {weight};\n    r.fill({fill});\n"
        f"    for (int i = 0; i < dims; i++) {{\n        r.fill({fill});\n        {weight}.fill({fill});\n"
        "        r.load(x + i);\n    }\n    y[blockIdx.x] = r.sum() * eps;\n}\n\n"
        f"// portq: ports vllm:{SOURCE}::norm::invokeRowNorm\n"
        "template<class T>\n"
        "void rms_norm(T* y, const T* x, const T* w, int dims, int num, float eps, cudaStream_t st)\n"
        "{\n    rms_norm_kernel<<<num, dims, 0, st>>>(y, x, w, dims, eps);\n}\n\n"
        "void run_norm(float* y, const float* x, const float* w, int dims, int num, cudaStream_t st)\n"
        "{\n    rms_norm(y, x, w, dims, num, 1e-6f, st);\n}\n"
    )
    return {"kernels/kv_cache/row_norm.cu": port}


def _kernel(tmp_path, after, port):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: KERNEL}),
                   CommitSpec("float zeros", files={SOURCE: after})], port, matrix=MATRIX_WITH_NORM)
    return next(s for s in verdicts[1].symbols if s.symbol.endswith("RowNormKernel"))


def test_call_arguments_the_port_already_passes_are_in_sync(tmp_path):
    kernel = _kernel(tmp_path, AFTER, _port("0.f"))
    assert kernel.verdict == IN_SYNC, kernel.reason
    assert "port-has-change" in kernel.rules, kernel.rules


def test_a_port_on_the_old_arguments_is_still_flagged(tmp_path):
    kernel = _kernel(tmp_path, AFTER, _port("0"))
    assert kernel.verdict in FLAGGED, kernel.reason


def test_another_change_beside_the_calls_is_still_flagged(tmp_path):
    kernel = _kernel(tmp_path, AFTER.replace("acc.sum() * eps", "acc.sum() / eps"), _port("0.f"))
    assert kernel.verdict in FLAGGED, kernel.reason


def test_receivers_that_do_not_rename_one_to_one_are_still_flagged(tmp_path):
    kernel = _kernel(tmp_path, AFTER, _port("0.f", weight="r"))  # the port fills one local twice
    assert kernel.verdict not in (IN_SYNC,) or "port-has-change" not in kernel.rules, kernel.reason


# Statements upstream adds that the port's definition already holds: a clamp of each loaded value re-added
# upstream, which the port never dropped (under its own local names), is the port's already.
CLAMP = '''\
#include "row_norm.h"

namespace norm {

template<class T>
__global__ void RowNormKernel(T* out, const T* x, const T* weights, int dims, float eps)
{
    float sum = 0.0f;
    for (int i = 0; i < dims; i++) {
        float f0 = load_half(x, i);
        sum = fma(f0, f0, sum);
    }
    out[blockIdx.x] = sum * eps;
}

template<class T>
void invokeRowNorm(T* out, const T* x, const T* weights, int dims, int num, float eps, cudaStream_t st)
{
    RowNormKernel<<<num, dims, 0, st>>>(out, x, weights, dims, eps);
}

}  // namespace norm
'''
CLAMPED = CLAMP.replace("        float f0 = load_half(x, i);\n",
                        "        float f0 = load_half(x, i);\n        f0 = fmaxf(-65504.0f, fminf(f0, 65504.0f));\n")


def _clamp_port(body: str) -> dict[str, str]:
    port = (
        f"// portq: ports vllm:{SOURCE}::norm::RowNormKernel\n"
        "template<class T>\n"
        "__global__ void rms_norm_kernel(T* y, const T* x, const T* w, int dims, float eps)\n{\n"
        "    float acc = 0.0f;\n    for (int i = 0; i < dims; i++) {\n"
        f"{body}"
        "        acc = fma(v, v, acc);\n    }\n    y[blockIdx.x] = acc * eps;\n}\n\n"
        f"// portq: ports vllm:{SOURCE}::norm::invokeRowNorm\n"
        "template<class T>\n"
        "void rms_norm(T* y, const T* x, const T* w, int dims, int num, float eps, cudaStream_t st)\n"
        "{\n    rms_norm_kernel<<<num, dims, 0, st>>>(y, x, w, dims, eps);\n}\n\n"
        "void run_norm(float* y, const float* x, const float* w, int dims, int num, cudaStream_t st)\n"
        "{\n    rms_norm(y, x, w, dims, num, 1e-6f, st);\n}\n"
    )
    return {"kernels/kv_cache/row_norm.cu": port}


HAS_CLAMP = "        float v = load_half(x, i);\n        v = fmaxf(-65504.0f, fminf(v, 65504.0f));\n"


def _clamp_kernel(tmp_path, before, after, port):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: before}),
                   CommitSpec("clamp", files={SOURCE: after})], port, matrix=MATRIX_WITH_NORM)
    return next(s for s in verdicts[1].symbols if s.symbol.endswith("RowNormKernel"))


def test_an_added_statement_the_port_already_has_is_in_sync(tmp_path):
    kernel = _clamp_kernel(tmp_path, CLAMP, CLAMPED, _clamp_port(HAS_CLAMP))
    assert kernel.verdict == IN_SYNC, kernel.reason
    assert "port-has-change" in kernel.rules, kernel.rules
    assert "fmaxf" in kernel.reason or any("fmaxf" in (e.quote or "") for e in kernel.evidence), kernel.reason


def test_an_added_statement_the_port_lacks_or_spells_with_other_literals_is_flagged(tmp_path):
    lacks = "        float v = load_half(x, i);\n"
    assert _clamp_kernel(tmp_path / "lacks", CLAMP, CLAMPED, _clamp_port(lacks)).verdict in FLAGGED
    other = HAS_CLAMP.replace("65504.0f", "448.0f")
    assert _clamp_kernel(tmp_path / "other", CLAMP, CLAMPED, _clamp_port(other)).verdict in FLAGGED


def test_a_commit_that_also_removes_a_line_the_port_has_is_flagged(tmp_path):
    removes = CLAMPED.replace("        sum = fma(f0, f0, sum);\n", "        sum = sum + f0 * f0;\n")
    kernel = _clamp_kernel(tmp_path, CLAMP, removes, _clamp_port(HAS_CLAMP))
    assert kernel.verdict in FLAGGED, kernel.reason


def test_a_trivial_added_statement_is_not_taken_as_present(tmp_path):
    # `acc = v;` holds no literal: a port having some such copy says nothing about upstream's.
    trivial = CLAMP.replace("        float f0 = load_half(x, i);\n", "        float f0 = load_half(x, i);\n        sum = f0;\n")
    kernel = _clamp_kernel(tmp_path, CLAMP, trivial, _clamp_port("        float v = load_half(x, i);\n        acc = v;\n"))
    assert kernel.verdict in FLAGGED, kernel.reason
