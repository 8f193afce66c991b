"""Dead code removed, and parse errors the change did not make (docs/tricky-cases.md,
"form without meaning"): a C++ kernel header that tree-sitter cannot read
everywhere still has changes that provably change nothing.

* ``unread-local``: a C/C++ definition whose new tokens are its old ones less
  whole declarations of locals nothing else reads (their initialisers writing
  nothing but each other) computes the same: NOT_APPLICABLE/cosmetic, also
  when the removed line is one tree-sitter cannot parse, saying so.
* ``uncalled-definition``: a ported definition upstream deletes that no code
  named (only comments did), and that nothing in the tree calls, was dead on
  both sides: NOT_APPLICABLE/cosmetic. One something still calls, upstream or
  in the tree, needs a reader.
* ``cosmetic-includes``: a change outside definitions made only of
  ``#include`` lines names a file, not anything a ported definition uses.
* ``parse-failure``, narrowed: an error on lines of a ported definition that the
  change did not touch, failing the same way before and after, is tree-sitter's
  and not the change's: a token-level proof that the change is cosmetic
  reads past it, and a body change is still called one; what structure read
  from that tree says decides no gap (NEEDS_REVIEW, saying so). An error on a
  changed line still needs a reader.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history, classify_commit

TILE = "csrc/attn/tile.cu"

HELPER = '''template <int kRows, class Atom>
__device__ auto make_row_copy(Atom const& atom) {
    constexpr int kStride = kRows * decltype(size<0>(typename Atom::Shape{}))::value;
    return make_tiled_copy_impl(atom, Layout<Shape<Int<kRows>>, Stride<Int<kStride>>>{});
}

'''

TILE_BEFORE = '''#include <cuda_runtime.h>
#include <cute/algorithm/copy.hpp>

#define TILE_ROWS 4

template <int kRows, class Atom>
__device__ auto make_row_copy(Atom const& atom) {
    constexpr int kStride = kRows * decltype(size<0>(typename Atom::Shape{}))::value;
    return make_tiled_copy_impl(atom, Layout<Shape<Int<kRows>>, Stride<Int<kStride>>>{});
}

template <typename Traits>
__global__ void tile_kernel(const float* x, float* out, int* counts, const int n) {
    constexpr int kBlock = Traits::kBlock;
    constexpr int kRows = kBlock / decltype(size<0>(typename Traits::Shape{}))::value;
    auto layout = make_layout(x, typename Traits::Layout{});
    Tensor frag = make_fragment_like(layout);
    int i = blockIdx.x * kBlock + threadIdx.x;
    // copy(frag, layout);
    // auto row_copy = make_row_copy<TILE_ROWS>(atom);
    if (i < n) {
        out[i] = x[i] * layout(i);
    }
}

template <typename Traits>
void run_tile(const float* x, float* out, int* counts, int n, cudaStream_t stream) {
    constexpr size_t smem = Traits::kSmem;
    auto kernel = &tile_kernel<Traits>;
    if (smem >= 48 * 1024) {
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    }
    int ctas_per_sm;
    cudaError status_ = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas_per_sm, kernel, 128, smem);
    kernel<<<(n + 127) / 128, 128, smem, stream>>>(x, out, counts, n);
}
'''

TILE_TREE = {"kernels/attn/tile.cu": '''#include <cuda_runtime.h>
#include <cute/algorithm/copy.hpp>

#define TILE_ROWS 4

// portq: ports vllm:csrc/attn/tile.cu::make_row_copy
template <int kRows, class Atom>
__device__ auto make_row_copy(Atom const& atom) {
    constexpr int kStride = kRows * decltype(size<0>(typename Atom::Shape{}))::value;
    return make_tiled_copy_impl(atom, Layout<Shape<Int<kRows>>, Stride<Int<kStride>>>{});
}

// portq: ports vllm:csrc/attn/tile.cu::tile_kernel
template <typename Traits>
__global__ void tile_kernel(const float* x, float* out, int* counts, const int n) {
    constexpr int kBlock = Traits::kBlock;
    constexpr int kRows = kBlock / decltype(size<0>(typename Traits::Shape{}))::value;
    auto layout = make_layout(x, typename Traits::Layout{});
    Tensor frag = make_fragment_like(layout);
    int i = blockIdx.x * kBlock + threadIdx.x;
    if (i < n) {
        out[i] = x[i] * layout(i);
    }
}

// portq: ports vllm:csrc/attn/tile.cu::run_tile
template <typename Traits>
void run_tile(const float* x, float* out, int* counts, int n, cudaStream_t stream) {
    constexpr size_t smem = Traits::kSmem;
    auto kernel = &tile_kernel<Traits>;
    if (smem >= 48 * 1024) {
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    }
    int ctas_per_sm;
    cudaError status_ = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas_per_sm, kernel, 128, smem);
    kernel<<<(n + 127) / 128, 128, smem, stream>>>(x, out, counts, n);
}
''', "kernels/attn/ops.cu": '''#include "tile.cu"

void engine_tile(const float* x, float* out, int* c, int n, cudaStream_t s) { run_tile<Traits>(x, out, c, n, s); }
'''}


def _tile(tmp_path, after):
    return classify_commit(tmp_path, {TILE: TILE_BEFORE}, {TILE: after}, TILE_TREE, message="edit")


def _cosmetic(verdict, rule):
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert rule in verdict.rules, verdict.rules


def test_an_unread_local_removed_from_a_kernel_is_cosmetic(tmp_path):
    verdict = _tile(tmp_path, TILE_BEFORE.replace("    Tensor frag = make_fragment_like(layout);\n", ""))
    _cosmetic(verdict, "unread-local")
    assert "frag" in verdict.reason


def test_an_unread_local_on_a_line_that_does_not_parse_is_cosmetic_and_says_so(tmp_path):
    verdict = _tile(tmp_path, TILE_BEFORE.replace(
        "    constexpr int kRows = kBlock / decltype(size<0>(typename Traits::Shape{}))::value;\n", ""))
    _cosmetic(verdict, "unread-local")
    assert "parse" in verdict.reason


def test_an_unused_query_and_the_local_it_writes_removed_with_if_constexpr_are_cosmetic(tmp_path):
    after = TILE_BEFORE.replace("    int ctas_per_sm;\n    cudaError status_ = cudaOccupancyMaxActiveBlocksPerMultiprocessor("
                                "&ctas_per_sm, kernel, 128, smem);\n",
                                "    // int ctas_per_sm;\n    // cudaError status_ = cudaOccupancyMaxActiveBlocksPerMultiprocessor("
                                "&ctas_per_sm, kernel, 128, smem);\n") \
        .replace("    if (smem >= 48 * 1024) {", "    if constexpr(smem >= 48 * 1024) {")
    _cosmetic(_tile(tmp_path, after), "unread-local")


def test_a_removed_local_that_is_still_read_needs_review(tmp_path):
    after = TILE_BEFORE.replace("    constexpr int kBlock = Traits::kBlock;\n", "") \
        .replace("blockIdx.x * kBlock", "blockIdx.x * Traits::kBlock")
    verdict = _tile(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "unread-local" not in verdict.rules


def test_a_removed_local_whose_initialiser_writes_memory_needs_review(tmp_path):
    before = TILE_BEFORE.replace("    int i = blockIdx.x", "    float seen = atomicAdd(&out[n], 1.0f);\n    int i = blockIdx.x")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={TILE: before}),
                                              CommitSpec("edit", files={TILE: TILE_BEFORE})], TILE_TREE)
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason
    assert "unread-local" not in verdicts[1].rules


def test_a_removed_store_is_not_an_unread_local(tmp_path):
    before = TILE_BEFORE.replace("        out[i] = x[i] * layout(i);\n", "        out[i] = x[i] * layout(i);\n"
                                 "        out[n] = 0.0f;\n")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={TILE: before}),
                                              CommitSpec("edit", files={TILE: TILE_BEFORE})], TILE_TREE)
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason
    assert "unread-local" not in verdicts[1].rules


def test_an_error_the_change_did_not_make_does_not_hide_a_comment_only_change(tmp_path):
    verdict = _tile(tmp_path, TILE_BEFORE.replace("    // copy(frag, layout);\n", ""))
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert "parse-failure" not in verdict.rules


def test_an_error_the_change_did_not_make_does_not_hide_a_real_change(tmp_path):
    verdict = _tile(tmp_path, TILE_BEFORE.replace("out[i] = x[i] * layout(i);", "out[i] = x[i] * layout(i) + 1.0f;"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "parse-failure" not in verdict.rules and "body-change" in verdict.rules, verdict.rules


def test_structure_read_past_an_error_the_change_did_not_make_decides_no_gap(tmp_path):
    verdict = _tile(tmp_path, TILE_BEFORE.replace(
        "    int i = blockIdx.x * kBlock + threadIdx.x;\n",
        "    int i = blockIdx.x * kBlock + threadIdx.x;\n"
        "    const int block_id = blockIdx.x + blockIdx.y * gridDim.x;\n    if (block_id == 0) { counts[0] = n; }\n"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "parse-failure" in verdict.rules and "misreads" in verdict.reason, verdict.rules


def test_a_changed_line_that_does_not_parse_still_needs_a_reader(tmp_path):
    verdict = _tile(tmp_path, TILE_BEFORE.replace("auto layout = make_layout(x, typename Traits::Layout{});",
                                                  "auto layout = make_layout(x, typename Traits::LayoutT{});"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "parse-failure" in verdict.rules, verdict.rules


def test_a_ported_definition_nothing_called_removed_upstream_is_cosmetic(tmp_path):
    verdict = _tile(tmp_path, TILE_BEFORE.replace(HELPER, ""))
    _cosmetic(verdict, "uncalled-definition")
    assert "parse-failure" not in verdict.rules


def test_a_removed_definition_the_tree_still_calls_needs_review(tmp_path):
    tree = dict(TILE_TREE)
    tree["kernels/attn/rows.cu"] = '#include "tile.cu"\n\nvoid rows(Atom a) { auto c = make_row_copy<4>(a); c(); }\n'
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={TILE: TILE_BEFORE}),
                                              CommitSpec("edit", files={TILE: TILE_BEFORE.replace(HELPER, "")})], tree)
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason
    assert "removed-definition" in verdicts[1].rules


def test_a_removed_definition_upstream_still_called_needs_review(tmp_path):
    before = TILE_BEFORE.replace("    // auto row_copy = make_row_copy<TILE_ROWS>(atom);\n",
                                 "    auto row_copy = make_row_copy<TILE_ROWS>(atom);\n    row_copy(frag);\n")
    after = before.replace(HELPER, "").replace("make_row_copy<TILE_ROWS>(atom)", "make_tiled_copy_impl(atom)")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={TILE: before}),
                                              CommitSpec("edit", files={TILE: after})], TILE_TREE)
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason
    assert "uncalled-definition" not in verdicts[1].rules


def test_a_changed_include_is_cosmetic(tmp_path):
    verdict = _tile(tmp_path, TILE_BEFORE.replace("#include <cute/algorithm/copy.hpp>\n", "#include <cute/tensor.hpp>\n"))
    _cosmetic(verdict, "cosmetic-includes")


def test_an_include_beside_a_macro_a_port_uses_still_needs_review(tmp_path):
    before = TILE_BEFORE.replace("    int i = blockIdx.x * kBlock", "    int i = blockIdx.x * kBlock * TILE_ROWS")
    after = before.replace("#include <cute/algorithm/copy.hpp>\n", "#include <cute/tensor.hpp>\n") \
        .replace("#define TILE_ROWS 4", "#define TILE_ROWS 8")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={TILE: before}),
                                              CommitSpec("edit", files={TILE: after})], TILE_TREE)
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason
    assert "cosmetic-includes" not in verdicts[1].rules


NS_BEFORE = '''#include <cuda_runtime.h>

namespace attn {

template <bool Is_first>
__device__ float rescale(float x, float m) { return Is_first ? x : x - m; }

template <typename Traits>
__global__ void ns_kernel(const float* x, float* out, const int n) {
    auto layout = make_layout(x, typename Traits::Layout{});
    int i = blockIdx.x * 128 + threadIdx.x;
    if (i < n) {
        out[i] = rescale</*Is_first=*/true>(x[i], layout(i));
    }
}

}  // namespace attn
'''

NS_TREE = {"kernels/attn/ns.cu": '''#include <cuda_runtime.h>

namespace attn {

// portq: ports vllm:csrc/attn/ns.cu::attn::rescale
template <bool Is_first>
__device__ float rescale(float x, float m) { return Is_first ? x : x - m; }

// portq: ports vllm:csrc/attn/ns.cu::attn::ns_kernel
template <typename Traits>
__global__ void ns_kernel(const float* x, float* out, const int n) {
    auto layout = make_layout(x, typename Traits::Layout{});
    int i = blockIdx.x * 128 + threadIdx.x;
    if (i < n) {
        out[i] = rescale</*Is_first=*/true>(x[i], layout(i));
    }
}

}  // namespace attn
'''}


def _ns(tmp_path, after):
    return classify_commit(tmp_path, {"csrc/attn/ns.cu": NS_BEFORE}, {"csrc/attn/ns.cu": after}, NS_TREE,
                           message="edit")


def test_a_call_qualified_by_its_own_namespace_is_cosmetic(tmp_path):
    _cosmetic(_ns(tmp_path, NS_BEFORE.replace("out[i] = rescale<", "out[i] = attn::rescale<")), "cosmetic-namespace")


def test_a_call_qualified_by_another_namespace_needs_review(tmp_path):
    verdict = _ns(tmp_path, NS_BEFORE.replace("out[i] = rescale<", "out[i] = other::rescale<"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "cosmetic-namespace" not in verdict.rules


SWITCH_H = '''#pragma once

#define BOOL_SWITCH(COND, CONST_NAME, ...)      \\
  [&] {                                         \\
    if (COND) {                                 \\
      constexpr static bool CONST_NAME = true;  \\
      return __VA_ARGS__();                     \\
    } else {                                    \\
      constexpr static bool CONST_NAME = false; \\
      return __VA_ARGS__();                     \\
    }                                           \\
  }()
'''

SWITCH_DISABLED = '''
#ifdef ATTN_DISABLE_DROPOUT
  #define DROPOUT_SWITCH(COND, CONST_NAME, ...) \\
  [&] {                                         \\
    constexpr static bool CONST_NAME = false;   \\
    return __VA_ARGS__();                       \\
  }()
#else
  #define DROPOUT_SWITCH BOOL_SWITCH
#endif
'''

LAUNCH_BEFORE = '''#include "switch.h"

template <typename Traits>
void run_attn(Params &params, cudaStream_t stream) {
    BOOL_SWITCH(params.p_dropout < 1.f, Is_dropout, [&] {
        attn_kernel<Traits, Is_dropout><<<params.b, 128, 0, stream>>>(params);
    });
}
'''

LAUNCH_TREE = {"kernels/attn/launch.cu": '''#include "switch.h"

// portq: ports vllm:csrc/attn/launch.cu::run_attn
template <typename Traits>
void run_attn(Params &params, cudaStream_t stream) {
    BOOL_SWITCH(params.p_dropout < 1.f, Is_dropout, [&] {
        attn_kernel<Traits, Is_dropout><<<params.b, 128, 0, stream>>>(params);
    });
}
''', "kernels/attn/ops.cu": '#include "launch.cu"\n\nvoid engine(Params &p, cudaStream_t s) { run_attn<T>(p, s); }\n'}


def _switched(tmp_path, header_after):
    launch_after = LAUNCH_BEFORE.replace("    BOOL_SWITCH(params.p_dropout", "    DROPOUT_SWITCH(params.p_dropout")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"csrc/attn/switch.h": SWITCH_H, "csrc/attn/launch.cu": LAUNCH_BEFORE}),
        CommitSpec("edit", files={"csrc/attn/switch.h": header_after, "csrc/attn/launch.cu": launch_after})],
        LAUNCH_TREE)
    return verdicts[1]


def test_a_switch_macro_that_the_default_build_aliases_to_the_old_one_is_cosmetic(tmp_path):
    verdict = _switched(tmp_path, SWITCH_H + SWITCH_DISABLED)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "macro-alias" in verdict.rules, verdict.rules


def test_a_switch_macro_that_the_default_build_fixes_to_a_constant_needs_review(tmp_path):
    verdict = _switched(tmp_path, SWITCH_H + SWITCH_DISABLED.replace("#ifdef ATTN_DISABLE_DROPOUT",
                                                                     "#ifndef ATTN_ENABLE_DROPOUT"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "macro-alias" not in verdict.rules


# --- an error the change made just outside a ported definition's changed lines -------------------------

SCALE = "csrc/scale.cu"

SCALE_BEFORE = '''#include <cuda_runtime.h>

#define SCALE 2

__global__ void scale_kernel(float* x, int n) {  // scales
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= SCALE;
}
'''

SCALE_PORT = {"ops/scale.py": '''import triton
import triton.language as tl


# portq: ports vllm:csrc/scale.cu::scale_kernel
@triton.jit
def _scale(X, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(X + i, tl.load(X + i, mask=i < n) * 2, mask=i < n)


def scale(x):
    _scale[(triton.cdiv(x.numel(), 128),)](x, x.numel(), BLOCK=128)
''', "engine/run.py": "from ops.scale import scale\n\n\ndef run(x):\n    return scale(x)\n"}

SCALE_MATRIX = '''[[row]]
id       = "SCALE"
title    = "scale kernel"
upstream = "vllm"
paths    = ["csrc/scale.cu"]
tree     = ["ops/", "engine/"]
tests    = ["tests/"]
'''


def _scale_scan(tmp_path, after):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={SCALE: SCALE_BEFORE}),
                                              CommitSpec("edit", files={SCALE: after})], SCALE_PORT,
                                   matrix=SCALE_MATRIX)
    return verdicts[1]


def test_an_error_the_change_made_a_line_above_a_changed_line_needs_a_reader(tmp_path):
    # the error lies outside the kernel's extent, one line from its changed line: "around" the change
    after = SCALE_BEFORE.replace("#define SCALE 2\n", "#define SCALE 2\nstatic const int kUnused = ;\n") \
        .replace("// scales\n", "// scales x\n")
    verdict = _scale_scan(tmp_path, after)
    kernel = next(s for s in verdict.symbols if s.symbol == "scale_kernel")
    assert kernel.verdict == NEEDS_REVIEW and "parse-failure" in kernel.rules, kernel.reason
    assert "around the changed lines of scale_kernel" in kernel.reason


def test_an_error_the_change_made_far_from_a_changed_line_leaves_a_comment_change_cosmetic(tmp_path):
    after = SCALE_BEFORE.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\nstatic const int kUnused = ;\n"
                                 "\n\n\n\n").replace("// scales\n", "// scales x\n")
    verdict = _scale_scan(tmp_path, after)
    kernel = next(s for s in verdict.symbols if s.symbol == "scale_kernel")
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "cosmetic"), kernel.reason


# Explicit-instantiation macros invoked without a semicolon, with type keywords for arguments, are
# common at the end of CUDA kernel files; a run of them makes tree-sitter's recovery end with the
# whole translation unit an ERROR node. That root is where the file's definitions hang, not an
# error spanning every line: the errors are its erroneous children, on the macro lines.
INSTANTIATIONS = '''
template <typename T>
__global__ void other_kernel(const T* x, T* out, const int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { out[i] = x[i] * 2; }
}

MAKE_OTHER(SCALE, float, 2048, 8)
MAKE_OTHER(SCALE, half, 2048, 8)
MAKE_OTHER(SHIFT, float, 2048, 8)
MAKE_OTHER(SHIFT, half, 2048, 8)
MAKE_OTHER(CLAMP, float, 2048, 8)
MAKE_OTHER(CLAMP, half, 2048, 8)
MAKE_OTHER(ROUND, float, 2048, 8)
MAKE_OTHER(ROUND, half, 2048, 8)
'''

WHOLE_FILE_ERROR_BEFORE = TILE_BEFORE + INSTANTIATIONS

TILE_MATRIX = '''[[row]]
id       = "TILE"
title    = "tile kernels"
upstream = "vllm"
paths    = ["csrc/attn/tile.cu"]
tree     = ["kernels/"]
tests    = ["tests/"]
'''


def _tile_rows(tmp_path, after):
    return classify_commit(tmp_path, {TILE: WHOLE_FILE_ERROR_BEFORE}, {TILE: after}, TILE_TREE,
                           matrix=TILE_MATRIX, message="edit")


def test_a_file_whose_root_tree_sitter_reads_as_an_error_still_has_its_definitions_read(tmp_path):
    from portq.classifier.reading import _error_spans
    from portq.language.symbols import symbol_table

    table = symbol_table(WHOLE_FILE_ERROR_BEFORE.encode(), TILE)
    assert table.tree.root_node.type == "ERROR"  # the input this case is about
    last = WHOLE_FILE_ERROR_BEFORE.count("\n")
    spans = _error_spans(table.tree.root_node)
    assert spans and (1, last) not in spans and (1, last + 1) not in spans, spans
    macro_lines = {n for n, text in enumerate(WHOLE_FILE_ERROR_BEFORE.splitlines(), 1) if text.startswith("MAKE_OTHER")}
    assert macro_lines <= {line for first, last_ in spans for line in range(first, last_ + 1)}, spans
    other = next(d for d in table.definitions if d.name == "other_kernel")
    assert not any(first <= other.end_line and last_ >= other.start_line for first, last_ in spans), spans


def test_a_change_to_a_sibling_nobody_ports_in_a_file_read_as_one_error_is_not_ported(tmp_path):
    verdict = _tile_rows(tmp_path, WHOLE_FILE_ERROR_BEFORE.replace("out[i] = x[i] * 2;", "out[i] = x[i] * 3;"))
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-ported"), verdict.reason
    assert "parse-failure" not in verdict.rules, verdict.rules


def test_a_body_change_of_a_ported_kernel_in_a_file_read_as_one_error_still_needs_review(tmp_path):
    verdict = _tile_rows(tmp_path, WHOLE_FILE_ERROR_BEFORE.replace("out[i] = x[i] * layout(i);",
                                                                   "out[i] = x[i] * layout(i) + 1.0f;"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "body-change" in verdict.rules and "parse-failure" not in verdict.rules, verdict.rules



MACROS = '''
#define MAKE_OTHER(name, T, threads, items) \\
    template __global__ void other_kernel<T>(const T* x, T* out, const int n);
#define MAKE_TILE(name, T, threads, items) \\
    template __global__ void tile_kernel<T>(const float* x, float* out, int* counts, const int n);
'''


def test_an_instantiation_line_of_an_unported_kernel_is_not_ported_whatever_types_it_names(tmp_path):
    before = TILE_BEFORE + MACROS + INSTANTIATIONS
    after = before.replace("MAKE_OTHER(ROUND, half, 2048, 8)\n", "MAKE_OTHER(ROUND, half, 2048, 8)\nMAKE_OTHER(ROUND, int, 2048, 8)\n")
    verdict = classify_commit(tmp_path, {TILE: before}, {TILE: after}, TILE_TREE, matrix=TILE_MATRIX, message="edit")
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-ported"), verdict.reason


def test_an_instantiation_line_of_a_ported_kernel_is_flagged(tmp_path):
    before = TILE_BEFORE + MACROS + INSTANTIATIONS
    after = before.replace("MAKE_OTHER(ROUND, half, 2048, 8)\n", "MAKE_OTHER(ROUND, half, 2048, 8)\nMAKE_TILE(ROUND, int, 2048, 8)\n")
    verdict = classify_commit(tmp_path, {TILE: before}, {TILE: after}, TILE_TREE, matrix=TILE_MATRIX, message="edit")
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
