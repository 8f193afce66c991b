"""Form without meaning (docs/tricky-cases.md, "form without meaning"): edits
that change tokens but not what the port runs are NOT_APPLICABLE/cosmetic,
each proven, and near misses that do change it are still flagged.

* ``cosmetic-annotations``: type annotations and a module docstring, on a
  ported definition or on the module-level lines its ported definitions use;
  a ``constexpr`` annotation that changes how a value binds is kept.
* ``cosmetic-qualifiers``: C++ qualifiers that do not change what compiled
  code computes (``inline``/``__forceinline__``, ``static`` on a local
  constant, ``__grid_constant__``/``const`` on a parameter, ``if`` ↔ ``if
  constexpr``); ``inline`` gained or lost where it decides linkage (a
  function defined outside any class and template) stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history, classify_commit

NORM = "pkg/ops/norm.py"

NORM_BEFORE = '''import torch
import triton
import triton.language as tl

_ZERO = tl.constexpr(0)
_ONE = tl.constexpr(1)
SCALE = 2


@triton.jit
def _norm_kernel(x_ptr, out_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if MODE == _ONE:
        x = x * SCALE
    tl.store(out_ptr + offs, x + _ZERO, mask=offs < n)


def norm_forward(x, out, mode=1):
    n = x.numel()
    _norm_kernel[(triton.cdiv(n, 128),)](x, out, n, MODE=mode, BLOCK=128)
    return out
'''

NORM_TREE = {"kernels/norm/norm.py": '''import triton
import triton.language as tl


# portq: ports vllm:pkg/ops/norm.py::_norm_kernel
@triton.jit
def _scale_rows(x_ptr, out_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if MODE == 1:
        x = x * 2
    tl.store(out_ptr + offs, x, mask=offs < n)


# portq: ports vllm:pkg/ops/norm.py::norm_forward
def scale_rows(x, out, mode=1):
    _scale_rows[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), MODE=mode, BLOCK=128)
    return out
''', "kernels/norm/engine.py": "from portq_kernels.norm.norm import scale_rows\n\n\n"
     "def run(x, out):\n    return scale_rows(x, out)\n"}


def _norm(tmp_path, after):
    return classify_commit(tmp_path, {NORM: NORM_BEFORE}, {NORM: after}, NORM_TREE, message="edit")


def _cosmetic(verdict, rule):
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert rule in verdict.rules, verdict.rules


def test_module_level_constexprs_gaining_an_annotation_are_cosmetic(tmp_path):
    after = NORM_BEFORE.replace("_ZERO = tl.constexpr(0)\n_ONE = tl.constexpr(1)\n",
                                "_ZERO: tl.constexpr = tl.constexpr(0)\n_ONE: tl.constexpr = tl.constexpr(1)\n")
    _cosmetic(_norm(tmp_path, after), "cosmetic-annotations")


def test_a_module_docstring_is_cosmetic(tmp_path):
    after = '"""Row scaling, credited to its first authors."""\n' + NORM_BEFORE
    _cosmetic(_norm(tmp_path, after), "cosmetic-annotations")


def test_type_hints_on_a_ported_host_function_are_cosmetic(tmp_path):
    after = NORM_BEFORE.replace("def norm_forward(x, out, mode=1):\n    n = x.numel()\n",
                                "def norm_forward(x: torch.Tensor, out: torch.Tensor, mode: int = 1) -> torch.Tensor:\n"
                                "    n: int = x.numel()\n")
    _cosmetic(_norm(tmp_path, after), "cosmetic-annotations")


def test_a_constant_that_becomes_a_constexpr_by_its_annotation_still_needs_review(tmp_path):
    after = NORM_BEFORE.replace("SCALE = 2\n", "SCALE: tl.constexpr = 2\n")
    verdict = _norm(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "cosmetic-annotations" not in verdict.rules


def test_a_kernel_parameter_that_becomes_constexpr_still_needs_review(tmp_path):
    after = NORM_BEFORE.replace("def _norm_kernel(x_ptr, out_ptr, n,", "def _norm_kernel(x_ptr, out_ptr, n: tl.constexpr,")
    verdict = _norm(tmp_path, after)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "cosmetic-annotations" not in verdict.rules


def test_an_annotation_beside_a_changed_value_still_needs_review(tmp_path):
    after = NORM_BEFORE.replace("_ONE = tl.constexpr(1)\n", "_ONE: tl.constexpr = tl.constexpr(2)\n")
    verdict = _norm(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason


SOFTMAX = "csrc/attn/softmax.cu"

SOFTMAX_BEFORE = '''#include <cuda_runtime.h>

template <typename T>
inline __device__ T scale_max(T x, T m) {
    constexpr int kShift = 4;
    return (x - m) * kShift;
}

template <int kBlock>
__global__ void softmax_kernel(const float* x, float* out, const int n) {
    int i = blockIdx.x * kBlock + threadIdx.x;
    if (i < n) {
        out[i] = scale_max(x[i], 1.0f);
    }
}

void run_softmax(const float* x, float* out, int n, cudaStream_t stream) {
    constexpr int kBlock = 128;
    constexpr size_t smem = 0;
    if (smem >= 48 * 1024) {
        cudaFuncSetAttribute(softmax_kernel<kBlock>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    }
    softmax_kernel<kBlock><<<(n + kBlock - 1) / kBlock, kBlock, smem, stream>>>(x, out, n);
}
'''

SOFTMAX_TREE = {"kernels/attn/softmax.cu": '''#include <cuda_runtime.h>

// portq: ports vllm:csrc/attn/softmax.cu::scale_max
template <typename T>
inline __device__ T scale_max(T x, T m) {
    constexpr int kShift = 4;
    return (x - m) * kShift;
}

// portq: ports vllm:csrc/attn/softmax.cu::softmax_kernel
template <int kBlock>
__global__ void softmax_kernel(const float* x, float* out, const int n) {
    int i = blockIdx.x * kBlock + threadIdx.x;
    if (i < n) {
        out[i] = scale_max(x[i], 1.0f);
    }
}

// portq: ports vllm:csrc/attn/softmax.cu::run_softmax
void run_softmax(const float* x, float* out, int n, cudaStream_t stream) {
    constexpr int kBlock = 128;
    constexpr size_t smem = 0;
    if (smem >= 48 * 1024) {
        cudaFuncSetAttribute(softmax_kernel<kBlock>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    }
    softmax_kernel<kBlock><<<(n + kBlock - 1) / kBlock, kBlock, smem, stream>>>(x, out, n);
}
''', "kernels/attn/ops.cu": '''#include "softmax.cu"

void engine_softmax(const float* x, float* out, int n, cudaStream_t s) { run_softmax(x, out, n, s); }
'''}


def _softmax(tmp_path, after):
    return classify_commit(tmp_path, {SOFTMAX: SOFTMAX_BEFORE}, {SOFTMAX: after}, SOFTMAX_TREE, message="edit")


def test_inlining_and_storage_qualifiers_are_cosmetic(tmp_path):
    after = SOFTMAX_BEFORE.replace("inline __device__ T scale_max", "__forceinline__ __device__ T scale_max") \
        .replace("    constexpr int kShift = 4;", "    constexpr static int kShift = 4;") \
        .replace("    constexpr int kBlock = 128;", "    static constexpr int kBlock = 128;")
    _cosmetic(_softmax(tmp_path, after), "cosmetic-qualifiers")


def test_a_grid_constant_parameter_and_if_constexpr_are_cosmetic(tmp_path):
    after = SOFTMAX_BEFORE.replace("const int n) {", "__grid_constant__ const int n) {") \
        .replace("    if (smem >= 48 * 1024) {", "    if constexpr (smem >= 48 * 1024) {")
    _cosmetic(_softmax(tmp_path, after), "cosmetic-qualifiers")


def test_a_qualifier_beside_a_changed_condition_still_needs_review(tmp_path):
    after = SOFTMAX_BEFORE.replace("    if (smem >= 48 * 1024) {", "    if constexpr (smem >= 64 * 1024) {")
    verdict = _softmax(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "cosmetic-qualifiers" not in verdict.rules


def test_a_file_mode_change_alone_is_cosmetic_not_a_parse_failure(tmp_path):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={NORM: NORM_BEFORE}),
                                              CommitSpec("chmod +x", modes={NORM: 0o755})], NORM_TREE)
    verdict = verdicts[1]
    _cosmetic(verdict, "file-mode-only")
    assert "parse-failure" not in verdict.rules and "could not be parsed" not in verdict.reason


def test_a_mode_change_with_an_edit_is_still_compared(tmp_path):
    after = NORM_BEFORE.replace("x = x * SCALE", "x = x * SCALE + 1")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={NORM: NORM_BEFORE}),
                                              CommitSpec("edit", files={NORM: after}, modes={NORM: 0o755})], NORM_TREE)
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason
    assert "file-mode-only" not in verdicts[1].rules


MODULE = "pkg/ops/norm.py"

MODULE_BEFORE = '''import torch


class ScaledNorm(torch.nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
'''

MODULE_TREE = {"kernels/norm/module.py": '''import torch


class ScaledNorm(torch.nn.Module):
    # portq: ports vllm:pkg/ops/norm.py::ScaledNorm.__init__
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.eps = eps

    # portq: ports vllm:pkg/ops/norm.py::ScaledNorm.forward
    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
''', "kernels/norm/engine.py": "from portq_kernels.norm.module import ScaledNorm\n\n\n"
     "def build(hidden):\n    return ScaledNorm(hidden)\n"}


def _module(tmp_path, after):
    return classify_commit(tmp_path, {MODULE: MODULE_BEFORE}, {MODULE: after}, MODULE_TREE, message="edit")


def test_a_new_method_nobody_ports_is_not_blamed_on_its_class_body(tmp_path):
    after = MODULE_BEFORE + '''
    def extra_repr(self):
        return f"{tuple(self.weight.shape)}, eps={self.eps}"
'''
    verdict = _module(tmp_path, after)
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "member-lines" in verdict.rules, verdict.rules


def test_a_class_attribute_a_ported_method_reads_is_still_the_class_bodys_change(tmp_path):
    before = MODULE_BEFORE.replace("    def __init__", "    scale = 1.0\n\n    def __init__")
    after = before.replace("    scale = 1.0\n", "    scale = 2.0\n").replace("+ self.eps)", "+ self.eps) * self.scale")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={MODULE: before}),
                                              CommitSpec("edit", files={MODULE: after})], MODULE_TREE)
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason


def test_a_class_docstring_that_documents_a_new_method_is_not_the_class_bodys_change(tmp_path):
    before = MODULE_BEFORE.replace("class ScaledNorm(torch.nn.Module):\n",
                                   'class ScaledNorm(torch.nn.Module):\n    """Scaled RMS norm."""\n\n')
    after = before.replace('    """Scaled RMS norm."""\n', '    """Scaled RMS norm.\n\n    `extra_repr` prints eps and weight.\n    """\n') \
        + '''
    def extra_repr(self):
        return f"{tuple(self.weight.shape)}, eps={self.eps}"
'''
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={MODULE: before}),
                                              CommitSpec("edit", files={MODULE: after})], MODULE_TREE)
    verdict = verdicts[1]
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "member-lines" in verdict.rules, verdict.rules


# ``repeated-assert``: an assert that repeats, word for word, the one just before it checks nothing new.
_CHECKED = NORM_BEFORE.replace("    n = x.numel()\n", "    assert (mode >= 0) and (mode <= 1), f\"bad mode {mode}\"\n"
                                                       "    n = x.numel()\n")
_TWICE = _CHECKED.replace("    assert (mode >= 0)", "    assert (mode >= 0) and (mode <= 1), f\"bad mode {mode}\"\n"
                                                     "    assert (mode >= 0)")


def _wrapper(tmp_path, before, after):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={NORM: before}),
                                              CommitSpec("edit", files={NORM: after})], NORM_TREE)
    return next(s for s in verdicts[1].symbols if s.symbol == "norm_forward")


def test_an_assert_repeating_the_one_before_it_removed_is_cosmetic(tmp_path):
    wrapper = _wrapper(tmp_path, _TWICE, _CHECKED)
    assert (wrapper.verdict, wrapper.justification, wrapper.rules) == \
        (NOT_APPLICABLE, "cosmetic", ["repeated-assert"]), wrapper.reason


def test_a_different_second_assert_is_still_compared(tmp_path):
    wrapper = _wrapper(tmp_path, _TWICE.replace("(mode <= 1), f", "(mode <= 2), f", 1), _CHECKED)
    assert wrapper.verdict == NEEDS_REVIEW and "repeated-assert" not in wrapper.rules, wrapper.reason


def test_a_repeated_assert_that_calls_something_is_still_compared(tmp_path):
    before = _TWICE.replace("assert (mode >= 0) and (mode <= 1),", "assert check(mode),")
    after = _CHECKED.replace("assert (mode >= 0) and (mode <= 1),", "assert check(mode),")
    wrapper = _wrapper(tmp_path, before, after)
    assert wrapper.verdict == NEEDS_REVIEW and "repeated-assert" not in wrapper.rules, wrapper.reason


def test_an_assert_with_a_statement_between_is_still_compared(tmp_path):
    before = _TWICE.replace("f\"bad mode {mode}\"\n    assert", "f\"bad mode {mode}\"\n    mode = mode - 1\n    assert", 1)
    after = before.replace("    assert (mode >= 0) and (mode <= 1), f\"bad mode {mode}\"\n    n =", "    n =")
    wrapper = _wrapper(tmp_path, before, after)
    assert wrapper.verdict == NEEDS_REVIEW and "repeated-assert" not in wrapper.rules, wrapper.reason


# Linkage (``cosmetic-qualifiers``): ``inline`` on a function defined outside any class and template decides
# whether two translation units may each hold its definition (the one-definition rule): adding or dropping it
# there changes whether the program links, so it is not erased. Where the definition is inline already (a
# template, a member defined in its class, a ``constexpr`` function) or has internal linkage (``static``, an
# unnamed namespace), the qualifier changes only how the call is compiled.
UTILS = "csrc/attn/utils.cuh"

UTILS_BEFORE = '''#pragma once
#include <cuda_runtime.h>

__device__ void fence_acc(float& reg) {
    asm volatile("" : "+f"(reg) :: "memory");
}

int driver_version() {
    int v = 0;
    cudaDriverGetVersion(&v);
    return v;
}

template <typename T>
__device__ T add_pair(T x, T y) {
    return x + y;
}

struct Acc {
    __device__ void reset() {
        v = 0.f;
    }
    float v;
};

constexpr int lane_count() {
    return 32;
}

static __device__ int lane_of(int t) {
    return t % 32;
}

namespace {
__device__ int warp_of(int t) {
    return t / 32;
}
}
'''

UTILS_TREE = {"kernels/attn/utils.cuh": UTILS_BEFORE.replace(
    "__device__ void fence_acc", "// portq: ports vllm:csrc/attn/utils.cuh::fence_acc\n__device__ void fence_acc")
    .replace("int driver_version", "// portq: ports vllm:csrc/attn/utils.cuh::driver_version\nint driver_version")
    .replace("template <typename T>", "// portq: ports vllm:csrc/attn/utils.cuh::add_pair\ntemplate <typename T>")
    .replace("struct Acc", "// portq: ports vllm:csrc/attn/utils.cuh::Acc\nstruct Acc")
    .replace("constexpr int lane_count", "// portq: ports vllm:csrc/attn/utils.cuh::lane_count\n"
                                         "constexpr int lane_count")
    .replace("static __device__ int lane_of", "// portq: ports vllm:csrc/attn/utils.cuh::lane_of\n"
                                              "static __device__ int lane_of")
    .replace("__device__ int warp_of", "// portq: ports vllm:csrc/attn/utils.cuh::warp_of\n__device__ int warp_of"),
    "kernels/attn/ops.cu": '''#include "utils.cuh"

__global__ void engine_kernel(float* out) {
    Acc a;
    a.reset();
    fence_acc(a.v);
    out[threadIdx.x] = add_pair(a.v, 1.0f) + lane_count() + lane_of(threadIdx.x) + warp_of(threadIdx.x);
}

int engine_version() { return driver_version(); }
'''}


def _utils(tmp_path, after):
    return classify_commit(tmp_path, {UTILS: UTILS_BEFORE}, {UTILS: after}, UTILS_TREE, message="edit")


def _flagged(verdict):
    assert verdict.verdict == NEEDS_REVIEW, (verdict.verdict, verdict.reason)
    assert "cosmetic-qualifiers" not in verdict.rules, verdict.rules


def test_a_device_function_becoming_inline_outside_class_and_template_still_needs_review(tmp_path):
    _flagged(_utils(tmp_path, UTILS_BEFORE.replace("__device__ void fence_acc",
                                                   "__forceinline__ __device__ void fence_acc")))


def test_a_host_function_becoming_inline_outside_class_and_template_still_needs_review(tmp_path):
    _flagged(_utils(tmp_path, UTILS_BEFORE.replace("int driver_version", "inline int driver_version")))


def test_a_function_losing_inline_outside_class_and_template_still_needs_review(tmp_path):
    before = UTILS_BEFORE.replace("int driver_version", "inline int driver_version")
    verdict = classify_commit(tmp_path, {UTILS: before}, {UTILS: UTILS_BEFORE}, UTILS_TREE, message="edit")
    _flagged(verdict)


def test_inline_on_a_template_a_member_in_its_class_or_a_constexpr_function_is_cosmetic(tmp_path):
    after = UTILS_BEFORE.replace("__device__ T add_pair", "__forceinline__ __device__ T add_pair") \
        .replace("    __device__ void reset", "    __forceinline__ __device__ void reset") \
        .replace("constexpr int lane_count", "inline constexpr int lane_count")
    _cosmetic(_utils(tmp_path, after), "cosmetic-qualifiers")


def test_inline_on_a_function_with_internal_linkage_is_cosmetic(tmp_path):
    after = UTILS_BEFORE.replace("static __device__ int lane_of", "static __forceinline__ __device__ int lane_of") \
        .replace("__device__ int warp_of", "__forceinline__ __device__ int warp_of")
    _cosmetic(_utils(tmp_path, after), "cosmetic-qualifiers")


def test_inline_traded_for_forceinline_outside_class_and_template_is_cosmetic(tmp_path):
    before = UTILS_BEFORE.replace("int driver_version", "inline int driver_version")
    after = UTILS_BEFORE.replace("int driver_version", "__forceinline__ int driver_version")
    _cosmetic(classify_commit(tmp_path, {UTILS: before}, {UTILS: after}, UTILS_TREE, message="edit"),
              "cosmetic-qualifiers")
