"""A launch argument upstream stops passing that the wrapper computed only from its inputs' shapes,
dtypes and constants (``derived-parameter``): no caller supplies it, so the wrapper no longer handing
it to the kernel is a body-level change of the wrapper and kernel pair, for a reader (DESIGN §5: a
value derived from what the kernel already receives is an implementation detail, NEEDS_REVIEW at
most), not the launch-arguments gap of an input dropped. An argument that was a value the wrapper's
caller passed, or one passed by position, stays REAL_GAP."""
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
    if exact is None:
        raise ValueError("exact")
    n = x.numel()
    half = x.dtype is torch.float16
    BLOCK = 128
    grid = (triton.cdiv(n, BLOCK),)
    _rows_cast_kernel[grid](x, out, n, HALF=half, BLOCK=BLOCK)
'''

DERIVED_AFTER = BEFORE.replace("    if HALF:\n        x = x.to(tl.float32)\n", "").replace(
    "n, HALF: tl.constexpr, BLOCK", "n, BLOCK").replace("HALF=half, ", "")
"""The kernel drops HALF and the wrapper stops passing it: a value it computed from the input's dtype."""

# Unsound neighbour: the dropped argument is a value the wrapper's caller passed.
HANDED_BEFORE = BEFORE.replace("HALF=half,", "HALF=exact,")
HANDED_AFTER = DERIVED_AFTER
# Unsound neighbour: passed by position, the argument is the launch's interface as it always was.
POSITIONAL_BEFORE = BEFORE.replace("HALF=half,", "half,")


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
        "    if exact is None:\n"
        "        raise ValueError('exact')\n"
        "    n = x.numel()\n"
        "    grid = (triton.cdiv(n, 128),)\n"
        "    _cast_kernel[grid](x, out, n, HALF=x.dtype is torch.float16, B=128)\n"
    )
    caller = ("from portq_kernels.mla_prefix.rows import rows_cast\n\n\n"
              "def prepare(x, out):\n    rows_cast(x, out, False)\n")
    return {"kernels/mla_prefix/rows.py": port, "kernels/mla_prefill/prepare.py": caller}


def _host(verdict):
    return next(s for s in verdict.symbols if s.symbol == "rows_cast")


def test_an_argument_the_wrapper_derived_and_stopped_passing_is_for_a_reader(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: DERIVED_AFTER}, _tree(), message="cast")
    host = _host(verdict)
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "derived-parameter" in host.rules, host.rules
    assert "half" in host.reason, host.reason


def test_an_argument_the_wrapper_handed_on_from_its_caller_is_still_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: HANDED_BEFORE}, {HOST: HANDED_AFTER}, _tree(), message="cast")
    host = _host(verdict)
    assert host.verdict == REAL_GAP, host.reason
    assert "launch-arguments" in host.rules, host.rules


def test_a_derived_argument_passed_by_position_is_still_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: POSITIONAL_BEFORE}, {HOST: DERIVED_AFTER}, _tree(), message="cast")
    host = _host(verdict)
    assert host.verdict == REAL_GAP, host.reason
    assert "derived-parameter" not in host.rules, host.rules
