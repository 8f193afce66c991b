"""Cases found by scanning real aiter history against this repository's port:
a ported wrapper that gains a second launch of its kernel for a feature the
port declares not-carried, and a top-level import change in a file whose
ported definitions are all pinned past the commit."""
from __future__ import annotations

from portq.core.model import IN_SYNC, NEEDS_REVIEW, NOT_APPLICABLE, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

WRAPPER = "aiter/ops/triton/gather_kv_b_proj.py"

BASE = '''import torch
from aiter.ops.triton._triton_kernels.gather_kv_b_proj import _triton_gather_kv_b_proj
import aiter.ops.triton.utils.arch_info as arch_info


def gather_kv_b_proj(k_buffer, kv_indptr, kv_proj_weight, k_prefix, v_prefix):
    batch_size = kv_indptr.shape[0] - 1
    heads = k_prefix.shape[1]
    assert arch_info.is_supported()
    grid = (batch_size * heads,)
    _triton_gather_kv_b_proj[grid](
        batch_size, k_buffer, kv_indptr, kv_proj_weight, k_prefix, v_prefix,
        ChunkK=16, NO_SCALE=True,
    )
'''

FP4_BRANCH = BASE.replace("ChunkK=16, NO_SCALE=True,", "ChunkK=16, NO_SCALE=True, IS_FP4=False,").replace('''    grid = (batch_size * heads,)
''', '''    grid = (batch_size * heads,)
    if kv_proj_weight.dtype == torch.uint8:
        _triton_gather_kv_b_proj[grid](
            batch_size, k_buffer, kv_indptr, kv_proj_weight, k_prefix, v_prefix,
            ChunkK=64, IS_FP4=True,
        )
        return
''')

IMPORT_TWEAK = BASE.replace("import aiter.ops.triton.utils.arch_info as arch_info",
                            "from aiter.ops.triton.utils import arch_info_v2 as arch_info")
SAME_BINDING = BASE.replace("import aiter.ops.triton.utils.arch_info as arch_info",
                            "from aiter.ops.triton.utils import arch_info")


def _tree(pin: str = "", fp4_declared: bool = True) -> dict[str, str]:
    declaration = ("# portq: not-carried vllm:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py"
                   "::_triton_gather_kv_b_proj[IS_FP4] -- MXFP4 not carried\n") if fp4_declared else ""
    return {
        "kernels/mla_prefix/op.py": f'''import triton


{declaration}@triton.jit
def _kernel(batch_size, k_buffer, kv_indptr, kv_proj_weight, k_prefix, v_prefix, ChunkK, NO_SCALE):
    pass


# portq: ports vllm:{WRAPPER}::gather_kv_b_proj{pin}
def gather_kv_b_proj(k_buffer, kv_indptr, kv_proj_weight, k_prefix, v_prefix):
    batch_size = kv_indptr.shape[0] - 1
    heads = k_prefix.shape[1]
    _kernel[(batch_size * heads,)](batch_size, k_buffer, kv_indptr, kv_proj_weight, k_prefix, v_prefix,
                                   ChunkK=16, NO_SCALE=True)
''',
        "kernels/mla_prefill/caller.py": "from portq_kernels.mla_prefix.op import gather_kv_b_proj\n\n\n"
                                         "def expand(*args):\n    return gather_kv_b_proj(*args)\n",
    }


def test_a_new_launch_branch_for_a_not_carried_feature_is_not_a_gap(tmp_path):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={WRAPPER: BASE}), CommitSpec("FP4 path", files={WRAPPER: FP4_BRANCH})],
        _tree())
    wrapper = next(s for s in verdicts[1].symbols if s.symbol == "gather_kv_b_proj")
    assert wrapper.verdict == NEEDS_REVIEW, wrapper.reason  # flagged: never NOT_APPLICABLE
    assert "no_scale" not in wrapper.reason  # the old launch is paired with its own new site
    assert "is_fp4" not in wrapper.reason  # IS_FP4 is declared not-carried on the kernel
    assert "passes false" not in wrapper.reason.lower()  # nor is the value the old launch now passes it


