"""Kernels declared through a function-like macro, and bodies wrapped in an
architecture guard (docs/tricky-cases.md, cases 57-58).

``#define DEFINE_K(name, ...) template<typename T, __VA_ARGS__> __global__
void name(const Params p)`` followed by ``DEFINE_K(attn_fwd, bool Is_causal)
{ ... }`` declares the kernel ``attn_fwd``: anchors, comparisons and callers
read it as its expansion (``macro-declared-definition``). A body newly
wrapped in ``#if defined(ARCH_OK) ... #else UNSUPPORTED_ARCH #endif``, where
the other branch only reports an unsupported build, is its live branch for a
port in another language (``live-branch``): the same as before, the change
is NOT_APPLICABLE/not-carried; a change inside the live branch, or a copy in
upstream's language (which is built for that architecture too), is still
flagged.

Each classifier case runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from portq.language.symbols import KIND_CUDA_KERNEL, symbol_table
from portq.tree.symbol_cache import DefinitionCache
from tests.portq.golden.pipeline import classify_commit

LAUNCH = "csrc/attn/launch.h"

BEFORE = '''#pragma once
#include "kernel.h"

template<typename Kernel_traits, bool Is_causal, bool Is_even_K>
__global__ void attn_fwd_kernel(__grid_constant__ const Params params) {
    static_assert(Kernel_traits::kBlockM > 0);
    attn::compute_attn<Kernel_traits, Is_causal, Is_even_K>(params);
}

template<typename Kernel_traits, bool Is_causal>
void run_attn_fwd(Params &params, cudaStream_t stream) {
    dim3 grid(params.num_m_blocks, params.b, params.h);
    auto kernel = &attn_fwd_kernel<Kernel_traits, Is_causal, true>;
    kernel<<<grid, Kernel_traits::kNThreads, 0, stream>>>(params);
}
'''

MACROS = '''#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define ARCH_OK
#define PARAM_MODIFIER __grid_constant__
#else
#define PARAM_MODIFIER
#endif

#define UNSUPPORTED_ARCH printf("attention needs sm80 or newer");

#define DEFINE_ATTN_KERNEL(kernelName, ...) \\
template<typename Kernel_traits, __VA_ARGS__> \\
__global__ void kernelName(PARAM_MODIFIER const Params params)

'''

GUARDED = BEFORE.replace('''template<typename Kernel_traits, bool Is_causal, bool Is_even_K>
__global__ void attn_fwd_kernel(__grid_constant__ const Params params) {
    static_assert(Kernel_traits::kBlockM > 0);
    attn::compute_attn<Kernel_traits, Is_causal, Is_even_K>(params);
}''', MACROS + '''DEFINE_ATTN_KERNEL(attn_fwd_kernel, bool Is_causal, bool Is_even_K) {
    #if defined(ARCH_OK)
        static_assert(Kernel_traits::kBlockM > 0);
        attn::compute_attn<Kernel_traits, Is_causal, Is_even_K>(params);
    #else
        UNSUPPORTED_ARCH
    #endif
}''')

PORT = {"fa/launch.py": '''import triton
import triton.language as tl


# portq: ports vllm:csrc/attn/launch.h::attn_fwd_kernel
@triton.jit
def _attn_fwd(Q, Out, seqlen, IS_CAUSAL: tl.constexpr, EVEN_K: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    q = tl.load(Q + rows, mask=rows < seqlen)
    tl.store(Out + rows, q, mask=rows < seqlen)


# portq: ports vllm:csrc/attn/launch.h::run_attn_fwd
def attn_fwd(q, out, causal, block=64):
    grid = (triton.cdiv(q.shape[1], block), q.shape[0], q.shape[2])
    _attn_fwd[grid](q, out, q.shape[1], IS_CAUSAL=causal, EVEN_K=True, BLOCK=block)
    return out
''', "engine/attn.py": "from fa.launch import attn_fwd\n\n\ndef run(q, out):\n    return attn_fwd(q, out, True)\n"}

MATRIX = '''[[row]]
id       = "ATTN-FWD"
title    = "attention forward launcher"
upstream = "vllm"
paths    = ["csrc/attn/launch.h"]
tree     = ["fa/", "engine/"]
tests    = ["tests/"]
'''


def _scan(tmp_path, before, after, port=PORT, matrix=MATRIX):
    return classify_commit(tmp_path, {LAUNCH: before}, {LAUNCH: after}, port, matrix=matrix, message="edit")


def _symbols(verdict):
    return [(s.symbol, s.verdict, s.justification, s.rules, s.reason) for s in verdict.symbols]


# --- the symbol table --------------------------------------------------------------------------------


def test_a_definition_a_function_like_macro_declares_is_named_by_its_argument():
    table = symbol_table(GUARDED.encode(), LAUNCH)
    kernel = next(d for d in table.definitions if d.name == "attn_fwd_kernel")
    assert kernel.kind == KIND_CUDA_KERNEL and kernel.macro == "DEFINE_ATTN_KERNEL"
    first = GUARDED.splitlines().index(next(line for line in GUARDED.splitlines() if line.startswith("DEFINE_ATTN")))
    assert (kernel.start_line, kernel.end_line) == (first + 1, first + 8)
    text = kernel.node.text.decode()
    assert "template<typename Kernel_traits, bool Is_causal, bool Is_even_K>" in text
    assert "__global__ void attn_fwd_kernel(__grid_constant__ const Params params)" in text
    assert "DEFINE_ATTN_KERNEL" not in {d.name for d in table.definitions}


def test_the_light_table_of_a_scan_names_it_the_same_way():
    cache = DefinitionCache()
    light = cache.get("b1", LAUNCH, lambda: GUARDED.encode())
    assert [d.name for d in light.definitions][:2] == ["attn_fwd_kernel", "run_attn_fwd"]


def test_an_invocation_under_a_template_or_in_a_namespace_is_read_the_same_way():
    source = (b"#define DECLARE_OP(name) void name(const Params& p)\n"
              b"template <typename T>\nDECLARE_OP(scale_rows) {\n    run<T>(p);\n}\n"
              b"namespace ops {\nDECLARE_OP(clear_rows) { clear(p); }\n}\n")
    found = [(d.name, d.qualified_name, d.start_line, d.end_line, d.macro) for d in symbol_table(source, "a.cu").definitions]
    assert found == [("scale_rows", "scale_rows", 2, 5, "DECLARE_OP"), ("clear_rows", "ops::clear_rows", 7, 7, "DECLARE_OP")]


def test_a_macro_whose_expansion_declares_nothing_leaves_the_definition_as_parsed():
    source = b"#define WRAP(x) x + 1\nWRAP(f) {\n    return;\n}\n"
    assert [d.name for d in symbol_table(source, "a.cu").definitions] == ["WRAP"]


# --- the classifier -------------------------------------------------------------------------------------


def test_a_kernel_redeclared_through_a_macro_with_the_same_expansion_is_not_a_change(tmp_path):
    after = BEFORE.replace('''template<typename Kernel_traits, bool Is_causal, bool Is_even_K>
__global__ void attn_fwd_kernel(__grid_constant__ const Params params) {''', MACROS + '''DEFINE_ATTN_KERNEL(attn_fwd_kernel, bool Is_causal, bool Is_even_K) {''')
    verdict = _scan(tmp_path, BEFORE, after)
    assert verdict.verdict == NOT_APPLICABLE, _symbols(verdict)
    kernel = next(s for s in verdict.symbols if s.symbol == "attn_fwd_kernel")
    assert kernel.change == "modified" and "macro-declared-definition" in kernel.rules, _symbols(verdict)


def test_a_body_wrapped_in_an_architecture_guard_is_its_live_branch_for_a_port_in_another_language(tmp_path):
    verdict = _scan(tmp_path, BEFORE, GUARDED)
    assert verdict.verdict == NOT_APPLICABLE, _symbols(verdict)
    kernel = next(s for s in verdict.symbols if s.symbol == "attn_fwd_kernel")
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "not-carried"), _symbols(verdict)
    assert {"live-branch", "macro-declared-definition"} <= set(kernel.rules)
    assert "#if branch of `#if defined(ARCH_OK)`" in kernel.reason and "only reports" in kernel.reason


def test_a_real_change_inside_the_live_branch_is_still_flagged(tmp_path):
    after = GUARDED.replace("attn::compute_attn<Kernel_traits, Is_causal, Is_even_K>(params);\n    #else",
                            "attn::compute_attn<Kernel_traits, Is_causal, Is_even_K, true>(params);\n    #else")
    verdict = _scan(tmp_path, BEFORE, after)
    assert verdict.verdict != NOT_APPLICABLE, _symbols(verdict)
    kernel = next(s for s in verdict.symbols if s.symbol == "attn_fwd_kernel")
    assert "live-branch" not in kernel.rules


def test_a_branch_that_does_work_is_never_folded_away(tmp_path):
    after = GUARDED.replace("        UNSUPPORTED_ARCH\n", "        UNSUPPORTED_ARCH\n        attn::fallback(params);\n")
    verdict = _scan(tmp_path, BEFORE, after)
    assert verdict.verdict != NOT_APPLICABLE, _symbols(verdict)


def test_a_copy_in_upstreams_language_is_built_for_that_architecture_too_and_still_flagged(tmp_path):
    copy = {LAUNCH: BEFORE.replace("template<typename Kernel_traits, bool Is_causal, bool Is_even_K>\n",
                                   "// portq: ports vllm:csrc/attn/launch.h::attn_fwd_kernel\n"
                                   "template<typename Kernel_traits, bool Is_causal, bool Is_even_K>\n"),
            "engine/attn.cu": '#include "../csrc/attn/launch.h"\n\n'
                              'void run(Params &p, cudaStream_t s) { run_attn_fwd<T, true>(p, s); }\n'}
    matrix = MATRIX.replace('tree     = ["fa/", "engine/"]', 'tree     = ["csrc/", "engine/"]')
    verdict = _scan(tmp_path, BEFORE, GUARDED, copy, matrix)
    assert verdict.verdict == NEEDS_REVIEW, _symbols(verdict)
    assert "live-branch" not in verdict.rules


def test_a_guard_alone_around_an_unchanged_body_is_the_live_branch_too(tmp_path):
    after = BEFORE.replace('''    static_assert(Kernel_traits::kBlockM > 0);
    attn::compute_attn<Kernel_traits, Is_causal, Is_even_K>(params);
}''', '''#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_assert(Kernel_traits::kBlockM > 0);
    attn::compute_attn<Kernel_traits, Is_causal, Is_even_K>(params);
#else
    assert(false && "attention needs sm80 or newer");
#endif
}''')
    verdict = _scan(tmp_path, BEFORE, after)
    kernel = next(s for s in verdict.symbols if s.symbol == "attn_fwd_kernel")
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "not-carried"), _symbols(verdict)
    assert "live-branch" in kernel.rules and "macro-declared-definition" not in kernel.rules
    assert "#if branch of `#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800`" in kernel.reason
