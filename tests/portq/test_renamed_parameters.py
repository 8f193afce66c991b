"""Parameters renamed without changing what any call binds (issue 24, class 5: form without meaning).

* ``renamed-parameter``: a C++ parameter upstream renamed in place (same
  position, same kind) is the same input, since C++ binds by position: the
  port still taking the old name is in sync, not behind; a parameter
  removed while another is added elsewhere is still a change of shape.
* ``cosmetic-parameter-renaming``: a Python definition whose whole change
  is a consistent renaming of its locals and parameters, each parameter in
  its place and none passed by keyword in the files the commit touches, is
  cosmetic; a call that binds a renamed parameter by keyword is not.
* ``renamed-binding``: the same where the keyword calls were renamed with the
  parameter (same value) and a method's attributes on its first parameter
  (``ctx.a``) with it everywhere; a call left passing the old keyword, a new
  value, or an old attribute still read elsewhere is not cosmetic."""
from __future__ import annotations

from portq.classifier.verdicts import compare
from portq.core.model import NOT_APPLICABLE, REAL_GAP
from portq.language.extraction import signature_of
from portq.language.symbols import symbol_table
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history


def _sig(source: str, path: str, name: str):
    table = symbol_table(source.encode(), path)
    definition = next(d for d in table.definitions if d.name == name)
    return signature_of(definition, table.source, path)


CPP_OLD = ("template <bool Is_even_N, typename Tensor>\n"
           "__device__ void apply_mask(Tensor &tensor, const int max_seqlen_k, const int col_idx_offset_) {\n"
           "    for (int i = 0; i < size(tensor); ++i) { if (col_idx_offset_ + i >= max_seqlen_k) tensor(i) = 0; }\n"
           "}\n")
CPP_NEW = ("template <bool Is_even_MN, typename Tensor>\n"
           "__device__ void apply_mask(Tensor &tensor_, const int max_seqlen_k, const int col_idx_offset) {\n"
           "    for (int i = 0; i < size(tensor_); ++i) {\n"
           "        if (!Is_even_MN && col_idx_offset + i >= max_seqlen_k) tensor_(i) = -1; }\n"
           "}\n")


def test_a_cpp_parameter_renamed_in_place_leaves_the_port_in_sync():
    port = _sig(CPP_OLD, "k.h", "apply_mask")
    items = compare(_sig(CPP_OLD, "a.h", "apply_mask"), _sig(CPP_NEW, "a.h", "apply_mask"), port)
    assert items and {i.status for i in items} == {"sync"}, [(i.status, i.message) for i in items]
    assert {i.rule for i in items} == {"renamed-parameter"}
    assert any("is_even_n to is_even_mn" in i.message for i in items), [i.message for i in items]


def test_a_cpp_parameter_removed_with_another_added_elsewhere_is_still_behind():
    new = CPP_NEW.replace("const int max_seqlen_k, const int col_idx_offset)",
                          "const int col_idx_offset, const int max_seqlen_q)")
    port = _sig(CPP_OLD, "k.h", "apply_mask")
    items = compare(_sig(CPP_OLD, "a.h", "apply_mask"), _sig(new, "a.h", "apply_mask"), port)
    behind = {i.message for i in items if i.status == "behind"}
    assert any("max_seqlen_k" in m for m in behind) and any("max_seqlen_q" in m for m in behind), behind


def test_a_python_parameter_renamed_in_place_is_not_paired_by_the_signature():
    old = "def f(x, r):\n    return x * r\n"
    new = "def f(x, rstd):\n    return x * rstd\n"
    port = _sig(old, "k.py", "f")
    items = compare(_sig(old, "a.py", "f"), _sig(new, "a.py", "f"), port)
    assert "behind" in {i.status for i in items}, [(i.status, i.message) for i in items]
    assert "renamed-parameter" not in {i.rule for i in items}


NORM = "ops/norm.py"

BEFORE = '''import triton
import triton.language as tl


@triton.jit
def _norm_kernel(X_ptr, r_ptr, r_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    r_ptr += row * r_row_stride
    x = tl.load(X_ptr + row * n_cols + tl.arange(0, BLOCK))
    inv_rms = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols)
    tl.store(r_ptr, inv_rms)


def norm_forward(X, n_cols):
    r = torch.empty(X.shape[0], device=X.device)
    _norm_kernel[(X.shape[0],)](X, r, r.stride(0), n_cols, BLOCK=128)
    return r
'''