def test_the_same_branch_without_the_declaration_is_still_flagged(tmp_path):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={WRAPPER: BASE}), CommitSpec("FP4 path", files={WRAPPER: FP4_BRANCH})],
        _tree(fp4_declared=False))
    assert verdicts[1].verdict == REAL_GAP
    assert "is_fp4" in " ".join(s.reason for s in verdicts[1].symbols)


def test_a_top_level_change_used_only_by_pinned_ports_is_in_sync_by_provenance(tmp_path):
    commits = [CommitSpec("base", files={WRAPPER: BASE}), CommitSpec("import style", files={WRAPPER: IMPORT_TWEAK}),
               CommitSpec("later", files={"README.md": "x\n"})]
    from tests.portq.fixtures import build_repository

    shas = build_repository(tmp_path / "probe", commits)
    verdicts, _ = classify_history(tmp_path / "pinned", commits, _tree(pin=f" @{shas[2][:10]}"))
    assert (verdicts[1].verdict, verdicts[1].decided_by) == (IN_SYNC, "provenance")

    verdicts, _ = classify_history(tmp_path / "unpinned", commits, _tree())
    assert verdicts[1].verdict == NEEDS_REVIEW


def test_an_import_form_that_binds_the_same_name_is_cosmetic(tmp_path):
    commits = [CommitSpec("base", files={WRAPPER: BASE}), CommitSpec("import style", files={WRAPPER: SAME_BINDING})]
    verdicts, _ = classify_history(tmp_path, commits, _tree())
    assert (verdicts[1].verdict, verdicts[1].justification) == (NOT_APPLICABLE, "cosmetic")


KERNEL = "aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py"
KERNEL_BASE = '''import triton
import triton.language as tl


@triton.jit
def _triton_gather_kv_b_proj(batch_size, k_buffer, kv_indptr, kv_indices, kv_proj_weight, k_prefix, v_prefix,
                             KBlockSize: tl.constexpr, ChunkK: tl.constexpr, PaddedK: tl.constexpr,
                             PaddedV: tl.constexpr):
    pid = tl.program_id(0)
'''
# The new constexpr is read by the body (as upstream's is): a defaulted one nothing reads and no
# launch passes changes nothing computed (unused-constexpr, test_interface_not_implementation.py).
KERNEL_NEW = KERNEL_BASE.replace("PaddedV: tl.constexpr):", "PaddedV: tl.constexpr, ScaleCols: tl.constexpr = 1):") \
    .replace("    pid = tl.program_id(0)\n", "    pid = tl.program_id(0) * ScaleCols\n")


def _kernel_tree(params: str) -> dict[str, str]:
    return {
        "kernels/mla_prefix/op.py": f'''import triton


# portq: ports vllm:{KERNEL}::_triton_gather_kv_b_proj
@triton.jit
def _kernel({params}):
    pass


def expand(*args):
    _kernel[(1,)](*args)
''',
        "kernels/mla_prefill/caller.py": "from portq_kernels.mla_prefix.op import expand\n\n\n"
                                         "def run(*args):\n    return expand(*args)\n",
    }


def test_a_new_parameter_is_a_gap_for_a_port_of_the_same_design(tmp_path):
    same = "batch_size, k_buffer, kv_indptr, kv_indices, kv_proj_weight, k_prefix, v_prefix, KBlockSize, ChunkK"
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={KERNEL: KERNEL_BASE}), CommitSpec("scale cols", files={KERNEL: KERNEL_NEW})],
        _kernel_tree(same))
    assert verdicts[1].verdict == REAL_GAP


def test_a_new_parameter_needs_review_for_a_redesigned_port(tmp_path):
    redesigned = "rows, weights, out, TILE_M, TILE_N, GROUP"
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={KERNEL: KERNEL_BASE}), CommitSpec("scale cols", files={KERNEL: KERNEL_NEW})],
        _kernel_tree(redesigned))
    assert verdicts[1].verdict == NEEDS_REVIEW
    assert "redesign" in verdicts[1].symbols[0].reason


