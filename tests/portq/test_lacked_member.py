"""Inputs a cross-language port lacks, read through a C/C++ parameters struct
(docs/tricky-cases.md, "branches the port does not have"): a kernel reads
``params.gather_idx_ptr``, a member an earlier commit of the scanned range
added and the port (taken as in sync at the range's base) never followed.
A later commit changing only what that member decides (an early exit for a
negative gathered index) changes a path the port does not have: with the
member absent (a null pointer in a null test), a grid index non-negative,
the early exit is never taken and the rest stores what it did:
NOT_APPLICABLE/not-carried (``lacked-member``).

Neighbours stay flagged: a member the definition already read at the
range's base, a port that names the member, a condition a grid index does
not decide, a change on the path the port runs, and a copy in upstream's
language (behind, not without the path).

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

STEP = "csrc/step.cu"

BASE = '''#include "params.h"

template<typename T>
__global__ void step_kernel(StepParams params) {
    const int tidx = threadIdx.x;
    const int row = blockIdx.x;
    const int col = blockIdx.y * 128 + tidx;
    if (col >= params.dim) return;

    T *x = reinterpret_cast<T *>(params.x_ptr) + row * params.x_row_stride + col;
    T *state = reinterpret_cast<T *>(params.state_ptr) + row * params.state_row_stride + col;
    T *out = reinterpret_cast<T *>(params.out_ptr) + row * params.out_row_stride + col;
    float v = float(x[0]) + float(state[0]);
    state[0] = x[0];
    out[0] = T(v);
}
'''

GATHERED = BASE.replace(
    "    T *state = reinterpret_cast<T *>(params.state_ptr) + row * params.state_row_stride + col;\n",
    "    const int state_row = params.gather_idx_ptr == nullptr\n"
    "        ? row\n"
    "        : params.gather_idx_ptr[row];\n"
    "    T *state = reinterpret_cast<T *>(params.state_ptr) + state_row * params.state_row_stride + col;\n")

PADDED = GATHERED.replace(
    "    T *x = reinterpret_cast<T *>(params.x_ptr) + row * params.x_row_stride + col;\n",
    "    T *x = reinterpret_cast<T *>(params.x_ptr) + row * params.x_row_stride + col;\n"
    "    T *out = reinterpret_cast<T *>(params.out_ptr) + row * params.out_row_stride + col;\n").replace(
    "    T *state = reinterpret_cast<T *>(params.state_ptr)",
    "    if (state_row < 0) {\n"
    "        out[0] = T(0.f);\n"
    "        return;\n"
    "    }\n"
    "    T *state = reinterpret_cast<T *>(params.state_ptr)").replace(
    "    T *out = reinterpret_cast<T *>(params.out_ptr) + row * params.out_row_stride + col;\n    float v",
    "    float v")

PORT = {"stepper/kernels.py": '''import triton
import triton.language as tl


# portq: ports vllm:csrc/step.cu::step_kernel
@triton.jit
def _step(x_ptr, state_ptr, out_ptr, dim, sx, ss, so, TILE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * TILE + tl.arange(0, TILE)
    live = cols < dim
    x = tl.load(x_ptr + row * sx + cols, mask=live, other=0.0)
    s = tl.load(state_ptr + row * ss + cols, mask=live, other=0.0)
    tl.store(state_ptr + row * ss + cols, x, mask=live)
    tl.store(out_ptr + row * so + cols, x + s, mask=live)


def step(x, state, out):
    grid = (x.shape[0], triton.cdiv(x.shape[1], 128))
    _step[grid](x, state, out, x.shape[1], x.stride(0), state.stride(0), out.stride(0), TILE=128)
    return out
''', "engine/run.py": "from stepper.kernels import step\n\n\ndef run(x, s, o):\n    return step(x, s, o)\n"}

MATRIX = '''[[row]]
id       = "STEP"
title    = "decoding step kernel"
upstream = "vllm"
paths    = ["csrc/step.cu"]
tree     = ["stepper/", "engine/"]
tests    = ["tests/"]
'''


def _last(tmp_path, commits, port=PORT, matrix=MATRIX):
    verdicts, _ = classify_history(tmp_path, [CommitSpec(m, files={STEP: text}) for m, text in commits], port,
                                   matrix=matrix)
    return verdicts[len(commits) - 1]


def test_an_early_exit_on_a_member_added_since_the_base_that_the_port_lacks_is_not_carried(tmp_path):
    verdict = _last(tmp_path, [("base", BASE), ("gather", GATHERED), ("padding", PADDED)])
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "lacked-member" in verdict.rules, verdict.rules
    assert "gather_idx_ptr" in verdict.reason


def test_a_member_the_definition_read_at_the_base_is_the_ports_to_follow(tmp_path):
    verdict = _last(tmp_path, [("base", GATHERED), ("padding", PADDED)])
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "lacked-member" not in verdict.rules


def test_a_port_that_names_the_member_is_still_compared(tmp_path):
    port = dict(PORT)
    port["stepper/kernels.py"] = PORT["stepper/kernels.py"].replace(
        "def _step(x_ptr, state_ptr, out_ptr,", "def _step(x_ptr, state_ptr, out_ptr, gather_idx_ptr,").replace(
        "_step[grid](x, state, out,", "_step[grid](x, state, out, None,")
    verdict = _last(tmp_path, [("base", BASE), ("gather", GATHERED), ("padding", PADDED)], port)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "lacked-member" not in verdict.rules


def test_an_exit_a_grid_index_does_not_decide_is_still_compared(tmp_path):
    padded = PADDED.replace("if (state_row < 0) {", "if (state_row < 1) {")
    verdict = _last(tmp_path, [("base", BASE), ("gather", GATHERED), ("padding", padded)])
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "lacked-member" not in verdict.rules


def test_an_exit_on_a_local_that_is_assigned_again_is_still_compared(tmp_path):
    padded = PADDED.replace("    const int state_row = params", "    int state_row = params").replace(
        "    if (state_row < 0) {", "    state_row -= params.shift;\n    if (state_row < 0) {")
    verdict = _last(tmp_path, [("base", BASE), ("gather", GATHERED), ("padding", padded)])
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "lacked-member" not in verdict.rules


def test_a_change_on_the_path_the_port_runs_is_still_compared(tmp_path):
    padded = PADDED.replace("float v = float(x[0]) + float(state[0]);", "float v = float(x[0]) - float(state[0]);")
    verdict = _last(tmp_path, [("base", BASE), ("gather", GATHERED), ("padding", padded)])
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "lacked-member" not in verdict.rules


def test_a_copy_in_upstreams_language_that_lacks_the_member_is_behind_and_still_compared(tmp_path):
    copy = {"csrc/step.cu": BASE.replace("template<typename T>", "// portq: ports vllm:csrc/step.cu::step_kernel\n"
                                                                 "template<typename T>"),
            "engine/run.cu": '#include "../csrc/step.cu"\n\nvoid run(StepParams p) { step_kernel<float><<<1, 1>>>(p); }\n'}
    matrix = MATRIX.replace('tree     = ["stepper/", "engine/"]', 'tree     = ["csrc/", "engine/"]')
    verdict = _last(tmp_path, [("base", BASE), ("gather", GATHERED), ("padding", PADDED)], copy, matrix)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "lacked-member" not in verdict.rules
