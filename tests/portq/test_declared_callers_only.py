"""A C++ helper the commit adds that only definitions the tree declares not-carried use
(``declared-callers``): it belongs to the code the port states it does not carry, so
NOT_APPLICABLE/not-carried rather than a coverage hole (not-ported). A new helper that any other
definition uses stays not-ported."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
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

FW = '''\
__global__ void norm_fw(float *out, const float *inp) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = {fw};
}}
'''

BW = '''\
__global__ void norm_bw(float *grad, const float *out_grad, const float *gamma) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  grad[i] = {bw};
}}
'''

HELPER = '''\
__device__ float add_eps(float x) {
  return x + (x >= 0 ? 1e-6f : -1e-6f);
}

'''


def _history(fw_uses: bool):
    old = FW.format(fw="inp[i]") + "\n" + BW.format(bw="out_grad[i] / gamma[i]")
    new = HELPER + FW.format(fw="add_eps(inp[i])" if fw_uses else "inp[i]") + "\n" \
        + BW.format(bw="out_grad[i] / add_eps(gamma[i])")
    return [CommitSpec("base", files={"kernels/norm.cu": old}), CommitSpec("eps", files={"kernels/norm.cu": new})]


TREE = {"csrc/norm.cu": "// portq: ports vllm:kernels/norm.cu::norm_fw\n"
                        "__global__ void norm_fw(float *y, const float *x) {\n"
                        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  y[i] = x[i];\n}\n"
                        "// portq: not-carried vllm:kernels/norm.cu::norm_bw -- forward only\n",
        "csrc/ops.cu": "void run(float *y, const float *x, int n) { norm_fw<<<1, n>>>(y, x); }\n"}


def _helper(verdict):
    return next(s for s in verdict.symbols if s.symbol == "add_eps")


def test_a_new_helper_only_declared_code_uses_is_not_carried(tmp_path):
    verdicts, _ = classify_history(tmp_path, _history(fw_uses=False), TREE, matrix=MATRIX)
    helper = _helper(verdicts[1])
    assert helper.verdict == NOT_APPLICABLE and helper.justification == "not-carried", helper.reason
    assert "declared-callers" in helper.rules, helper.rules
    assert verdicts[1].justification == "not-carried", verdicts[1].reason


def test_a_new_helper_a_ported_definition_uses_stays_not_ported(tmp_path):
    verdicts, _ = classify_history(tmp_path, _history(fw_uses=True), TREE, matrix=MATRIX)
    helper = _helper(verdicts[1])
    assert "declared-callers" not in helper.rules
    assert helper.justification == "not-ported", helper.reason
