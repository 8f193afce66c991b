"""A definition whose signature change the port already has is IN_SYNC only when nothing else of it changed
in the same commit: a C++ kernel that gains a parameter the port already takes in its new
form, while the same commit also changes the body's arithmetic on a path the port carries, is flagged; the
signature item being in sync decides the signature, never the body beside it. That is a known gap today:
the cases that need it are pinned as strict expected failures, beside the cases that must stay IN_SYNC.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, IN_SYNC
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

KERNEL = '''\\
#include "row_norm.h"

namespace norm {

template<class T>
__global__ void RowNormKernel(T* out, const T* x, const T* weights, int dims, float eps)
{
    float acc = 0.0f;
    for (int i = 0; i < dims; i++) {
        acc += x[i] * x[i];
    }
    out[blockIdx.x] = acc * eps;
}

template<class T>
void invokeRowNorm(T* out, const T* x, const T* weights, int dims, int num, float eps, cudaStream_t st)
{
    RowNormKernel<<<num, dims, 0, st>>>(out, x, weights, dims, eps);
}

}  // namespace norm
'''
# the signature change alone: the kernel gains `float scale`, which it multiplies its store by
SIGNED = KERNEL.replace("int dims, float eps)\n{\n    float", "int dims, float eps, float scale)\n{\n    float") \
    .replace("acc * eps;", "acc * eps * scale;") \
    .replace("int num, float eps, cudaStream_t st)", "int num, float eps, float scale, cudaStream_t st)") \
    .replace("(out, x, weights, dims, eps);", "(out, x, weights, dims, eps, scale);")
# and beside it, in the same commit, the body's arithmetic on the path the port carries
SIGNED_AND_BODY = SIGNED.replace("acc += x[i] * x[i];", "acc += x[i] * x[i] / dims;")
HEADER_AFTER = BEFORE_HEADER.replace("int num, float eps, cudaStream_t st)", "int num, float eps, float scale, cudaStream_t st)")


def _port(summed: str = "x[i] * x[i]") -> dict[str, str]:
    port = (
        f"// portq: ports vllm:{SOURCE}::norm::RowNormKernel\n"
        "template<class T>\n"
        "__global__ void rms_norm_kernel(T* y, const T* x, const T* w, int dims, float eps, float scale)\n{\n"
        f"    float acc = 0.0f;\n    for (int i = 0; i < dims; i++) {{\n        acc += {summed};\n    }}\n"
        "    y[blockIdx.x] = acc * eps * scale;\n}\n\n"
        f"// portq: ports vllm:{SOURCE}::norm::invokeRowNorm\n"
        "template<class T>\n"
        "void rms_norm(T* y, const T* x, const T* w, int dims, int num, float eps, float scale, cudaStream_t st)\n"
        "{\n    rms_norm_kernel<<<num, dims, 0, st>>>(y, x, w, dims, eps, scale);\n}\n\n"
        "void run_norm(float* y, const float* x, const float* w, int dims, int num, cudaStream_t st)\n"
        "{\n    rms_norm(y, x, w, dims, num, 1e-6f, 1.0f, st);\n}\n"
    )
    return {"kernels/kv_cache/row_norm.cu": port}


def _kernel(tmp_path, after, port):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: KERNEL}),
                   CommitSpec("change", files={HEADER: HEADER_AFTER, SOURCE: after})], port, matrix=MATRIX_WITH_NORM)
    return next(s for s in verdicts[1].symbols if s.symbol.endswith("RowNormKernel"))


def test_a_parameter_the_port_already_takes_alone_is_in_sync(tmp_path):
    kernel = _kernel(tmp_path, SIGNED, _port())
    assert kernel.verdict == IN_SYNC, (kernel.verdict, kernel.rules, kernel.reason)


def test_a_parameter_the_port_already_takes_beside_a_changed_sum_is_flagged(tmp_path):
    kernel = _kernel(tmp_path, SIGNED_AND_BODY, _port())
    assert kernel.verdict in FLAGGED, (kernel.verdict, kernel.rules, kernel.reason)
    assert "synced-beside" in kernel.rules, kernel.rules


# The same in Python: a Triton kernel gains `scale`, which the port already takes and multiplies by.
PY_HOST = "aiter/ops/triton/gather_kv_b_proj.py"
PY_KERNEL = '''\\
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, v * 2, mask=offs < n)


def scale(x, out):
    n = x.numel()
    _scale_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
'''
PY_SIGNED = PY_KERNEL.replace("out_ptr, n, BLOCK", "out_ptr, n, scale, BLOCK").replace("v * 2,", "v * 2 * scale,") \
    .replace("def scale(x, out):", "def scale(x, out, s):").replace("(x, out, n, BLOCK=256)", "(x, out, n, s, BLOCK=256)")
PY_SIGNED_AND_BODY = PY_SIGNED.replace("mask=offs < n)\n    tl.store", "mask=offs < n) + 1.0\n    tl.store")


def _py_kernel(tmp_path, after):
    port = PY_SIGNED.replace("@triton.jit\n", f"# portq: ports vllm:{PY_HOST}::_scale_kernel\n@triton.jit\n") \
        .replace("def scale(x, out, s):", f"# portq: ports vllm:{PY_HOST}::scale\ndef scale(x, out, s):")
    caller = "from portq_kernels.mla_prefix.rows import scale\n\n\ndef prepare(x, out):\n    scale(x, out, 0.5)\n"
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={PY_HOST: PY_KERNEL}), CommitSpec("change", files={PY_HOST: after})],
        {"kernels/mla_prefix/rows.py": port, "kernels/mla_prefill/prepare.py": caller})
    return next(s for s in verdicts[1].symbols if s.symbol == "_scale_kernel")


def test_a_triton_parameter_the_port_already_takes_alone_is_in_sync(tmp_path):
    kernel = _py_kernel(tmp_path, PY_SIGNED)
    assert kernel.verdict == IN_SYNC, (kernel.verdict, kernel.rules, kernel.reason)


def test_a_triton_parameter_the_port_already_takes_beside_a_changed_load_is_flagged(tmp_path):
    kernel = _py_kernel(tmp_path, PY_SIGNED_AND_BODY)
    assert kernel.verdict in FLAGGED, (kernel.verdict, kernel.rules, kernel.reason)
    assert "synced-beside" in kernel.rules, kernel.rules


# A parameter the port never took removed with the branch it guarded, the guarded statement kept: the removed
# `if` and its closing brace are the removal's. Moving the loop's closing brace past the statement beside it
# changes what the loop runs.
GUARDED = KERNEL.replace("int dims, float eps)\n{\n    float", "int dims, float eps, bool use_eps)\n{\n    float") \
    .replace("    out[blockIdx.x] = acc * eps;\n", "    if (use_eps) {\n        out[blockIdx.x] = acc * eps;\n    }\n")
UNGUARDED = KERNEL
LOOPED = KERNEL.replace("        acc += x[i] * x[i];\n    }\n    out[blockIdx.x] = acc * eps;\n",
                       "        acc += x[i] * x[i];\n        out[blockIdx.x] = acc * eps;\n    }\n")


def _guarded_kernel(tmp_path, after):
    port = {path: text.replace(", float scale)", ")").replace(" * scale;", ";").replace(", float scale,", ",")
            .replace(", eps, scale)", ", eps)").replace("1e-6f, 1.0f, st)", "1e-6f, st)") for path, text in _port().items()}
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: GUARDED}),
                   CommitSpec("change", files={SOURCE: after})], port, matrix=MATRIX_WITH_NORM)
    return next(s for s in verdicts[1].symbols if s.symbol.endswith("RowNormKernel"))


def test_a_guard_removed_with_the_parameter_it_read_is_in_sync(tmp_path):
    kernel = _guarded_kernel(tmp_path, UNGUARDED)
    assert kernel.verdict == IN_SYNC, (kernel.verdict, kernel.rules, kernel.reason)


def test_a_loop_brace_moved_beside_the_removed_guard_is_flagged(tmp_path):
    kernel = _guarded_kernel(tmp_path, LOOPED)
    assert kernel.verdict in FLAGGED, (kernel.verdict, kernel.rules, kernel.reason)
    assert "synced-beside" in kernel.rules, kernel.rules