RENAMED = (BEFORE.replace("r_row_stride", "rstd_row_stride").replace("r_ptr", "rstd_ptr")
           .replace("inv_rms", "rstd").replace("    r = torch", "    rstd_out = torch")
           .replace("(X, r, r.stride(0)", "(X, rstd_out, rstd_out.stride(0)").replace("return r\n", "return rstd_out\n"))

TREE = {"kernels/norm/norm.py": '''import triton
import triton.language as tl


# portq: ports vllm:ops/norm.py::_norm_kernel
@triton.jit
def _norm_rows(X_ptr, r_ptr, r_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(X_ptr + row * n_cols + tl.arange(0, BLOCK))
    tl.store(r_ptr + row * r_row_stride, tl.rsqrt(tl.sum(x * x, axis=0) / n_cols))


def norm(X, n_cols):
    r = torch.empty(X.shape[0], device=X.device)
    _norm_rows[(X.shape[0],)](X, r, r.stride(0), n_cols, BLOCK=128)
    return r
''', "kernels/norm/caller.py": "from portq_kernels.norm.norm import norm\n\n\n"
     "def apply(x):\n    return norm(x, 128)\n"}


def _kernel(tmp_path, before, after):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={NORM: before}),
                                              CommitSpec("rename", files={NORM: after})], TREE)
    return next(s for s in verdicts[1].symbols if s.symbol == "_norm_kernel")


def test_python_parameters_renamed_in_place_and_passed_by_position_are_cosmetic(tmp_path):
    kernel = _kernel(tmp_path, BEFORE, RENAMED)
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "cosmetic"), kernel.reason
    assert "cosmetic-parameter-renaming" in kernel.rules
    assert "r_ptr → rstd_ptr" in kernel.reason


def test_a_renamed_parameter_a_call_binds_by_keyword_is_no_positional_renaming(tmp_path):
    before = BEFORE.replace("r.stride(0), n_cols, BLOCK=128", "r_row_stride=r.stride(0), n_cols=n_cols, BLOCK=128")
    after = RENAMED.replace("rstd_out.stride(0), n_cols, BLOCK=128",
                            "rstd_row_stride=rstd_out.stride(0), n_cols=n_cols, BLOCK=128")
    kernel = _kernel(tmp_path, before, after)
    assert "cosmetic-parameter-renaming" not in kernel.rules, kernel.reason
    # the keyword's value reads the caller's r, renamed rstd_out throughout the caller: the same value
    assert "renamed-binding" in kernel.rules, kernel.reason
    changed = after.replace("rstd_row_stride=rstd_out.stride(0)", "rstd_row_stride=rstd_out.stride(0) * 2")
    kernel = _kernel(tmp_path / "changed", before, changed)
    assert kernel.justification != "cosmetic", kernel.reason


def test_parameters_that_trade_places_are_not_a_renaming(tmp_path):
    swapped = BEFORE.replace("def _norm_kernel(X_ptr, r_ptr, r_row_stride,", "def _norm_kernel(r_ptr, X_ptr, r_row_stride,")
    kernel = _kernel(tmp_path, BEFORE, swapped)
    assert "cosmetic-parameter-renaming" not in kernel.rules, kernel.reason
    assert kernel.verdict in (REAL_GAP, "INERT", "NEEDS_REVIEW", "IN_SYNC") and kernel.justification != "cosmetic"


def test_a_cpp_parameter_renamed_in_its_place_under_another_name_is_for_a_reader():
    # C++ binds by position: callers pass softcap what they passed scale; whether it means the same is
    # for a reader (``cpp-parameter-renaming``), never IN_SYNC
    old = CPP_OLD.replace("const int max_seqlen_k,", "const float scale, const int max_seqlen_k,")
    new = CPP_NEW.replace("const int max_seqlen_k,", "const float softcap, const int max_seqlen_k,")
    port = _sig(old, "k.h", "apply_mask")
    items = compare(_sig(old, "a.h", "apply_mask"), _sig(new, "a.h", "apply_mask"), port)
    renamed = [i for i in items if i.rule == "cpp-parameter-renaming"]
    assert [i.status for i in renamed] == ["undecided"], [(i.status, i.message) for i in items]
    assert "scale to softcap" in renamed[0].message
    assert not any(i.status == "behind" for i in items), [(i.status, i.message) for i in items]


