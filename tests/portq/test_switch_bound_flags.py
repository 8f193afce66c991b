"""Flags bound inside switch macros (docs/tricky-cases.md, "branches the port
does not have"): ``BOOL_SWITCH(cond, Is_local, [&] { ... })`` binds
``Is_local`` as a compile-time flag, like a template parameter. A port that
has no such flag (no input named like it, no word of its name anywhere in
the port's file) lacks the path it selects: with the flag off, and the
condition that only decides it set aside, a change confined to that path is
NOT_APPLICABLE/not-carried (``lacked-switch-flag``). A flag the port has, or
a change outside the flag's path, is still compared.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history, classify_commit

LAUNCH = "csrc/attn/launch.h"

LAUNCH_BEFORE = '''#pragma once

template<typename Kernel_traits, bool Is_causal>
void run_attn_fwd(Params &params, cudaStream_t stream) {
    dim3 grid(params.num_m_blocks, params.b, params.h);
    const bool is_even_K = params.d == Kernel_traits::kHeadDim;
    BOOL_SWITCH(is_even_K, IsEvenKConst, [&] {
        BOOL_SWITCH(params.window_size_left >= 0 || params.window_size_right >= 0, Is_local, [&] {
            auto kernel = &attn_fwd_kernel<Kernel_traits, Is_causal && !Is_local, Is_local, IsEvenKConst>;
            kernel<<<grid, Kernel_traits::kNThreads, 0, stream>>>(params);
        });
    });
}
'''

PORT = {"fa/launch.py": '''import triton
import triton.language as tl


# portq: ports vllm:csrc/attn/launch.h::attn_fwd_kernel
@triton.jit
def _attn_fwd(Q, Out, seqlen, IS_CAUSAL: tl.constexpr, EVEN_K: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    q = tl.load(Q + rows, mask=rows < seqlen)
    tl.store(Out + rows, q, mask=rows < seqlen)


# portq: ports vllm:csrc/attn/launch.h::run_attn_fwd
def attn_fwd(q, out, causal, head_dim, block=64):
    grid = (triton.cdiv(q.shape[1], block), q.shape[0], q.shape[2])
    _attn_fwd[grid](q, out, q.shape[1], IS_CAUSAL=causal, EVEN_K=head_dim == block, BLOCK=block)
    return out
''', "engine/attn.py": "from fa.launch import attn_fwd\n\n\ndef run(q, out):\n    return attn_fwd(q, out, True, 64)\n"}

MATRIX = '''[[row]]
id       = "ATTN-FWD"
title    = "attention forward launcher"
upstream = "vllm"
paths    = ["csrc/attn/launch.h"]
tree     = ["fa/", "engine/"]
tests    = ["tests/"]
'''


def _scan(tmp_path, after, port=PORT):
    return classify_commit(tmp_path, {LAUNCH: LAUNCH_BEFORE}, {LAUNCH: after}, port, matrix=MATRIX, message="edit")


LOCAL_ONLY_WHEN_NOT_CAUSAL = LAUNCH_BEFORE.replace(
    "BOOL_SWITCH(params.window_size_left >= 0 || params.window_size_right >= 0, Is_local",
    "BOOL_SWITCH((params.window_size_left >= 0 || params.window_size_right >= 0) && !Is_causal, Is_local").replace(
    "attn_fwd_kernel<Kernel_traits, Is_causal && !Is_local, Is_local, IsEvenKConst>",
    "attn_fwd_kernel<Kernel_traits, Is_causal, Is_local && !Is_causal, IsEvenKConst>")


def test_a_change_confined_to_a_switch_bound_flag_the_port_lacks_is_not_carried(tmp_path):
    verdict = _scan(tmp_path, LOCAL_ONLY_WHEN_NOT_CAUSAL)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "lacked-switch-flag" in verdict.rules, verdict.rules
    assert "Is_local" in verdict.reason


def test_a_port_that_carries_the_flag_under_its_own_name_is_still_compared(tmp_path):
    port = dict(PORT)
    port["fa/launch.py"] = PORT["fa/launch.py"].replace("EVEN_K: tl.constexpr,", "EVEN_K: tl.constexpr, LOCAL: tl.constexpr,") \
        .replace("EVEN_K=head_dim == block,", "EVEN_K=head_dim == block, LOCAL=False,")
    verdict = _scan(tmp_path, LOCAL_ONLY_WHEN_NOT_CAUSAL, port)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "lacked-switch-flag" not in verdict.rules


def test_a_change_to_a_path_the_port_has_is_still_compared(tmp_path):
    after = LOCAL_ONLY_WHEN_NOT_CAUSAL.replace("attn_fwd_kernel<Kernel_traits, Is_causal, Is_local && !Is_causal, IsEvenKConst>",
                                               "attn_fwd_kernel<Kernel_traits, Is_causal, Is_local && !Is_causal, true>")
    verdict = _scan(tmp_path, after)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "lacked-switch-flag" not in verdict.rules


def test_a_copy_in_upstreams_language_that_lacks_the_flag_is_behind_and_still_compared(tmp_path):
    copy = {"csrc/attn/launch.h": LAUNCH_BEFORE.replace(
        "template<typename Kernel_traits, bool Is_causal>",
        "// portq: ports vllm:csrc/attn/launch.h::run_attn_fwd\ntemplate<typename Kernel_traits, bool Is_causal>").replace(
        "        BOOL_SWITCH(params.window_size_left >= 0 || params.window_size_right >= 0, Is_local, [&] {\n", "").replace(
        "            auto kernel = &attn_fwd_kernel<Kernel_traits, Is_causal && !Is_local, Is_local, IsEvenKConst>;",
        "            auto kernel = &attn_fwd_kernel<Kernel_traits, Is_causal, IsEvenKConst>;").replace(
        "        });\n    });\n}", "    });\n}"),
        "engine/attn.cu": '#include "../csrc/attn/launch.h"\n\nvoid run(Params &p, cudaStream_t s) { run_attn_fwd<T, true>(p, s); }\n'}
    matrix = MATRIX.replace('tree     = ["fa/", "engine/"]', 'tree     = ["csrc/", "engine/"]')
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={LAUNCH: LAUNCH_BEFORE}),
                                              CommitSpec("edit", files={LAUNCH: LOCAL_ONLY_WHEN_NOT_CAUSAL})],
                                   copy, matrix=matrix)
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason
    assert "lacked-switch-flag" not in verdicts[1].rules