# Issue case 1: a constexpr upstream adds whose launch argument is a next_pow2
# padding of shapes the kernel already receives is an implementation detail.
KERNEL_PADDED = KERNEL_BASE.replace("PaddedV: tl.constexpr):", "PaddedV: tl.constexpr, PaddedN: tl.constexpr):")
HOST = "aiter/ops/triton/gather_kv_b_proj.py"
HOST_BEFORE = '''from aiter.ops.triton._triton_kernels.gather_kv_b_proj import _triton_gather_kv_b_proj


def gather_kv_b_proj(k_buffer, kv_indptr, kv_indices, kv_proj_weight, k_prefix, v_prefix):
    batch_size = kv_indptr.shape[0] - 1
    weight_n, weight_k = kv_proj_weight.shape
    _triton_gather_kv_b_proj[(batch_size,)](batch_size, k_buffer, kv_indptr, kv_indices, kv_proj_weight, k_prefix,
                                            v_prefix, KBlockSize=16, ChunkK=64, PaddedK=64, PaddedV=64{extra})
'''


def _next_pow2_host(extra: str) -> str:
    return ("import triton\n" if extra else "") + HOST_BEFORE.format(extra=extra)


def test_a_constexpr_derived_from_shapes_is_needs_review_with_its_derivation(tmp_path):
    same = "batch_size, k_buffer, kv_indptr, kv_indices, kv_proj_weight, k_prefix, v_prefix, KBlockSize, ChunkK"
    derived = ", PaddedN=triton.next_power_of_2(weight_n)"
    verdicts, _ = classify_history(
        tmp_path,
        [CommitSpec("base", files={KERNEL: KERNEL_BASE, HOST: _next_pow2_host("")}),
         CommitSpec("pad n", files={KERNEL: KERNEL_PADDED, HOST: _next_pow2_host(derived)})],
        _kernel_tree(same))
    assert verdicts[1].verdict == NEEDS_REVIEW
    kernel = next(s for s in verdicts[1].symbols if s.symbol == "_triton_gather_kv_b_proj")
    records = [e for e in kernel.evidence if e.kind == "derivation"]
    assert records and "kv_proj_weight.shape" in records[0].derived_from
    assert "weight_n, weight_k = kv_proj_weight.shape" in records[0].quote
    # the reason line itself says what makes it an implementation detail, quoting the derivation
    assert kernel.reason.startswith("upstream added 1 parameter computed only from what the kernel already receives, "
                                    "constexpr parameter paddedn (PaddedN=triton.next_power_of_2(weight_n)) via "
                                    "`weight_n, weight_k = kv_proj_weight.shape`"), kernel.reason
    assert "(at most NEEDS_REVIEW)" in kernel.reason


def test_a_constexpr_a_caller_supplies_is_still_a_gap(tmp_path):
    same = "batch_size, k_buffer, kv_indptr, kv_indices, kv_proj_weight, k_prefix, v_prefix, KBlockSize, ChunkK"
    supplied = HOST_BEFORE.replace("v_prefix):", "v_prefix, padded_n):").format(extra=", PaddedN=padded_n")
    verdicts, _ = classify_history(
        tmp_path,
        [CommitSpec("base", files={KERNEL: KERNEL_BASE, HOST: HOST_BEFORE.format(extra="")}),
         CommitSpec("pad n", files={KERNEL: KERNEL_PADDED, HOST: supplied})],
        _kernel_tree(same))
    assert verdicts[1].verdict == REAL_GAP


# Issue case 4: unused locals renamed (ruff's `_name`) change nothing.
def test_unused_locals_renamed_are_cosmetic(tmp_path):
    before = HOST_BEFORE.format(extra="")
    after = before.replace("weight_n, weight_k = ", "_weight_n, _weight_k = ")
    tree = _kernel_tree("batch_size, k_buffer")
    tree["kernels/mla_prefix/op.py"] += f"\n\n# portq: ports vllm:{HOST}::gather_kv_b_proj\ndef gather_kv_b_proj(*args):\n    expand(*args)\n"
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HOST: before}), CommitSpec("ruff", files={HOST: after})], tree)
    assert (verdicts[1].verdict, verdicts[1].justification) == (NOT_APPLICABLE, "cosmetic")
    assert any(e.kind == "cosmetic" and "weight_n → _weight_n" in e.message for e in verdicts[1].symbols[0].evidence)