def test_a_cpp_parameter_replaced_in_its_place_by_one_of_another_type_is_still_behind():
    old = CPP_OLD.replace("const int max_seqlen_k,", "const float scale, const int max_seqlen_k,")
    new = CPP_NEW.replace("const int max_seqlen_k,", "const int softcap, const int max_seqlen_k,")
    port = _sig(old, "k.h", "apply_mask")
    items = compare(_sig(old, "a.h", "apply_mask"), _sig(new, "a.h", "apply_mask"), port)
    behind = {i.message for i in items if i.status == "behind"}
    assert any("scale" in m for m in behind) and any("softcap" in m for m in behind), behind


def test_cpp_kernel_parameters_renamed_in_place_with_const_added_are_for_a_reader_not_a_gap():
    old = ("__global__ void add_residual(float* input, float* output, float* bias, int n)\n"
           "{\n    int i = threadIdx.x;\n    if (i < n) input[i] = input[i] + output[i] + bias[i];\n}\n")
    new = ("__global__ void add_residual(float* residual, const float* hidden_state, const float* bias,\n"
           "                             const int n)\n"
           "{\n    const int i = threadIdx.x;\n    if (i < n) residual[i] = residual[i] + hidden_state[i] + bias[i];\n}\n")
    port = _sig(old, "k.cu", "add_residual")
    items = compare(_sig(old, "a.cu", "add_residual"), _sig(new, "a.cu", "add_residual"), port)
    assert not any(i.status == "behind" for i in items), [(i.status, i.message) for i in items]
    assert {i.rule for i in items if i.status == "undecided"} == {"cpp-parameter-renaming"}


# --- renamed keywords and context attributes follow the parameter -------------------

KEYWORD_BEFORE = BEFORE.replace("r.stride(0), n_cols, BLOCK=128", "r.stride(0), n_cols=n_cols, BLOCK=128")
_KERNEL, _HOST = KEYWORD_BEFORE.split("def norm_forward")
KEYWORD_AFTER = _KERNEL.replace("n_cols", "n_columns") + "def norm_forward" + _HOST.replace("n_cols=", "n_columns=")


def test_a_renamed_parameter_every_keyword_call_renames_with_the_same_value_is_cosmetic(tmp_path):
    kernel = _kernel(tmp_path, KEYWORD_BEFORE, KEYWORD_AFTER)
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "cosmetic"), kernel.reason
    assert "renamed-binding" in kernel.rules
    assert "n_cols → n_columns" in kernel.reason


def test_a_renamed_keyword_that_now_passes_another_value_is_not_cosmetic(tmp_path):
    after = KEYWORD_AFTER.replace("n_columns=n_cols, BLOCK", "n_columns=n_cols // 2, BLOCK")
    kernel = _kernel(tmp_path, KEYWORD_BEFORE, after)
    assert "renamed-binding" not in kernel.rules, kernel.reason
    assert kernel.justification != "cosmetic"


def test_another_call_still_passing_the_old_keyword_is_not_cosmetic(tmp_path):
    other = "\n\ndef launch(X, r, n):\n    _norm_kernel[(1,)](X, r, 1, n_cols=n, BLOCK=64)\n"
    kernel = _kernel(tmp_path, KEYWORD_BEFORE + other, KEYWORD_AFTER + other)
    assert "renamed-binding" not in kernel.rules, kernel.reason
    assert kernel.justification != "cosmetic"


FN = "ops/scale.py"

FN_BEFORE = '''import torch


class ScaleFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, ignored_value):
        ctx.ignored_value = ignored_value
        return torch.where(x == ignored_value, 0.0, x)

    @staticmethod
    def backward(ctx, dy):
        return dy * (dy != ctx.ignored_value), None


def scale(x, ignored_value=-1):
    return ScaleFn.apply(x, ignored_value)
'''

FN_AFTER = FN_BEFORE.replace("ignored_value", "ignore_value")

FN_TREE = {"kernels/scale/scale.py": '''import torch


# portq: ports vllm:ops/scale.py::ScaleFn
class Scale(torch.autograd.Function):
    # portq: ports vllm:ops/scale.py::ScaleFn.forward
    @staticmethod
    def forward(ctx, x, skip):
        ctx.skip = skip
        return torch.where(x == skip, 0.0, x)

    # portq: ports vllm:ops/scale.py::ScaleFn.backward
    @staticmethod
    def backward(ctx, dy):
        return dy * (dy != ctx.skip), None
''', "kernels/scale/caller.py": "from portq_kernels.scale.scale import Scale\n\n\n"
     "def apply(x):\n    return Scale.apply(x, -1)\n"}


