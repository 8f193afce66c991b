"""Changed C++ lines outside any extracted definition that all lie in explicit specialisations
(``template <> void launch_bw<float>(...) { ... }``) of functions the tree declares not-carried
(``declared-specialisation``): a specialisation is the declared function's own body for one type, so its
change is outside what the port carries, NOT_APPLICABLE/not-carried, even where its lines name what a
ported kernel also uses. A specialisation of a function the tree does not declare, or any other changed
line, stays flagged (``toplevel-use``)."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row norm"
upstream = "vllm"
paths    = ["kernels/*.cu"]
tree     = ["csrc/"]
tests    = ["tests/"]
"""

SOURCE = '''\
const float EPSILON = 1e-6f;

template <typename T>
__global__ void norm_fw(T *out, const T *inp) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = inp[i] * rsqrtf((float)inp[i] + EPSILON);
}}

template <typename T>
__global__ void norm_bw(T *grad, const T *out_grad) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  grad[i] = out_grad[i];
}}

template <>
void launch_{which}<float>(float *grad, const float *out_grad, int rows, int width,
                       cudaStream_t stream) {{
  int threads = {threads};
  norm_bw<float><<<rows, threads, 0, stream>>>(grad, out_grad);
}}
'''


def _history(which: str):
    return [CommitSpec("base", files={"kernels/norm.cu": SOURCE.format(which=which, threads="width")}),
            CommitSpec("cap", files={"kernels/norm.cu": SOURCE.format(which=which,
                                                                       threads="min(width, blockDim.x + 1024)")})]


def _tree(declared: str) -> dict[str, str]:
    return {"csrc/norm.cu": "// portq: ports vllm:kernels/norm.cu::norm_fw\n"
                            "template <typename T>\n__global__ void norm_fw(T *y, const T *x) {\n"
                            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  y[i] = x[i];\n}\n"
                            "// portq: not-carried vllm:kernels/norm.cu::norm_bw -- forward only\n"
                            f"// portq: not-carried vllm:kernels/norm.cu::{declared} -- forward only\n",
            "csrc/ops.cu": "void run(float *y, const float *x, int n) { norm_fw<float><<<1, n>>>(y, x); }\n"}


def test_lines_in_a_specialisation_of_a_declared_function_are_not_carried(tmp_path):
    verdicts, _ = classify_history(tmp_path, _history("bw"), _tree("launch_bw"), matrix=MATRIX)
    entry = verdicts[1]
    assert entry.verdict == NOT_APPLICABLE, entry.reason
    assert entry.justification == "not-carried", entry.justification
    assert "declared-specialisation" in entry.rules, entry.rules


def test_a_specialisation_of_an_undeclared_function_stays_flagged(tmp_path):
    verdicts, _ = classify_history(tmp_path, _history("other"), _tree("launch_bw"), matrix=MATRIX)
    entry = verdicts[1]
    assert "declared-specialisation" not in entry.rules
    assert entry.verdict == NEEDS_REVIEW, entry.reason
