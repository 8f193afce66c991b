"""Branches the port does not have (docs/tricky-cases.md, "branches the port
does not have"): a change confined to code that the port's build or
parameter set never runs is not the port's change, and a change on the path
the port does run is still flagged.

* ``default-build`` (C/C++): a preprocessor conditional on a macro that no
  source of the file defines selects its default branch (``#ifdef FLAG`` is
  off, ``#ifndef FLAG`` on); an edit confined to the branch the default
  build drops is NOT_APPLICABLE/not-carried.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history, classify_commit
from tests.portq.test_form_without_meaning import SOFTMAX_BEFORE, _softmax

_LINE = "    return (x - m) * kShift;\n"


def _not_carried(verdict, rule):
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert rule in verdict.rules, verdict.rules


def test_an_opt_in_build_flag_branch_around_unchanged_code_is_not_the_ports(tmp_path):
    after = SOFTMAX_BEFORE.replace(_LINE, "#ifdef SLOW_EXACT_MATH\n    return __fmul_rn(x - m, kShift);\n#else\n"
                                   + _LINE + "#endif\n")
    assert after != SOFTMAX_BEFORE
    _not_carried(_softmax(tmp_path, after), "default-build")


def test_an_ifndef_keeps_its_body_in_the_default_build(tmp_path):
    after = SOFTMAX_BEFORE.replace(_LINE, "#ifndef NO_SHIFT\n" + _LINE + "#else\n    return x - m;\n#endif\n")
    _not_carried(_softmax(tmp_path, after), "default-build")


def test_an_if_defined_condition_is_read_like_ifdef(tmp_path):
    after = SOFTMAX_BEFORE.replace(_LINE, "#if defined(SLOW_EXACT_MATH) && !defined(NDEBUG)\n    return 0;\n#endif\n"
                                   + _LINE)
    _not_carried(_softmax(tmp_path, after), "default-build")


def test_a_change_to_the_default_branch_is_still_flagged(tmp_path):
    after = SOFTMAX_BEFORE.replace(_LINE, "#ifdef SLOW_EXACT_MATH\n    return (x - m) * kShift;\n#else\n"
                                   "    return (x - m) * kShift * 2;\n#endif\n")
    verdict = _softmax(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "default-build" not in verdict.rules


def test_a_flag_the_ports_own_file_names_is_not_assumed_off(tmp_path):
    from tests.portq.test_form_without_meaning import SOFTMAX, SOFTMAX_TREE
    tree = {**SOFTMAX_TREE, "kernels/attn/softmax.cu": SOFTMAX_TREE["kernels/attn/softmax.cu"].replace(
        "    return (x - m) * kShift;\n", "#ifdef SLOW_EXACT_MATH\n    return x - m;\n#else\n"
        "    return (x - m) * kShift;\n#endif\n", 1)}
    after = SOFTMAX_BEFORE.replace(_LINE, "#ifdef SLOW_EXACT_MATH\n    return __fmul_rn(x - m, kShift);\n#else\n"
                                   + _LINE + "#endif\n")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={SOFTMAX: SOFTMAX_BEFORE}),
                                              CommitSpec("edit", files={SOFTMAX: after})], tree)
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason
    assert "default-build" not in verdicts[1].rules


def test_a_flag_the_file_defines_is_not_assumed_off(tmp_path):
    after = SOFTMAX_BEFORE.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n#define FAST_SHIFT\n", 1) \
        .replace(_LINE, "#ifdef FAST_SHIFT\n    return x - m;\n#else\n" + _LINE + "#endif\n")
    assert "#define FAST_SHIFT" in after
    verdict = _softmax(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "default-build" not in verdict.rules


# --- Python: parameters the port lacks -------------------------------------------------


LOSS = "pkg/ops/norm.py"

LOSS_BEFORE = '''import triton
import triton.language as tl

_TRUE: tl.constexpr = tl.constexpr(1)
_FALSE: tl.constexpr = tl.constexpr(0)


@triton.jit
def _loss_kernel(x_ptr, loss_ptr, aux_ptr, n, BLOCK: tl.constexpr, RETURN_AUX: tl.constexpr = False):
    row = tl.program_id(0)
    x_ptr += row * n
    loss_ptr += row
    aux_ptr += row
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    loss = tl.sum(x * x)
    tl.store(loss_ptr, loss)
    if RETURN_AUX == _TRUE:
        tl.store(aux_ptr, tl.max(x))


def loss_forward(x, loss, aux, return_aux):
    n = x.shape[1]
    _loss_kernel[(x.shape[0],)](x, loss, aux, n, RETURN_AUX=return_aux, BLOCK=128)
    return loss
'''

# A port that mirrors upstream's names but carries no auxiliary output: it
# lacks aux_ptr and RETURN_AUX.
LOSS_TREE = {"kernels/loss/loss.py": '''import triton
import triton.language as tl


# portq: ports vllm:pkg/ops/norm.py::_loss_kernel
@triton.jit
def _loss_kernel(x_ptr, loss_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * n
    loss_ptr += row
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    loss = tl.sum(x * x)
    tl.store(loss_ptr, loss)


def loss_forward(x, loss):
    _loss_kernel[(x.shape[0],)](x, loss, x.shape[1], BLOCK=128)
    return loss
''', "kernels/loss/engine.py": "from portq_kernels.loss.loss import loss_forward\n\n\n"
     "def run(x, out):\n    return loss_forward(x, out)\n"}


def _loss(tmp_path, after, tree=LOSS_TREE):
    return classify_commit(tmp_path, {LOSS: LOSS_BEFORE}, {LOSS: after}, tree, message="edit")


def test_a_pointer_the_port_lacks_advanced_differently_is_not_the_ports(tmp_path):
    after = LOSS_BEFORE.replace("    aux_ptr += row\n", "    aux_ptr += row * 2\n")
    _not_carried(_loss(tmp_path, after), "lacked-branch")


def test_a_flag_the_port_lacks_read_plainly_instead_of_through_a_constant_is_not_the_ports(tmp_path):
    after = LOSS_BEFORE.replace("    if RETURN_AUX == _TRUE:\n", "    if RETURN_AUX:\n")
    _not_carried(_loss(tmp_path, after), "lacked-branch")


def test_a_new_defaulted_flag_whose_default_keeps_the_old_path_is_not_the_ports(tmp_path):
    after = LOSS_BEFORE.replace("RETURN_AUX: tl.constexpr = False):",
                                "RETURN_AUX: tl.constexpr = False, SQUARE: tl.constexpr = True):") \
        .replace("    loss = tl.sum(x * x)\n", "    if SQUARE:\n        loss = tl.sum(x * x)\n"
                 "    else:\n        loss = tl.sum(tl.abs(x))\n")
    _not_carried(_loss(tmp_path, after), "lacked-branch")


def test_a_new_defaulted_flag_whose_default_takes_the_new_path_is_still_flagged(tmp_path):
    after = LOSS_BEFORE.replace("RETURN_AUX: tl.constexpr = False):",
                                "RETURN_AUX: tl.constexpr = False, SQUARE: tl.constexpr = False):") \
        .replace("    loss = tl.sum(x * x)\n", "    if SQUARE:\n        loss = tl.sum(x * x)\n"
                 "    else:\n        loss = tl.sum(tl.abs(x))\n")
    verdict = _loss(tmp_path, after)
    assert verdict.verdict in (NEEDS_REVIEW, "REAL_GAP"), verdict.reason
    assert "lacked-branch" not in verdict.rules


def test_a_change_on_the_path_the_port_runs_is_still_flagged(tmp_path):
    after = LOSS_BEFORE.replace("    if RETURN_AUX == _TRUE:\n", "    loss_ptr += 1\n    if RETURN_AUX == _TRUE:\n")
    verdict = _loss(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "lacked-branch" not in verdict.rules


_RENAMED = {**LOSS_TREE, "kernels/loss/loss.py": LOSS_TREE["kernels/loss/loss.py"]
            .replace("x_ptr", "rows_ptr").replace("loss_ptr", "out_ptr")}
_AUX_EDIT = LOSS_BEFORE.replace("tl.store(aux_ptr, tl.max(x))", "tl.store(aux_ptr, tl.max(tl.abs(x)))")


def test_an_edit_inside_a_branch_only_a_flag_the_port_lacks_selects_is_not_the_ports(tmp_path):
    _not_carried(_loss(tmp_path, _AUX_EDIT), "lacked-branch")


def test_a_port_whose_names_cannot_be_bound_to_upstreams_is_compared_as_before(tmp_path):
    verdict = _loss(tmp_path, _AUX_EDIT, _RENAMED)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "lacked-branch" not in verdict.rules


def test_a_store_moved_under_the_guard_of_its_every_reader_changes_nothing(tmp_path):
    after = LOSS_BEFORE.replace("    aux_ptr += row\n", "    if RETURN_AUX == _TRUE:\n        aux_ptr += row\n")
    verdict = _loss(tmp_path, after, _RENAMED)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "guarded-store" in verdict.rules, verdict.rules


def test_a_store_moved_under_a_guard_its_reader_lacks_is_still_flagged(tmp_path):
    before = LOSS_BEFORE.replace("    tl.store(loss_ptr, loss)\n", "    tl.store(loss_ptr, loss)\n    tl.store(aux_ptr + 1, loss)\n")
    after = before.replace("    aux_ptr += row\n", "    if RETURN_AUX == _TRUE:\n        aux_ptr += row\n")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={LOSS: before}),
                                              CommitSpec("edit", files={LOSS: after})], _RENAMED)
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason
    assert "guarded-store" not in verdicts[1].rules


# --- C/C++: a declared not-carried template flag is off --------------------------------

LAUNCH = "csrc/attn/softmax.cu"

LAUNCH_BEFORE = '''#include <cuda_runtime.h>

template <int kBlock, bool Is_dropout, bool Return_probs>
__global__ void softmax_kernel(const float* x, float* out, const int n) {
    int i = blockIdx.x * kBlock + threadIdx.x;
    if (i < n) {
        out[i] = Is_dropout ? 0.f : x[i];
    }
}

template <bool Is_dropout, bool Is_wide>
void run_softmax(const float* x, float* out, int n, cudaStream_t stream) {
    constexpr int kBlock = Is_wide ? 256 : 128;
    auto kernel = &softmax_kernel<kBlock, Is_dropout, Is_dropout && Is_wide>;
    kernel<<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(x, out, n);
}
'''

LAUNCH_TREE = {"kernels/attn/softmax.cu": '''#include <cuda_runtime.h>

// portq: ports vllm:csrc/attn/softmax.cu::softmax_kernel
template <int kBlock>
__global__ void softmax_kernel(const float* x, float* out, const int n) {
    int i = blockIdx.x * kBlock + threadIdx.x;
    if (i < n) {
        out[i] = x[i];
    }
}

// portq: ports vllm:csrc/attn/softmax.cu::run_softmax
// portq: not-carried vllm:csrc/attn/softmax.cu::run_softmax[Is_dropout] -- no dropout here
template <bool Is_wide>
void run_softmax(const float* x, float* out, int n, cudaStream_t stream) {
    constexpr int kBlock = Is_wide ? 256 : 128;
    softmax_kernel<kBlock><<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(x, out, n);
}
''', "kernels/attn/ops.cu": '''#include "softmax.cu"

void engine_softmax(const float* x, float* out, int n, cudaStream_t s) { run_softmax<false>(x, out, n, s); }
'''}


def _launch(tmp_path, after):
    return classify_commit(tmp_path, {LAUNCH: LAUNCH_BEFORE}, {LAUNCH: after}, LAUNCH_TREE, message="edit")


def test_a_template_flag_the_port_declares_not_carried_folds_to_off(tmp_path):
    after = LAUNCH_BEFORE.replace("<kBlock, Is_dropout, Is_dropout && Is_wide>",
                                  "<kBlock, Is_dropout && !Is_wide, Is_dropout && Is_wide && (kBlock > 64)>")
    _not_carried(_launch(tmp_path, after), "declared-flag-off")


def test_a_declared_flag_that_no_longer_decides_an_argument_is_still_flagged(tmp_path):
    after = LAUNCH_BEFORE.replace("<kBlock, Is_dropout, Is_dropout && Is_wide>",
                                  "<kBlock, Is_dropout || Is_wide, Is_dropout && Is_wide>")
    verdict = _launch(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "declared-flag-off" not in verdict.rules


# --- Python: values stored only for what the port does not carry -----------------------

FUNCTION = "pkg/ops/norm.py"

FUNCTION_BEFORE = '''import torch


class NormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, eps):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w
        ctx.eps = eps
        ctx.save_for_backward(x, w)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        return dy * w / (x.abs() + ctx.eps), None, None
'''

FUNCTION_TREE = {"kernels/norm/function.py": '''import torch


class NormFunction(torch.autograd.Function):
    # portq: ports vllm:pkg/ops/norm.py::NormFunction.forward
    # portq: not-carried vllm:pkg/ops/norm.py::NormFunction.backward -- inference only
    @staticmethod
    def forward(ctx, x, w, eps):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w
        ctx.eps = eps
        ctx.save_for_backward(x, w)
        return y
''', "kernels/norm/engine.py": "from portq_kernels.norm.function import NormFunction\n\n\n"
     "def run(x, w):\n    return NormFunction.apply(x, w, 1e-6)\n"}


def _function(tmp_path, after):
    return classify_commit(tmp_path, {FUNCTION: FUNCTION_BEFORE}, {FUNCTION: after}, FUNCTION_TREE, message="edit")


def test_a_value_stored_only_for_a_not_carried_backward_is_not_the_ports(tmp_path):
    after = FUNCTION_BEFORE.replace("        ctx.eps = eps\n", "").replace(" + ctx.eps)", " + 1e-6)")
    verdict = _function(tmp_path, after)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "not-carried-reader" in verdict.rules, verdict.rules


def test_a_stored_value_a_ported_definition_reads_is_still_flagged(tmp_path):
    before = FUNCTION_BEFORE.replace("        return y\n", "        return y * ctx.eps\n", 1)
    after = before.replace("        ctx.eps = eps\n", "        ctx.eps = 2 * eps\n")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={FUNCTION: before}),
                                              CommitSpec("edit", files={FUNCTION: after})], FUNCTION_TREE)
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason
    assert "not-carried-reader" not in verdicts[1].rules


def test_a_new_defaulted_parameter_only_stored_for_a_not_carried_backward_is_not_the_ports(tmp_path):
    after = FUNCTION_BEFORE.replace("def forward(ctx, x, w, eps):", "def forward(ctx, x, w, eps, in_place=True):") \
        .replace("        ctx.eps = eps\n", "        ctx.eps = eps\n        ctx.in_place = in_place\n") \
        .replace("        x, w = ctx.saved_tensors\n", "        x, w = ctx.saved_tensors\n"
                 "        dy = dy if ctx.in_place else dy.clone()\n")
    verdict = _function(tmp_path, after)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "not-carried-reader" in verdict.rules, verdict.rules


def test_a_new_parameter_the_ported_definition_also_reads_is_still_a_parameter_change(tmp_path):
    after = FUNCTION_BEFORE.replace("def forward(ctx, x, w, eps):", "def forward(ctx, x, w, eps, in_place=True):") \
        .replace("        ctx.eps = eps\n", "        ctx.eps = eps\n        ctx.in_place = in_place\n") \
        .replace("        return y\n", "        return y if in_place else y.clone()\n", 1)
    verdict = _function(tmp_path, after)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "not-carried-reader" not in verdict.rules


def test_a_branch_on_a_macro_the_compiler_sets_is_not_assumed_off(tmp_path):
    after = SOFTMAX_BEFORE.replace(_LINE, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n    return x - m;\n"
                                   "#else\n" + _LINE + "#endif\n")
    verdict = _softmax(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "default-build" not in verdict.rules


def test_a_new_defaulted_flag_a_launch_of_the_commit_passes_is_left_to_the_parameter_rules(tmp_path):
    after = LOSS_BEFORE.replace("RETURN_AUX: tl.constexpr = False):",
                                "RETURN_AUX: tl.constexpr = False, SQUARE: tl.constexpr = True):") \
        .replace("    loss = tl.sum(x * x)\n", "    if SQUARE:\n        loss = tl.sum(x * x)\n"
                 "    else:\n        loss = tl.sum(tl.abs(x))\n") \
        .replace("RETURN_AUX=return_aux, BLOCK=128)", "RETURN_AUX=return_aux, BLOCK=128, SQUARE=False)")
    verdict = _loss(tmp_path, after)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "lacked-branch" not in verdict.rules


def test_a_flag_the_port_lacks_with_no_default_decides_nothing(tmp_path):
    before = LOSS_BEFORE.replace("RETURN_AUX: tl.constexpr = False):", "RETURN_AUX: tl.constexpr):")
    after = before.replace("tl.store(aux_ptr, tl.max(x))", "tl.store(aux_ptr, tl.max(tl.abs(x)))")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={LOSS: before}),
                                              CommitSpec("edit", files={LOSS: after})], LOSS_TREE)
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason
    assert "lacked-branch" not in verdicts[1].rules


# --- default-build: a macro a header the file includes defines ---------------------------------

_PLATFORM_HEADER = ("#pragma once\n#if defined(__ALT_PLATFORM__) || defined(__ALTCC__)\n#define USE_ALT 1\n#else\n"
                    "#define USE_ALT 0\n#endif\n")
_ALT_AFTER = SOFTMAX_BEFORE.replace(_LINE, "#if USE_ALT\n    return (x - m) * (kShift + 1);\n#else\n" + _LINE
                                    + "#endif\n")


def _with_headers(tmp_path, include: str, headers: dict[str, str], after: str = _ALT_AFTER):
    from tests.portq.test_form_without_meaning import SOFTMAX, SOFTMAX_TREE
    before = SOFTMAX_BEFORE.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n" + include, 1)
    after = after.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n" + include, 1)
    return classify_commit(tmp_path, {SOFTMAX: before, **headers}, {SOFTMAX: after, **headers}, SOFTMAX_TREE,
                           message="edit")


def test_a_flag_a_header_the_file_includes_defines_is_not_assumed_off(tmp_path):
    verdict = _with_headers(tmp_path, '#include "platform.cuh"\n', {"csrc/attn/platform.cuh": _PLATFORM_HEADER})
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "default-build" not in verdict.rules


def test_a_flag_defined_through_a_header_a_header_includes_is_not_assumed_off(tmp_path):
    verdict = _with_headers(tmp_path, "#include <ops.cuh>\n",
                            {"csrc/attn/ops.cuh": '#pragma once\n#include "common/platform.cuh"\n',
                             "csrc/attn/common/platform.cuh": _PLATFORM_HEADER})
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "default-build" not in verdict.rules


def test_a_header_that_defines_other_macros_leaves_the_flag_off(tmp_path):
    verdict = _with_headers(tmp_path, '#include "platform.cuh"\n',
                            {"csrc/attn/platform.cuh": _PLATFORM_HEADER.replace("USE_ALT", "USE_OTHER")})
    _not_carried(verdict, "default-build")
