"""The port already has it, for a launch error check (``port-has-launch-check``): upstream's launcher
gains only a check of the last CUDA error after its launch (``CHECK(cudaGetLastError());``), and the
C++ port's launcher already checks its launch (``C10_CUDA_KERNEL_LAUNCH_CHECK();``, or any call given
``cudaGetLastError()``) after its own ``<<<...>>>`` launch: IN_SYNC, citing the port's check. A port
with no check, a check before any launch, or an upstream change that also alters anything else stays
flagged.

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
__global__ void RowNormKernel(T* out, const T* x, int dims, float eps)
{
    out[blockIdx.x] = x[blockIdx.x * dims] * eps;
}

template<class T>
void invokeRowNorm(T* out, const T* x, int dims, int num, float eps, cudaStream_t st)
{
    if (num > 0) {
        RowNormKernel<<<num, 1, 0, st>>>(out, x, dims, eps);
    }
}

}  // namespace norm
'''
LAUNCH = "        RowNormKernel<<<num, 1, 0, st>>>(out, x, dims, eps);\n"
CHECKED = KERNEL.replace(LAUNCH, LAUNCH + "        LIB_CHECK_CUDA(cudaGetLastError());\n")
CHECKED_AND_CHANGED = CHECKED.replace("<<<num, 1, 0, st>>>", "<<<num, 32, 0, st>>>")


def _port(check: str, before_launch: bool = False) -> dict[str, str]:
    launch = "    rms_norm_kernel<<<num, 1, 0, st>>>(y, x, dims, eps);\n"
    body = (check + launch) if before_launch else (launch + check)
    port = (
        f"// portq: ports vllm:{SOURCE}::norm::RowNormKernel\n"
        "template<class T>\n"
        "__global__ void rms_norm_kernel(T* y, const T* x, int dims, float eps)\n{\n"
        "    y[blockIdx.x] = x[blockIdx.x * dims] * eps;\n}\n\n"
        f"// portq: ports vllm:{SOURCE}::norm::invokeRowNorm\n"
        "template<class T>\n"
        "void rms_norm(T* y, const T* x, int dims, int num, float eps, cudaStream_t st)\n"
        "{\n    if (num == 0) {\n        return;\n    }\n" + body + "}\n\n"
        "void run_norm(float* y, const float* x, int dims, int num, cudaStream_t st)\n"
        "{\n    rms_norm(y, x, dims, num, 1e-6f, st);\n}\n"
    )
    return {"kernels/kv_cache/row_norm.cu": port}


def _launcher(tmp_path, after, port):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: KERNEL}),
                   CommitSpec("check launches", files={SOURCE: after})], port, matrix=MATRIX_WITH_NORM)
    return verdicts[1], next(s for s in verdicts[1].symbols if s.symbol.endswith("invokeRowNorm"))


def test_a_launch_check_the_port_already_makes_is_in_sync(tmp_path):
    entry, launcher = _launcher(tmp_path, CHECKED, _port("    C10_CUDA_KERNEL_LAUNCH_CHECK();\n"))
    assert launcher.verdict == IN_SYNC, launcher.reason
    assert "port-has-launch-check" in launcher.rules, launcher.rules
    assert entry.verdict == IN_SYNC, entry.reason
    assert any("C10_CUDA_KERNEL_LAUNCH_CHECK" in (e.quote or "") for e in launcher.evidence), launcher.evidence


def test_the_port_checking_the_last_error_itself_is_in_sync(tmp_path):
    _, launcher = _launcher(tmp_path, CHECKED, _port("    AT_CUDA_CHECK(cudaGetLastError());\n"))
    assert launcher.verdict == IN_SYNC, launcher.reason


def test_a_port_that_never_checks_is_still_flagged(tmp_path):
    _, launcher = _launcher(tmp_path, CHECKED, _port(""))
    assert launcher.verdict in FLAGGED, launcher.reason
    assert "port-has-launch-check" not in launcher.rules


def test_a_check_before_the_launch_is_no_check_of_it(tmp_path):
    _, launcher = _launcher(tmp_path, CHECKED, _port("    C10_CUDA_KERNEL_LAUNCH_CHECK();\n", before_launch=True))
    assert launcher.verdict in FLAGGED, launcher.reason


def test_a_check_beside_another_change_is_still_flagged(tmp_path):
    _, launcher = _launcher(tmp_path, CHECKED_AND_CHANGED, _port("    C10_CUDA_KERNEL_LAUNCH_CHECK();\n"))
    assert launcher.verdict in FLAGGED, launcher.reason
    assert "port-has-launch-check" not in launcher.rules
