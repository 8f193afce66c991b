"""A kernel parameter upstream leaves unused whose every launch passes a value the launching wrapper
computes from its inputs' shapes, dtypes and constants (``derived-parameter``): no caller supplies it,
so the kernel no longer specialising on it is a body-level change of the wrapper and kernel pair, for
a reader (DESIGN §5: a parameter derived from what the kernel already receives is an implementation
detail, NEEDS_REVIEW at most), not the dead-input gap of an input a caller passes. A dead parameter
a launch fills with a value its caller passed (a launcher parameter handed on) stays REAL_GAP."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

HOST = "aiter/ops/triton/rows_cast.py"
BEFORE = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _rows_cast_kernel(x_ptr, out_ptr, n, HALF: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if HALF:
        x = x.to(tl.float32)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


def rows_cast(x, out, exact):
    n = x.numel()
    half = x.dtype is torch.float16
    BLOCK = 128
    grid = (triton.cdiv(n, BLOCK),)
    _rows_cast_kernel[grid](x, out, n, HALF=half, BLOCK=BLOCK)
'''

DERIVED_AFTER = BEFORE.replace("    if HALF:\n        x = x.to(tl.float32)\n", "")
"""The kernel stops reading HALF, which the wrapper computes from the input's dtype."""

# Unsound neighbour: the dead parameter is filled with a value the wrapper's caller passes.
HANDED_BEFORE = BEFORE.replace("HALF=half,", "HALF=exact,")
HANDED_AFTER = DERIVED_AFTER.replace("HALF=half,", "HALF=exact,")
# Unsound neighbour: a dtype constant compared with a caller's value, not with an input's dtype.
VALUE_BEFORE = BEFORE.replace("    half = x.dtype is torch.float16\n", "    half = exact is torch.float16\n")
VALUE_AFTER = DERIVED_AFTER.replace("    half = x.dtype is torch.float16\n", "    half = exact is torch.float16\n")


def _tree() -> dict[str, str]:
    port = (
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        f"# portq: ports vllm:{HOST}::_rows_cast_kernel\n"
        "@triton.jit\n"
        "def _cast_kernel(src, dst, count, HALF: tl.constexpr, B: tl.constexpr):\n"
        "    o = tl.program_id(0) * B + tl.arange(0, B)\n"
        "    v = tl.load(src + o, mask=o < count)\n"
        "    if HALF:\n"
        "        v = v.to(tl.float32)\n"
        "    tl.store(dst + o, v * 2, mask=o < count)\n\n\n"
        f"# portq: ports vllm:{HOST}::rows_cast\n"
        "def rows_cast(x, out, exact):\n"
        "    n = x.numel()\n"
        "    grid = (triton.cdiv(n, 128),)\n"
        "    _cast_kernel[grid](x, out, n, HALF=x.dtype is torch.float16, B=128)\n"
    )
    caller = ("from portq_kernels.mla_prefix.rows import rows_cast\n\n\n"
              "def prepare(x, out):\n    rows_cast(x, out, False)\n")
    return {"kernels/mla_prefix/rows.py": port, "kernels/mla_prefill/prepare.py": caller}


def _kernel(verdict):
    return next(s for s in verdict.symbols if s.symbol == "_rows_cast_kernel")


def test_a_dead_parameter_the_wrapper_derives_from_the_dtype_is_for_a_reader(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: DERIVED_AFTER}, _tree(), message="cast")
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    kernel = _kernel(verdict)
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "derived-parameter" in kernel.rules, kernel.rules


def test_a_dead_parameter_filled_with_a_callers_value_is_still_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: HANDED_BEFORE}, {HOST: HANDED_AFTER}, _tree(), message="cast")
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "dead-input" in _kernel(verdict).rules


def test_a_dead_parameter_filled_by_testing_a_callers_value_against_a_dtype_is_still_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: VALUE_BEFORE}, {HOST: VALUE_AFTER}, _tree(), message="cast")
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "dead-input" in _kernel(verdict).rules
