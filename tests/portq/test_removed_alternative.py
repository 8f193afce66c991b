"""A version branch removed (``removed-alternative``): a module defined a kernel and its host twice, in
the branches of a module-level ``if triton.__version__ ...:``; the commit drops the old version's branch
and dedents the kept branch's definitions unchanged. The kept definitions are cosmetic; the dropped ones
are alternatives the port never had when the port already has the kept alternative's shape wherever the
two differ (no scratch pointer, no scratch allocation): cosmetic, not a deletion for a reader. A port
that follows the dropped alternative, or a kept alternative that changed too, stays flagged."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

NEW_BRANCH = '''@triton.jit
def _double_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def double(x):
    n = x.numel()
    _double_kernel[(triton.cdiv(n, 128),)](x, n, BLOCK=128)
    return x
'''
OLD_BRANCH = '''@triton.jit
def _double_kernel(x_ptr, tmp_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n) * 2
    tl.store(tmp_ptr + offs, v, mask=offs < n)
    tl.store(x_ptr + offs, tl.load(tmp_ptr + offs, mask=offs < n), mask=offs < n)


def double(x):
    n = x.numel()
    tmp = torch.empty((n,), device=x.device, dtype=x.dtype)
    _double_kernel[(triton.cdiv(n, 128),)](x, tmp, n, BLOCK=128)
    return x
'''
HEAD = "import torch\nimport triton\nimport triton.language as tl\n\n"


def _indent(text):
    return "".join(("    " + line if line.strip() else line) for line in text.splitlines(keepends=True))


BEFORE = HEAD + 'if triton.__version__ >= "2.1.0":\n' + _indent(NEW_BRANCH) + "\nelse:\n" + _indent(OLD_BRANCH)
AFTER = HEAD + "\n" + NEW_BRANCH

PORT = '''import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::_double_kernel
@triton.jit
def _twice(src, count, TILE: tl.constexpr):
    i = tl.program_id(0) * TILE + tl.arange(0, TILE)
    tl.store(src + i, tl.load(src + i, mask=i < count) * 2, mask=i < count)


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::double
def twice(x):
    count = x.numel()
    _twice[(triton.cdiv(count, 128),)](x, count, TILE=128)
    return x
'''
OLD_STYLE_PORT = '''import torch
import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::_double_kernel
@triton.jit
def _twice(src, scratch, count, TILE: tl.constexpr):
    i = tl.program_id(0) * TILE + tl.arange(0, TILE)
    tl.store(scratch + i, tl.load(src + i, mask=i < count) * 2, mask=i < count)
    tl.store(src + i, tl.load(scratch + i, mask=i < count), mask=i < count)


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::double
def twice(x):
    count = x.numel()
    scratch = torch.empty((count,), device=x.device, dtype=x.dtype)
    _twice[(triton.cdiv(count, 128),)](x, scratch, count, TILE=128)
    return x
'''


def _entry(tmp_path, after=AFTER, port=PORT):
    tree = {"kernels/mla_prefix/ops.py": port,
            "kernels/mla_prefill/run.py": "from portq_kernels.mla_prefix.ops import twice\n\n\n"
                                          "def run(x):\n    return twice(x)\n"}
    return classify_commit(tmp_path, {OPS: BEFORE}, {OPS: after}, tree, message="drop 2.0")


def test_a_dropped_version_branch_the_port_never_had_is_cosmetic(tmp_path):
    verdict = _entry(tmp_path)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), \
        [(s.symbol, s.change, s.verdict, s.reason) for s in verdict.symbols]
    removed = [s for s in verdict.symbols if s.change == "removed"]
    assert removed and all("removed-alternative" in s.rules for s in removed), [(s.symbol, s.rules) for s in removed]


def test_a_port_that_follows_the_dropped_branch_stays_flagged(tmp_path):
    assert _entry(tmp_path, port=OLD_STYLE_PORT).verdict == NEEDS_REVIEW


def test_a_kept_branch_that_changed_too_stays_flagged(tmp_path):
    after = AFTER.replace("    return x\n", "    return x.clone()\n")
    assert _entry(tmp_path, after=after).verdict != NOT_APPLICABLE