def _methods(tmp_path, before, after):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={FN: before}),
                                              CommitSpec("rename", files={FN: after})], FN_TREE)
    return {s.symbol.split(".")[-1]: s for s in verdicts[1].symbols}


def test_a_parameter_and_the_context_attribute_it_is_saved_in_renamed_alike_are_cosmetic(tmp_path):
    methods = _methods(tmp_path, FN_BEFORE, FN_AFTER)
    for name in ("forward", "backward"):
        assert (methods[name].verdict, methods[name].justification) == (NOT_APPLICABLE, "cosmetic"), \
            (name, methods[name].reason)
        assert "renamed-binding" in methods[name].rules
    assert ".ignored_value → .ignore_value" in methods["backward"].reason


def test_a_context_attribute_renamed_where_it_is_saved_but_not_where_it_is_read_is_not_cosmetic(tmp_path):
    after = FN_AFTER.replace("dy != ctx.ignore_value", "dy != ctx.ignored_value")
    methods = _methods(tmp_path, FN_BEFORE, after)
    assert methods["forward"].justification != "cosmetic", methods["forward"].reason
    assert "backward" not in methods


# --- the keyword's value is a caller's local renamed with it -------------------------

LOCAL_BEFORE = _KERNEL + '''def norm_forward(X):
    cols = X.shape[1]
    r = torch.empty(X.shape[0], device=X.device)
    _norm_kernel[(X.shape[0],)](X, r, r.stride(0), n_cols=cols, BLOCK=128)
    return r
'''
LOCAL_AFTER = _KERNEL.replace("n_cols", "n_columns") + '''def norm_forward(X):
    n_columns = X.shape[1]
    r = torch.empty(X.shape[0], device=X.device)
    _norm_kernel[(X.shape[0],)](X, r, r.stride(0), n_columns=n_columns, BLOCK=128)
    return r
'''


def test_a_keyword_whose_value_is_a_caller_local_renamed_consistently_binds_the_same_value(tmp_path):
    kernel = _kernel(tmp_path, LOCAL_BEFORE, LOCAL_AFTER)
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "cosmetic"), kernel.reason
    assert "renamed-binding" in kernel.rules


HOST_TREE = {**TREE, "kernels/norm/norm.py": TREE["kernels/norm/norm.py"].replace(
    "def norm(X, n_cols):", "# portq: ports vllm:ops/norm.py::norm_forward\ndef norm(X, n_cols):")}


def test_a_caller_that_renames_its_locals_and_the_keyword_with_the_callee_is_cosmetic(tmp_path):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={NORM: LOCAL_BEFORE}),
                                              CommitSpec("rename", files={NORM: LOCAL_AFTER})], HOST_TREE)
    caller = next(s for s in verdicts[1].symbols if s.symbol == "norm_forward")
    assert (caller.verdict, caller.justification) == (NOT_APPLICABLE, "cosmetic"), caller.reason
    assert "renamed-binding" in caller.rules
    assert verdicts[1].verdict == NOT_APPLICABLE


def test_a_caller_renaming_a_keyword_its_callee_did_not_rename_is_not_cosmetic(tmp_path):
    after = LOCAL_BEFORE.replace("    cols = X.shape[1]", "    n_columns = X.shape[1]") \
        .replace("n_cols=cols", "n_columns=n_columns")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={NORM: LOCAL_BEFORE}),
                                              CommitSpec("rename", files={NORM: after})], HOST_TREE)
    caller = next(s for s in verdicts[1].symbols if s.symbol == "norm_forward")
    assert caller.justification != "cosmetic", caller.reason


def test_a_keyword_whose_renamed_local_now_holds_another_value_is_not_cosmetic(tmp_path):
    after = LOCAL_AFTER.replace("n_columns = X.shape[1]", "n_columns = X.shape[1] // 2")
    kernel = _kernel(tmp_path, LOCAL_BEFORE, after)
    assert "renamed-binding" not in kernel.rules, kernel.reason
    assert kernel.justification != "cosmetic"


def test_a_keyword_now_passed_another_existing_local_is_not_cosmetic(tmp_path):
    before = LOCAL_BEFORE.replace("    r = torch", "    rows = X.shape[0]\n    r = torch")
    after = LOCAL_AFTER.replace("    r = torch", "    rows = X.shape[0]\n    r = torch") \
        .replace("n_columns=n_columns, BLOCK", "n_columns=rows, BLOCK")
    kernel = _kernel(tmp_path, before, after)
    assert "renamed-binding" not in kernel.rules, kernel.reason
    assert kernel.justification != "cosmetic"
